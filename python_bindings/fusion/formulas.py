"""The scalar formulas of the ops fusion computes per element, keyed by ATen
op: each is PyTorch's definition written with the arith/math ops of a
`fusion.elementwise` region (on a ScalarBuilder, fusion/program.py), which
the importer (fusion/importer) composes into expressions and the program
builder (fusion/program.py) replays into regions. Part of the compiler's
identity (the library cache's key)."""
import math

import torch

from . import polynomials, special
from .errors import UnsupportedOperationError

aten = torch.ops.aten


# Scalar formulas. `s` is a ScalarBuilder (fusion/program.py); operands are
# its scalars or Python numbers.
def _gelu(s, x, approximate="none"):
    if approximate == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        inner = s.mul(math.sqrt(2.0 / math.pi),
                      s.add(x, s.mul(0.044715, s.mul(x, s.mul(x, x)))))
        return s.mul(s.mul(x, 0.5), s.add(1.0, s.op("math.tanh", inner)))
    # x * 0.5 * (1 + erf(x / sqrt(2)))
    return s.mul(s.mul(x, 0.5),
                 s.add(1.0, s.op("math.erf", s.mul(x, math.sqrt(0.5)))))


def _gelu_backward(s, grad, x, approximate="none"):
    # ATen's GeluBackward: grad times the derivative of gelu at x.
    if approximate == "tanh":
        beta, kappa = math.sqrt(2.0 / math.pi), 0.044715
        x_sq = s.mul(x, x)
        inner = s.mul(beta, s.add(x, s.mul(kappa, s.mul(x_sq, x))))
        tanh_inner = s.op("math.tanh", inner)
        right = s.add(1.0, tanh_inner)
        right_derivative = s.mul(
            s.sub(1.0, s.mul(tanh_inner, tanh_inner)),
            s.mul(beta, s.add(1.0, s.mul(3.0 * kappa, x_sq))))
        return s.mul(grad, s.add(s.mul(0.5, right),
                                 s.mul(s.mul(0.5, x), right_derivative)))
    cdf = s.mul(0.5, s.add(1.0, s.op("math.erf", s.mul(x, math.sqrt(0.5)))))
    pdf = s.mul(s.op("math.exp", s.mul(-0.5, s.mul(x, x))),
                1.0 / math.sqrt(2.0 * math.pi))
    return s.mul(grad, s.add(cdf, s.mul(x, pdf)))


def _silu_backward(s, grad, x):
    sigmoid = _sigmoid(s, x)
    return s.mul(s.mul(grad, sigmoid),
                 s.add(1.0, s.mul(x, s.sub(1.0, sigmoid))))


def _threshold_backward(s, grad, x, threshold):
    return s.select(s.cmp("ole", x, threshold), 0.0, grad)


def _sigmoid(s, x):
    # PyTorch's formula; its division within 1 ulp (docs/dialect.md).
    return s.approximate_reciprocal(s.add(1.0, s.op("math.exp", s.neg(x))))


def _pow(s, x, exponent):
    # PyTorch computes small integer and half powers exactly this way.
    if not isinstance(exponent, (int, float)):
        return s.op("math.powf", x, exponent)
    if exponent == 2:
        return s.mul(x, x)
    if exponent == 3:
        return s.mul(s.mul(x, x), x)
    if exponent == 0.5:
        return s.op("math.sqrt", x)
    if exponent == -1:
        return s.div(1.0, x)
    if exponent == -0.5:
        return s.op("math.rsqrt", x)
    return s.op("math.powf", x, exponent)


def _clamp(s, x, low=None, high=None):
    # PyTorch's `x < low ? low : x`, then `x > high ? high : x`: x's NaN and
    # -0.0 pass unchanged (IEEE maximumf would make -0.0 +0.0). A tensor
    # bound's NaN gives NaN and a number's leaves x, as PyTorch's kernels.
    for bound, predicate in ((low, "olt"), (high, "ogt")):
        if bound is None:
            continue
        x = s.select(s.cmp(predicate, x, bound), bound, x)
        if not isinstance(bound, (int, float)):
            x = s.select(s.cmp("uno", bound, bound), bound, x)
    return x


def _elu(s, x, alpha=1.0, scale=1.0, input_scale=1.0):
    negative = s.mul(s.op("math.expm1", s.mul(x, input_scale)), alpha * scale)
    return s.select(s.cmp("ogt", x, 0.0), s.mul(x, scale), negative)


def _leaky_relu(s, x, slope=0.01):
    return s.select(s.cmp("ogt", x, 0.0), x, s.mul(x, slope))


def _rrelu(s, x, lower=0.125, upper=1.0 / 3.0, training=False,
           generator=None):
    if training:
        raise UnsupportedOperationError(
            "rrelu in training mode draws a random slope an element")
    # Outside training, PyTorch's leaky_relu with the slopes' mean.
    return _leaky_relu(s, x, (lower + upper) / 2)


def _round_decimals(s, x, decimals=0):
    """PyTorch's kernel: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d)
    * 10^-d for negative d, with 10^|d| rounded to f32 (infinite from 39
    on, which makes every result NaN, as PyTorch's)."""
    if decimals == 0:
        return s.op("math.roundeven", x)
    scale = math.inf if abs(decimals) > 38 else \
        float(torch.tensor(10.0 ** abs(decimals), dtype=torch.float32))
    if decimals > 0:
        return s.div(s.op("math.roundeven", s.mul(x, scale)), scale)
    return s.mul(s.op("math.roundeven", s.div(x, scale)), scale)


def _mvlgamma(s, x, p):
    """The sum of lgamma(x - j / 2) from j = p - 1 down to 0, plus p (p - 1)
    / 4 log(pi): core ATen's decomposition, which torch.compile computes.
    PyTorch's eager kernel first raises an error unless every element
    exceeds (p - 1) / 2, a check of all elements that an elementwise
    kernel cannot make: fusion computes the formula there too."""
    if p < 1 or p != int(p):
        raise UnsupportedOperationError(
            f"multigammaln of dimension {p} (it must be at least 1)")
    p = int(p)
    total = None
    for j in range(p - 1, -1, -1):
        term = special.lgamma(s, s.sub(x, 0.5 * j) if j else x)
        total = term if total is None else s.add(total, term)
    return s.add(total, 0.25 * p * (p - 1) * math.log(math.pi))


def _polygamma(s, n, x):
    if n < 0 or n != int(n):
        raise UnsupportedOperationError(
            f"polygamma of order {n} (orders are whole numbers from 0)")
    return special.polygamma(s, int(n), x)


def _add(s, a, b, alpha=1):
    return s.add(a, b if alpha == 1 else s.mul(b, alpha))


def _sub(s, a, b, alpha=1):
    return s.sub(a, b if alpha == 1 else s.mul(b, alpha))


def _fmod(s, a, b):
    # C's fmod, exact on every backend (libm's fmodf, libdevice's).
    return s.op("arith.remf", a, b)


def _sign_differs(s, mod, b):
    """PyTorch's test of a remainder: mod != 0 and (b < 0) != (mod < 0)."""
    return s.op("arith.andi", s.cmp("une", mod, 0.0),
                s.op("arith.xori", s.cmp("olt", b, 0.0),
                     s.cmp("olt", mod, 0.0)))


def _remainder(s, a, b):
    # PyTorch's: fmod(a, b), plus b where it is nonzero and of b's other sign.
    mod = _fmod(s, a, b)
    return s.select(_sign_differs(s, mod, b), s.add(mod, b), mod)


def _floor_divide(s, a, b):
    """PyTorch's div_floor_floating: (a - fmod(a, b)) / b, one less where the
    remainder's sign differs from b's, rounded to the nearest integer (floor,
    then up past a half); a signed 0 where that is 0, a / b where b is 0."""
    quotient = s.div(a, b)
    mod = _fmod(s, a, b)
    div = s.div(s.sub(a, mod), b)
    div = s.select(_sign_differs(s, mod, b), s.sub(div, 1.0), div)
    floor = s.op("math.floor", div)
    floor = s.select(s.cmp("ogt", s.sub(div, floor), 0.5),
                     s.add(floor, 1.0), floor)
    floor = s.select(s.cmp("oeq", div, 0.0),
                     s.op("math.copysign", 0.0, quotient), floor)
    return s.select(s.cmp("oeq", b, 0.0), quotient, floor)


def _div(s, a, b, rounding_mode=None):
    # PyTorch takes no other rounding mode.
    if rounding_mode == "floor":
        return _floor_divide(s, a, b)
    quotient = s.div(a, b)
    return s.op("math.trunc", quotient) if rounding_mode == "trunc" \
        else quotient


def _hypot(s, a, b):
    """sqrt(a^2 + b^2) without overflow or underflow: the larger magnitude
    times sqrt(1 + r^2), r the smaller over it; 0 where both are, infinity
    where either is (even beside a NaN), as C's hypot."""
    a, b = s.op("math.absf", a), s.op("math.absf", b)
    big, small = s.op("arith.maximumf", a, b), s.op("arith.minimumf", a, b)
    ratio = s.div(small, big)
    h = s.mul(big, s.op("math.sqrt", s.op("math.fma", ratio, ratio, 1.0)))
    h = s.select(s.cmp("oeq", big, 0.0), 0.0, h)
    infinite = s.op("arith.ori", s.cmp("oeq", a, math.inf),
                    s.cmp("oeq", b, math.inf))
    return s.select(infinite, math.inf, h)


def _heaviside(s, x, values):
    # PyTorch's: values where x == 0, else x > 0 (NaN: 0).
    return s.select(s.cmp("oeq", x, 0.0), values,
                    s.select(s.cmp("ogt", x, 0.0), 1.0, 0.0))


def _lerp(s, start, end, weight):
    """PyTorch's: start + weight (end - start) where |weight| < 0.5, else
    end - (end - start) (1 - weight), in f32."""
    diff = s.sub(end, start)

    def near_start():
        return s.add(start, s.mul(weight, diff))

    def near_end():
        return s.sub(end, s.mul(diff, s.sub(1.0, weight)))

    if isinstance(weight, (int, float)):
        return near_start() if abs(_f32(weight)) < 0.5 else near_end()
    return s.select(s.cmp("olt", s.op("math.absf", weight), 0.5),
                    near_start(), near_end())


def _f32(number):
    return torch.tensor(number, dtype=torch.float32).item()


def _unary(name):
    return lambda s, x: s.op(name, x)


def _sign(s, x):
    # PyTorch's (0 < x) - (x < 0): NaN and -0 give 0.
    return s.select(s.cmp("ogt", x, 0.0), 1.0,
                    s.select(s.cmp("olt", x, 0.0), -1.0, 0.0))


def _compare(predicate):
    return lambda s, a, b: s.cmp(predicate, a, b)


def _logical(name):
    return lambda s, a, b: s.op(name, a, b)


def _logical_not(s, a):
    return s.op("arith.xori", a, s.cmp("true", 0.0, 0.0))


ELEMENTWISE = {
    "aten.relu.default": lambda s, x: _clamp(s, x, 0.0),
    "aten.leaky_relu.default": _leaky_relu,
    "aten.rrelu.default": _rrelu,
    "aten.gelu.default": _gelu,
    "aten.sigmoid.default": _sigmoid,
    # x times the approximate reciprocal: the quotient x / (1 + exp(-x))
    # has no branch-free approximation over the whole range.
    "aten.silu.default": lambda s, x: s.mul(x, _sigmoid(s, x)),
    # Activations' derivatives (backward graphs; ATen's formulas).
    "aten.threshold_backward.default": _threshold_backward,
    "aten.gelu_backward.default": _gelu_backward,
    "aten.silu_backward.default": _silu_backward,
    "aten.sigmoid_backward.default":
        lambda s, grad, out: s.mul(s.mul(grad, s.sub(1.0, out)), out),
    "aten.tanh_backward.default":
        lambda s, grad, out: s.mul(grad, s.sub(1.0, s.mul(out, out))),
    "aten.tanh.default": _unary("math.tanh"),
    "aten.hardtanh.default":
        lambda s, x, low=-1.0, high=1.0: _clamp(s, x, low, high),
    "aten.elu.default": _elu,
    "aten.exp.default": _unary("math.exp"),
    "aten.exp2.default": _unary("math.exp2"),
    "aten.expm1.default": _unary("math.expm1"),
    "aten.log.default": _unary("math.log"),
    "aten.log1p.default": _unary("math.log1p"),
    "aten.erf.default": _unary("math.erf"),
    "aten.erfc.default": _unary("math.erfc"),
    "aten.log10.default": _unary("math.log10"),
    "aten.sin.default": _unary("math.sin"),
    "aten.cos.default": _unary("math.cos"),
    "aten.tan.default": _unary("math.tan"),
    "aten.asin.default": _unary("math.asin"),
    "aten.acos.default": _unary("math.acos"),
    "aten.atan.default": _unary("math.atan"),
    "aten.atan2.default": lambda s, a, b: s.op("math.atan2", a, b),
    "aten.sinh.default": _unary("math.sinh"),
    "aten.cosh.default": _unary("math.cosh"),
    "aten.asinh.default": _unary("math.asinh"),
    "aten.acosh.default": _unary("math.acosh"),
    "aten.atanh.default": _unary("math.atanh"),
    # Special functions without a math dialect op (fusion/special.py).
    "aten.i0.default": special.i0,
    "aten.special_i0e.default": special.i0e,
    "aten.special_i1.default": special.i1,
    "aten.special_i1e.default": special.i1e,
    # i0 and i1 again (PyTorch's own kernels agree within 7e-7).
    "aten.special_modified_bessel_i0.default": special.i0,
    "aten.special_modified_bessel_i1.default": special.i1,
    "aten.special_spherical_bessel_j0.default": special.spherical_bessel_j0,
    "aten.special_bessel_j0.default": special.bessel_j0,
    "aten.special_bessel_j1.default": special.bessel_j1,
    "aten.special_bessel_y0.default": special.bessel_y0,
    "aten.special_bessel_y1.default": special.bessel_y1,
    # Orthogonal polynomials of a degree the model gives as a number.
    **{f"aten.special_{name}.n_scalar": getattr(polynomials, name)
       for name in polynomials.POLYNOMIALS},
    "aten.digamma.default": special.digamma,
    "aten.polygamma.default": _polygamma,
    "aten.mvlgamma.default": _mvlgamma,
    "aten.lgamma.default": special.lgamma,
    "aten.erfinv.default": special.erfinv,
    "aten.special_erfcx.default": special.erfcx,
    "aten.special_ndtri.default": special.ndtri,
    "aten.floor.default": _unary("math.floor"),
    "aten.ceil.default": _unary("math.ceil"),
    "aten.trunc.default": _unary("math.trunc"),
    # Halfway cases to the even neighbour, as PyTorch rounds.
    "aten.round.default": _unary("math.roundeven"),
    "aten.round.decimals": _round_decimals,
    "aten.sqrt.default": _unary("math.sqrt"),
    "aten.rsqrt.default": _unary("math.rsqrt"),
    "aten.abs.default": _unary("math.absf"),
    "aten.neg.default": lambda s, x: s.neg(x),
    "aten.sign.default": _sign,
    "aten.reciprocal.default": lambda s, x: s.div(1.0, x),
    "aten.pow.Tensor_Scalar": _pow,
    "aten.pow.Tensor_Tensor": _pow,
    # A number to tensor powers (PyTorch's kernel: C's pow, 1 for a base
    # of 1 whatever the exponent, NaN included, as pow's).
    "aten.pow.Scalar": _pow,
    # PyTorch's a * pow(2, b); exp2 is exact where b is an integer.
    "aten.ldexp.Tensor": lambda s, a, b: s.mul(a, s.op("math.exp2", b)),
    "aten.clamp.default": _clamp,
    "aten.clamp_min.default": lambda s, x, low: _clamp(s, x, low, None),
    "aten.clamp_max.default": lambda s, x, high: _clamp(s, x, None, high),
    # Tensor bounds (clamp_min's and clamp_max's too, in core ATen): a NaN
    # bound gives NaN, as PyTorch's kernel.
    "aten.clamp.Tensor": _clamp,
    "aten.add.Tensor": _add,
    "aten.add.Scalar": _add,
    "aten.sub.Tensor": _sub,
    "aten.sub.Scalar": _sub,
    "aten.rsub.Scalar": lambda s, a, b, alpha=1: _sub(s, b, a, alpha),
    "aten.mul.Tensor": lambda s, a, b: s.mul(a, b),
    "aten.mul.Scalar": lambda s, a, b: s.mul(a, b),
    "aten.div.Tensor": lambda s, a, b: s.div(a, b),
    "aten.div.Scalar": lambda s, a, b: s.div(a, b),
    "aten.div.Tensor_mode": _div,
    "aten.div.Scalar_mode": _div,
    "aten.fmod.Tensor": _fmod,
    "aten.fmod.Scalar": _fmod,
    "aten.remainder.Tensor": _remainder,
    "aten.remainder.Scalar": _remainder,
    "aten.remainder.Scalar_Tensor": _remainder,
    "aten.copysign.Tensor": lambda s, a, b: s.op("math.copysign", a, b),
    "aten.copysign.Scalar": lambda s, a, b: s.op("math.copysign", a, b),
    # The sign bit, -0 and NaNs' included.
    "aten.signbit.default":
        lambda s, x: s.cmp("olt", s.op("math.copysign", 1.0, x), 0.0),
    "aten.hypot.default": _hypot,
    "aten.heaviside.default": _heaviside,
    "aten.lerp.Scalar": _lerp,
    "aten.lerp.Tensor": _lerp,
    "aten.maximum.default": lambda s, a, b: s.op("arith.maximumf", a, b),
    "aten.minimum.default": lambda s, a, b: s.op("arith.minimumf", a, b),
    "aten.where.self": lambda s, c, a, b: s.select(c, a, b),
    "aten.gt.Scalar": _compare("ogt"),
    "aten.gt.Tensor": _compare("ogt"),
    "aten.ge.Scalar": _compare("oge"),
    "aten.ge.Tensor": _compare("oge"),
    "aten.lt.Scalar": _compare("olt"),
    "aten.lt.Tensor": _compare("olt"),
    "aten.le.Scalar": _compare("ole"),
    "aten.le.Tensor": _compare("ole"),
    "aten.eq.Scalar": _compare("oeq"),
    "aten.eq.Tensor": _compare("oeq"),
    "aten.ne.Scalar": _compare("une"),
    "aten.ne.Tensor": _compare("une"),
    "aten.isnan.default": lambda s, x: s.cmp("uno", x, x),
    "aten.isinf.default":
        lambda s, x: s.cmp("oeq", s.op("math.absf", x), math.inf),
    "aten.logical_and.default": _logical("arith.andi"),
    "aten.logical_or.default": _logical("arith.ori"),
    "aten.logical_xor.default": _logical("arith.xori"),
    "aten.logical_not.default": _logical_not,
    "aten.bitwise_and.Tensor": _logical("arith.andi"),
    "aten.bitwise_or.Tensor": _logical("arith.ori"),
    "aten.bitwise_xor.Tensor": _logical("arith.xori"),
    "aten.bitwise_not.default": _logical_not,
}


# Ops of booleans (i1 values), which take no other operands.
LOGICAL = {name for name in ELEMENTWISE
           if name.startswith(("aten.logical_", "aten.bitwise_"))}
# Ops whose boolean results are not an arithmetic op's of booleans
# (PyTorch's bool * bool, bool + bool) and which take no boolean as a
# number: comparisons and tests (their operands are promoted) and where
# (which selects booleans as booleans).
BOOLEAN_RESULTS = LOGICAL | {
    name for name in ELEMENTWISE
    if name.split(".")[1] in ("gt", "ge", "lt", "le", "eq", "ne", "isnan",
                              "isinf", "signbit", "where")}
# PyTorch's arithmetic of booleans: bool * bool, bool + bool.
BOOLEAN_ARITHMETIC = {"aten.mul.Tensor": "aten.logical_and.default",
                      "aten.add.Tensor": "aten.logical_or.default"}
# A boolean as a number, as PyTorch promotes it: 1.0 or 0.0.
BOOL_TO_FLOAT = "fusion.bool_to_float"
# A value rounded to the model's 16-bit dtype, as eager stores it.
ROUND_TO_ELEMENT = "fusion.round_to_element"
FORMULAS = {**ELEMENTWISE,
            BOOL_TO_FLOAT: lambda s, b: s.select(b, 1.0, 0.0),
            ROUND_TO_ELEMENT: lambda s, x, dtype: s.round_to(x, dtype)}
