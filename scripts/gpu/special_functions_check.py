#!/usr/bin/env python3
"""The special functions of fusion/special.py (i0, i0e, i1, i1e, erfinv,
erfcx, ndtri, log_ndtr, lgamma, digamma, modified_bessel_i0 and _i1,
spherical_bessel_j0, bessel_j0, _j1, _y0, _y1, trigamma, polygamma of
order 3) in GEMM epilogues against
float64, in ulps of the f32 nearest the exact value (for the Bessel
functions J and Y, of the larger of it and their oscillation's amplitude
sqrt(2 / (pi x)): their errors are absolute near zeros), beside PyTorch's
CUDA kernels,
through every strategy in fp32; and their special values (zeros, poles,
infinities, NaN) against PyTorch's. One library a function and strategy,
of an identity layer whose column group j holds function j's arguments:
x drawn from its range (bf16 values, which every GEMM precision computes
exactly) plus a small full-mantissa bias; each group's last columns take
special values from the bias (x is 0 there: the GEMM would spread
infinities over their row).

    special_functions_check.py prepare   (build machine) compiles the
        libraries for sm_90 into the cache ($FUSION_CACHE_DIR);
    special_functions_check.py run       (GPU machine) checks them.
"""
import math
import sys

import torch

import fusion

from identity_layer import FEATURES, ROWS, IdentityLayer, ulps

TARGET = "sm_90"
STRATEGIES = ("tiled", "cublas", "wgmma")
INF, NAN = math.inf, math.nan
# name -> (function, x's range, max ulps): python_bindings/tests/
# test_special.py's CPU bounds, and two ulps for libdevice's log, exp, erf
# and erfc beneath them.
FUNCTIONS = {
    "i0": (torch.special.i0, (-80, 80), 8),
    "i0e": (torch.special.i0e, (-200, 200), 7),
    "i1": (torch.special.i1, (-80, 80), 20),
    "i1e": (torch.special.i1e, (-200, 200), 15),
    "erfinv": (torch.erfinv, (-0.99, 0.99), 4),
    "erfcx": (torch.special.erfcx, (-9, 30), 6),
    "ndtri": (torch.special.ndtri, (0.01, 0.99), 5),
    "log_ndtr": (torch.special.log_ndtr, (-40, 10), 83),
    "lgamma": (torch.lgamma, (0.01, 8), 6),
    "digamma": (torch.digamma, (2, 30), 10),
    "modified_bessel_i0": (torch.special.modified_bessel_i0, (-80, 80), 8),
    "modified_bessel_i1": (torch.special.modified_bessel_i1, (-80, 80), 20),
    # Between its zeros at +-pi: sin's rounding of x near them aside.
    "spherical_bessel_j0": (torch.special.spherical_bessel_j0, (-3, 3), 6),
    # libdevice's (CUDA documents 9 ulps below 8 and an absolute 2.2e-6
    # beyond): in ulps of the oscillation's amplitude where larger.
    "bessel_j0": (torch.special.bessel_j0, (-40, 40), 32),
    "bessel_j1": (torch.special.bessel_j1, (-40, 40), 32),
    "bessel_y0": (torch.special.bessel_y0, (0.01, 40), 32),
    "bessel_y1": (torch.special.bessel_y1, (0.01, 40), 32),
    # PyTorch's float32 trigamma; zeta's series above 0 and the reflection
    # below (PyTorch's CUDA kernel sums zeta's series from x on).
    "trigamma": (lambda x: torch.polygamma(1, x), (0.01, 30), 8),
    "polygamma_3": (lambda x: torch.polygamma(3, x), (-20, 20), 24),
}
OSCILLATING = {"bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"}
GROUP = FEATURES // len(FUNCTIONS)
SPECIAL = [0.0, INF, -INF, NAN, 1.0, 2.0, -2.0, 8.0, -0.5, 0.5, 1e30, -1e30]


def specials():
    """(column, value) of each group's special values."""
    return [(j * GROUP + GROUP - len(SPECIAL) + i, v)
            for j in range(len(FUNCTIONS)) for i, v in enumerate(SPECIAL)]


def bias():
    generator = torch.Generator().manual_seed(1)
    values = (torch.rand(FEATURES, generator=generator) - 0.5) * 0.01
    for column, value in specials():
        values[column] = value
    return values


def inputs():
    generator = torch.Generator().manual_seed(0)
    x = torch.zeros(ROWS, FEATURES)
    for j, (_, (low, high), _) in enumerate(FUNCTIONS.values()):
        x[:, j * GROUP:(j + 1) * GROUP] = low + (high - low) * torch.rand(
            ROWS, GROUP, generator=generator)
    x = x.to(torch.bfloat16).float()
    for column, _ in specials():
        x[:, column] = 0.0
    return x


def layer(function):
    return IdentityLayer(lambda y, _: function(y), bias=bias())


def prepare():
    for function, _, _ in FUNCTIONS.values():
        for strategy in STRATEGIES:
            fusion.compile(layer(function), (inputs(),), target=TARGET,
                           strategy=strategy)
    print(f"prepared {len(FUNCTIONS) * len(STRATEGIES)} libraries")


def run():
    failures = []
    x = inputs().cuda()
    special_columns = [c for c, _ in specials()]
    y = (x + bias().cuda()).double()
    print("| function | " + " | ".join(STRATEGIES) + " | PyTorch's | "
          "special values differing |\n|---|" + "---|" * (len(STRATEGIES) + 2))
    for j, (name, (function, _, bound)) in enumerate(FUNCTIONS.items()):
        with torch.no_grad():
            model = layer(function).cuda()
            theirs = model(x)
            outs = {s: fusion.compile(model, (x,), target=TARGET,
                                      strategy=s)(x) for s in STRATEGIES}
        columns = [c for c in range(j * GROUP, (j + 1) * GROUP)
                   if c not in special_columns]
        exact = function(y[:, columns])
        finite = exact.abs() < 3e38
        magnitude = torch.maximum(exact.abs(), torch.sqrt(
            2 / (math.pi * y[:, columns].abs().clamp(min=1)))) \
            if name in OSCILLATING else None
        worst = [ulps(outs[s][:, columns], exact, magnitude)[finite]
                 .max().item() for s in STRATEGIES]
        their = ulps(theirs[:, columns], exact, magnitude)[finite].max().item()
        own = [c for c in special_columns if j * GROUP <= c < (j + 1) * GROUP]
        differing = 0
        for s in STRATEGIES:
            a, b = outs[s][0, own], theirs[0, own]
            close = torch.isclose(a, b, rtol=1e-5, atol=1e-6,
                                  equal_nan=True)
            differing += int((~close).sum())
            if not close.all():
                failures.append(f"{name} {s}: at {y[0, own][~close].tolist()}"
                                f" {a[~close].tolist()} against "
                                f"{b[~close].tolist()}")
        failures += [f"{name} {s}: {w:.2f} ulps" for s, w in
                     zip(STRATEGIES, worst) if not w <= bound]
        print(f"| {name} | " + " | ".join(f"{w:.2f}" for w in worst) +
              f" | {their:.2f} | {differing} |")
    total = len(FUNCTIONS) * len(STRATEGIES)
    print(f"\n{total - len(failures)}/{total} within the bounds; "
          f"failures: {failures or 'none'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(prepare() if sys.argv[1] == "prepare" else run())
