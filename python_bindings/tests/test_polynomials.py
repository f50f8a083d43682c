"""torch.special's orthogonal polynomials of a whole degree
(fusion/polynomials.py) after an identity layer on the CPU target: against
float64 over each recurrence's and closed form's range, PyTorch's float32
results at special values (degrees past the unrolled limit:
test_importer.py)."""
import pytest
import torch

from fusion import polynomials
from fusion.polynomials import MAX_DEGREE

from test_special import FEATURES, SPECIAL, at_special_values, run

POLYNOMIALS = {name: getattr(torch.special, name) for name in
               polynomials.POLYNOMIALS}
# Negative, the first two, the recurrences and the closed forms (past 4,
# 6 or 8), up to the limit.
DEGREES = (-1, 0, 1, 2, 5, 7, 9, 16, MAX_DEGREE)


# PyTorch's recurrences that stop at a NaN before their first step return
# an uninitialized value for NaN x at degrees from 2; fusion's are NaN.
STOPPING_AT_NAN = {name for name in polynomials.POLYNOMIALS
                   if "chebyshev" in name} | {"laguerre_polynomial_l",
                                              "legendre_polynomial_p"}


@pytest.mark.parametrize("name", sorted(POLYNOMIALS))
def test_polynomials_against_float64(name):
    """Between -1 and 1, just past them and far out (the layer computes
    y = x exactly), within float32's rounding of the recurrence: 4e-6 of
    the largest value of each range (near the zeros the recurrence and
    cos(n acos x) lose relative accuracy) plus twice PyTorch's float32
    kernel's largest error there (cos(32 acos x) is off by 1e-5), where the
    value is within float32's range by a margin (near it, whether the
    recurrence overflows depends on its rounding)."""
    function = POLYNOMIALS[name]
    torch.manual_seed(0)
    for low, high in ((-1, 1), (-1.2, 1.2), (-30, 30)):
        x = torch.empty(16, FEATURES).uniform_(low, high)
        for n in DEGREES:
            out = run(lambda y, n=n: function(y, n), x)
            reference = function(x.double(), n)
            finite = reference.abs() < 1e37
            scale = reference[finite].abs().max().item()
            theirs = (function(x, n).double() - reference)[finite].abs()
            assert theirs.isfinite().all()
            torch.testing.assert_close(
                out.double()[finite], reference[finite], rtol=2e-5,
                atol=4e-6 * scale + 2 * theirs.max().item(),
                msg=f"degree {n} in ({low}, {high})")


@pytest.mark.parametrize("name", sorted(POLYNOMIALS))
def test_special_values_are_pytorchs(name):
    """+-1, 0, +-infinity, NaN and values next to them: PyTorch's float32
    results, or the float64 value where PyTorch's is wrong (NaN where its
    recurrence returns an uninitialized value; shifted W's closed form
    falls back to +-1 near x = 1, where the value is 2n + 1), where the
    value is within float32's range by a margin."""
    function = POLYNOMIALS[name]
    values = torch.tensor(SPECIAL + [0.25] * (FEATURES - len(SPECIAL)))
    for n in DEGREES:
        out, expected = at_special_values(lambda y, n=n: function(y, n))
        nan = values.isnan().expand_as(out)
        if name in STOPPING_AT_NAN and n >= 2:
            assert out[nan].isnan().all()
            expected = torch.where(nan, out, expected)
        exact = function(values.double(), n).expand_as(out)
        kept = nan | values.isinf().expand_as(out) | (exact.abs() < 1e37)
        theirs = torch.isclose(out, expected, rtol=2e-5, atol=1e-6,
                               equal_nan=True)
        true = torch.isclose(out.double(), exact, rtol=1e-4, atol=1e-5)
        wrong = kept & ~(theirs | true)
        assert not wrong.any(), (n, values[wrong[0]], out[wrong],
                                 expected[wrong], exact[wrong])


def test_hermite_past_its_limit_is_nan():
    """PyTorch's float32 Hermite polynomials are NaN past degree 128."""
    x = torch.randn(2, FEATURES)
    for function in (torch.special.hermite_polynomial_h,
                     torch.special.hermite_polynomial_he):
        assert run(lambda y: function(y, 129), x).isnan().all()
