#!/usr/bin/env python3
"""Training forward passes on the GPU, whose values saved for the backward
leave the fused op as intermediate results (and a batch norm's batch
statistics as its last results): torch.compile(backend="fusion") with
gradients, every strategy and precision, outputs, gradients and running
statistics against the model in float64; then one such forward timed at
the sizes users train at, against eager PyTorch, torch.compile and the raw
GEMM.

    intermediates_check.py prepare [MODELS [BENCH]]  (build machine)
        compiles every library the run loads into the cache
        ($FUSION_CACHE_DIR), for sm_90;
    intermediates_check.py run [MODELS [BENCH]]  (GPU machine) checks and
        times them; prints the tables last;
    intermediates_check.py sanitize [MODELS]  (GPU machine, under
        compute-sanitizer) checks the models with each strategy in bf16 and
        fp32;
    intermediates_check.py profile BENCH  (GPU machine, under ncu --nvtx)
        runs BENCH's bf16 training forward once by fusion auto and once by
        torch.compile, in the NVTX ranges `fusion` and `torch.compile`.
MODELS is a comma-separated list of MODELS' names (default: all; sanitize:
gelu_tanh_residual,two_branches; "" none), BENCH the model timed
(scaled_gelu).
"""
import contextlib
import copy
import statistics
import sys

import torch
import torch._decomp.decompositions as decompositions
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
# Batch norms also at a batch of more than one block row of tiles, which
# the three kernels (GEMM, finalize, normalize) compute.
LARGE_BATCH = 333
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


class ScaleBatchNorm(nn.Module):
    """batch_norm(linear(x) * scale) in training (the mission's workload B):
    the backward saves the GEMM output, the norm's input, and its batch mean
    and inverse standard deviation."""

    def __init__(self, k, n):
        super().__init__()
        self.linear = nn.Linear(k, n)
        self.scale = nn.Parameter(torch.rand(n) * 3 - 1.5)
        self.bn = nn.BatchNorm1d(n, momentum=0.3)

    def forward(self, x):
        return self.bn(self.linear(x) * self.scale)


class GeluBatchNorm(nn.Module):
    """batch_norm(gelu(linear(x) * -1.5)), affine, in training."""

    def __init__(self, k, n):
        super().__init__()
        self.linear = nn.Linear(k, n)
        self.bn = nn.BatchNorm1d(n, momentum=0.3)
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-1, 1)

    def forward(self, x):
        return self.bn(F.gelu(self.linear(x) * -1.5))


MODELS = {"scaled_gelu": ScaledGelu, "gelu_tanh_residual": GeluTanhResidual,
          "two_branches": TwoBranches, "scale_batch_norm": ScaleBatchNorm,
          "gelu_batch_norm": GeluBatchNorm}


def check_shapes(name):
    """The shapes `name` is checked at."""
    if "batch_norm" in name:
        return [CHECK_SHAPE, (LARGE_BATCH,) + CHECK_SHAPE[1:]]
    return [CHECK_SHAPE]


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


def compiled(model, strategy, precision, compile_only=False, fallback=None):
    options = {"target": TARGET, "strategy": strategy}
    if precision:
        options["precision"] = precision
    if compile_only:
        options["compile_only"] = True
    if fallback:
        options["fallback"] = fallback
    torch._dynamo.reset()
    return torch.compile(model, backend="fusion", options=options)


def as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


@contextlib.contextmanager
def traced_as_on_gpus():
    """Traces a low-precision training batch norm's batch statistics in
    float32, as PyTorch's GPU kernels return them (its CPU kernels: in the
    input's dtype), so that the programs compiled here are those the GPU's
    graphs import."""
    helper = decompositions.native_batch_norm_helper

    def as_on_gpus(input, *args, **kwargs):
        out, mean, invstd, *rest = helper(input, *args, **kwargs)
        if mean.numel():
            mean, invstd = mean.float(), invstd.float()
        return (out, mean, invstd, *rest)

    decompositions.native_batch_norm_helper = as_on_gpus
    try:
        yield
    finally:
        decompositions.native_batch_norm_helper = helper


@traced_as_on_gpus()
def prepare(models, bench_model):
    for name in models:
        for pname, (dtype, precision, _) in PRECISIONS.items():
            for strategy in STRATEGIES:
                model, _, inputs = twins(name, CHECK_SHAPE, dtype, "cpu")
                inputs = [i.to(dtype).requires_grad_() for i in inputs]
                compiled(model, strategy, precision, True)(*inputs)
        print(f"prepared {name}", flush=True)
    # The libraries take any batch: a small one compiles the bench's.
    for pname in BENCH_PRECISIONS:
        dtype, precision, _ = PRECISIONS[pname]
        model, _, inputs = twins(bench_model, (64,) + BENCH_SHAPE[1:],
                                 dtype, "cpu")
        for strategy in ("auto",) + STRATEGIES:
            compiled(model, strategy, precision, True)(inputs[0].to(dtype))
        compiled(model, "auto", precision, True, "inductor")(
            inputs[0].to(dtype))
    print("prepared the bench", flush=True)


def error(out, reference, floor=1e-30):
    return ((out.double() - reference).norm() /
            reference.norm().clamp_min(floor)).item()


def gradient_errors(grads, references):
    """The relative errors of parameter gradients. One that vanishes
    analytically (a bias or scale before a batch norm, which the norm
    cancels; in float64, below 1e-9 of the largest gradient's norm) is
    measured against the largest gradient's norm."""
    largest = max(r.norm().item() for r in references)
    return [error(g, r, largest if r.norm().item() < 1e-9 * largest else
                  1e-30) for g, r in zip(grads, references)]


def poison_free_memory():
    """Fills blocks of the caching allocator's small pool (tensors up to
    1 MiB, where the check's outputs come from) with NaN and frees them, so
    that an output the library leaves unwritten shows."""
    blocks = [torch.full((1 << 16,), float("nan"), device="cuda")
              for _ in range(256)]
    del blocks


def errors_of(model, reference, inputs, dtype, call):
    """The relative errors against `reference` (float64) of `call`'s outputs,
    of the gradients of its inputs and of `model`'s parameters
    (gradient_errors), and of its running statistics."""
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
    errors += gradient_errors([p.grad for p in model.parameters()],
                              [q.grad for q in reference.parameters()])
    errors += [error(p, q) for p, q in
               zip(model.buffers(), reference.buffers())
               if p.is_floating_point()]
    return errors


def check(name, pname, strategy, shape=CHECK_SHAPE):
    """The worst error of the outputs, gradients and running statistics, and
    whether each is within the precision's bound or, where eager PyTorch's
    own error in the same precision passes it (a bf16 gradient through a
    relu's mask), within 1.25 times eager's."""
    dtype, precision, bound = PRECISIONS[pname]
    model, reference, inputs = twins(name, shape, dtype, "cuda")
    function = compiled(model, strategy, precision)
    poison_free_memory()
    errors = errors_of(model, reference, inputs, dtype, function)
    fused = fusion.dynamo.last_fused
    eager_model, reference, _ = twins(name, shape, dtype, "cuda")
    torch.backends.cuda.matmul.allow_tf32 = pname == "tf32"
    eager = errors_of(eager_model, reference, inputs, dtype, eager_model)
    torch.backends.cuda.matmul.allow_tf32 = False
    ok = len(fused) == 1 and all(
        e <= max(bound, 1.25 * e_eager) for e, e_eager in zip(errors, eager))
    if not ok:
        print(f"{name} {shape[0]} {pname} {strategy}: fused {len(fused)}; "
              f"ours "
              + " ".join(f"{e:.2e}" for e in errors) + "; eager "
              + " ".join(f"{e:.2e}" for e in eager), flush=True)
    return max(errors), ok


def bench(name, pname):
    """A training step of model `name` in precision `pname`: its forward
    (autograd recording, the saved values written) and the whole step
    (forward and backward to the parameters' gradients): ms by
    implementation and part, rounds interleaved; PyTorch's GEMMs in tf32
    for tf32. The raw GEMM's step is the linear layer's alone. fusion's
    backward is PyTorch's kernels, but with fallback="inductor"
    (inductor's)."""
    dtype, precision, bound = PRECISIONS[pname]
    torch.backends.cuda.matmul.allow_tf32 = pname == "tf32"
    model, reference, (x,) = twins(name, BENCH_SHAPE, dtype, "cuda")
    x = x.to(dtype)
    eager = model
    torch._dynamo.reset()
    inductor = torch.compile(copy.deepcopy(model))
    forwards = {"eager": lambda: eager(x),
                "torch.compile": lambda: inductor(x)}
    for strategy in ("auto",) + STRATEGIES:
        f = compiled(copy.deepcopy(model), strategy, precision)
        forwards[f"fusion {strategy}"] = lambda f=f: f(x)
        e = error(f(x), reference(x.double()))
        assert e <= bound and len(fusion.dynamo.last_fused) == 1, \
            (pname, strategy, e)
    # fallback="inductor": inductor compiles the ops fusion leaves, the
    # backward included.
    f = compiled(copy.deepcopy(model), "auto", precision, fallback="inductor")
    forwards["fusion auto, inductor rest"] = lambda: f(x)
    e = error(f(x), reference(x.double()))
    assert e <= bound and fusion.dynamo.last_fused, (pname, "inductor", e)
    w, b = model.linear.weight, model.linear.bias
    forwards["raw GEMM"] = lambda: F.linear(x, w, b)
    grad = torch.randn(BENCH_SHAPE[0], BENCH_SHAPE[2], device="cuda",
                       dtype=dtype)
    fns = {}
    for key, forward in forwards.items():
        fns[(key, "forward")] = forward
        fns[(key, "step")] = lambda forward=forward: forward().backward(grad)
    rounds = {k: [] for k in fns}
    for _ in range(5):
        for k, fn in fns.items():
            rounds[k].append(timed(fn))
    torch.backends.cuda.matmul.allow_tf32 = False
    return {k: statistics.median(v) for k, v in rounds.items()}, rounds


def profile(name):
    dtype = torch.bfloat16
    model, _, (x,) = twins(name, BENCH_SHAPE, dtype, "cuda")
    x = x.to(dtype)
    torch._dynamo.reset()
    forwards = {"torch.compile": torch.compile(copy.deepcopy(model)),
                "fusion": compiled(copy.deepcopy(model), "auto", None)}
    for label, forward in forwards.items():
        for _ in range(3):
            forward(x)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(label)
        forward(x)
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()


def run(models, bench_model):
    rows, failures = [], []
    columns = [(p, s) for p in PRECISIONS for s in STRATEGIES]
    for name in models:
        for shape in check_shapes(name):
            errors = []
            for pname, strategy in columns:
                e, ok = check(name, pname, strategy, shape)
                errors.append(e)
                if not ok:
                    failures.append(f"{name} {shape[0]} {pname} {strategy}: "
                                    f"{e:.3g}")
            rows.append((f"{name} ({shape[0]} rows)", errors))
            print(f"checked {rows[-1][0]}: " +
                  " ".join(f"{e:.1e}" for e in errors), flush=True)
    benches = {pname: bench(bench_model, pname)
               for pname in BENCH_PRECISIONS}
    print(f"\n## Training forwards with saved values on "
          f"{torch.cuda.get_device_name()}: worst relative error of the "
          f"outputs, gradients and running statistics against float64 "
          f"(batch x {CHECK_SHAPE[1]} -> {CHECK_SHAPE[2]}); bounds fp32 "
          f"1e-5, tf32 "
          f"5e-3, bf16 2e-2, or 1.25 times eager's own error in the "
          f"precision")
    print("| model | " + " | ".join(f"{p} {s}" for p, s in columns) +
          " |\n|---|" + "---|" * len(columns))
    for name, errors in rows:
        print(f"| {name} | " + " | ".join(f"{e:.1e}" for e in errors) + " |")
    m, k, n = BENCH_SHAPE
    for pname, (times, rounds) in benches.items():
        print(f"\n## {bench_model}'s training step, {pname}, {m} x {k} -> "
              f"{n}: ms of the forward and of the whole step (median of 5 "
              f"interleaved rounds; min-max), and over the raw GEMM's")
        print("| implementation | forward ms | forward rounds | / raw GEMM "
              "| step ms | step rounds | / raw GEMM's |\n"
              "|---|---|---|---|---|---|---|")
        for key in dict.fromkeys(k for k, _ in times):
            cells = []
            for part in ("forward", "step"):
                ms, r = times[(key, part)], rounds[(key, part)]
                cells.append(f"{ms:.3f} | {min(r):.3f}-{max(r):.3f} | "
                             f"{ms / times[('raw GEMM', part)]:.3f}")
            print(f"| {key} | " + " | ".join(cells) + " |")
    print(f"\nfailures: {failures or 'none'}")
    return not failures


def sanitize(models):
    results = [check(name, pname, strategy, shape)
               for name in models for shape in check_shapes(name)
               for pname in ("bf16", "fp32") for strategy in STRATEGIES]
    print("sanitize checks:", " ".join(f"{e:.1e}" for e, _ in results))
    return all(ok for _, ok in results)


if __name__ == "__main__":
    command = sys.argv[1]
    default = ("gelu_tanh_residual,two_branches" if command == "sanitize"
               else ",".join(MODELS))
    names = [n for n in (sys.argv[2] if len(sys.argv) > 2 else
                         default).split(",") if n]
    bench_name = sys.argv[3] if len(sys.argv) > 3 else "scaled_gelu"
    if command == "prepare":
        prepare(names, bench_name)
    elif command == "sanitize":
        sys.exit(0 if sanitize(names) else 1)
    elif command == "profile":
        profile(sys.argv[2])
    else:
        sys.exit(0 if run(names, bench_name) else 1)
