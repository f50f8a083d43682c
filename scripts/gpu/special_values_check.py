#!/usr/bin/env python3
"""Remainders, rounding divisions and sign ops at special values
(python_bindings/tests/zoo.py's SPECIAL_VALUES: zeros of either sign,
infinities, NaN, quotients past 2^23) on the GPU, through every strategy in
fp32, against PyTorch's CUDA kernels: within each case's tolerance, NaNs
where PyTorch's are, the same signs (but NaNs').

    special_values_check.py prepare   (build machine) compiles the libraries
        for sm_90 into the cache ($FUSION_CACHE_DIR);
    special_values_check.py run       (GPU machine) checks them.
"""
import pathlib
import sys

import torch

import fusion

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] /
                       "python_bindings" / "tests"))
from zoo import SPECIAL_VALUES, special_values  # noqa: E402

TARGET = "sm_90"
STRATEGIES = ("tiled", "cublas", "wgmma")


def prepare():
    for name in sorted(SPECIAL_VALUES):
        for strategy in STRATEGIES:
            model, x, _ = special_values(name)
            fusion.compile(model, (x,), target=TARGET, strategy=strategy)
    print(f"prepared {len(SPECIAL_VALUES)} cases")


def mismatch(out, expected, tolerance):
    """Why `out` is not `expected`, or None."""
    try:
        torch.testing.assert_close(out, expected, rtol=tolerance, atol=0,
                                   equal_nan=True)
    except AssertionError as e:
        return " ".join(str(e).split())
    numbers = ~expected.isnan()
    if not torch.equal(torch.signbit(out[numbers]),
                       torch.signbit(expected[numbers])):
        return "signs differ"
    return None


def run():
    failures = []
    print("| case | " + " | ".join(STRATEGIES) + " |\n|---|" +
          "---|" * len(STRATEGIES))
    with torch.no_grad():
        for name in sorted(SPECIAL_VALUES):
            results = []
            for strategy in STRATEGIES:
                model, x, tolerance = special_values(name)
                model, x = model.cuda(), x.cuda()
                compiled = fusion.compile(model, (x,), target=TARGET,
                                          strategy=strategy)
                why = mismatch(compiled(x), model(x), tolerance)
                results.append("same" if why is None else "differs")
                if why:
                    failures.append(f"{name} {strategy}: {why}")
            print(f"| {name} | " + " | ".join(results) + " |")
    total = len(SPECIAL_VALUES) * len(STRATEGIES)
    print(f"\n{total - len(failures)}/{total} as PyTorch's CUDA kernels; "
          f"failures: {failures or 'none'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(prepare() if sys.argv[1] == "prepare" else run())
