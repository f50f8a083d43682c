#!/usr/bin/env python3
"""Compares two printMemrefF32 transcripts result by result.

Prints, per result, the max absolute error against the reference and the
bound it must stay under, `rtol * max(1, max|reference|)`, then PASS or FAIL.
Fails on a different number of results or elements, on NaN/Inf, and on an
all-zero reference (a comparison that could not fail proves nothing).
"""
import argparse
import math
import re
import sys

NUMBER = re.compile(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")


def parse(path):
    text = open(path).read()
    results = []
    for block in text.split("Unranked Memref")[1:]:
        data = block.split("data =", 1)[1]
        results.append([float(token) for token in NUMBER.findall(data)])
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("reference")
    parser.add_argument("candidate")
    parser.add_argument("--rtol", type=float, required=True)
    args = parser.parse_args()

    reference, candidate = parse(args.reference), parse(args.candidate)
    ok = bool(reference) and len(reference) == len(candidate)
    if not ok:
        print(f"result count differs: {len(reference)} vs {len(candidate)}")
    for index, (ref, got) in enumerate(zip(reference, candidate)):
        if len(ref) != len(got):
            print(f"result {index}: {len(ref)} vs {len(got)} values")
            ok = False
            continue
        finite = all(map(math.isfinite, ref + got))
        scale = max(abs(v) for v in ref) if ref else 0.0
        error = max((abs(a - b) for a, b in zip(ref, got)), default=0.0)
        bound = args.rtol * max(1.0, scale)
        good = finite and scale > 0.0 and error <= bound
        verdict = "ok" if good else ("not finite" if not finite else
                                     "zero reference" if scale == 0.0 else
                                     "too large")
        print(f"result {index}: {len(ref)} values, max_abs_err {error:.3e} "
              f"<= bound {bound:.3e} (max |ref| {scale:.3e}): {verdict}")
        ok = ok and good
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
