"""Row reductions and row programs after the GEMM on the GPU, from the
library cache (sm_90), outputs poisoned with NaN first, against float64:

- reductions of whole rows, or of groups of columns, taken from the
  GEMM's tiles (issue 13): the GEMM kernel reduces the rows (groups) of
  its tiles into partials and a row program merges them, so that the
  [M, N] output is never written (category e, pooling), or read once by
  the normalizing pass (softmax, layer and group norms); ragged shapes,
  the tiled, wgmma and cublas strategies in fp32, tf32 and bf16;
- row programs by batch (layer_norm, group_norm, y - y.mean(1), softmax of
  family.py's bench models, K = N), from 1 row to a few thousand, `auto`
  and the backends it chooses between, each library's first call at
  each batch.
"""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion

from gpu.family import BENCH, bench_model
from gpu.helpers import PRECISIONS, TARGET, relative_error, run_poisoned

pytestmark = pytest.mark.gpu

MODELS = {
    "sum(y)": lambda y: y.sum(1),
    "mean(gelu(y))": lambda y: F.gelu(y).mean(1),
    "amax(y)": lambda y: y.amax(1),
    "amin(y) keepdim": lambda y: y.amin(1, keepdim=True),
    "logsumexp(y)": lambda y: torch.logsumexp(y, 1),
    "gelu(logsumexp(-0.5 y))": lambda y: F.gelu(torch.logsumexp(y * -0.5,
                                                                1)),
    "norm(y)": lambda y: torch.linalg.vector_norm(y, dim=1),
    "var(y)": lambda y: torch.var(y, 1),
    "std(gelu(y)) biased": lambda y: torch.std(F.gelu(y), 1, correction=0),
    # The output read after the reductions too: the GEMM writes it as well.
    "softmax(y)": lambda y: F.softmax(y, -1),
    "layer_norm(y)": lambda y: F.layer_norm(y, y.shape[-1:]),
    "y - logsumexp(y)": lambda y: y - torch.logsumexp(y, 1, keepdim=True),
    # Groups of columns: spans of one group where groups tile a tile, of a
    # tile where tiles tile a group; straddling groups keep the output
    # written (and a row program over groups reads it).
    "group_norm(y, 32)": lambda y: F.group_norm(y, 32),
    "gelu(group_norm(y, 2))": lambda y: F.gelu(F.group_norm(y, 2)),
    "max_pool(y, 8)": lambda y: F.max_pool1d(y.unsqueeze(1), 8).squeeze(1),
    "avg_pool(-y, 8)": lambda y: F.avg_pool1d(-y.unsqueeze(1), 8),
    "group var(y, 4)": lambda y: y.reshape(y.shape[0], 4, -1).var(-1),
}
# Ragged shapes: N = 72 is one tile; N = 3000 is 12 tiles of 256 columns
# (24 of 128 in 3xTF32), the last ragged; N = 4096 rows stay in the row
# program's registers (a block a row: 4 chunks a thread in f32, 2 in
# bf16); M = 2100 makes more tiles than an H100 runs blocks at once, so
# that the persistent Hopper kernel's blocks stage several tiles each.
CHECK_SHAPES = [(77, 40, 72), (2100, 520, 3000), (333, 72, 4096)]
# Group models' shapes (N a multiple of the groups): 32 groups of 128
# columns; 2 of 512 (2 or 4 tiles each); windows of 8 (spans of 8, the
# last tile's past N in 3000); groups of 18 (straddling, unaligned). At
# 333 rows the group norm and the pooling run the narrower tiles of their
# batch configs (wgmma, 128 columns), at 77 rows with 72 columns 64.
GROUP_SHAPES = {"group_norm(y, 32)": [(2100, 520, 4096), (333, 72, 4096)],
                "gelu(group_norm(y, 2))": [(333, 72, 1024)],
                "max_pool(y, 8)": [(2100, 520, 3000), (333, 72, 3000)],
                "avg_pool(-y, 8)": [(77, 40, 72)],
                "group var(y, 4)": [(77, 40, 72)]}
# cublas: the same row programs over the written output.
STRATEGIES = ("tiled", "wgmma", "cublas")


class Reduced(nn.Module):
    def __init__(self, k, n, name):
        super().__init__()
        self.linear = nn.Linear(k, n)
        self.name = name

    def forward(self, x):
        return MODELS[self.name](self.linear(x))


def model_of(name, k, n, dtype, device):
    torch.manual_seed(0)
    return Reduced(k, n, name).to(device=device, dtype=dtype)


def compiled(model, k, dtype, strategy, precision, device="cpu"):
    x = torch.randn(4, k, dtype=dtype, device=device)
    return fusion.compile(model, (x,), target=TARGET, strategy=strategy,
                          precision=precision)


def tile_cases():
    for name in MODELS:
        for m, k, n in GROUP_SHAPES.get(name, CHECK_SHAPES):
            for pname in PRECISIONS:
                for strategy in STRATEGIES:
                    yield name, m, k, n, pname, strategy


@pytest.mark.parametrize("name,m,k,n,pname,strategy", list(tile_cases()))
def test_tile_reduction(library_cache, within, sm90, name, m, k, n, pname,
                        strategy):
    dtype, precision, bound = PRECISIONS[pname]
    with torch.no_grad():
        model = model_of(name, k, n, dtype, "cuda")
        module = compiled(model, k, dtype, strategy, precision, "cuda")
        x = torch.randn(m, k, device="cuda").to(dtype)
        out = run_poisoned(module, x).reshape(m, -1)
        reference = model.double()(x.double()).reshape(m, -1)
    within(relative_error(out, reference, 1e-30), bound, name)


def prepare_tile_reductions():
    for name, m, k, n, pname, strategy in tile_cases():
        def compile_one(name=name, k=k, n=n, pname=pname, strategy=strategy):
            dtype, precision, _ = PRECISIONS[pname]
            compiled(model_of(name, k, n, dtype, "cpu"), k, dtype, strategy,
                     precision)
        yield (f"tile reduction {name} {m}x{k}x{n} {pname} {strategy}",
               compile_one)


# --------------------------------------------------- row programs by batch
ROW_MODELS = ("layer_norm(y)", "group_norm(y, 32)", "y - y.mean(1)",
              "softmax(y)")
ROW_SIZES = (4096, 8192, 16384)
ROW_BATCHES = (1, 16, 32, 64, 128, 256, 512, 1024, 2048)
ROW_PRECISIONS = ("tf32", "bf16")
ROW_STRATEGIES = ("cublas", "wgmma")


def row_cases():
    for _, name, body, norm, training, _ in BENCH:
        if name not in ROW_MODELS:
            continue
        for n in ROW_SIZES:
            for pname in ROW_PRECISIONS:
                for strategy in ROW_STRATEGIES:
                    yield name, body, norm, training, n, pname, strategy


def row_module(body, norm, training, n, pname, strategy, device):
    dtype, precision, _ = PRECISIONS[pname]
    model = bench_model(body, norm, training, n, n, dtype, device)
    x = torch.randn(4, n, dtype=dtype, device=device)
    return model, fusion.compile(model, (x,), target=TARGET,
                                 strategy=strategy, precision=precision)


@pytest.mark.parametrize("case", list(row_cases()),
                         ids=lambda c: f"{c[0]}-{c[4]}-{c[5]}-{c[6]}")
def test_row_batches(library_cache, within, sm90, case):
    name, body, norm, training, n, pname, strategy = case
    dtype, _, bound = PRECISIONS[pname]
    torch.backends.cuda.matmul.allow_tf32 = pname == "tf32"
    try:
        with torch.no_grad():
            model, module = row_module(body, norm, training, n, pname,
                                       strategy, "cuda")
            reference = bench_model(body, norm, training, n, n, dtype,
                                    "cuda").double()
            reference.load_state_dict(model.state_dict())
            errors = []
            for m in ROW_BATCHES:
                x = torch.randn(m, n, device="cuda", dtype=dtype)
                expected = reference(x.double())
                # The library's [M, 1] for a model's [M].
                out = run_poisoned(module, x).reshape(expected.shape)
                errors.append(relative_error(out, expected, 1e-30))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    beyond = [i for i, e in enumerate(errors) if not e <= bound]
    worst = beyond[0] if beyond else max(range(len(errors)),
                                         key=lambda i: errors[i])
    within(errors[worst], bound, f"{name} at {ROW_BATCHES[worst]} rows")


def prepare_row_batches():
    for name, body, norm, training, n, pname, strategy in row_cases():
        yield (f"row batches {name} {n} {pname} {strategy}",
               lambda body=body, norm=norm, training=training, n=n,
               pname=pname, strategy=strategy: row_module(
                   body, norm, training, n, pname, strategy, "cpu"))


PREPARE = {"tile-reductions": prepare_tile_reductions,
           "row-batches": prepare_row_batches}
