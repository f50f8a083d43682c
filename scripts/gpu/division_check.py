#!/usr/bin/env python3
"""Divisions by constants in the GPU's epilogues against IEEE division, bit
for bit: each side of an `epilogue_ab.py pack` directory runs the plain GEMM
and `y / c` (its models y_div_c and y_div_3) on the same f32 inputs, whose
rows are scaled by powers of two from 2^-40 to 2^40, and the quotients must
be `plain / c` as PyTorch divides by a CUDA tensor (div.rn.f32), NaN for
NaN; tf32 and 3xTF32 libraries, ragged batches.

    division_check.py OUT [--rows 1000,333]
"""
import argparse
import json
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_and_bench import Library, precision_setup  # noqa: E402

DIVISORS = {"y_div_c": -0.7, "y_div_3": 3.0}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out")
    parser.add_argument("--rows", default="1000,333")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    k, n = (json.loads((out / "shape.json").read_text())[d] for d in "kn")
    sides = sorted(p.name for p in out.iterdir() if p.is_dir())
    torch.manual_seed(0)
    failures = 0
    print(f"# {torch.cuda.get_device_name()}")
    print("| side | prec | M | model | elements | differ | max ulps |")
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
                for name, c in DIVISORS.items():
                    q = torch.full((m, n), float("nan"), device="cuda")
                    lib.run(name, m, [x, w, b], [q])
                    ref = y / torch.tensor(c, device="cuda")
                    same = (q.view(torch.int32) == ref.view(torch.int32)) | (
                        q.isnan() & ref.isnan())
                    differ = int((~same).sum())
                    ulps = (q.view(torch.int32).long() -
                            ref.view(torch.int32).long()).abs().max().item()
                    failures += differ > 0
                    print(f"| {side} | {precision} | {m} | {name} | {q.numel()}"
                          f" | {differ} | {ulps} |")
    print("\nall bit for bit" if not failures else f"\nFAILED: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
