"""The special functions without a math dialect op (fusion/special.py)
after an identity layer on the CPU target: ulps against float64 over their
ranges, and PyTorch's results at zeros, poles, infinities and NaN (the GPU's:
gpu/test_math.py and gpu/test_zoo.py)."""
import ctypes
import ctypes.util
import math

import pytest
import torch
import torch.nn as nn

import fusion

FEATURES = 64
INF, NAN = math.inf, math.nan


class Identity(nn.Module):
    """function(linear(x)) of a layer computing y = x (weight I, bias 0),
    or y = the bias (weight 0) for values that the GEMM would spread over
    their row (inf * 0)."""

    def __init__(self, function, bias=None):
        super().__init__()
        self.linear = nn.Linear(FEATURES, FEATURES)
        with torch.no_grad():
            if bias is None:
                self.linear.weight.copy_(torch.eye(FEATURES))
                self.linear.bias.zero_()
            else:
                self.linear.weight.zero_()
                self.linear.bias.copy_(bias)
        self.function = function

    def forward(self, x):
        return self.function(self.linear(x))


def run(function, x):
    compiled = fusion.compile(Identity(function), (x,), target="cpu")
    with torch.no_grad():
        return compiled(x)


def ulps(out, reference):
    """|out - reference| in units of the float32 spacing at reference."""
    magnitude = reference.float().abs()
    spacing = torch.nextafter(magnitude, torch.tensor(INF)) - magnitude
    return ((out.double() - reference).abs() / spacing.double()).max().item()


# name -> (function, [(low, high)] of x, max ulps against float64): within
# a few ulps where the function is away from its zeros, or as PyTorch's
# float32 CPU kernels at these inputs (i0 3.8, i1 13.6, i1e 9.4, log_ndtr
# 76: the same algorithms; erfcx 58; digamma 12.7, whose shift to 10 ours
# stops at 4: 7.7).
SWEEPS = {
    "i0": (torch.special.i0, [(-80, 80)], 6),
    "i0e": (torch.special.i0e, [(-200, 200)], 5),
    "i1": (torch.special.i1, [(-80, 80)], 18),
    "i1e": (torch.special.i1e, [(-200, 200)], 13),
    "modified_bessel_i0": (torch.special.modified_bessel_i0, [(-80, 80)], 6),
    "modified_bessel_i1": (torch.special.modified_bessel_i1, [(-80, 80)],
                           18),
    # Away from its zeros (multiples of pi), where sin's own rounding of x
    # is the error; near 0 the series.
    "spherical_bessel_j0": (torch.special.spherical_bessel_j0,
                            [(-0.6, 0.6), (0.1, 3.0), (-3.0, -0.1)], 4),
    "erfinv": (torch.erfinv, [(-1, 1)], 2),
    # Both tails (down to 1e-38) and around 1/2 (PyTorch's CPU kernel 3.6).
    "ndtri": (torch.special.ndtri, [(0, 1), (1e-38, 1e-3), (0.999, 1),
                                    (0.49, 0.51), (0, 1.2e-38)], 3),
    "erfcx": (torch.special.erfcx, [(-9, 30), (-1, 1)], 4),
    "log_ndtr": (torch.special.log_ndtr, [(-40, 10), (-3, 3)], 81),
    # Positive x: the zeros at 1 and 2 included (C's lgammaf).
    "lgamma": (torch.lgamma, [(0, 8), (0.5, 2.5), (1e3, 1e30)], 4),
    # Away from the zero near 1.4616 and the poles below 0.
    "digamma": (torch.digamma, [(2, 30), (1e3, 1e30), (0, 1)], 9),
    # PyTorch's float32 trigamma (the same bits); its reflection below 1/2
    # takes sin(pi x) in float32, far from float32's accuracy near the
    # negative integers.
    "trigamma": (lambda x: torch.polygamma(1, x),
                 [(0.01, 8), (1, 100), (1e3, 1e6)], 6),
    # Orders from 2: zeta's series above 0, the reflection below (PyTorch's
    # CPU kernel, which sums in float64: 0.9-16 ulps; ours up to 21 at
    # order 7 below 0); results that are not subnormal (float32's powers of
    # x underflow before them).
    **{f"polygamma_{n}": (lambda x, n=n: torch.polygamma(n, x),
                          [(0.01, 8), (1, 100), (-30, 0)], 24)
       for n in (2, 3, 4, 7)},
}


@pytest.mark.parametrize("name", sorted(SWEEPS))
def test_ulps_against_float64(name):
    function, ranges, bound = SWEEPS[name]
    torch.manual_seed(0)
    x = torch.cat([torch.empty(256, FEATURES).uniform_(low, high)
                   for low, high in ranges])
    out = run(function, x)
    reference = function(x.double())
    finite = reference.abs() < 3e38
    assert ulps(out[finite], reference[finite]) <= bound


def test_digamma_relative_error_with_negative_arguments():
    """Below 0 the reflection formula cancels near the function's zeros
    (between the poles), as PyTorch's float32 kernel does: the relative
    error over the range stays float32's."""
    torch.manual_seed(0)
    x = torch.empty(256, FEATURES).uniform_(-30, 30)
    out = run(torch.digamma, x)
    reference = torch.digamma(x.double())
    error = (out.double() - reference).norm() / reference.norm()
    assert error <= 1e-6


def test_lgamma_is_the_c_librarys():
    """C's lgammaf: its bits (the layer computes y = x exactly), and
    float32's accuracy near the zeros between the poles below 0, where a
    reflection formula would cancel."""
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.lgammaf.restype = ctypes.c_float
    libm.lgammaf.argtypes = [ctypes.c_float]
    torch.manual_seed(0)
    x = torch.cat([torch.empty(64, FEATURES).uniform_(-30, 30),
                   torch.empty(64, FEATURES).uniform_(-2.75, -2.74),
                   torch.empty(64, FEATURES).uniform_(0, 3)])
    out = run(torch.lgamma, x)
    expected = torch.tensor([libm.lgammaf(v) for v in x.flatten().tolist()])
    assert torch.equal(out.flatten(), expected)
    near_zero = x[64:128]
    assert ulps(out[64:128], torch.lgamma(near_zero.double())) <= 4


# The Bessel functions of the first and second kinds (C's j0f, j1f, y0f,
# y1f): their error near a zero, and for large x everywhere, is absolute
# (the oscillation's amplitude sqrt(2 / (pi x)) times float32's resolution),
# as PyTorch's float32 kernels' (Cephes' algorithms) is.
BESSEL = {"bessel_j0": torch.special.bessel_j0,
          "bessel_j1": torch.special.bessel_j1,
          "bessel_y0": torch.special.bessel_y0,
          "bessel_y1": torch.special.bessel_y1}


def bessel_errors(function, x, out):
    """The largest error of `out`, in float32 ulps of the larger of |f(x)|
    and the oscillation's amplitude (1 below x = 1), against float64."""
    reference = function(x.double())
    amplitude = torch.sqrt(2 / (math.pi * x.double().abs().clamp(min=1)))
    scale = torch.maximum(reference.abs(), amplitude).float()
    spacing = torch.nextafter(scale, torch.tensor(INF)) - scale
    finite = reference.abs() < 3e38
    return ((out.double() - reference).abs() / spacing.double())[
        finite].max().item()


@pytest.mark.parametrize("name", sorted(BESSEL))
def test_bessel_functions_against_float64(name):
    """glibc's functions: within 30 of those ulps up to x = 60 (PyTorch's
    float32 kernels 16 to 27) and within 4 from 1e3 to 1e6, where
    PyTorch's float32 kernels, which reduce x - pi/4 in float32, are off by
    over 3e5."""
    function = BESSEL[name]
    torch.manual_seed(0)
    # y0 and y1 are real for x > 0 alone (NaN below, as PyTorch's).
    low = -60 if name.startswith("bessel_j") else 1e-3
    for (start, stop), bound in (((low, 60), 30), ((1e3, 1e6), 4)):
        x = torch.empty(256, FEATURES).uniform_(start, stop)
        assert bessel_errors(function, x, run(function, x)) <= bound


SPECIAL = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 2.0, -2.0, -7.0, 0.5,
           -0.5, 8.0, 7.9999995, 8.000001, 10.0, 1e-30, -1e-30, 1e30, -1e30,
           3e38, -3e38, 0.99999994, -0.99999994, -9.4, -9.6, 26.0, -26.0,
           1e-45, 0.25, 0.75, 5.960464477539063e-08]


def at_special_values(function):
    """The layer's outputs (its -0.0 bias gives +0.0 after the GEMM, as in
    PyTorch) through `function`, compiled and PyTorch's."""
    bias = torch.tensor(SPECIAL + [0.25] * (FEATURES - len(SPECIAL)))
    model = Identity(function, bias)
    x = torch.randn(2, FEATURES)
    compiled = fusion.compile(model, (x,), target="cpu")
    with torch.no_grad():
        return compiled(x), model(x)


@pytest.mark.parametrize("name", sorted(BESSEL))
def test_bessel_special_values_are_pytorchs(name):
    """NaN at infinities (PyTorch's), poles and signs at 0 (y0(0) = -inf,
    y1(-0.5) = NaN, j1(-x) = -j1(x)), within the functions' absolute error
    elsewhere (their zeros' neighbourhoods)."""
    out, expected = at_special_values(BESSEL[name])
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6,
                               equal_nan=True)


@pytest.mark.parametrize("name", sorted(SWEEPS))
def test_special_values_are_pytorchs(name):
    out, expected = at_special_values(SWEEPS[name][0])
    # One subnormal step apart at most: PyTorch's own i1 and
    # modified_bessel_i1 differ by one at 1e-45.
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1.5e-45,
                               equal_nan=True)


def test_ndtri_of_one_half_is_positive_zero():
    """PyTorch's ndtri(0.5) is +0.0 (assert_close ignores zeros' signs)."""
    out = run(torch.special.ndtri, torch.full((2, FEATURES), 0.5))
    assert (out == 0).all() and not torch.signbit(out).any()
