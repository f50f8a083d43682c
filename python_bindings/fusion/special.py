"""Special functions that MLIR's math dialect lacks (Bessel functions,
digamma, lgamma, erfinv, erfcx, ndtri) for the importer's ELEMENTWISE table
(fusion/formulas.py). Each becomes one fusion.special op. Where both CUDA's
libdevice and the C library have the function (lgammaf, j0f, j1f, y0f,
y1f) the op names them and GPU kernels and the CPU reference call them.
The others' body is a formula written with the math dialect's ops, which
the CPU reference computes, and where libdevice has the function
(erfinvf, normcdfinvf) its name, which GPU kernels call instead
(fusion-outline-special-functions). Where PyTorch computes the function
with an algorithm of its own (ATen's native/Math.h), the formula is that
algorithm for float32, branches as selects (digamma's recurrence stops at
4 rather than 10); erfcx (a table of 100 Chebyshev fits in PyTorch) and
ndtri have formulas of their own, accurate to float32
(python_bindings/tests/test_special.py sweeps them against float64).

i0, i0e, i1, i1e and digamma are derived from the Cephes Math Library, as
PyTorch's: Copyright (c) 2018, Steven Moshier, 3-Clause BSD License (the
note [3-Clause BSD License for the Cephes Math Library] in PyTorch's
aten/src/ATen/native/Math.h).
"""
import fractions
import math
import struct

# Chebyshev coefficients of exp(-x) I0(x) on [0, 8] and of exp(-x) sqrt(x)
# I0(x) on [8, inf) (Cephes' i0), those of at least 1e-10 (the rest change
# no float32 result).
_I0E_A = (-5.18979560163526290666E-10, 2.65982372468238665035E-9,
          -1.30002500998624804212E-8, 6.04699502254191894932E-8,
          -2.67079385394061173391E-7, 1.11738753912010371815E-6,
          -4.41673835845875056359E-6, 1.64484480707288970893E-5,
          -5.75419501008210370398E-5, 1.88502885095841655729E-4,
          -5.76375574538582365885E-4, 1.63947561694133579842E-3,
          -4.32430999505057594430E-3, 1.05464603945949983183E-2,
          -2.37374148058994688156E-2, 4.93052842396707084878E-2,
          -9.49010970480476444210E-2, 1.71620901522208775349E-1,
          -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (4.94060238822496958910E-10, 3.39623202570838634515E-9,
          2.26666899049817806459E-8, 2.04891858946906374183E-7,
          2.89137052083475648297E-6, 6.88975834691682398426E-5,
          3.36911647825569408990E-3, 8.04490411014108831608E-1)
# The same of exp(-x) I1(x) / x and exp(-x) sqrt(x) I1(x) (Cephes' i1e;
# PyTorch's float32 tables).
_I1E_A = (9.38153738649577178388E-9, -4.44505912879632808065E-8,
          2.00329475355213526229E-7, -8.56872026469545474066E-7,
          3.47025130813767847674E-6, -1.32731636560394358279E-5,
          4.78156510755005422638E-5, -1.61760815825896745588E-4,
          5.12285956168575772895E-4, -1.51357245063125314899E-3,
          4.15642294431288815669E-3, -1.05640848946261981558E-2,
          2.47264490306265168283E-2, -5.29459812080949914269E-2,
          1.02643658689847095384E-1, -1.76416518357834055153E-1,
          2.52587186443633654823E-1)
_I1E_B = (-3.83538038596423702205E-9, -2.63146884688951950684E-8,
          -2.51223623787020892529E-7, -3.88256480887769039346E-6,
          -1.10588938762623716291E-4, -9.76109749136146840777E-3,
          7.78576235018280120474E-1)
# digamma's asymptotic series in 1 / x^2 (Cephes' psi).
_DIGAMMA_SERIES = (8.33333333333333333333E-2, -2.10927960927960927961E-2,
                   7.57575757575757575758E-3, -4.16666666666666666667E-3,
                   3.96825396825396825397E-3, -8.33333333333333333333E-3,
                   8.33333333333333333333E-2)
# digamma's argument is shifted to this or beyond before the series.
_DIGAMMA_SHIFT = 4
# erfinv's rational first guess (PyTorch's calc_erfinv, from MATLAB's
# erfinv of Gary L. Pavlis).
_ERFINV_A = (-0.140543331, 0.914624893, -1.645349621, 0.886226899)
_ERFINV_B = (0.012229801, -0.329097515, 1.442710462, -2.118377725, 1.0)
_ERFINV_C = (1.641345311, 3.429567803, -1.624906493, -1.970840454)
_ERFINV_D = (1.637067800, 3.543889200, 1.0)


def _horner(s, x, coefficients):
    """The polynomial of `coefficients` (highest degree first) at x."""
    value = coefficients[0]
    for c in coefficients[1:]:
        value = s.add(s.mul(value, x), c)
    return value


def _chebyshev(s, x, coefficients):
    """Cephes' chbevl: the Chebyshev series of `coefficients` at x (its
    first step, whose b2 is 0, without the subtraction)."""
    b1, b0 = coefficients[0], s.add(s.mul(x, coefficients[0]),
                                    coefficients[1])
    b2 = 0.0
    for c in coefficients[2:]:
        b2, b1 = b1, b0
        b0 = s.add(s.sub(s.mul(x, b1), b2), c)
    return s.mul(0.5, s.sub(b0, b2))


def _bessel(s, x, near, far, scaled, odd):
    """PyTorch's calc_i0 / calc_i0e / calc_i1 / calc_i1e: the Chebyshev
    series `near` at |x| / 2 - 2 for |x| <= 8, `far` at 32 / |x| - 2
    (divided by sqrt|x|) beyond; times exp|x| unless scaled, times |x| (near
    0) and of x's sign for the odd ones."""
    a = s.op("math.absf", x)
    small = s.cmp("ole", a, 8.0)
    inner = _chebyshev(s, s.sub(s.div(a, 2.0), 2.0), near)
    outer = _chebyshev(s, s.sub(s.div(32.0, a), 2.0), far)
    if not scaled:
        e = s.op("math.exp", a)
        inner = s.mul(s.mul(e, a), inner) if odd else s.mul(e, inner)
        outer = s.mul(e, outer)
    elif odd:
        inner = s.mul(inner, a)
    value = s.select(small, inner, s.div(outer, s.op("math.sqrt", a)))
    return s.select(s.cmp("olt", x, 0.0), s.neg(value), value) if odd \
        else value


def _i0(s, x):
    return _bessel(s, x, _I0E_A, _I0E_B, scaled=False, odd=False)


def _i0e(s, x):
    return _bessel(s, x, _I0E_A, _I0E_B, scaled=True, odd=False)


def _i1(s, x):
    return _bessel(s, x, _I1E_A, _I1E_B, scaled=False, odd=True)


def _i1e(s, x):
    return _bessel(s, x, _I1E_A, _I1E_B, scaled=True, odd=True)


def _cot_pi(s, x):
    """cot(pi x) as cos(pi r) / sin(pi r) for r = x less its nearest
    integer (exact; cot(pi x) has period 1), the cosine as sin(pi (1/2 - |r|))
    (1/2 - |r| exact where it matters): PyTorch takes x's fractional part
    and tan in float64, which float32's pi r would lose near the poles and,
    for the cosine, near the half-integers."""
    r = s.sub(x, s.op("math.roundeven", x))
    cosine = s.op("math.sin", s.mul(math.pi, s.sub(0.5, s.op("math.absf",
                                                              r))))
    return s.div(cosine, s.op("math.sin", s.mul(math.pi, r)))


def _digamma(s, x):
    """PyTorch's calc_digamma (float) but for its shift: +-inf at +-0 (of
    the other sign), NaN at negative integers, digamma(1 - x) - pi / tan(pi
    x) below 0; from x >= 0, 1 / x subtracted while x < 4 (four steps at
    most, as selects; PyTorch's ten, to 10, cost a GEMM epilogue ten
    correctly rounded divisions an element), then log x - 1 / 2x less the
    series, whose first omitted term (B16 / 16 x^16, about 0.44 / x^16) is
    1e-10 at 4."""
    negative = s.cmp("olt", x, 0.0)
    z = s.select(negative, s.sub(1.0, x), x)
    result = 0.0
    for _ in range(_DIGAMMA_SHIFT):
        below = s.cmp("olt", z, float(_DIGAMMA_SHIFT))
        result = s.select(below, s.sub(result, s.div(1.0, z)), result)
        z = s.select(below, s.add(z, 1.0), z)
    inverse = s.div(1.0, z)
    square = s.mul(inverse, inverse)
    series = s.select(s.cmp("olt", z, 1.0e17),
                      s.mul(square, _horner(s, square, _DIGAMMA_SERIES)),
                      0.0)
    value = s.sub(s.sub(s.add(result, s.op("math.log", z)),
                        s.mul(0.5, inverse)), series)
    value = s.select(negative, s.sub(value, s.mul(math.pi, _cot_pi(s, x))),
                     value)
    integer = s.cmp("oeq", x, s.op("math.trunc", x))
    value = s.select(s.op("arith.andi", negative, integer), math.nan, value)
    return s.select(s.cmp("oeq", x, 0.0),
                    s.op("math.copysign", math.inf, s.neg(x)), value)


def _float32(value):
    """`value` rounded to float32, as PyTorch's float kernels' constants."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _trigamma(s, x):
    """PyTorch's calc_trigamma (float): below 1/2 the reflection pi^2 /
    sin^2(pi x) less trigamma(1 - x), whose sum over six steps of 1 / x^2
    and asymptotic series follow."""
    pi = _float32(math.pi)
    negative = s.cmp("olt", x, 0.5)
    sine = s.op("math.sin", s.mul(pi, x))
    result = s.select(negative, s.neg(s.div(_float32(pi * pi),
                                            s.mul(sine, sine))), 0.0)
    z = s.select(negative, s.sub(1.0, x), x)
    for _ in range(6):
        result = s.add(result, s.div(1.0, s.mul(z, z)))
        z = s.add(z, 1.0)
    inverse_square = s.div(1.0, s.mul(z, z))
    series = s.mul(inverse_square, s.sub(
        _float32(1 / 6), s.mul(inverse_square, s.sub(
            _float32(1 / 30), s.mul(inverse_square, _float32(1 / 42))))))
    tail = s.div(s.add(s.add(1.0, s.div(1.0, s.mul(2.0, z))), series), z)
    result = s.add(result, tail)
    return s.select(negative, s.neg(result), result)


def _bernoulli(count):
    """B_2, B_4, ..., B_2count as fractions (Akiyama-Tanigawa)."""
    numbers, row = [], []
    for m in range(2 * count + 1):
        row.append(fractions.Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        numbers.append(row[0])
    return numbers[2::2]


# (2k)! / B_2k, k = 1..12: the Euler-Maclaurin tail of Cephes' zeta, as
# PyTorch's.
_ZETA_EULER_MACLAURIN = tuple(
    float(math.factorial(2 * k) / b)
    for k, b in enumerate(_bernoulli(12), start=1))
# PyTorch's zeta stops adding terms below this fraction of the sum.
_ZETA_EPSILON = 1.11022302462515654042e-16


def _not(s, flag):
    return s.op("arith.xori", flag, s.cmp("true", 0.0, 0.0))


def _hurwitz_zeta(s, x, q):
    """PyTorch's zeta(x, q) (Cephes') for a number x > 1 and q > 0, its
    loops unrolled, each early return a flag that stops the sum: q^-x plus
    nine terms (a tenth where q + 9 rounds to 9), then twelve of the
    Euler-Maclaurin series, each term's factor x (x + 1) ... (x + 2k - 2)
    B_2k / (2k)! computed here."""
    total = s.op("math.powf", q, -x)
    a, b = q, 0.0
    done = s.cmp("false", 0.0, 0.0)

    def settled(term):
        return s.op("arith.andi", s.cmp("olt", s.mul(-_ZETA_EPSILON, total),
                                        term),
                    s.cmp("olt", term, s.mul(_ZETA_EPSILON, total)))
    for i in range(10):
        running = _not(s, done)
        if i == 9:
            running = s.op("arith.andi", running, s.cmp("ole", a, 9.0))
        a_next = s.add(a, 1.0)
        b_next = s.op("math.powf", a_next, -x)
        total_next = s.add(total, b_next)
        a = s.select(running, a_next, a)
        b = s.select(running, b_next, b)
        total = s.select(running, total_next, total)
        done = s.op("arith.ori", done,
                    s.op("arith.andi", running, settled(b)))
    w = a
    running = _not(s, done)
    total = s.select(running, s.sub(s.add(total, s.div(s.mul(b, w), x - 1.0)),
                                    s.mul(0.5, b)), total)
    factor = 1.0
    for i, coefficient in enumerate(_ZETA_EULER_MACLAURIN):
        factor *= x + 2 * i
        b = s.div(b, w)
        term = s.mul(factor / coefficient, b)
        total = s.select(running, s.add(total, term), total)
        small = s.cmp("olt", s.op("math.absf", s.div(term, total)),
                      _ZETA_EPSILON)
        running = s.op("arith.andi", running, _not(s, small))
        factor *= x + 2 * i + 1
        b = s.div(b, w)
    return total


def _cotangent_derivative(n):
    """Coefficients (highest degree first) of p_n, with d^n/dx^n cot(pi x) =
    pi^n p_n(cot(pi x)): p_0(c) = c, p_k+1(c) = -(1 + c^2) p_k'(c)."""
    p = [0, 1]  # lowest degree first
    for _ in range(n):
        derivative = [i * p[i] for i in range(1, len(p))] + [0, 0]
        # -(1 + c^2) p'(c)
        p = [-(derivative[i] + (derivative[i - 2] if i >= 2 else 0))
             for i in range(len(derivative))]
        while len(p) > 1 and p[-1] == 0:
            p.pop()
    return tuple(float(c) for c in reversed(p))


def polygamma(s, n, x):
    """psi^(n)(x): digamma for n = 0, PyTorch's trigamma for n = 1, and
    for n >= 2 PyTorch's (-1)^(n+1) n! zeta(n + 1, x) for x > 0 (+-inf at
    the poles 0, -1, ... and -inf, NaN at +inf, as its); below 0 the
    reflection psi^(n)(x) = (-1)^n psi^(n)(1 - x) - pi^(n+1) p_n(cot(pi x)),
    where PyTorch sums zeta's series from x on (as many terms as |x|)."""
    if n == 0:
        return digamma(s, x)
    if n == 1:
        return _special("trigamma", None, _trigamma)(s, x)
    return _special(f"polygamma_{n}", None,
                    lambda s, x: _polygamma(s, n, x))(s, x)


def _polygamma(s, n, x):
    sign = 1.0 if n % 2 else -1.0
    positive = s.cmp("ogt", x, 0.0)
    zeta = _hurwitz_zeta(s, float(n + 1),
                         s.select(positive, x, s.sub(1.0, x)))
    value = s.mul(sign * math.factorial(n), zeta)
    cotangent = _cot_pi(s, x)
    reflected = s.sub(s.mul((-1.0) ** n, value), s.mul(
        math.pi ** (n + 1), _horner(s, cotangent, _cotangent_derivative(n))))
    pole = s.cmp("oeq", x, s.op("math.floor", x))
    reflected = s.select(pole, sign * math.inf, reflected)
    return s.select(positive, value, reflected)


def _erfinv_guess(s, y, t):
    """PyTorch's calc_erfinv's first guess at erfinv(y): rational in y for
    |y| <= 0.7, else in t = sqrt(-log((1 - |y|) / 2)), which the caller
    computes from whatever holds (1 - |y|) / 2 exactly."""
    z = s.mul(y, y)
    central = s.div(s.mul(y, _horner(s, z, _ERFINV_A)),
                    _horner(s, z, _ERFINV_B))
    tail = s.div(s.op("math.copysign", _horner(s, t, _ERFINV_C), y),
                 _horner(s, t, _ERFINV_D))
    return s.select(s.cmp("ole", s.op("math.absf", y), 0.7), central, tail)


def _erf_newton_step(s, x, residual):
    """x less erf's residual at x over erf's slope there."""
    slope = s.mul(2.0 / math.sqrt(math.pi),
                  s.op("math.exp", s.neg(s.mul(x, x))))
    return s.sub(x, s.div(residual, slope))


def _erfinv(s, y):
    """PyTorch's calc_erfinv: a rational first guess (central for |y| <=
    0.7, else in sqrt(-log((1 - |y|) / 2))), then two Newton steps on erf;
    +-inf at +-1, NaN beyond."""
    a = s.op("math.absf", y)
    x = _erfinv_guess(s, y, s.op("math.sqrt", s.neg(s.op(
        "math.log", s.div(s.sub(1.0, a), 2.0)))))
    # Newton's steps; erf(x) - y from erfc where |y| > 1/2 (1 - |y| is
    # exact there, erf(x) - y would cancel).
    negative = s.cmp("olt", y, 0.0)
    for _ in range(2):
        tail = s.sub(s.sub(1.0, a), s.op("math.erfc", s.op("math.absf", x)))
        tail = s.select(negative, s.neg(tail), tail)
        residual = s.select(s.cmp("ogt", a, 0.5), tail,
                            s.sub(s.op("math.erf", x), y))
        x = _erf_newton_step(s, x, residual)
    x = s.select(s.cmp("oeq", a, 1.0), s.op("math.copysign", math.inf, y), x)
    return s.select(s.cmp("ogt", a, 1.0), math.nan, x)


def _ndtri(s, p):
    """The standard normal's quantile, x with Phi(x) = p: for r = min(p, 1 -
    p) (1 - p exact from 1/2), x = -sqrt(2) w where erf(w) = 1 - 2r, w from
    erfinv's first guess (its tail's in r itself) and two Newton steps
    whose residual is 2r - erfc(w) below r = 1/4 (no 1 - 2r rounded
    there), erf(w) - (1 - 2r) above (exact); -inf at 0, +inf at 1, NaN
    beyond."""
    upper = s.cmp("oge", p, 0.5)
    r = s.select(upper, s.sub(1.0, p), p)
    y = s.sub(1.0, s.mul(2.0, r))
    t = s.op("math.sqrt", s.neg(s.op("math.log", r)))
    guess = _erfinv_guess(s, y, t)
    w, twice_r = guess, s.mul(2.0, r)
    for _ in range(2):
        residual = s.select(s.cmp("olt", r, 0.25),
                            s.sub(twice_r, s.op("math.erfc", w)),
                            s.sub(s.op("math.erf", w), y))
        w = _erf_newton_step(s, w, residual)
    # Below the smallest normal r, erfc(w) has too few bits for that
    # residual: Newton's steps on log erfc(w) = log 2r instead, erfc's
    # asymptotic series exp(-w^2) / (w sqrt(pi)) (1 + T), T = -u + 3u^2 -
    # 15u^3 + 105u^4 - 945u^5, u = 1 / 2w^2 (w > 9 there).
    v = guess
    log_twice_r = s.op("math.log", twice_r)
    for _ in range(2):
        u = s.div(0.5, s.mul(v, v))
        series = s.mul(u, _horner(s, u, (-945.0, 105.0, -15.0, 3.0, -1.0)))
        h = s.sub(s.add(s.sub(s.neg(s.mul(v, v)), s.op("math.log", v)),
                        s.op("math.log1p", series)),
                  s.add(log_twice_r, 0.5 * math.log(math.pi)))
        v = s.add(v, s.div(h, s.add(s.mul(2.0, v), s.div(1.0, v))))
    w = s.select(s.cmp("olt", r, 1.1754944e-38), v, w)
    x = s.mul(s.select(upper, math.sqrt(2.0), -math.sqrt(2.0)), w)
    x = s.select(s.cmp("oeq", r, 0.0), s.select(upper, math.inf, -math.inf),
                 x)
    outside = s.op("arith.ori", s.cmp("olt", p, 0.0), s.cmp("ogt", p, 1.0))
    return s.select(s.op("arith.ori", outside, s.cmp("uno", p, p)), math.nan,
                    x)


def _erfcx(s, x):
    """exp(x^2) erfc(x): for 0 <= x < 8 erfc(x) times exp(x^2) from x^2's
    two parts (x^2 = h + l exactly, exp(h) (1 + l)); from 8 the asymptotic
    series 1 / (x sqrt(pi)) (1 - 1/2x^2 + 3/4x^4 - 15/8x^6 + 105/16x^8);
    below 0, 2 exp(x^2) - erfcx(-x) (+inf once exp(x^2) overflows)."""
    a = s.op("math.absf", x)
    h = s.mul(a, a)
    l = s.op("math.fma", a, a, s.neg(h))
    scale = s.mul(s.op("math.exp", h), s.add(1.0, l))
    near = s.mul(scale, s.op("math.erfc", a))
    w = s.div(1.0, h)
    far = s.div(s.mul(_horner(s, w, (105.0 / 16, -15.0 / 8, 3.0 / 4, -0.5,
                                       1.0)), 1.0 / math.sqrt(math.pi)), a)
    positive = s.select(s.cmp("olt", a, 8.0), near, far)
    negative = s.select(s.cmp("olt", x, -9.5), math.inf,
                        s.sub(s.mul(2.0, scale), positive))
    return s.select(s.cmp("olt", x, 0.0), negative, positive)


def spherical_bessel_j0(s, x):
    """sin(x) / x: below |x| = 1/2 its Taylor series in x^2 to x^10 (the
    next term under 2^-24 of the sum, and no division for x near 0), 0 at
    the infinities (as PyTorch)."""
    square = s.mul(x, x)
    series = _horner(s, square, [(-1) ** k / math.factorial(2 * k + 1)
                                 for k in range(5, -1, -1)])
    value = s.select(s.cmp("olt", s.op("math.absf", x), 0.5), series,
                     s.div(s.op("math.sin", x), x))
    return s.select(s.cmp("oeq", s.op("math.absf", x), math.inf), 0.0, value)


def _special(function, libdevice, formula):
    """The ELEMENTWISE table's builder of `function`: one fusion.special op
    of its formula, which the GPU computes as libdevice's `libdevice` where
    named (out of line either way: fusion-outline-special-functions)."""
    def build(s, *operands):
        return s.special(function, libdevice, operands, formula)
    build.__doc__ = formula.__doc__
    return build


def _library(function, libm):
    """The same of a function that libdevice and the C library compute
    (libdevice's `__nv_<libm>`, the CPU reference's `libm`): no formula."""
    def build(s, x):
        return s.special(function, "__nv_" + libm, [x], None, libm)
    build.__doc__ = f"C's {libm} (CUDA's on GPUs)."
    return build


i0 = _special("i0", None, _i0)
i0e = _special("i0e", None, _i0e)
i1 = _special("i1", None, _i1)
i1e = _special("i1e", None, _i1e)
digamma = _special("digamma", None, _digamma)
# C's lgammaf (glibc's on the CPU, CUDA's on GPUs, which PyTorch's CUDA
# kernel calls; its CPU kernel's vectorized lgamma differs near the zeros
# below 0 by up to about 22 ulps, where glibc's is accurate).
lgamma = _library("lgamma", "lgammaf")


def _bessel_library(function, libm):
    """A Bessel function of the first or second kind, C's and CUDA's: NaN
    at infinite x, as PyTorch's kernels (Cephes' algorithms in float32,
    which take the sine and cosine of x there), where the libraries' limit
    is 0."""
    library = _library(function, libm)

    def build(s, x):
        return s.select(s.cmp("oeq", s.op("math.absf", x), math.inf),
                        math.nan, library(s, x))
    build.__doc__ = library.__doc__
    return build


bessel_j0 = _bessel_library("bessel_j0", "j0f")
bessel_j1 = _bessel_library("bessel_j1", "j1f")
bessel_y0 = _bessel_library("bessel_y0", "y0f")
bessel_y1 = _bessel_library("bessel_y1", "y1f")
# CUDA's erfinvf, which PyTorch's CUDA kernel calls.
erfinv = _special("erfinv", "__nv_erfinvf", _erfinv)
erfcx = _special("erfcx", None, _erfcx)
# CUDA's normcdfinvf (PyTorch's CUDA kernel has Cephes' ndtri).
ndtri = _special("ndtri", "__nv_normcdfinvf", _ndtri)
