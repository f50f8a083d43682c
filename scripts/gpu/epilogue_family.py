#!/usr/bin/env python3
"""The GEMM-epilogue family on the GPU: the whole zoo (python_bindings/tests/
zoo.py) checked with every strategy in every precision, and one model per
category checked and timed at the sizes users run against eager PyTorch,
torch.compile and the raw GEMM.

    epilogue_family.py prepare check [STRATEGIES [MODELS]]|bench [PART
        [MODELS [STRATEGIES]]]   (build machine) compiles every library the
        run loads into the cache ($FUSION_CACHE_DIR), for sm_90;
    epilogue_family.py run check [STRATEGIES [MODELS]]|bench PART [MODELS
        [STRATEGIES]]   (GPU machine) checks or times them (the bench's
        MODELS: ";"-separated names, all where empty; its STRATEGIES,
        auto among them: the columns, "pingpong" the wgmma kernels with the
        ping-pong schedule); prints the tables last. The bench runs in parts
        (`tf32`: torch.compile default and max-autotune-no-cudagraphs beside
        fusion, whose Triton compilations and GEMM autotuning take minutes a
        size; `tf32-default`: the default mode alone; `rest`: fp32 and bf16
        against eager and the raw GEMM; `tf32-bf16`: those two so), a part
        limited to one size by `PART@MxKxN`, each within one device call.
        Every fusion strategy's first call is checked against the model in
        float64 at the bench's own size before it is timed: within the
        precision's bound, or, for a model that magnifies its GEMM's
        rounding past it (a low-temperature softmax), within 1.25 times
        eager PyTorch's own error.
"""
import copy
import math
import pathlib
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
import fusion.dynamo

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] /
                       "python_bindings" / "tests"))
from zoo import _swiglu, zoo  # noqa: E402

# 40 input features: rows of x and w are 16-byte multiples, so the wgmma
# strategy runs its kernel (TMA) rather than falling back to cuBLASLt.
ZOO = zoo(in_features=40)
from frontend_bench import timed  # noqa: E402

TARGET = "sm_90"
# The zoo check's strategies; `prepare check STRATEGY,...` and `run check
# STRATEGY,...` take a subset, or "pingpong" (the wgmma kernels with the
# ping-pong schedule).
STRATEGIES = ("tiled", "cublas", "wgmma")


def strategy_options(strategy):
    """fusion.compile's options for a strategy of the check."""
    if strategy == "pingpong":
        return {"strategy": "wgmma", "schedule": "pingpong"}
    return {"strategy": strategy}
# name -> (dtype, fusion precision, error bound against float64).
PRECISIONS = {"fp32": (torch.float32, None, 1e-5),
              "tf32": (torch.float32, "tf32", 5e-3),
              "bf16": (torch.bfloat16, None, 2e-2)}


# ---------------------------------------------------------------- the check

def twins(name, device, dtype):
    make, shape, training = ZOO[name]
    torch.manual_seed(0)
    model = make().train(training).to(device=device, dtype=dtype)
    reference = make().train(training).to(device)
    reference.load_state_dict(model.state_dict())
    x = torch.randn(*shape, device=device).to(dtype)
    return model, reference.double(), x


def error(out, reference):
    return ((out.double() - reference).norm() /
            reference.norm().clamp_min(1e-30)).item()


def state_error(model, reference):
    return max([error(model.get_buffer(n), b) for n, b in
                reference.named_buffers() if b.dtype == torch.float64],
               default=0.0)


def prepare_check(strategies=STRATEGIES, models=ZOO):
    for name in sorted(models):
        for pname, (dtype, precision, _) in PRECISIONS.items():
            for strategy in strategies:
                model, _, x = twins(name, "cpu", dtype)
                fusion.compile(model, (x,), target=TARGET,
                               precision=precision,
                               **strategy_options(strategy))
        torch._dynamo.reset()
        model, _, x = twins(name, "cpu", torch.float32)
        with torch.no_grad():
            torch.compile(model, backend="fusion", options={
                "target": TARGET, "compile_only": True})(x)
        print(f"prepared {name}", flush=True)


def run_check(strategies=STRATEGIES, models=ZOO):
    columns = [(p, s) for p in PRECISIONS for s in strategies]
    rows, failures = [], []
    with torch.no_grad():
        for name in sorted(models):
            errors = []
            for pname, strategy in columns:
                dtype, precision, bound = PRECISIONS[pname]
                model, reference, x = twins(name, "cuda", dtype)
                compiled = fusion.compile(model, (x,), target=TARGET,
                                          precision=precision,
                                          **strategy_options(strategy))
                out = compiled(x)
                e = max(error(out, reference(x.double())),
                        state_error(model, reference))
                errors.append(e)
                if not e <= bound:
                    failures.append(f"{name} {pname} {strategy}: {e:.3g}")
            torch._dynamo.reset()
            model, reference, x = twins(name, "cuda", torch.float32)
            out = torch.compile(model, backend="fusion",
                                options={"target": TARGET})(x)
            e = max(error(out, reference(x.double())),
                    state_error(model, reference))
            if not fusion.dynamo.last_fused:
                e = float("inf")
            errors.append(e)
            if not e <= 1e-5:
                failures.append(f"{name} dynamo fp32: {e:.3g}")
            rows.append((name, errors))
            print(f"checked {name}: " + " ".join(f"{e:.1e}" for e in errors),
                  flush=True)
    print(f"\n## The zoo on {torch.cuda.get_device_name()}: relative error "
          f"against float64 (outputs and running statistics); bounds fp32 "
          f"1e-5, tf32 5e-3, bf16 2e-2")
    print("| model | " + " | ".join(f"{p} {s}" for p, s in columns) +
          " | dynamo fp32 |\n|---|" + "---|" * (len(columns) + 1))
    for name, errors in rows:
        print(f"| {name} | " + " | ".join(f"{e:.1e}" for e in errors) + " |")
    total = len(rows) * (len(columns) + 1)
    print(f"\n{total - len(failures)}/{total} within bounds; failures: "
          f"{failures or 'none'}")
    return 1 if failures else 0


# ---------------------------------------------------------------- the bench

def _vanishing_at_ends(remainder, period):
    """r (r + period) of a remainder r in (-period, 0]."""
    return remainder * (remainder + period)


class Linear(nn.Module):
    """linear(x) then `body(y, x, module)`; `norm` makes the module's
    LayerNorm, GroupNorm or BatchNorm1d."""

    def __init__(self, k, n, body, norm=None):
        super().__init__()
        self.linear = nn.Linear(k, n)
        self.shift = nn.Parameter(torch.randn(n) * 0.1)
        self.norm = norm(n) if norm else None
        self.body = body

    def forward(self, x):
        return self.body(self.linear(x), x, self)


# category -> (model name, body, norm, training, needs k == n)
BENCH = [
    ("a", "leaky_relu(2y)", lambda y, x, m: F.leaky_relu(y * 2.0, 0.1),
     None, False, False),
    ("a", "gelu(y + shift)", lambda y, x, m: F.gelu(y + m.shift),
     None, False, False),
    # libdevice's functions: a SIREN layer's sine (its range reduction
    # branches to a slow path an element), tan (away from its poles), atan,
    # asinh and erfc.
    ("f", "sin(y)", lambda y, x, m: torch.sin(y), None, False, False),
    ("f", "tan(tanh(y))", lambda y, x, m: torch.tan(torch.tanh(y)), None,
     False, False),
    # Each of the two alone (|y / 64| stays below pi/2 at these sizes), and
    # GPT-2's gelu.
    ("f", "tan(y / 64)", lambda y, x, m: torch.tan(y / 64), None, False,
     False),
    ("f", "tanh(y)", lambda y, x, m: torch.tanh(y), None, False, False),
    ("f", "gelu(y, tanh)", lambda y, x, m: F.gelu(y, approximate="tanh"),
     None, False, False),
    ("f", "atan(y)", lambda y, x, m: torch.atan(y), None, False, False),
    ("f", "asinh(y)", lambda y, x, m: torch.asinh(y), None, False, False),
    ("f", "erfc(y)", lambda y, x, m: torch.erfc(y), None, False, False),
    # The rest of libdevice's functions the epilogues take, each in its
    # domain.
    ("f", "asin(y / 64)", lambda y, x, m: torch.asin(y / 64), None, False,
     False),
    ("f", "acos(y / 64)", lambda y, x, m: torch.acos(y / 64), None, False,
     False),
    ("f", "atanh(y / 64)", lambda y, x, m: torch.atanh(y / 64), None, False,
     False),
    ("f", "acosh(|y| + 1)", lambda y, x, m: torch.acosh(y.abs() + 1), None,
     False, False),
    ("f", "sinh(y)", lambda y, x, m: torch.sinh(y), None, False, False),
    ("f", "cosh(y)", lambda y, x, m: torch.cosh(y), None, False, False),
    ("f", "expm1(-|y|)", lambda y, x, m: torch.expm1(-y.abs()), None, False,
     False),
    ("f", "log1p(|y|)", lambda y, x, m: torch.log1p(y.abs()), None, False,
     False),
    ("f", "atan2(y, shift)", lambda y, x, m: torch.atan2(y, m.shift), None,
     False, False),
    # libdevice's powf (logarithm and exponential in extended precision,
    # special cases), inlined for each element.
    ("f", "|y| ** 2.5", lambda y, x, m: y.abs() ** 2.5, None, False, False),
    # C's fmod (libdevice's: a division and its correction, a loop for
    # quotients past 2^23), in a function that is 0 at both ends of its
    # range (continuous, so that tf32's error flips no element past a
    # jump), and hypot.
    ("f", "r (r + 0.7), r = y % -0.7", lambda y, x, m: _vanishing_at_ends(
        torch.remainder(y, -0.7), 0.7), None, False, False),
    ("f", "hypot(y, shift)", lambda y, x, m: torch.hypot(y, m.shift), None,
     False, False),
    # A parameter's exp (ops of a vector alone, again for each element) and
    # the special functions of fusion/special.py, each in its domain.
    ("f", "y * exp(shift)", lambda y, x, m: y * torch.exp(m.shift), None,
     False, False),
    ("f", "lgamma(softplus(y))", lambda y, x, m: torch.lgamma(F.softplus(y)),
     None, False, False),
    ("f", "erfinv(tanh(y))", lambda y, x, m: torch.erfinv(torch.tanh(y)),
     None, False, False),
    ("f", "digamma(|y| + 1)", lambda y, x, m: torch.digamma(y.abs() + 1),
     None, False, False),
    ("f", "ndtri(sigmoid(y))",
     lambda y, x, m: torch.special.ndtri(torch.sigmoid(y)), None, False,
     False),
    ("b", "y * sigmoid(y)", lambda y, x, m: y * torch.sigmoid(y),
     None, False, False),
    ("b", "gelu(y) + x", lambda y, x, m: F.gelu(y) + x, None, False, True),
    ("c", "relu(bn(y)) train", lambda y, x, m: F.relu(m.norm(y)),
     lambda n: nn.BatchNorm1d(n), True, False),
    ("d", "layer_norm(y)", lambda y, x, m: m.norm(y),
     lambda n: nn.LayerNorm(n), False, False),
    ("d", "group_norm(y, 32)", lambda y, x, m: m.norm(y),
     lambda n: nn.GroupNorm(32, n), False, False),
    ("e", "logsumexp(y)", lambda y, x, m: torch.logsumexp(y, 1),
     None, False, False),
    ("e", "y - y.mean(1)", lambda y, x, m: y - y.mean(1, keepdim=True),
     None, False, False),
    # SwiGLU on one GEMM: the output has half its features.
    ("gated", "swiglu(y)", lambda y, x, m: _swiglu(*y.chunk(2, dim=-1)),
     None, False, False),
    ("softmax", "softmax(y)", lambda y, x, m: F.softmax(y, -1),
     None, False, False),
    # A low temperature: most exponentials of a row underflow.
    ("softmax", "softmax(y / 0.02)", lambda y, x, m: F.softmax(y / 0.02, -1),
     None, False, False),
    ("softmax", "softmax(gelu(ln(y)))",
     lambda y, x, m: F.softmax(F.gelu(m.norm(y)), -1),
     lambda n: nn.LayerNorm(n), False, False),
]
# (batch, in_features, out_features), with the precisions timed there.
SIZES = [((1024, 8192, 8192), ("tf32", "fp32", "bf16")),
         ((16384, 4096, 4096), ("tf32", "fp32", "bf16")),
         ((32768, 1024, 4096), ("tf32",)),
         ((128, 16384, 16384), ("tf32",)),
         ((128, 32768, 32768), ("tf32",))]
FUSION_STRATEGIES = ("auto", "wgmma", "tiled", "cublas")
COMPILE_MODES = ("default", "max-autotune-no-cudagraphs")
# The part of the bench each device call runs: which precisions, and which
# torch.compile modes.
PARTS = {"tf32": (("tf32",), COMPILE_MODES),
         "tf32-default": (("tf32",), COMPILE_MODES[:1]),
         "rest": (("fp32", "bf16"), ()),
         "bf16-default": (("bf16",), COMPILE_MODES[:1]),
         # fusion against eager and the raw GEMM alone.
         "tf32-bf16": (("tf32", "bf16"), ())}


def split_part(part):
    """A part's name and the one size it is limited to (`tf32@MxKxN`)."""
    name, _, size = (part or "").partition("@")
    size = tuple(map(int, size.split("x"))) if size else None
    if size and size not in [s for s, _ in SIZES]:
        sys.exit(f"no bench size {part.partition('@')[2]} (sizes: " +
                 ", ".join("x".join(map(str, s)) for s, _ in SIZES) + ")")
    if name and name not in PARTS:
        sys.exit(f"no bench part {name} (parts: {', '.join(PARTS)})")
    return name or None, size


def bench_cases(part=None, models=None):
    part, size = split_part(part)
    precisions, modes = PARTS[part] if part else (tuple(PRECISIONS), ())
    for (m, k, n), timed_precisions in SIZES:
        if size and (m, k, n) != size:
            continue
        for category, name, body, norm, training, square in BENCH:
            if (square and k != n) or (models and name not in models):
                continue
            for pname in timed_precisions:
                if pname in precisions:
                    yield (category, name, body, norm, training, m, k, n,
                           pname, modes)


def bench_model(body, norm, training, k, n, dtype, device):
    torch.manual_seed(0)
    return Linear(k, n, body, norm).train(training).to(device=device,
                                                       dtype=dtype)


def prepare_bench(part=None, models=None, strategies=FUSION_STRATEGIES):
    for category, name, body, norm, training, m, k, n, pname, _ in \
            bench_cases(part, models):
        dtype, precision, _ = PRECISIONS[pname]
        model = bench_model(body, norm, training, k, n, dtype, "cpu")
        x = torch.randn(4, k, dtype=dtype)
        for strategy in strategies:
            fusion.compile(model, (x,), target=TARGET,
                           **strategy_options(strategy), precision=precision)
        print(f"prepared {name} {m}x{k}x{n} {pname}", flush=True)


def geomean(values):
    values = [v for v in values if v == v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) \
        if values else float("nan")


def checked_first_call(compiled, model, x, reference):
    """The relative error of `compiled`'s first call (output and updated
    running statistics) against `reference`'s, the model in float64 given
    the model's state before the call."""
    reference.load_state_dict(
        {name: b.double() if b.is_floating_point() else b
         for name, b in model.state_dict().items()})
    expected = reference(x.double())
    out = compiled(x)
    return max(error(out, expected), state_error(model, reference))


def run_bench(part, models=None, strategies=FUSION_STRATEGIES):
    rows, failures = [], []
    with torch.no_grad():
        for case in bench_cases(part, models):
            category, name, body, norm, training, m, k, n, pname, modes = case
            dtype, precision, bound = PRECISIONS[pname]
            tf32 = pname == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
            model = bench_model(body, norm, training, k, n, dtype, "cuda")
            reference = copy.deepcopy(model).double()
            x = torch.randn(m, k, device="cuda", dtype=dtype)
            times, errors = {}, {}
            eager_error = checked_first_call(model, model, x, reference)
            bound = max(bound, 1.25 * eager_error)
            for strategy in strategies:
                compiled = fusion.compile(model, (x,), target=TARGET,
                                          **strategy_options(strategy),
                                          precision=precision)
                errors[strategy] = checked_first_call(compiled, model, x,
                                                      reference)
                if not errors[strategy] <= bound:
                    failures.append(f"{name} {m}x{k}x{n} {pname} {strategy}:"
                                    f" {errors[strategy]:.3g}")
                times[strategy] = timed(lambda: compiled(x))
                del compiled
            del reference
            times["eager"] = timed(lambda: model(x))
            w, b = model.linear.weight, model.linear.bias
            times["gemm"] = timed(lambda: F.linear(x, w, b))
            for mode in modes:
                torch._dynamo.reset()
                inductor = torch.compile(model, mode=mode)
                times[mode] = timed(lambda: inductor(x))
                del inductor
            torch._dynamo.reset()
            rows.append((category, name, f"{m}x{k}x{n}", pname, times,
                         errors))
            print(f"timed {name} {m}x{k}x{n} {pname}: " + ", ".join(
                f"{key} {value:.3f}" for key, value in times.items()) +
                "; errors " + " ".join(f"{e:.1e}" for e in errors.values())
                + f", eager's {eager_error:.1e}", flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    part_name, _ = split_part(part)
    modes = PARTS[part_name][1] if part_name else ()
    keys = list(strategies) + ["eager"] + list(modes) + ["gemm"]
    print(f"\n## The epilogue family on {torch.cuda.get_device_name()} "
          f"({part}), ms per call (median of 10 x 10 calls), fusion.compile "
          f"with each strategy; the largest relative error of the "
          f"strategies' first calls against float64")
    print("| cat | model | M x K x N | prec | " + " | ".join(keys) +
          " | error |\n|---|---|---|---|" + "---|" * (len(keys) + 1))
    for category, name, size, pname, t, e in rows:
        print(f"| {category} | {name} | {size} | {pname} | " +
              " | ".join(f"{t[key]:.3f}" for key in keys) +
              f" | {max(e.values()):.1e} |")
    print("\n## Geometric means: fusion auto's speed-up over eager and "
          "torch.compile, and its time over the raw GEMM's")
    print("| group | precision | cases | over eager | over compile default |"
          " over max-autotune | auto / raw GEMM |\n|---|---|---|---|---|---|"
          "---|")
    groups = sorted({r[0] for r in rows}) + ["all"]
    for group in groups:
        for pname in PRECISIONS:
            picked = [r[4] for r in rows if r[3] == pname and
                      (group == "all" or r[0] == group)]
            if not picked:
                continue
            over = [geomean([t[mode] / t["auto"] for t in picked
                             if mode in t]) for mode in COMPILE_MODES]
            print(f"| {group} | {pname} | {len(picked)} | "
                  f"{geomean([t['eager'] / t['auto'] for t in picked]):.2f}"
                  f" | {over[0]:.2f} | {over[1]:.2f} | "
                  f"{geomean([t['auto'] / t['gemm'] for t in picked]):.2f} |")
    for mode in modes:
        slower = [f"{r[1]} {r[2]} ({r[4]['auto'] / r[4][mode]:.3f})"
                  for r in rows if r[4]["auto"] > r[4][mode]]
        print(f"\nfusion auto slower than torch.compile {mode}: "
              f"{slower or 'none'}")
    total = len(rows) * len(strategies)
    print(f"\n{total - len(failures)}/{total} first calls within bounds; "
          f"failures: {failures or 'none'}")
    return 1 if failures else 0

if __name__ == "__main__":
    action, what = sys.argv[1], sys.argv[2]
    if what == "check":
        picked = tuple(sys.argv[3].split(",")) if len(sys.argv) > 3 \
            else STRATEGIES
        models = sys.argv[4].split(",") if len(sys.argv) > 4 else ZOO
        sys.exit((prepare_check if action == "prepare" else run_check)(
            picked, models))
    part = sys.argv[3] if len(sys.argv) > 3 else None
    # Bench model names hold commas: MODELS is a ";"-separated list.
    models = sys.argv[4].split(";") if len(sys.argv) > 4 and sys.argv[4] \
        else None
    strategies = tuple(sys.argv[5].split(",")) if len(sys.argv) > 5 \
        else FUSION_STRATEGIES
    sys.exit((prepare_bench if action == "prepare" else run_bench)(
        part, models, strategies))
