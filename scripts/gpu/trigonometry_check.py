#!/usr/bin/env python3
"""sin, cos and tan in GEMM epilogues against float64, in ulps of the f32
nearest the exact value, beside PyTorch's CUDA kernels (libdevice's): a
million values a case of full f32 mantissas, |y| from 2^-20 to 2^20 (the
inline reduction of `fusion-expand-trigonometry` up to 105615, libdevice's
functions out of line beyond), through every strategy in fp32. The weight
is the identity and x's values are bf16's, so that every GEMM precision
computes x exactly, and the epilogue adds the bias in f32 as the reference
does: y = x + bias, whose random full-mantissa bias gives y full mantissas.
Columns of their own hold the cases the bias alone gives (x 0 there): the
f32 values nearest multiples of pi/2 and their neighbours, the bound and
the next f32, zero, infinities and NaN (in x, the GEMM would spread them
over a row). (-0 is the CPU test's, test/Integration/CPU/trigonometry.mlir:
a sum of products is never -0.)

    trigonometry_check.py prepare   (build machine) compiles the libraries
        for sm_90 into the cache ($FUSION_CACHE_DIR);
    trigonometry_check.py run       (GPU machine) checks them.
"""
import math
import sys

import torch

import fusion

from identity_layer import FEATURES, ROWS, IdentityLayer, spread, \
    ulps

TARGET = "sm_90"
STRATEGIES = ("tiled", "cublas", "wgmma")
LARGEST_REDUCED = 105615.0
# The pass's bounds, from its exhaustive sweep on the CPU (sine 1.53,
# cosine 1.54, tangent 3.44 with a correctly rounded reciprocal; the GPU's
# is rcp.approx, within an ulp).
CASES = {"sin": (torch.sin, 1.55), "cos": (torch.cos, 1.55),
         "tan": (torch.tan, 3.5)}


def layer(function):
    return IdentityLayer(lambda y, _: function(y), bias=bias())


def special_values():
    """The bias's own cases: infinities, NaN, 0, the bound and beyond, and
    the f32 values nearest k pi/2 (where the reduction cancels most) with
    their neighbours."""
    values = [float("inf"), -float("inf"), float("nan"), 0.0,
              LARGEST_REDUCED, -LARGEST_REDUCED, 105616.0, 52516.43359375,
              105032.8671875]
    for k in (1, 2, 3, 4, 5, 10, 100, 1000, 10000, 33433, 66866, 67000):
        nearest = torch.tensor(k * math.pi / 2, dtype=torch.float32)
        values += [nearest.item(),
                   torch.nextafter(nearest, torch.tensor(0.0)).item(),
                   torch.nextafter(nearest, torch.tensor(1e6)).item()]
    return torch.tensor(values)


def bias():
    generator = torch.Generator().manual_seed(1)
    values = spread(FEATURES, -20, 17, generator, bf16=False)
    specials = special_values()
    values[:len(specials)] = specials
    return values


def inputs():
    generator = torch.Generator().manual_seed(0)
    x = spread(ROWS * FEATURES, -20, 20, generator).reshape(ROWS, FEATURES)
    x[:, :len(special_values())] = 0.0
    return x


def prepare():
    x = inputs()
    for function, _ in CASES.values():
        for strategy in STRATEGIES:
            fusion.compile(layer(function), (x,), target=TARGET,
                           strategy=strategy)
    print(f"prepared {len(CASES)} cases")


def run():
    failures = []
    x = inputs().cuda()
    y = (x + bias().cuda()).double()
    reduced = y.abs() <= LARGEST_REDUCED
    print("| case | strategy | max ulps, |x| <= 105615 | PyTorch's | "
          "beyond: differ from PyTorch's |\n|---|---|---|---|---|")
    with torch.no_grad():
        for name, (function, bound) in CASES.items():
            model = layer(function).cuda()
            exact = function(y)
            theirs = model(x)
            their_ulps = ulps(theirs, exact)[reduced].max().item()
            for strategy in STRATEGIES:
                compiled = fusion.compile(model, (x,), target=TARGET,
                                          strategy=strategy)
                out = compiled(x)
                error = ulps(out, exact)
                worst = error[reduced].max().item()
                beyond = ~reduced & ~(out.isnan() & theirs.isnan())
                differ = int((out[beyond].view(torch.int32) !=
                              theirs[beyond].view(torch.int32)).sum())
                print(f"| {name} | {strategy} | {worst:.3f} | "
                      f"{their_ulps:.3f} | {differ} |")
                if worst > bound or differ:
                    i, j = (error == error.max()).nonzero()[0].tolist()
                    failures.append(
                        f"{name} {strategy}: {worst:.3f} ulps, {differ} "
                        f"beyond; y[{i}, {j}] = {y[i, j].item()!r} gives "
                        f"{out[i, j].item()!r} against "
                        f"{exact[i, j].item()!r}")
    total = len(CASES) * len(STRATEGIES)
    print(f"\n{total - len(failures)}/{total} within the bounds; "
          f"failures: {failures or 'none'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(prepare() if sys.argv[1] == "prepare" else run())
