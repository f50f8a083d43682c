#!/usr/bin/env python3
"""fmod and remainder in GEMM epilogues bit for bit against PyTorch's CUDA
kernels (libdevice's fmodf, exact) over a million values a case: quotients
from below 2^-40 to past 2^40 (the expanded fast path and libdevice's branch,
`fusion-expand-remainders`), divisors of either sign that are constants or
per-column values, zeros, infinities and NaN among them; through every
strategy in fp32. The layer is the identity and x's values are bf16's, so
that every GEMM precision computes y = x exactly.

    remainder_check.py prepare   (build machine) compiles the libraries for
        sm_90 into the cache ($FUSION_CACHE_DIR);
    remainder_check.py run       (GPU machine) checks them.
"""
import sys

import torch

import fusion

from identity_layer import FEATURES, ROWS, IdentityLayer, spread

TARGET = "sm_90"
STRATEGIES = ("tiled", "cublas", "wgmma")


def divisors():
    generator = torch.Generator().manual_seed(1)
    values = spread(FEATURES, -30, 30, generator)
    values[:5] = torch.tensor([0.0, -0.0, float("inf"), -float("inf"),
                               float("nan")])
    return values


CASES = {
    "fmod(y, v)": lambda y, v: torch.fmod(y, v),
    "remainder(y, v)": lambda y, v: torch.remainder(y, v),
    "fmod(y, -0.7)": lambda y, v: torch.fmod(y, -0.7),
    "remainder(y, 3)": lambda y, v: torch.remainder(y, 3.0),
    "fmod(y, 2^-20)": lambda y, v: torch.fmod(y, 2.0 ** -20),
}


def inputs():
    generator = torch.Generator().manual_seed(0)
    x = spread(ROWS * FEATURES, -40, 40, generator).reshape(ROWS, FEATURES)
    # Multiples of the divisors, bf16's too (an f32 0.7 is not y exactly
    # through 3xTF32).
    x[0, :8] = torch.tensor([0.0, 1.5, 3.0, -3.0, 6.0, -6.0, 2.0 ** 100,
                             -2.0 ** -100])
    return x


def prepare():
    x = inputs()
    for name, body in CASES.items():
        for strategy in STRATEGIES:
            fusion.compile(IdentityLayer(body, parameter=divisors()), (x,), target=TARGET,
                           strategy=strategy)
    print(f"prepared {len(CASES)} cases")


def run():
    failures = []
    x = inputs().cuda()
    print("| case | " + " | ".join(STRATEGIES) + " |\n|---|" +
          "---|" * len(STRATEGIES))
    with torch.no_grad():
        for name, body in CASES.items():
            model = IdentityLayer(body, parameter=divisors()).cuda()
            expected = model(x)
            cells = []
            for strategy in STRATEGIES:
                compiled = fusion.compile(model, (x,), target=TARGET,
                                          strategy=strategy)
                out = compiled(x)
                numbers = ~expected.isnan()
                differ = int((out[numbers].view(torch.int32) !=
                              expected[numbers].view(torch.int32)).sum())
                differ += int((out.isnan() != expected.isnan()).sum())
                cells.append(f"{differ} of {x.numel()} differ")
                if differ:
                    where = ((out.view(torch.int32) !=
                              expected.view(torch.int32)) &
                             ~(out.isnan() & expected.isnan())).nonzero()
                    i, j = where[0].tolist()
                    failures.append(
                        f"{name} {strategy}: {differ}, the first at "
                        f"x[{i}, {j}] = {x[i, j].item()!r}: "
                        f"{out[i, j].item()!r} against "
                        f"{expected[i, j].item()!r}")
            print(f"| {name} | " + " | ".join(cells) + " |")
    total = len(CASES) * len(STRATEGIES)
    print(f"\n{total - len(failures)}/{total} bit for bit as PyTorch's; "
          f"failures: {failures or 'none'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(prepare() if sys.argv[1] == "prepare" else run())
