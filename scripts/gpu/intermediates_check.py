#!/usr/bin/env python3
"""Training forward passes on the GPU, whose values saved for the backward
leave the fused op as intermediate results: torch.compile(backend="fusion")
with gradients, every strategy and precision, outputs and gradients against
the model in float64; then one such forward timed at the sizes users train
at, against eager PyTorch, torch.compile and the raw GEMM.

    intermediates_check.py prepare  (build machine) compiles every library
        the run loads into the cache ($FUSION_CACHE_DIR), for sm_90;
    intermediates_check.py run      (GPU machine) checks and times them;
        prints the tables last;
    intermediates_check.py sanitize (GPU machine, under compute-sanitizer)
        checks gelu_tanh_residual and two_branches with each strategy in
        bf16 and fp32.
"""
import copy
import statistics
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
import fusion.dynamo

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from check_and_bench import timed  # noqa: E402

TARGET = "sm_90"
STRATEGIES = ("tiled", "cublas", "wgmma")
# name -> (dtype, fusion precision, error bound against float64).
PRECISIONS = {"fp32": (torch.float32, None, 1e-5),
              "tf32": (torch.float32, "tf32", 5e-3),
              "bf16": (torch.bfloat16, None, 2e-2)}
# A ragged batch (not a tile multiple); 40 input features keep x's and w's
# rows 16-byte multiples, which the wgmma kernel's TMA needs.
CHECK_SHAPE = (77, 40, 200)
BENCH_SHAPE = (16384, 4096, 4096)
BENCH_PRECISIONS = ("bf16", "tf32")


class ScaledGelu(nn.Module):
    """gelu(linear(x) * -1.5): the backward saves GELU's input."""

    def __init__(self, k, n):
        super().__init__()
        self.linear = nn.Linear(k, n)

    def forward(self, x):
        return F.gelu(self.linear(x) * -1.5)


class GeluTanhResidual(nn.Module):
    """tanh(gelu(linear(x) * -1.5) + r) - shift: the backward saves GELU's
    input and tanh's output."""

    def __init__(self, k, n):
        super().__init__()
        self.linear = nn.Linear(k, n)
        self.shift = nn.Parameter(torch.randn(n))

    def forward(self, x, r):
        return torch.tanh(F.gelu(self.linear(x) * -1.5) + r) - self.shift


class TwoBranches(nn.Module):
    """tanh(y) and sigmoid(y) * y of one GEMM output y, both returned: the
    backward saves y itself. (Not relu: a GEMM rounded to tf32 flips its
    mask where y is near 0, each flip 1/sqrt(M N) of the gradient's norm,
    eager's gradients 1.5e-2 off on the H100's inputs; run 54.)"""

    def __init__(self, k, n):
        super().__init__()
        self.linear = nn.Linear(k, n)

    def forward(self, x):
        y = self.linear(x)
        return torch.tanh(y), torch.sigmoid(y) * y


MODELS = {"scaled_gelu": ScaledGelu, "gelu_tanh_residual": GeluTanhResidual,
          "two_branches": TwoBranches}


def twins(name, shape, dtype, device):
    m, k, n = shape
    torch.manual_seed(0)
    model = MODELS[name](k, n).to(device=device, dtype=dtype)
    reference = MODELS[name](k, n).to(device)
    reference.load_state_dict(model.state_dict())
    inputs = [torch.randn(m, k, device=device)]
    if name == "gelu_tanh_residual":
        inputs.append(torch.randn(m, n, device=device))
    return model, reference.double(), inputs


def compiled(model, strategy, precision, compile_only=False):
    options = {"target": TARGET, "strategy": strategy}
    if precision:
        options["precision"] = precision
    if compile_only:
        options["compile_only"] = True
    torch._dynamo.reset()
    return torch.compile(model, backend="fusion", options=options)


def as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


def prepare():
    for name in MODELS:
        for pname, (dtype, precision, _) in PRECISIONS.items():
            for strategy in STRATEGIES:
                model, _, inputs = twins(name, CHECK_SHAPE, dtype, "cpu")
                inputs = [i.to(dtype).requires_grad_() for i in inputs]
                compiled(model, strategy, precision, True)(*inputs)
        print(f"prepared {name}", flush=True)
    # The libraries take any batch: a small one compiles the bench's.
    for pname in BENCH_PRECISIONS:
        dtype, precision, _ = PRECISIONS[pname]
        model, _, inputs = twins("scaled_gelu", (64,) + BENCH_SHAPE[1:],
                                 dtype, "cpu")
        for strategy in ("auto",) + STRATEGIES:
            compiled(model, strategy, precision, True)(inputs[0].to(dtype))
    print("prepared the bench", flush=True)


def error(out, reference):
    return ((out.double() - reference).norm() /
            reference.norm().clamp_min(1e-30)).item()


def poison_free_memory():
    """Fills blocks of the caching allocator's small pool (tensors up to
    1 MiB, where the check's outputs come from) with NaN and frees them, so
    that an output the library leaves unwritten shows."""
    blocks = [torch.full((1 << 16,), float("nan"), device="cuda")
              for _ in range(256)]
    del blocks


def errors_of(model, reference, inputs, dtype, call):
    """The relative errors against `reference` (float64) of `call`'s outputs
    and of the gradients of its inputs and of `model`'s parameters."""
    ours = [i.to(dtype).clone().requires_grad_() for i in inputs]
    theirs = [i.double().requires_grad_() for i in inputs]
    outs = as_tuple(call(*ours))
    references = as_tuple(reference(*theirs))
    errors = [error(o, r) for o, r in zip(outs, references)]
    torch.manual_seed(1)
    weights = [torch.randn_like(r) for r in references]
    sum((o.double() * w).sum() for o, w in zip(outs, weights)).backward()
    sum((r * w).sum() for r, w in zip(references, weights)).backward()
    errors += [error(a.grad, b.grad) for a, b in zip(ours, theirs)]
    errors += [error(p.grad, q.grad) for p, q in
               zip(model.parameters(), reference.parameters())]
    return errors


def check(name, pname, strategy):
    """The worst error of the outputs and gradients, and whether each is
    within the precision's bound or, where eager PyTorch's own error in the
    same precision passes it (a bf16 gradient through a relu's mask), within
    1.25 times eager's."""
    dtype, precision, bound = PRECISIONS[pname]
    model, reference, inputs = twins(name, CHECK_SHAPE, dtype, "cuda")
    function = compiled(model, strategy, precision)
    poison_free_memory()
    errors = errors_of(model, reference, inputs, dtype, function)
    fused = fusion.dynamo.last_fused
    eager_model, reference, _ = twins(name, CHECK_SHAPE, dtype, "cuda")
    torch.backends.cuda.matmul.allow_tf32 = pname == "tf32"
    eager = errors_of(eager_model, reference, inputs, dtype, eager_model)
    torch.backends.cuda.matmul.allow_tf32 = False
    ok = len(fused) == 1 and all(
        e <= max(bound, 1.25 * e_eager) for e, e_eager in zip(errors, eager))
    if not ok:
        print(f"{name} {pname} {strategy}: fused {len(fused)}; ours "
              + " ".join(f"{e:.2e}" for e in errors) + "; eager "
              + " ".join(f"{e:.2e}" for e in eager), flush=True)
    return max(errors), ok


def bench(pname):
    """The forward of a training step of scaled_gelu in precision `pname`
    (autograd recording, the saved value written): ms by implementation,
    rounds interleaved; PyTorch's GEMMs in tf32 for tf32."""
    dtype, precision, bound = PRECISIONS[pname]
    torch.backends.cuda.matmul.allow_tf32 = pname == "tf32"
    model, reference, (x,) = twins("scaled_gelu", BENCH_SHAPE, dtype, "cuda")
    x = x.to(dtype)
    eager = model
    torch._dynamo.reset()
    inductor = torch.compile(copy.deepcopy(model))
    fns = {"eager": lambda: eager(x),
           "torch.compile": lambda: inductor(x)}
    for strategy in ("auto",) + STRATEGIES:
        f = compiled(copy.deepcopy(model), strategy, precision)
        fns[f"fusion {strategy}"] = lambda f=f: f(x)
        e = error(f(x), reference(x.double()))
        assert e <= bound and len(fusion.dynamo.last_fused) == 1, \
            (pname, strategy, e)
    w, b = model.linear.weight, model.linear.bias
    with torch.no_grad():
        fns["raw GEMM"] = lambda: F.linear(x, w, b)
    rounds = {k: [] for k in fns}
    for _ in range(5):
        for k, fn in fns.items():
            rounds[k].append(timed(fn))
    torch.backends.cuda.matmul.allow_tf32 = False
    return {k: statistics.median(v) for k, v in rounds.items()}, rounds


def run():
    rows, failures = [], []
    columns = [(p, s) for p in PRECISIONS for s in STRATEGIES]
    for name in MODELS:
        errors = []
        for pname, strategy in columns:
            e, ok = check(name, pname, strategy)
            errors.append(e)
            if not ok:
                failures.append(f"{name} {pname} {strategy}: {e:.3g}")
        rows.append((name, errors))
        print(f"checked {name}: " + " ".join(f"{e:.1e}" for e in errors),
              flush=True)
    benches = {pname: bench(pname) for pname in BENCH_PRECISIONS}
    print(f"\n## Training forwards with saved values on "
          f"{torch.cuda.get_device_name()}: worst relative error of the "
          f"outputs and gradients against float64 ({CHECK_SHAPE[0]} x "
          f"{CHECK_SHAPE[1]} -> {CHECK_SHAPE[2]}); bounds fp32 1e-5, tf32 "
          f"5e-3, bf16 2e-2, or 1.25 times eager's own error in the "
          f"precision")
    print("| model | " + " | ".join(f"{p} {s}" for p, s in columns) +
          " |\n|---|" + "---|" * len(columns))
    for name, errors in rows:
        print(f"| {name} | " + " | ".join(f"{e:.1e}" for e in errors) + " |")
    m, k, n = BENCH_SHAPE
    for pname, (times, rounds) in benches.items():
        print(f"\n## scaled_gelu's training forward, {pname}, {m} x {k} -> "
              f"{n}: ms (median of 5 interleaved rounds; min-max), and over "
              f"the raw GEMM")
        print("| implementation | ms | rounds | / raw GEMM |\n|---|---|---|---|")
        for key, ms in times.items():
            print(f"| {key} | {ms:.3f} | {min(rounds[key]):.3f}-"
                  f"{max(rounds[key]):.3f} | {ms / times['raw GEMM']:.3f} |")
    print(f"\nfailures: {failures or 'none'}")
    return not failures


def sanitize():
    results = [check(name, pname, strategy)
               for name in ("gelu_tanh_residual", "two_branches")
               for pname in ("bf16", "fp32") for strategy in STRATEGIES]
    print("sanitize checks:", " ".join(f"{e:.1e}" for e, _ in results))
    return all(ok for _, ok in results)


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare()
    elif sys.argv[1] == "sanitize":
        sys.exit(0 if sanitize() else 1)
    else:
        sys.exit(0 if run() else 1)
