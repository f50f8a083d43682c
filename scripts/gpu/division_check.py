#!/usr/bin/env python3
"""Divisions in the GPU's epilogues against IEEE division: each side of an
`epilogue_ab.py pack` directory runs the plain GEMM, `y / c` (its models
y_div_c and y_div_3), `y / s` (y_div_s, a row statistic s: [M, 1]) and the
approximate `y / r` (y_div_r_approx, r: [M, N]) on the same f32 inputs,
whose rows are scaled by powers of two from 2^-40 to 2^40, and the
quotients must be `plain / c`, `plain / s` and `plain / r` as PyTorch
divides CUDA tensors (div.rn.f32), NaN for NaN; tf32 and 3xTF32 libraries,
ragged batches. The divisors s and r span 2^-60 to 2^60 (r: 2^-140 to
2^127, subnormals included) and hold zeros of either sign, infinities, NaN,
a subnormal and the largest f32. The correctly rounded quotients must be
the same bits, but where |y| or |y / s| is below 2^-100, where they may be
an ulp off (fusion-expand-divisions); the approximate ones within 2 ulps
(div.full.f32).

    division_check.py OUT [--rows 1000,333]
"""
import argparse
import json
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_and_bench import Library, precision_setup  # noqa: E402
from epilogue_ab import packed_sides  # noqa: E402

CONSTANTS = {"y_div_c": -0.7, "y_div_3": 3.0}
SPECIAL_DIVISORS = [0.0, -0.0, float("inf"), float("-inf"), float("nan"),
                    1e-40, -3.4028235e38]
TINY = 2.0 ** -100


def divisors(m, n, low, high):
    """An [m, n] f32 matrix of random signs and powers of two from 2^low to
    2^high, its first elements the special divisors."""
    d = torch.randn(m, n, device="cuda", dtype=torch.float64) * torch.exp2(
        torch.randint(low, high + 1, (m, n), device="cuda").double())
    d = d.float()
    d.view(-1)[:len(SPECIAL_DIVISORS)] = torch.tensor(SPECIAL_DIVISORS)
    return d


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out")
    parser.add_argument("--rows", default="1000,333")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    packed = json.loads((out / "shape.json").read_text())
    k, n = packed["k"], packed["n"]
    sides = packed_sides(out)
    torch.manual_seed(0)
    failures = 0
    print(f"# {torch.cuda.get_device_name()}")
    print("| side | prec | M | model | elements | beyond bound | max ulps |")
    print("|---|---|---|---|---|---|---|")
    for side in sides:
        for precision in ("tf32", "fp32"):
            precision_setup(precision)
            lib = Library(out / side / f"{precision}.so")
            for m in (int(r) for r in args.rows.split(",")):
                scale = torch.exp2(torch.randint(-40, 41, (m, 1),
                                                 device="cuda").float())
                x = torch.randn(m, k, device="cuda") * scale
                w = torch.randn(n, k, device="cuda") / 64
                b = torch.randn(n, device="cuda") * 1e-3
                y = torch.full((m, n), float("nan"), device="cuda")
                lib.run("plain", m, [x, w, b], [y])
                s = divisors(m, 1, -60, 60)
                r = divisors(m, n, -140, 127)
                # model: (extra inputs, divisor, whether approximate)
                cases = {name: ([], torch.tensor(c, device="cuda"), False)
                         for name, c in CONSTANTS.items()}
                cases["y_div_s"] = ([s], s, False)
                cases["y_div_r_approx"] = ([r], r, True)
                for name, (extra, divisor, approximate) in cases.items():
                    if name not in packed["models"]:
                        continue
                    q = torch.full((m, n), float("nan"), device="cuda")
                    lib.run(name, m, [x, w, b] + extra, [q])
                    ref = y / divisor
                    nans = q.isnan() & ref.isnan()
                    ulps = (q.view(torch.int32).long() -
                            ref.view(torch.int32).long()).abs()
                    ulps[nans] = 0
                    if approximate:
                        within = ulps <= 2
                    else:
                        tiny = (y.abs() < TINY) | (ref.abs() < TINY)
                        within = (ulps == 0) | (tiny & (ulps <= 1))
                    beyond = int((~within).sum())
                    failures += beyond > 0
                    print(f"| {side} | {precision} | {m} | {name} | {q.numel()}"
                          f" | {beyond} | {ulps.max().item()} |")
    print("\nall within their bounds" if not failures else
          f"\nFAILED: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
