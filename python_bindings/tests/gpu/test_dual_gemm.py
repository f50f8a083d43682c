"""The dual GEMM on the GPU: a gated MLP, down(silu(gate(x)) * up(x)),
through torch.compile(backend="fusion") from the library cache (sm_90),
where the gate and up projections become one wgmma kernel with both
weights' accumulators in registers. Ragged shapes (N = 200 against
128-column tiles, batches of 7, 333 and 1000 rows), outputs against a
float64 eager copy, and the census says the up projection went into the
gate's GEMM."""
import copy

import pytest
import torch

import fusion
import fusion.dynamo
from gpu.helpers import (LIBRARY_BOUNDS, PRECISIONS, TARGET,
                         compile_only_cases, precision_setup)

pytestmark = pytest.mark.gpu

HIDDEN, INTERMEDIATE = 320, 200
CASES = [(precision, rows) for precision in ("bf16", "tf32")
         for rows in (7, 333, 1000)]


class GatedMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = torch.nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.up = torch.nn.Linear(HIDDEN, INTERMEDIATE)
        self.down = torch.nn.Linear(INTERMEDIATE, HIDDEN, bias=False)

    def forward(self, x):
        return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))


def model_of(precision, rows, device):
    torch.manual_seed(0)
    dtype, option, _ = PRECISIONS[precision]
    model = GatedMLP().to(device=device, dtype=dtype)
    x = torch.randn(rows, HIDDEN, device=device, dtype=dtype)
    options = {"target": TARGET}
    if option:
        options["precision"] = option
    return model, x, options


def relative_error(out, reference):
    return ((out.double() - reference).norm() / reference.norm()).item()


@pytest.mark.parametrize("precision,rows", CASES)
def test_gated_mlp(library_cache, within, sm90, precision, rows):
    precision_setup("fp32")
    model, x, options = model_of(precision, rows, "cuda")
    expected = copy.deepcopy(model).double()(x.double())
    with torch.no_grad():
        torch._dynamo.reset()
        census = fusion.explain(model, x, options=options)
        assert [report.dual_of for report in census if report.dual_of], \
            f"no dual GEMM:\n{census}"
        torch._dynamo.reset()
        out = torch.compile(model, backend="fusion", options=options)(x)
    within(relative_error(out, expected), LIBRARY_BOUNDS[precision],
           f"{precision} {rows} rows")


def prepare():
    """The cases' libraries, compiled for sm_90 from CPU tensors."""
    return compile_only_cases(
        "dual gemm", CASES, lambda case, device: model_of(*case, device),
        lambda case: f"{case[0]} {case[1]} rows")


PREPARE = {"dual-gemm": prepare}
