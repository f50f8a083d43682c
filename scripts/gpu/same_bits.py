#!/usr/bin/env python3
"""Whether the sides of an `epilogue_ab.py pack` directory compute the same
bits: each packed model (bf16 and f16 libraries, and tf32 and 3xTF32) runs
on the same inputs in every side, and every side's output must equal the
first side's bit for bit (NaN for NaN). Rows of x are scaled by powers of
two from 2^-4 to 2^4, so that the GEMM's outputs reach past +-100 (an exp
of them under- and overflows), and the residuals and row statistics hold
zeros, infinities and NaN among normal values. For changes that must not
change any result (a cheaper instruction sequence for the same values).

    same_bits.py OUT [--rows 1000,333] [--first SIDE]
"""
import argparse
import json
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_and_bench import Library, precision_setup  # noqa: E402
from epilogue_ab import (MODELS, PRECISIONS, packed_sides,  # noqa: E402
                         torch_dtype)

SPECIALS = [0.0, -0.0, float("inf"), float("-inf"), float("nan")]


def extra_input(kind, m, n, dtype):
    columns = n if kind == "r" else 1
    values = torch.randn(m, columns, device="cuda")
    values.view(-1)[:len(SPECIALS)] = torch.tensor(SPECIALS)
    return values.to(dtype)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out")
    parser.add_argument("--rows", default="1000,333")
    parser.add_argument("--first", default=None)
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    packed = json.loads((out / "shape.json").read_text())
    k, n = packed["k"], packed["n"]
    sides = packed_sides(out, args.first)
    torch.manual_seed(0)
    failures = 0
    print(f"# {torch.cuda.get_device_name()}, sides {', '.join(sides)}")
    print(f"| prec | model | M | elements | differing from {sides[0]} |")
    print("|---|---|---|---|---|")
    for precision, t in PRECISIONS.items():
        precision_setup(precision)
        dtype = torch_dtype(t)
        libs = {s: Library(out / s / f"{precision}.so") for s in sides}
        for m in (int(r) for r in args.rows.split(",")):
            scale = torch.exp2(torch.randint(-4, 5, (m, 1), device="cuda")
                               .float())
            x = (torch.randn(m, k, device="cuda") * scale).to(dtype)
            w = (torch.randn(n, k, device="cuda") / 8).to(dtype)
            b = torch.randn(n, device="cuda").to(dtype)
            for name in packed["models"]:
                extra = MODELS[name][1]
                inputs = [x, w, b] + (
                    [extra_input(extra, m, n, dtype)] if extra else [])
                outs = []
                for lib in libs.values():
                    o = torch.full((m, n), float("nan"), device="cuda",
                                   dtype=dtype)
                    lib.run(name, m, inputs, [o])
                    outs.append(o)
                integer = torch.int16 if dtype != torch.float32 \
                    else torch.int32
                first = outs[0]
                differ = max(
                    (int((~((first.view(integer) == o.view(integer)) |
                            (first.isnan() & o.isnan()))).sum())
                     for o in outs[1:]), default=0)
                failures += differ > 0
                print(f"| {precision} | {name} | {m} | {outs[0].numel()} | "
                      f"{differ} |")
    print("\nall the same bits" if not failures else f"\nFAILED: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
