#!/usr/bin/env python3
"""Reductions of whole rows, or of groups of columns, of a generated GEMM's
output (issue 13): the GEMM kernel reduces the rows (groups) of its tiles
into partials and a row program merges them, so that the [M, N] output is
never written (category e, pooling), or read once by the normalizing pass
(softmax, layer and group norms).

    tile_reductions.py prepare check|bench [MODELS]   (build machine)
        compiles every library the run loads into the cache
        ($FUSION_CACHE_DIR), for sm_90;
    tile_reductions.py run check|bench [MODELS]   (GPU machine) checks them
        (or the ";"-separated MODELS)
        against float64 on ragged shapes, outputs poisoned with NaN first,
        with the tiled, wgmma and cublas strategies in fp32, tf32 and bf16;
        or times
        them at the sizes users run against the cuBLAS strategy (GEMM, then
        a row program reading the output), eager PyTorch, torch.compile and
        the raw GEMM. Prints the table last.
    tile_reductions.py run profile MODEL M K N PRECISION STRATEGY   (GPU
        machine, under ncu) runs one bench case a few times.
"""
import math
import pathlib
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from frontend_bench import run_poisoned, timed  # noqa: E402

TARGET = "sm_90"
PRECISIONS = {"fp32": (torch.float32, None, 1e-5),
              "tf32": (torch.float32, "tf32", 5e-3),
              "bf16": (torch.bfloat16, None, 2e-2)}
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
# bf16);
# M = 2100 makes more tiles than an H100 runs blocks at once, so that the
# persistent Hopper kernel's blocks stage several tiles each.
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
CHECK_STRATEGIES = ("tiled", "wgmma", "cublas")
BENCH = ["logsumexp(y)", "sum(y)", "var(y)", "softmax(y)", "layer_norm(y)",
         "group_norm(y, 32)", "max_pool(y, 8)"]
BENCH_SIZES = [((1024, 8192, 8192), ("tf32", "bf16", "fp32")),
               ((16384, 4096, 4096), ("tf32", "bf16", "fp32")),
               ((32768, 1024, 4096), ("tf32", "bf16")),
               # 1000 classes: rows that do not split evenly over lanes.
               ((32768, 1024, 1000), ("tf32", "bf16")),
               ((128, 16384, 16384), ("tf32",))]
BENCH_STRATEGIES = ("wgmma", "cublas")


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


def check_cases(models=MODELS):
    for name in models:
        for m, k, n in GROUP_SHAPES.get(name, CHECK_SHAPES):
            for pname in PRECISIONS:
                for strategy in CHECK_STRATEGIES:
                    yield name, m, k, n, pname, strategy


def bench_cases(models=BENCH):
    for (m, k, n), precisions in BENCH_SIZES:
        for name in models:
            for pname in precisions:
                yield name, m, k, n, pname


def prepare(what, models):
    if what == "check":
        for name, m, k, n, pname, strategy in check_cases(models or MODELS):
            dtype, precision, _ = PRECISIONS[pname]
            compiled(model_of(name, k, n, dtype, "cpu"), k, dtype, strategy,
                     precision)
            print(f"prepared {name} {m}x{k}x{n} {pname} {strategy}",
                  flush=True)
        return 0
    for name, m, k, n, pname in bench_cases(models or BENCH):
        dtype, precision, _ = PRECISIONS[pname]
        model = model_of(name, k, n, dtype, "cpu")
        for strategy in BENCH_STRATEGIES:
            compiled(model, k, dtype, strategy, precision)
        print(f"prepared {name} {m}x{k}x{n} {pname}", flush=True)
    return 0


def run_check(models=MODELS):
    rows, failures = {}, []
    with torch.no_grad():
        for name, m, k, n, pname, strategy in check_cases(models):
            dtype, precision, bound = PRECISIONS[pname]
            model = model_of(name, k, n, dtype, "cuda")
            module = compiled(model, k, dtype, strategy, precision, "cuda")
            x = torch.randn(m, k, device="cuda").to(dtype)
            print(f"checking {name} {m}x{k}x{n} {pname} {strategy}",
                  flush=True)
            out = run_poisoned(module, x).reshape(m, -1)
            reference = model.double()(x.double()).reshape(m, -1)
            e = ((out.double() - reference).norm() /
                 reference.norm().clamp_min(1e-30)).item()
            rows.setdefault((name, f"{m}x{k}x{n}"), []).append(e)
            if not e <= bound:
                failures.append(f"{name} {m}x{k}x{n} {pname} {strategy}: "
                                f"{e:.3g}")
    columns = [f"{p} {s}" for p in PRECISIONS for s in CHECK_STRATEGIES]
    print(f"\n## Row reductions from the GEMM's tiles on "
          f"{torch.cuda.get_device_name()}: relative error against float64 "
          f"(bounds fp32 1e-5, tf32 5e-3, bf16 2e-2), outputs poisoned")
    print("| model | M x K x N | " + " | ".join(columns) + " |\n|---|---|" +
          "---|" * len(columns))
    for (name, size), errors in rows.items():
        print(f"| {name} | {size} | " +
              " | ".join(f"{e:.1e}" for e in errors) + " |")
    total = sum(len(e) for e in rows.values())
    print(f"\n{total - len(failures)}/{total} within bounds; failures: "
          f"{failures or 'none'}")
    return 1 if failures else 0


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def run_bench(models=BENCH):
    rows = []
    with torch.no_grad():
        for name, m, k, n, pname in bench_cases(models):
            dtype, precision, _ = PRECISIONS[pname]
            tf32 = pname == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = tf32
            model = model_of(name, k, n, dtype, "cuda")
            x = torch.randn(m, k, device="cuda", dtype=dtype)
            times = {}
            for strategy in BENCH_STRATEGIES:
                module = compiled(model, k, dtype, strategy, precision,
                                  "cuda")
                times[strategy] = timed(lambda: module(x))
            times["eager"] = timed(lambda: model(x))
            w, b = model.linear.weight, model.linear.bias
            times["gemm"] = timed(lambda: F.linear(x, w, b))
            if pname == "tf32":
                torch._dynamo.reset()
                inductor = torch.compile(model)
                times["torch.compile"] = timed(lambda: inductor(x))
                del inductor
                torch._dynamo.reset()
            rows.append((name, f"{m}x{k}x{n}", pname, times))
            print(f"timed {name} {m}x{k}x{n} {pname}: " + ", ".join(
                f"{key} {value:.3f}" for key, value in times.items()),
                flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    keys = list(BENCH_STRATEGIES) + ["eager", "torch.compile", "gemm"]
    print(f"\n## Row reductions from the GEMM's tiles on "
          f"{torch.cuda.get_device_name()}, ms per call (median of 10 x 10 "
          f"calls): wgmma (tile partials, merged) against cublas (GEMM "
          f"writes the output, a row program reads it); torch.compile in "
          f"tf32 only")
    print("| model | M x K x N | prec | " + " | ".join(keys) +
          " | wgmma / gemm | cublas / gemm |\n|---|---|---|" +
          "---|" * (len(keys) + 2))
    for name, size, pname, t in rows:
        print(f"| {name} | {size} | {pname} | " +
              " | ".join(f"{t[key]:.3f}" if key in t else "-"
                         for key in keys) +
              f" | {t['wgmma'] / t['gemm']:.2f} | "
              f"{t['cublas'] / t['gemm']:.2f} |")
    for pname in PRECISIONS:
        picked = [t for _, _, p, t in rows if p == pname]
        if not picked:
            continue
        line = (f"{pname}: wgmma / gemm {geomean([t['wgmma'] / t['gemm'] for t in picked]):.3f}, "
                f"cublas / gemm {geomean([t['cublas'] / t['gemm'] for t in picked]):.3f}, "
                f"eager / wgmma {geomean([t['eager'] / t['wgmma'] for t in picked]):.3f}")
        if pname == "tf32":
            line += (", torch.compile / wgmma "
                     f"{geomean([t['torch.compile'] / t['wgmma'] for t in picked]):.3f}")
        print(line)
    return 0


def run_profile(name, m, k, n, pname, strategy):
    dtype, precision, _ = PRECISIONS[pname]
    torch.backends.cuda.matmul.allow_tf32 = pname == "tf32"
    model = model_of(name, k, n, dtype, "cuda")
    module = compiled(model, k, dtype, strategy, precision, "cuda")
    x = torch.randn(m, k, device="cuda", dtype=dtype)
    with torch.no_grad():
        for _ in range(3):
            module(x)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    action, what = sys.argv[1], sys.argv[2]
    if what == "profile":
        name, m, k, n, pname, strategy = sys.argv[3:9]
        sys.exit(run_profile(name, int(m), int(k), int(n), pname, strategy))
    # Model names hold commas: MODELS is a ";"-separated list.
    models = sys.argv[3].split(";") if len(sys.argv) > 3 else None
    if action == "prepare":
        sys.exit(prepare(what, models))
    if what == "check":
        sys.exit(run_check(models or MODELS))
    sys.exit(run_bench(models or BENCH))
