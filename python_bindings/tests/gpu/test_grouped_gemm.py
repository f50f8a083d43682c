"""Grouped GEMMs on the GPU: linear layers of one input (attention's q, k
and v) computed as one GEMM of their concatenated weights, which the GEMM
reads in place (fusion.concat): the wgmma kernel takes a TMA map a part
and each tile's from the part holding its columns, the bias's parts
likewise; where no 64-column tile fits the parts, cuBLASLt multiplies each
part into its columns of the output. Through torch.compile(backend=
"fusion") from the library cache (sm_90), option group_gemms="on".
Ragged shapes (a last part of 200 columns against 128-column tiles;
parts of 96 and 160 columns; batches of 7, 333 and 1000 rows), each
output against a float64 eager copy, and the census says they were
grouped. Layers whose outputs a `cat` joins (then a GELU) are one GEMM
whose result is the concatenation, the GELU in its epilogue
(join_concatenated_gemms)."""
import copy

import pytest
import torch

import fusion
import fusion.dynamo
from gpu.helpers import (DTYPES, LIBRARY_BOUNDS, TARGET, compile_only_cases,
                         precision_setup)

pytestmark = pytest.mark.gpu

K = 320


class Projections(torch.nn.Module):
    """Linear layers of one input, their outputs returned as they are
    (nothing fuses after them), as attention's q, k and v."""

    def __init__(self, widths, bias):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.Linear(K, width, bias=bias) for width in widths)

    def forward(self, x):
        return tuple(layer(x) for layer in self.layers)


# (widths, bias): tiles within parts (128 columns), a ragged last part,
# grouped-query widths without bias, and parts no wgmma tile fits.
SHAPES = [((256, 128, 128), True), ((256, 256, 200), True),
          ((512, 128, 128), False), ((96, 160), True)]
CASES = [(widths, bias, precision, rows)
         for widths, bias in SHAPES for precision in ("bf16", "fp32")
         for rows in (7, 333, 1000)]


def case_id(case):
    widths, bias, precision, rows = case
    return f"{'x'.join(map(str, widths))}{'-bias' if bias else ''}-" \
        f"{precision}-{rows}rows"


def model_of(case, device):
    widths, bias, precision, rows = case
    torch.manual_seed(0)
    dtype = DTYPES[precision]
    module = Projections(widths, bias).to(device=device, dtype=dtype)
    x = torch.randn(rows, K, device=device, dtype=dtype)
    return module, x, {"target": TARGET, "group_gemms": "on"}


def relative_error(out, reference):
    return ((out.double() - reference).norm() / reference.norm()).item()


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_grouped_projections(library_cache, within, sm90, case):
    precision_setup("fp32")
    module, x, options = model_of(case, "cuda")
    expected = copy.deepcopy(module).double()(x.double())
    with torch.no_grad():
        torch._dynamo.reset()
        census = fusion.explain(module, x, options=options)
        assert all(report.grouped_with for report in census), \
            f"not grouped:\n{census}"
        torch._dynamo.reset()
        outputs = torch.compile(module, backend="fusion",
                                options=options)(x)
    for index, (out, reference) in enumerate(zip(outputs, expected)):
        assert out.shape == reference.shape
        within(relative_error(out, reference), LIBRARY_BOUNDS[case[2]],
               f"{case_id(case)} output {index}")


class Joined(Projections):
    """The layers' outputs concatenated along the features, then a GELU."""

    def forward(self, x):
        return torch.nn.functional.gelu(torch.cat(super().forward(x), -1))


def joined_model_of(case, device):
    module, x, options = model_of(case, device)
    joined = Joined(case[0], case[1]).to(device=device, dtype=x.dtype)
    joined.load_state_dict(module.state_dict())
    return joined, x, options


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_joined_projections(library_cache, within, sm90, case):
    precision_setup("fp32")
    module, x, options = joined_model_of(case, "cuda")
    expected = copy.deepcopy(module).double()(x.double())
    with torch.no_grad():
        torch._dynamo.reset()
        census = fusion.explain(module, x, options=options)
        assert len(census) == 1 and census[0].joined and \
            census[0].fused, f"not joined:\n{census}"
        torch._dynamo.reset()
        out = torch.compile(module, backend="fusion", options=options)(x)
    assert out.shape == expected.shape
    within(relative_error(out, expected), LIBRARY_BOUNDS[case[2]],
           f"joined {case_id(case)}")


def prepare():
    """The cases' libraries, compiled for sm_90 from CPU tensors."""
    yield from compile_only_cases("grouped", CASES, model_of, case_id)
    yield from compile_only_cases("joined", CASES, joined_model_of, case_id)


PREPARE = {"grouped-gemm": prepare}
