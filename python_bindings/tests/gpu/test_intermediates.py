"""Training forwards whose values saved for the backward leave the fused op
(intermediates.py): outputs, gradients and running statistics of
torch.compile(backend="fusion") against float64, every strategy and
precision, from the library cache (sm_90)."""
import pytest

from gpu import intermediates

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name,rows,pname,strategy",
                         list(intermediates.cases()))
def test_intermediates(library_cache, within, sm90, name, rows, pname,
                       strategy):
    shape = (rows,) + intermediates.CHECK_SHAPE[1:]
    errors, bounds, fused = intermediates.check(name, pname, strategy, shape)
    assert fused == 1, f"{fused} partitions fused, not 1"
    # The error furthest past (or nearest to) its bound.
    worst = max(range(len(errors)),
                key=lambda i: (not errors[i] <= bounds[i],
                               errors[i] / bounds[i]))
    within(errors[worst], bounds[worst],
           "outputs, gradients, running statistics: "
           + " ".join(f"{e:.2e}" for e in errors))
