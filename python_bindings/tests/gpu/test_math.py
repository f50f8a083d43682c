"""Math in GEMM epilogues on the GPU, from the library cache (sm_90), every
strategy in fp32, through the identity layer (helpers.IdentityLayer: every
GEMM precision computes bf16 x exactly, the epilogue adds the bias in f32):

- fmod and remainder bit for bit against PyTorch's CUDA kernels
  (libdevice's fmodf, exact) over a million values a case: quotients from
  below 2^-40 to past 2^40 (the expanded fast path and libdevice's branch,
  `fusion-expand-remainders`), divisors of either sign that are constants
  or per-column values, zeros, infinities and NaN among them;
- sin, cos and tan against float64 in ulps of the f32 nearest the exact
  value, |y| from 2^-20 to 2^20 (the inline reduction of
  `fusion-expand-trigonometry` up to 105615, libdevice's functions out of
  line beyond: bit for bit as PyTorch's there); columns of their own hold
  the cases the bias alone gives (x 0 there): the f32 values nearest
  multiples of pi/2 and their neighbours, the bound and the next f32,
  zero, infinities and NaN;
- the special functions of fusion/special.py against float64 in ulps (for
  the Bessel functions J and Y, of the larger of the value and their
  oscillation's amplitude sqrt(2 / (pi x)): their errors are absolute near
  zeros), and their special values (zeros, poles, infinities, NaN) against
  PyTorch's; the same of the activations whose formula the lowering
  rewrites (mish).
"""
import math

import pytest
import torch

import fusion

from gpu.helpers import (FEATURES, ROWS, TARGET, IdentityLayer, spread,
                         ulps)

pytestmark = pytest.mark.gpu
STRATEGIES = ("tiled", "cublas", "wgmma")


def compiled(model, x, strategy):
    return fusion.compile(model, (x,), target=TARGET, strategy=strategy)


# -------------------------------------------------------------- remainders

def remainder_divisors():
    generator = torch.Generator().manual_seed(1)
    values = spread(FEATURES, -30, 30, generator)
    values[:5] = torch.tensor([0.0, -0.0, float("inf"), -float("inf"),
                               float("nan")])
    return values


REMAINDERS = {
    "fmod(y, v)": lambda y, v: torch.fmod(y, v),
    "remainder(y, v)": lambda y, v: torch.remainder(y, v),
    "fmod(y, -0.7)": lambda y, v: torch.fmod(y, -0.7),
    "remainder(y, 3)": lambda y, v: torch.remainder(y, 3.0),
    "fmod(y, 2^-20)": lambda y, v: torch.fmod(y, 2.0 ** -20),
}


def remainder_inputs():
    generator = torch.Generator().manual_seed(0)
    x = spread(ROWS * FEATURES, -40, 40, generator).reshape(ROWS, FEATURES)
    # Multiples of the divisors, bf16's too (an f32 0.7 is not y exactly
    # through 3xTF32).
    x[0, :8] = torch.tensor([0.0, 1.5, 3.0, -3.0, 6.0, -6.0, 2.0 ** 100,
                             -2.0 ** -100])
    return x


def remainder_layer(name):
    return IdentityLayer(REMAINDERS[name], parameter=remainder_divisors())


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", list(REMAINDERS))
def test_remainder(library_cache, within, sm90, name, strategy):
    x = remainder_inputs().cuda()
    with torch.no_grad():
        model = remainder_layer(name).cuda()
        expected = model(x)
        out = compiled(model, x, strategy)(x)
    numbers = ~expected.isnan()
    differ = int((out[numbers].view(torch.int32) !=
                  expected[numbers].view(torch.int32)).sum())
    differ += int((out.isnan() != expected.isnan()).sum())
    where = ""
    if differ:
        i, j = ((out.view(torch.int32) != expected.view(torch.int32)) &
                ~(out.isnan() & expected.isnan())).nonzero()[0].tolist()
        where = (f"; the first at x[{i}, {j}] = {x[i, j].item()!r}: "
                 f"{out[i, j].item()!r} against {expected[i, j].item()!r}")
    within(differ, 0, f"elements differing from PyTorch's{where}")


def prepare_remainders():
    for name in REMAINDERS:
        for strategy in STRATEGIES:
            yield (f"remainder {name} {strategy}",
                   lambda name=name, strategy=strategy: compiled(
                       remainder_layer(name), remainder_inputs(), strategy))


# ------------------------------------------------------------ trigonometry
LARGEST_REDUCED = 105615.0
# The pass's bounds, from its exhaustive sweep on the CPU (sine 1.53,
# cosine 1.54, tangent 3.44 with a correctly rounded reciprocal; the GPU's
# is rcp.approx, within an ulp).
TRIGONOMETRY = {"sin": (torch.sin, 1.55), "cos": (torch.cos, 1.55),
                "tan": (torch.tan, 3.5)}


def trigonometry_specials():
    """The bias's own cases: infinities, NaN, 0, the bound and beyond, and
    the f32 values nearest k pi/2 (where the reduction cancels most) with
    their neighbours."""
    values = [float("inf"), -float("inf"), float("nan"), 0.0,
              LARGEST_REDUCED, -LARGEST_REDUCED, 105616.0, 52516.43359375,
              105032.8671875]
    for k in (1, 2, 3, 4, 5, 10, 100, 1000, 10000, 33433, 66866, 67000):
        nearest = torch.tensor(k * math.pi / 2, dtype=torch.float32)
        values += [nearest.item(),
                   torch.nextafter(nearest, torch.tensor(0.0)).item(),
                   torch.nextafter(nearest, torch.tensor(1e6)).item()]
    return torch.tensor(values)


def trigonometry_bias():
    generator = torch.Generator().manual_seed(1)
    values = spread(FEATURES, -20, 17, generator, bf16=False)
    specials = trigonometry_specials()
    values[:len(specials)] = specials
    return values


def trigonometry_inputs():
    generator = torch.Generator().manual_seed(0)
    x = spread(ROWS * FEATURES, -20, 20, generator).reshape(ROWS, FEATURES)
    x[:, :len(trigonometry_specials())] = 0.0
    return x


def trigonometry_layer(name):
    function, _ = TRIGONOMETRY[name]
    return IdentityLayer(lambda y, _: function(y), bias=trigonometry_bias())


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", list(TRIGONOMETRY))
def test_trigonometry(library_cache, within, sm90, name, strategy):
    function, bound = TRIGONOMETRY[name]
    x = trigonometry_inputs().cuda()
    y = (x + trigonometry_bias().cuda()).double()
    reduced = y.abs() <= LARGEST_REDUCED
    with torch.no_grad():
        model = trigonometry_layer(name).cuda()
        exact = function(y)
        theirs = model(x)
        out = compiled(model, x, strategy)(x)
    worst = ulps(out, exact)[reduced].max().item()
    beyond = ~reduced & ~(out.isnan() & theirs.isnan())
    differ = int((out[beyond].view(torch.int32) !=
                  theirs[beyond].view(torch.int32)).sum())
    assert differ == 0, f"{differ} beyond 105615 differ from PyTorch's"
    within(worst, bound, "max ulps, |y| <= 105615")


def prepare_trigonometry():
    for name in TRIGONOMETRY:
        for strategy in STRATEGIES:
            yield (f"trigonometry {name} {strategy}",
                   lambda name=name, strategy=strategy: compiled(
                       trigonometry_layer(name), trigonometry_inputs(),
                       strategy))


# ------------------------------------------------------- special functions
INF, NAN = math.inf, math.nan
# name -> (function, x's range, max ulps): python_bindings/tests/
# test_special.py's CPU bounds, and two ulps for libdevice's log, exp, erf
# and erfc beneath them.
FUNCTIONS = {
    "i0": (torch.special.i0, (-80, 80), 8),
    "i0e": (torch.special.i0e, (-200, 200), 7),
    "i1": (torch.special.i1, (-80, 80), 20),
    "i1e": (torch.special.i1e, (-200, 200), 15),
    "erfinv": (torch.erfinv, (-0.99, 0.99), 4),
    "erfcx": (torch.special.erfcx, (-9, 30), 6),
    "ndtri": (torch.special.ndtri, (0.01, 0.99), 5),
    "log_ndtr": (torch.special.log_ndtr, (-40, 10), 83),
    "lgamma": (torch.lgamma, (0.01, 8), 6),
    "digamma": (torch.digamma, (2, 30), 10),
    "modified_bessel_i0": (torch.special.modified_bessel_i0, (-80, 80), 8),
    "modified_bessel_i1": (torch.special.modified_bessel_i1, (-80, 80), 20),
    # Between its zeros at +-pi: sin's rounding of x near them aside.
    "spherical_bessel_j0": (torch.special.spherical_bessel_j0, (-3, 3), 6),
    # libdevice's (CUDA documents 9 ulps below 8 and an absolute 2.2e-6
    # beyond): in ulps of the oscillation's amplitude where larger.
    "bessel_j0": (torch.special.bessel_j0, (-40, 40), 32),
    "bessel_j1": (torch.special.bessel_j1, (-40, 40), 32),
    "bessel_y0": (torch.special.bessel_y0, (0.01, 40), 32),
    "bessel_y1": (torch.special.bessel_y1, (0.01, 40), 32),
    # PyTorch's float32 trigamma; zeta's series above 0 and the reflection
    # below (PyTorch's CUDA kernel sums zeta's series from x on).
    "trigamma": (lambda x: torch.polygamma(1, x), (0.01, 30), 8),
    "polygamma_3": (lambda x: torch.polygamma(3, x), (-20, 20), 24),
}
OSCILLATING = {"bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"}
# Activations whose formula the GPU lowering rewrites (fusion-expand-tanh):
# mish's tanh(softplus(x)) as n / (n + 2); gelu's tanh form's 1 + tanh(y) as
# 2 / (1 + exp(-2y)), within 256 ulps: y = c (x + 0.044715 x^3) is rounded
# to f32 (a few ulps), and exp magnifies that relative error by |2y|, up
# to 87 on (-10, 10) (177 ulps on the H200, run 161; 7 above x = -3),
# where PyTorch's float32 1 + tanh(y) loses every digit; below -10 the
# results are subnormal or 0.
ACTIVATIONS = {
    "mish": (torch.nn.functional.mish, (-30, 30), 5),
    "gelu_tanh": (lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
                  (-10, 10), 256),
}
# Float64 references where the function's own formula cancels in float64
# too (1 + tanh(y) = 2 sigmoid(2y)).
REFERENCES = {
    "gelu_tanh": lambda x: x * torch.sigmoid(
        2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)),
}
SPECIAL = [0.0, INF, -INF, NAN, 1.0, 2.0, -2.0, 8.0, -0.5, 0.5, 1e30, -1e30]


def group_width(table):
    return FEATURES // len(table)


def specials(table=FUNCTIONS):
    """(column, value) of each group's special values."""
    width = group_width(table)
    return [(j * width + width - len(SPECIAL) + i, v)
            for j in range(len(table)) for i, v in enumerate(SPECIAL)]


def function_bias(table=FUNCTIONS):
    generator = torch.Generator().manual_seed(1)
    values = (torch.rand(FEATURES, generator=generator) - 0.5) * 0.01
    for column, value in specials(table):
        values[column] = value
    return values


def function_inputs(table=FUNCTIONS):
    """Column group j holds function j's arguments: x drawn from its range
    (bf16 values), each group's last columns 0 (their special values come
    from the bias: the GEMM would spread infinities over their row)."""
    generator = torch.Generator().manual_seed(0)
    width = group_width(table)
    x = torch.zeros(ROWS, FEATURES)
    for j, (_, (low, high), _) in enumerate(table.values()):
        x[:, j * width:(j + 1) * width] = low + (high - low) * torch.rand(
            ROWS, width, generator=generator)
    x = x.to(torch.bfloat16).float()
    for column, _ in specials(table):
        x[:, column] = 0.0
    return x


def function_layer(name, table=FUNCTIONS):
    function = table[name][0]
    return IdentityLayer(lambda y, _: function(y), bias=function_bias(table))


def check_function(within, name, strategy, table):
    """Function `name` of `table` against float64 in ulps (of the
    oscillation's amplitude where larger), and its special values against
    PyTorch's."""
    function, _, bound = table[name]
    width = group_width(table)
    j = list(table).index(name)
    x = function_inputs(table).cuda()
    special_columns = [c for c, _ in specials(table)]
    y = (x + function_bias(table).cuda()).double()
    with torch.no_grad():
        model = function_layer(name, table).cuda()
        theirs = model(x)
        out = compiled(model, x, strategy)(x)
    columns = [c for c in range(j * width, (j + 1) * width)
               if c not in special_columns]
    exact = REFERENCES.get(name, function)(y[:, columns])
    finite = exact.abs() < 3e38
    magnitude = torch.maximum(exact.abs(), torch.sqrt(
        2 / (math.pi * y[:, columns].abs().clamp(min=1)))) \
        if name in OSCILLATING else None
    worst = ulps(out[:, columns], exact, magnitude)[finite].max().item()
    own = [c for c in special_columns if j * width <= c < (j + 1) * width]
    a, b = out[0, own], theirs[0, own]
    close = torch.isclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    assert close.all(), (f"special values at {y[0, own][~close].tolist()}:"
                         f" {a[~close].tolist()} against "
                         f"{b[~close].tolist()}")
    within(worst, bound, "max ulps")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_special_function(library_cache, within, sm90, name, strategy):
    check_function(within, name, strategy, FUNCTIONS)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation(library_cache, within, sm90, name, strategy):
    check_function(within, name, strategy, ACTIVATIONS)


def prepare_table(table, label):
    for name in table:
        for strategy in STRATEGIES:
            yield (f"{label} {name} {strategy}",
                   lambda name=name, strategy=strategy: compiled(
                       function_layer(name, table), function_inputs(table),
                       strategy))


PREPARE = {"remainders": prepare_remainders,
           "trigonometry": prepare_trigonometry,
           "special-functions": lambda: prepare_table(FUNCTIONS,
                                                      "special function"),
           "activations": lambda: prepare_table(ACTIVATIONS, "activation")}
