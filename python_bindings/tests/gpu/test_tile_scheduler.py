"""The wgmma kernel launched with a block a tile (`tile_scheduler =
per_block`) on the GPU: fusion.compile with strategy "wgmma" and option
tile_scheduler="per_block", from the library cache (sm_90), outputs
poisoned with NaN first, against float64. Each block then strides once
over the tiles by a grid as large as them, so a tile no block takes, or
one taken twice, shows.

Ragged shapes: 7 rows (the small batches' configs: swapped operands,
blocks sharing K), 333, and 2100 rows by 3000 columns (more tiles than the
GPU holds blocks at once, the last ragged); a plain GEMM with gelu, a
layer norm's row reduction over the tiles, and a gated MLP's dual GEMM;
bf16 and fp32 (3xTF32)."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
from gpu.helpers import PRECISIONS, TARGET, relative_error, run_poisoned

pytestmark = pytest.mark.gpu

OPTIONS = {"target": TARGET, "strategy": "wgmma",
           "tile_scheduler": "per_block"}


class Linear(nn.Module):
    def __init__(self, k, n, body):
        super().__init__()
        self.linear = nn.Linear(k, n)
        self.body = body

    def forward(self, x):
        return self.body(self.linear(x))


class Gated(nn.Module):
    """silu(gate(x)) * up(x): one dual GEMM in bf16."""

    def __init__(self, k, n):
        super().__init__()
        self.gate = nn.Linear(k, n, bias=False)
        self.up = nn.Linear(k, n, bias=False)

    def forward(self, x):
        return F.silu(self.gate(x)) * self.up(x)


MODELS = {"gelu(y)": lambda k, n: Linear(k, n, F.gelu),
          "layer_norm(y)": lambda k, n: Linear(
              k, n, lambda y: F.layer_norm(y, y.shape[-1:])),
          "silu(gate) * up": Gated}
SHAPES = [(7, 320, 200), (333, 520, 3000), (2100, 520, 3000)]
CASES = [(name, m, k, n, precision) for name in MODELS
         for m, k, n in SHAPES for precision in ("bf16", "fp32")]


def case_id(case):
    name, m, k, n, precision = case
    return f"{name}-{m}x{k}x{n}-{precision}"


def compiled(case, device):
    name, _, k, n, precision = case
    dtype, option, _ = PRECISIONS[precision]
    torch.manual_seed(0)
    model = MODELS[name](k, n).to(device=device, dtype=dtype)
    x = torch.randn(4, k, dtype=dtype, device=device)
    module = fusion.compile(model, (x,), precision=option, **OPTIONS)
    return model, module


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_per_block(library_cache, within, sm90, case):
    name, m, k, _, precision = case
    dtype, _, bound = PRECISIONS[precision]
    with torch.no_grad():
        model, module = compiled(case, "cuda")
        x = torch.randn(m, k, device="cuda").to(dtype)
        out = run_poisoned(module, x)
        reference = model.double()(x.double())
    within(relative_error(out, reference, 1e-30), bound, case_id(case))


def prepare():
    for case in CASES:
        yield (f"tile scheduler {case_id(case)}",
               lambda case=case: compiled(case, "cpu"))


PREPARE = {"tile-scheduler": prepare}
