"""Every op of the importer's table, compiled for the CPU target after a
linear layer, against PyTorch in float64 (relative error <= 1e-5)."""
import pytest
import torch
import torch.nn as nn

import fusion
from fusion.formulas import ELEMENTWISE

from zoo import SPECIAL_VALUES, special_values

aten = torch.ops.aten

def _selecting_by(logical, unary):
    """Selects y or the vector by `logical` of comparisons."""
    def sample(y, v):
        condition = logical(y > v) if unary else logical(y > 0, y < v)
        return aten.where(condition, y, v)
    return sample


# name -> f(y, column vector) applying the op, in ATen form, to the linear
# output y; comparisons select between two values. Negative constants and
# the per-column vector are included.
SAMPLES = {
    "aten.relu.default": lambda y, v: aten.relu(y),
    "aten.leaky_relu.default": lambda y, v: aten.leaky_relu(y, -0.3),
    "aten.rrelu.default": lambda y, v: aten.rrelu(y, 0.1, 0.3),
    "aten.gelu.default": lambda y, v: aten.gelu(y),
    "aten.sigmoid.default": lambda y, v: aten.sigmoid(y),
    "aten.silu.default": lambda y, v: aten.silu(y),
    # Activations' derivatives (backward graphs): the gradient's part a
    # function of y too.
    "aten.threshold_backward.default":
        lambda y, v: aten.threshold_backward(aten.cos(y), y, 0.1),
    "aten.gelu_backward.default":
        lambda y, v: aten.gelu_backward(aten.cos(y), y),
    "aten.silu_backward.default":
        lambda y, v: aten.silu_backward(aten.cos(y), y),
    "aten.sigmoid_backward.default":
        lambda y, v: aten.sigmoid_backward(aten.cos(y), aten.sigmoid(y)),
    "aten.tanh_backward.default":
        lambda y, v: aten.tanh_backward(aten.cos(y), aten.tanh(y)),
    "aten.tanh.default": lambda y, v: aten.tanh(y),
    "aten.hardtanh.default": lambda y, v: aten.hardtanh(y, -0.5, 0.75),
    "aten.elu.default": lambda y, v: aten.elu(y, 1.5, 1.1, 0.9),
    "aten.exp.default": lambda y, v: aten.exp(y),
    "aten.exp2.default": lambda y, v: aten.exp2(y),
    "aten.expm1.default": lambda y, v: aten.expm1(y),
    "aten.log.default": lambda y, v: aten.log(aten.abs(y) + 0.5),
    "aten.log1p.default": lambda y, v: aten.log1p(aten.abs(y)),
    "aten.erf.default": lambda y, v: aten.erf(y),
    "aten.erfc.default": lambda y, v: aten.erfc(y * -0.5),
    "aten.log10.default": lambda y, v: aten.log10(aten.abs(y) + 0.5),
    "aten.sin.default": lambda y, v: aten.sin(y * 3.0),
    "aten.cos.default": lambda y, v: aten.cos(y * -3.0),
    "aten.tan.default": lambda y, v: aten.tan(aten.tanh(y)),
    "aten.asin.default": lambda y, v: aten.asin(aten.tanh(y)),
    "aten.acos.default": lambda y, v: aten.acos(aten.tanh(y)),
    "aten.atan.default": lambda y, v: aten.atan(y),
    "aten.atan2.default": lambda y, v: aten.atan2(y, v),
    "aten.sinh.default": lambda y, v: aten.sinh(y),
    "aten.cosh.default": lambda y, v: aten.cosh(y),
    "aten.asinh.default": lambda y, v: aten.asinh(y),
    "aten.acosh.default": lambda y, v: aten.acosh(aten.abs(y) + 1.0),
    "aten.atanh.default": lambda y, v: aten.atanh(aten.tanh(y) * 0.9),
    # Steps of a quarter, and halfway cases: (k + 0.5) / 4 rounds to even.
    "aten.floor.default": lambda y, v: aten.floor(y * 4.0) + y,
    "aten.ceil.default": lambda y, v: aten.ceil(y * 4.0) + y,
    "aten.trunc.default": lambda y, v: aten.trunc(y * -4.0) + y,
    "aten.round.default": lambda y, v: aten.round(y * 4.0) +
        aten.round(aten.floor(y * 4.0) + 0.5) + y,
    "aten.sqrt.default": lambda y, v: aten.sqrt(aten.abs(y)),
    "aten.rsqrt.default": lambda y, v: aten.rsqrt(aten.abs(y) + 0.5),
    "aten.abs.default": lambda y, v: aten.abs(y),
    "aten.neg.default": lambda y, v: aten.neg(y),
    "aten.sign.default": lambda y, v: aten.sign(y) * v + y,
    "aten.reciprocal.default": lambda y, v: aten.reciprocal(aten.abs(y) + 1),
    "aten.pow.Tensor_Scalar": lambda y, v: aten.pow(y, 2) + aten.pow(y, 3) +
        aten.pow(aten.abs(y) + 1, -0.5) + aten.pow(aten.abs(y) + 1, 1.7),
    # Negative bases to integer powers, and a base of 1 to NaN.
    "aten.pow.Tensor_Tensor": lambda y, v: aten.pow(aten.abs(y) + 0.5, v) +
        aten.pow(y, aten.round(aten.tanh(y) * 3.0)),
    "aten.pow.Scalar": lambda y, v: aten.pow(1.5, y) +
        aten.pow(-2.0, aten.round(aten.tanh(y) * 3.0)) +
        aten.pow(1.0, aten.log(y)),
    "aten.clamp.default": lambda y, v: aten.clamp(y, -0.25, 0.5),
    "aten.clamp_min.default": lambda y, v: aten.clamp_min(y, -0.25),
    "aten.clamp_max.default": lambda y, v: aten.clamp_max(y, 0.25),
    "aten.clamp.Tensor": lambda y, v: aten.clamp(y, v, aten.abs(y) * 0.5) +
        aten.clamp(y, min=v) + aten.clamp(y, max=v) +
        torch.clamp_min(y, v) + torch.clamp_max(y, v * y),
    "aten.add.Tensor": lambda y, v: aten.add(y, v, alpha=-2) + y,
    "aten.add.Scalar": lambda y, v: aten.add(y, -1.5),
    "aten.sub.Tensor": lambda y, v: aten.sub(v, y, alpha=3),
    "aten.sub.Scalar": lambda y, v: aten.sub(y, 2.5),
    "aten.rsub.Scalar": lambda y, v: aten.rsub(y, 2.5),
    "aten.mul.Tensor": lambda y, v: aten.mul(y, v) * y,
    "aten.mul.Scalar": lambda y, v: aten.mul(y, -3.0),
    "aten.div.Tensor": lambda y, v: aten.div(y, v),
    "aten.div.Scalar": lambda y, v: aten.div(y, -7.0),
    # The roundings on steps of a quarter of v (the floor of a negative
    # quotient included).
    "aten.div.Tensor_mode": lambda y, v: aten.div(y, v, rounding_mode=None) +
        aten.div(y * 4.0, v, rounding_mode="floor") +
        aten.div(y * -4.0, v, rounding_mode="trunc"),
    "aten.div.Scalar_mode": lambda y, v: y +
        aten.div.Scalar_mode(y, -0.3, rounding_mode="floor") +
        aten.div.Scalar_mode(y, 0.3, rounding_mode="trunc"),
    # Remainders of either sign.
    "aten.fmod.Tensor": lambda y, v: aten.fmod(y * 4.0, v) + y,
    "aten.fmod.Scalar": lambda y, v: aten.fmod(y * 4.0, -0.7) + y,
    "aten.remainder.Tensor": lambda y, v: aten.remainder(y * 4.0, v) + y,
    "aten.remainder.Scalar": lambda y, v: aten.remainder(y * 4.0, -0.7) + y,
    "aten.remainder.Scalar_Tensor":
        lambda y, v: aten.remainder(-2.5, aten.abs(y) + 0.5) + y,
    "aten.copysign.Tensor": lambda y, v: aten.copysign(y, v) + y,
    "aten.copysign.Scalar": lambda y, v: aten.copysign(y, -1.0) + y * 0.5,
    "aten.signbit.default": lambda y, v: aten.where(aten.signbit(y), v, y),
    "aten.hypot.default": lambda y, v: aten.hypot(y, v),
    # Special functions (fusion/special.py), each over its domain.
    "aten.i0.default": lambda y, v: aten.i0(y * 3.0),
    "aten.special_i0e.default": lambda y, v: aten.special_i0e(y * -9.0),
    "aten.special_i1.default": lambda y, v: aten.special_i1(y * 3.0),
    "aten.special_i1e.default": lambda y, v: aten.special_i1e(y * -9.0),
    "aten.special_modified_bessel_i0.default":
        lambda y, v: aten.special_modified_bessel_i0(y * 4.0 + v),
    "aten.special_modified_bessel_i1.default":
        lambda y, v: aten.special_modified_bessel_i1(y * -4.0 + v),
    "aten.special_spherical_bessel_j0.default":
        lambda y, v: aten.special_spherical_bessel_j0(y * 3.0 + v) +
        aten.special_spherical_bessel_j0(y * 0.1),
    "aten.special_ndtri.default":
        lambda y, v: aten.special_ndtri(aten.sigmoid(y * 3.0 + v)),
    "aten.digamma.default": lambda y, v: aten.digamma(aten.abs(y) + 0.1),
    # Orders 0 (digamma), 1 (trigamma) and 3, of either sign (below 0
    # away from the poles).
    "aten.polygamma.default":
        lambda y, v: aten.polygamma(0, aten.abs(y) * 3.0 + 0.25) +
        aten.polygamma(1, aten.abs(y) + 0.5) * 0.5 +
        aten.polygamma(3, aten.sigmoid(y) * 0.8 - 1.9) * 0.01,
    "aten.lgamma.default": lambda y, v: aten.lgamma(y * 3.0 + v),
    "aten.erfinv.default": lambda y, v: aten.erfinv(aten.tanh(y)),
    # Its condition number 2 y^2 (below 0) amplifies f32 y's rounding.
    "aten.special_erfcx.default": lambda y, v: aten.special_erfcx(y * 1.5),
    # The second kind's for x > 0.
    "aten.special_bessel_j0.default": lambda y, v:
        aten.special_bessel_j0(y * 10.0),
    "aten.special_bessel_j1.default": lambda y, v:
        aten.special_bessel_j1(y * -10.0),
    "aten.special_bessel_y0.default": lambda y, v:
        aten.special_bessel_y0(aten.abs(y * 10.0) + 0.5),
    "aten.special_bessel_y1.default": lambda y, v:
        aten.special_bessel_y1(aten.abs(y * 10.0) + 0.5),
    # Orthogonal polynomials: recurrences, and T's and U's closed forms
    # between -1 and 1 past degrees 6 and 8.
    "aten.special_chebyshev_polynomial_t.n_scalar": lambda y, v:
        aten.special_chebyshev_polynomial_t(aten.tanh(y), 3) +
        aten.special_chebyshev_polynomial_t(aten.tanh(y), 9) +
        aten.special_chebyshev_polynomial_t(y * 0.1 + 1.0, 4),
    "aten.special_chebyshev_polynomial_u.n_scalar": lambda y, v:
        aten.special_chebyshev_polynomial_u(aten.tanh(y), 2) +
        aten.special_chebyshev_polynomial_u(aten.tanh(y), 10) +
        aten.special_chebyshev_polynomial_u(y * -0.1 - 1.0, 3),
    "aten.special_chebyshev_polynomial_v.n_scalar": lambda y, v:
        aten.special_chebyshev_polynomial_v(aten.tanh(y), 3) +
        aten.special_chebyshev_polynomial_v(aten.tanh(y), 10),
    "aten.special_chebyshev_polynomial_w.n_scalar": lambda y, v:
        aten.special_chebyshev_polynomial_w(aten.tanh(y), 4) +
        aten.special_chebyshev_polynomial_w(aten.tanh(y), 9),
    # Shifted: of 2x - 1, between 0 and 1 (and past 1).
    "aten.special_shifted_chebyshev_polynomial_t.n_scalar": lambda y, v:
        aten.special_shifted_chebyshev_polynomial_t(aten.sigmoid(y), 8) +
        aten.special_shifted_chebyshev_polynomial_t(y * 0.1 + 1.0, 3),
    "aten.special_shifted_chebyshev_polynomial_u.n_scalar": lambda y, v:
        aten.special_shifted_chebyshev_polynomial_u(aten.sigmoid(y), 7),
    "aten.special_shifted_chebyshev_polynomial_v.n_scalar": lambda y, v:
        aten.special_shifted_chebyshev_polynomial_v(aten.sigmoid(y), 2) +
        aten.special_shifted_chebyshev_polynomial_v(aten.sigmoid(y), 8),
    "aten.special_shifted_chebyshev_polynomial_w.n_scalar": lambda y, v:
        aten.special_shifted_chebyshev_polynomial_w(aten.sigmoid(y), 5),
    "aten.special_hermite_polynomial_h.n_scalar": lambda y, v:
        aten.special_hermite_polynomial_h(y, 5),
    "aten.special_hermite_polynomial_he.n_scalar": lambda y, v:
        aten.special_hermite_polynomial_he(y * -2.0, 4),
    "aten.special_laguerre_polynomial_l.n_scalar": lambda y, v:
        aten.special_laguerre_polynomial_l(aten.abs(y) * 3.0, 3),
    "aten.special_legendre_polynomial_p.n_scalar": lambda y, v:
        aten.special_legendre_polynomial_p(aten.tanh(y), 5),
    # Inside the domain that PyTorch's eager kernel checks (x > (p - 1) / 2).
    "aten.mvlgamma.default": lambda y, v:
        aten.mvlgamma(aten.abs(y) + 1.5, 3) +
        aten.mvlgamma(aten.abs(y * v) + 0.25, 1),
    # Multiples of 1/4, 1/16 and 5, halfway cases included, to 1, 2 and -1
    # decimals.
    "aten.round.decimals": lambda y, v:
        aten.round.decimals(aten.round(y * 4.0) * 0.25, decimals=1) +
        aten.round.decimals(aten.round(y * 16.0) * -0.0625, decimals=2) +
        aten.round.decimals(aten.round(y * 4.0) * 5.0, decimals=-1) + y,
    # Integer exponents (of the vector alone) and fractional ones.
    "aten.ldexp.Tensor": lambda y, v: aten.ldexp(y, aten.round(v * 3.0)) +
        aten.ldexp(y, v),
    "aten.heaviside.default": lambda y, v: aten.heaviside(y, v) + y,
    # Weights either side of a half, a number's and a tensor's.
    "aten.lerp.Scalar": lambda y, v: aten.lerp(y, v, 0.3) +
        aten.lerp(y, v, -1.5),
    "aten.lerp.Tensor": lambda y, v: aten.lerp(y, v, aten.sigmoid(y * 3.0)),
    "aten.maximum.default": lambda y, v: aten.maximum(y, v),
    "aten.minimum.default": lambda y, v: aten.minimum(y, v),
    "aten.where.self": lambda y, v: aten.where(aten.gt(y, v), y, v),
    "aten.gt.Scalar": lambda y, v: aten.where(aten.gt(y, 0.1), y, -y),
    "aten.gt.Tensor": lambda y, v: aten.where(aten.gt(y, v), y, -y),
    "aten.ge.Scalar": lambda y, v: aten.where(aten.ge(y, 0.1), y, -y),
    "aten.ge.Tensor": lambda y, v: aten.where(aten.ge(y, v), y, -y),
    "aten.lt.Scalar": lambda y, v: aten.where(aten.lt(y, 0.1), y, -y),
    "aten.lt.Tensor": lambda y, v: aten.where(aten.lt(y, v), y, -y),
    "aten.le.Scalar": lambda y, v: aten.where(aten.le(y, 0.1), y, -y),
    "aten.le.Tensor": lambda y, v: aten.where(aten.le(y, v), y, -y),
    "aten.eq.Scalar": lambda y, v: aten.where(aten.eq(y, 0.0), v, y),
    "aten.eq.Tensor": lambda y, v: aten.where(aten.eq(y, y), v, y),
    "aten.ne.Scalar": lambda y, v: aten.where(aten.ne(y, 0.0), y, v),
    "aten.ne.Tensor": lambda y, v: aten.where(aten.ne(y, v), y, v),
    "aten.isnan.default":
        lambda y, v: aten.where(aten.isnan(aten.log(y)), v, y),
    "aten.isinf.default":
        lambda y, v: aten.where(aten.isinf(aten.exp(y * 30.0)), v, y),
    **{f"aten.{name}": _selecting_by(getattr(aten, name.split(".")[0]),
                                     unary="_not" in name)
       for name in ("logical_and.default", "logical_or.default",
                    "logical_xor.default", "logical_not.default",
                    "bitwise_and.Tensor", "bitwise_or.Tensor",
                    "bitwise_xor.Tensor", "bitwise_not.default")},
}


def test_every_table_op_has_a_sample():
    assert set(SAMPLES) == set(ELEMENTWISE)


class Apply(nn.Module):
    def __init__(self, name):
        super().__init__()
        self.linear = nn.Linear(19, 13)
        self.vector = nn.Parameter(torch.randn(13))
        self.name = name

    def forward(self, x):
        return SAMPLES[self.name](self.linear(x), self.vector)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_table_op_on_cpu_against_float64(name):
    model = Apply(name)
    x = torch.randn(11, 19)
    compiled = fusion.compile(model, (x,), target="cpu")
    with torch.no_grad():
        out = compiled(x)
        reference = model.double()(x.double())
    error = (out.double() - reference).norm() / reference.norm()
    assert error <= 1e-5, f"{name}: relative error {error:.3g}"



@pytest.mark.parametrize("name", sorted(SPECIAL_VALUES))
def test_remainders_and_signs_at_special_values(name):
    """PyTorch's results, signed zeros, infinities and NaNs included (the
    GPU's: gpu/test_zoo.py's test_special_values)."""
    model, x, tolerance = special_values(name)
    compiled = fusion.compile(model, (x,), target="cpu")
    with torch.no_grad():
        out, expected = compiled(x), model(x)
    torch.testing.assert_close(out, expected, rtol=tolerance, atol=0,
                               equal_nan=True)
    # NaNs' signs are the hardware's, as PyTorch documents.
    numbers = ~expected.isnan()
    assert torch.equal(torch.signbit(out[numbers]),
                       torch.signbit(expected[numbers]))
