"""Training forward passes on the GPU, whose values saved for the backward
leave the fused op as intermediate results (and a batch norm's batch
statistics as its last results): torch.compile(backend="fusion") with
gradients, every strategy and precision, outputs, gradients and running
statistics against the model in float64 (test_intermediates.py).
prepare() (build machine) compiles every library the check loads into
the cache, for sm_90.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
import fusion.dynamo

from gpu.helpers import PRECISIONS, TARGET

STRATEGIES = ("tiled", "cublas", "wgmma")
# A ragged batch (not a tile multiple); 40 input features keep x's and w's
# rows 16-byte multiples, which the wgmma kernel's TMA needs.
CHECK_SHAPE = (77, 40, 200)
# Batch norms also at a batch of more than one block row of tiles, which
# the three kernels (GEMM, finalize, normalize) compute.
LARGE_BATCH = 333


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


def compile_check(name, pname, strategy):
    """Compiles (into the cache) the libraries of check(name, pname,
    strategy), on CPU tensors of the check's shapes."""
    dtype, precision, _ = PRECISIONS[pname]
    model, _, inputs = twins(name, CHECK_SHAPE, dtype, "cpu")
    inputs = [i.to(dtype).requires_grad_() for i in inputs]
    outputs = compiled(model, strategy, precision, True)(*inputs)
    # The backward graph's libraries (fusion fuses it too).
    sum(o.float().sum() for o in
        (outputs if isinstance(outputs, (tuple, list)) else [outputs])
        if o.requires_grad).backward()


def cases():
    """(name, rows, precision, strategy) of the check."""
    for name in MODELS:
        for shape in check_shapes(name):
            for pname in PRECISIONS:
                for strategy in STRATEGIES:
                    yield name, shape[0], pname, strategy


def prepare():
    for name in MODELS:
        for pname in PRECISIONS:
            for strategy in STRATEGIES:
                yield (f"intermediates {name} {pname} {strategy}",
                       lambda name=name, pname=pname, strategy=strategy:
                       compile_check(name, pname, strategy))


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
    """The errors of the outputs, gradients and running statistics, the
    bound of each (the precision's or, where eager PyTorch's own error in
    the same precision passes it (a bf16 gradient through a relu's mask),
    1.25 times eager's), and how many partitions were fused."""
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
    bounds = [max(bound, 1.25 * e_eager) for e_eager in eager]
    return errors, bounds, len(fused)
