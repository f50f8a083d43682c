"""The epilogue family's bench models: one model per category (and
libdevice's and fusion/special.py's functions) at the sizes users run,
which scripts/bench's `family` suite times against eager PyTorch,
torch.compile and the raw GEMM (each strategy's first call checked
against float64 first), and whose row programs test_reductions.py checks
by batch. prepare() fills the library cache (build machine) for the
suite's cases.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion

from gpu.helpers import PRECISIONS, TARGET, relative_error, state_error
from zoo import _swiglu

FUSION_STRATEGIES = ("auto", "wgmma", "tiled", "cublas")
COMPILE_MODES = ("default", "max-autotune-no-cudagraphs")


def strategy_options(strategy):
    """fusion.compile's options for a strategy ("pingpong": the wgmma
    kernels with the ping-pong schedule)."""
    if strategy == "pingpong":
        return {"strategy": "wgmma", "schedule": "pingpong"}
    return {"strategy": strategy}


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


def bench_model(body, norm, training, k, n, dtype, device):
    torch.manual_seed(0)
    return Linear(k, n, body, norm).train(training).to(device=device,
                                                       dtype=dtype)


def bench_cases(sizes=None, precisions=None, models=None):
    """(category, name, body, norm, training, m, k, n, precision) of the
    bench: SIZES' sizes and precisions, limited to `sizes` ((m, k, n)),
    `precisions` and `models` (names) where given."""
    for (m, k, n), timed_precisions in SIZES:
        if sizes and (m, k, n) not in sizes:
            continue
        for category, name, body, norm, training, square in BENCH:
            if (square and k != n) or (models and name not in models):
                continue
            for pname in timed_precisions:
                if not precisions or pname in precisions:
                    yield (category, name, body, norm, training, m, k, n,
                           pname)


def prepare(sizes=None, precisions=None, models=None,
            strategies=FUSION_STRATEGIES):
    """(label, compile) of every library of the bench's cases (the
    libraries take any batch: a small one compiles them)."""
    for category, name, body, norm, training, m, k, n, pname in \
            bench_cases(sizes, precisions, models):
        for strategy in strategies:
            def compile_one(body=body, norm=norm, training=training, k=k,
                            n=n, pname=pname, strategy=strategy):
                dtype, precision, _ = PRECISIONS[pname]
                model = bench_model(body, norm, training, k, n, dtype, "cpu")
                x = torch.randn(4, k, dtype=dtype)
                fusion.compile(model, (x,), target=TARGET,
                               **strategy_options(strategy),
                               precision=precision)
            yield f"family {name} {m}x{k}x{n} {pname} {strategy}", \
                compile_one


def checked_first_call(compiled, model, x, reference):
    """The relative error of `compiled`'s first call (output and updated
    running statistics) against `reference`'s, the model in float64 given
    the model's state before the call."""
    reference.load_state_dict(
        {name: b.double() if b.is_floating_point() else b
         for name, b in model.state_dict().items()})
    expected = reference(x.double())
    out = compiled(x)
    return max(relative_error(out, expected, 1e-30),
               state_error(model, reference))
