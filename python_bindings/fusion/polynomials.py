"""The orthogonal polynomials of torch.special of a whole degree n known when
the model is imported (the `n_scalar` overloads): Chebyshev's T, U, V and W
and their shifted forms, Hermite's H and He, Laguerre's L and Legendre's P,
each PyTorch's float algorithm (ATen's native/Math.h) with its recurrence
unrolled for n, the special cases as selects, for the importer's
ELEMENTWISE table (fusion/formulas.py). A recurrence of more than MAX_DEGREE
steps is refused: each element's code would hold it whole.
"""
import math

from .errors import UnsupportedOperationError

MAX_DEGREE = 32
# PyTorch's Hermite polynomials of float32 are NaN beyond this degree.
_HERMITE_LIMIT = 128


def _degree(function, n, nan_beyond=None):
    """n as an int, or the refusal of a degree fusion does not unroll
    (beyond `nan_beyond` the polynomial is NaN, whatever the degree)."""
    if n != int(n):
        raise UnsupportedOperationError(
            f"{function} of degree {n}, which is not a whole number")
    n = int(n)
    if n > MAX_DEGREE and (nan_beyond is None or n <= nan_beyond):
        raise UnsupportedOperationError(
            f"{function} of degree {n}: fusion unrolls the recurrence in "
            f"each element's code, up to degree {MAX_DEGREE}")
    return n


def _at_plus_minus_one(s, x, value, at_one, at_minus_one):
    """`value`, but at_one where x = 1 and at_minus_one where x = -1."""
    return s.select(s.cmp("oeq", x, 1.0), at_one,
                    s.select(s.cmp("oeq", x, -1.0), at_minus_one, value))


def _chebyshev_recurrence(s, twice, second, n):
    """p_k+1 = 2 x p_k - p_k-1 from p_0 = 1, p_1 = `second`, to p_n
    (`twice` is x + x)."""
    p, q = 1.0, second
    for _ in range(2, n + 1):
        p, q = q, s.sub(s.mul(twice, q), p)
    return q


def _closed_form(s, kind, x, n):
    """The kind's closed form in acos(x), for -1 < x < 1, each with
    PyTorch's fallback where its denominator rounds to its limit."""
    angle = s.op("math.acos", x)
    if kind == "t":
        return s.op("math.cos", s.mul(float(n), angle))
    if kind == "u":
        multiple = s.mul(float(n + 1), angle)
        sine = s.op("math.sin", angle)
        return s.select(
            s.cmp("une", sine, 0.0), s.div(s.op("math.sin", multiple), sine),
            s.div(s.mul(float(n + 1), s.op("math.cos", multiple)), x))
    half = s.div(angle, 2.0)
    multiple = s.mul(n + 0.5, angle)
    odd = -1.0 if n % 2 else 1.0
    if kind == "v":
        return s.select(
            s.cmp("une", s.op("math.sin", half), 1.0),
            s.div(s.op("math.cos", multiple), s.op("math.cos", half)),
            odd * (2 * n + 1))
    return s.select(
        s.cmp("une", s.op("math.cos", half), 1.0),
        s.div(s.op("math.sin", multiple), s.op("math.sin", half)),
        s.select(s.cmp("ogt", x, 0.0), 2.0 * n + 1, odd))


def _chebyshev(s, x, n, kind, closed_from):
    """Chebyshev's polynomial of the kind (t, u, v or w) of degree n:
    PyTorch's recurrence, its closed form between -1 and 1 past degree
    `closed_from`, its values at 1 and -1."""
    if n < 0:
        return 0.0
    if n == 0:
        value = 1.0
    else:
        twice = s.add(x, x)
        if kind == "t":
            second = x
        elif kind == "u":
            second = twice
        elif kind == "v":
            second = s.sub(twice, 1.0)
        else:
            second = s.add(twice, 1.0)
        value = _chebyshev_recurrence(s, twice, second, n)
    if n > closed_from:
        value = s.select(s.cmp("olt", s.op("math.absf", x), 1.0),
                         _closed_form(s, kind, x, n), value)
    odd = -1.0 if n % 2 else 1.0
    at_one, at_minus_one = {"t": (1.0, odd), "u": (n + 1.0, odd * (n + 1)),
                            "v": (1.0, odd * (2 * n + 1)),
                            "w": (2.0 * n + 1, odd)}[kind]
    return _at_plus_minus_one(s, x, value, at_one, at_minus_one)


def _chebyshev_function(kind, closed_from, shifted):
    """The table's builder of Chebyshev's polynomial of the kind, or of its
    shifted form, that of 2x - 1 (whose closed forms start at other
    degrees in PyTorch)."""
    name = f"{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}"

    def build(s, x, n):
        n = _degree(name, n)
        return _chebyshev(s, s.sub(s.add(x, x), 1.0) if shifted else x, n,
                          kind, closed_from)
    build.__name__ = name
    return build


chebyshev_polynomial_t = _chebyshev_function("t", 6, shifted=False)
chebyshev_polynomial_u = _chebyshev_function("u", 8, shifted=False)
chebyshev_polynomial_v = _chebyshev_function("v", 8, shifted=False)
chebyshev_polynomial_w = _chebyshev_function("w", 8, shifted=False)
shifted_chebyshev_polynomial_t = _chebyshev_function("t", 6, shifted=True)
shifted_chebyshev_polynomial_u = _chebyshev_function("u", 6, shifted=True)
shifted_chebyshev_polynomial_v = _chebyshev_function("v", 6, shifted=True)
shifted_chebyshev_polynomial_w = _chebyshev_function("w", 4, shifted=True)


def _hermite(s, x, n, function, scale):
    """p_k+1 = scale x p_k - scale k p_k-1 from p_0 = 1, p_1 = scale x; NaN
    past PyTorch's limit."""
    n = _degree(function, n, _HERMITE_LIMIT)
    if n < 0:
        return 0.0
    if n > _HERMITE_LIMIT:
        return math.nan
    if n == 0:
        return 1.0
    scaled = s.add(x, x) if scale == 2 else x
    p, q = 1.0, scaled
    for k in range(1, n):
        p, q = q, s.sub(s.mul(scaled, q), s.mul(float(scale * k), p))
    return q


def hermite_polynomial_h(s, x, n):
    """The physicists' H_n: H_k+1 = 2 x H_k - 2k H_k-1."""
    return _hermite(s, x, n, "hermite_polynomial_h", 2)


def hermite_polynomial_he(s, x, n):
    """The probabilists' He_n: He_k+1 = x He_k - k He_k-1."""
    return _hermite(s, x, n, "hermite_polynomial_he", 1)


def laguerre_polynomial_l(s, x, n):
    """L_k+1 = ((2k + 1 - x) L_k - k L_k-1) / (k + 1); 1 at x = 0."""
    n = _degree("laguerre_polynomial_l", n)
    if n < 0:
        return 0.0
    if n == 0:
        return 1.0
    one_minus_x = s.sub(1.0, x)
    p, q = 1.0, one_minus_x
    for k in range(1, n):
        p, q = q, s.div(s.sub(s.mul(s.add(float(k + k), one_minus_x), q),
                              s.mul(float(k), p)), float(k + 1))
    return s.select(s.cmp("oeq", x, 0.0), 1.0, q)


def legendre_polynomial_p(s, x, n):
    """P_k+1 = ((2k + 1) x P_k - k P_k-1) / (k + 1)."""
    n = _degree("legendre_polynomial_p", n)
    if n < 0:
        return 0.0
    if n == 0:
        value = 1.0
    else:
        p, q = 1.0, x
        for k in range(1, n):
            p, q = q, s.div(s.sub(s.mul(s.mul(float(k + k + 1), x), q),
                                  s.mul(float(k), p)), float(k + 1))
        value = q
    return _at_plus_minus_one(s, x, value, 1.0, 1.0 if n % 2 == 0 else -1.0)


# The table's polynomials, by torch.special's name.
POLYNOMIALS = (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p")
