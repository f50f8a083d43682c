"""Weights stored [in_features, out_features] (GPT-2's Conv1D,
`addmm(b, x, W)`, `weight_layout in_out`) in the wgmma kernel on the GPU:
TMA loads w's tile in boxes of 128 bytes of N, which the wgmmas read
N-major (16 bits) or 3xTF32's splitters transpose (fp32). Through
torch.compile(backend="fusion") from the library cache (sm_90), the
default strategy: the plain kernel, small batches' swapped operands (16
bits: w's tile the wgmmas' A), the opt-in cluster (each block multicasts
its boxes) and ping-pong schedules, and a gated MLP whose two in_out
projections are one dual GEMM (bf16; two GEMMs in fp32). Ragged shapes
(N = 200 and 136 against 128- and 256-column tiles: 136 leaves a box
wholly past N; batches of 7, 333 and 1000 rows), outputs against a
float64 eager copy."""
import copy

import pytest
import torch

import fusion
import fusion.dynamo
from gpu.helpers import (DTYPES, LIBRARY_BOUNDS, TARGET, compile_only_cases,
                         precision_setup)

pytestmark = pytest.mark.gpu

K = 320


class Conv1DGelu(torch.nn.Module):
    """GPT-2's MLP input: Conv1D (`addmm(b, x, W)`, W [in, out]), gelu."""

    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(K, n) / K ** 0.5)
        self.bias = torch.nn.Parameter(torch.randn(n) / 4)

    def forward(self, x):
        y = torch.addmm(self.bias, x, self.weight)
        return torch.nn.functional.gelu(y, approximate="tanh")


class GatedInOut(torch.nn.Module):
    """silu(x @ Wg) * (x @ Wu), both weights [in, out]: one dual GEMM."""

    def __init__(self, n):
        super().__init__()
        self.gate = torch.nn.Parameter(torch.randn(K, n) / K ** 0.5)
        self.up = torch.nn.Parameter(torch.randn(K, n) / K ** 0.5)

    def forward(self, x):
        return torch.nn.functional.silu(x @ self.gate) * (x @ self.up)


MODELS = {"conv1d_gelu": Conv1DGelu, "gated": GatedInOut}
CASES = (
    [("conv1d_gelu", precision, n, rows, {})
     for precision in ("bf16", "f16", "fp32") for n in (200, 136)
     for rows in (7, 333, 1000)]
    + [("conv1d_gelu", "bf16", 200, 1000, {"cluster": 2}),
       ("conv1d_gelu", "bf16", 200, 1000, {"schedule": "pingpong"}),
       ("conv1d_gelu", "fp32", 200, 1000, {"schedule": "pingpong"})]
    + [("gated", precision, 200, rows, {})
       for precision in ("bf16", "fp32") for rows in (7, 333, 1000)])


def case_id(case):
    model, precision, n, rows, extra = case
    options = "".join(f"-{k}={v}" for k, v in extra.items())
    return f"{model}-{precision}-n{n}-{rows}rows{options}"


def model_of(case, device):
    model, precision, n, rows, extra = case
    torch.manual_seed(0)
    dtype = DTYPES[precision]
    module = MODELS[model](n).to(device=device, dtype=dtype)
    x = torch.randn(rows, K, device=device, dtype=dtype)
    return module, x, {"target": TARGET, **extra}


def relative_error(out, reference):
    return ((out.double() - reference).norm() / reference.norm()).item()


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_in_out_weight(library_cache, within, sm90, case):
    precision_setup("fp32")
    module, x, options = model_of(case, "cuda")
    expected = copy.deepcopy(module).double()(x.double())
    with torch.no_grad():
        torch._dynamo.reset()
        census = fusion.explain(module, x, options=options)
        assert all(report.fused or report.dual_of for report in census), \
            f"a GEMM not fused:\n{census}"
        torch._dynamo.reset()
        out = torch.compile(module, backend="fusion", options=options)(x)
    within(relative_error(out, expected), LIBRARY_BOUNDS[case[1]],
           case_id(case))


def prepare():
    """The cases' libraries, compiled for sm_90 from CPU tensors."""
    return compile_only_cases("in_out weight", CASES, model_of, case_id)


PREPARE = {"weight-layout": prepare}
