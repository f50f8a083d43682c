#!/usr/bin/env python3
"""Times the same entry points of two sets of fusion libraries, `before` and
`after`, interleaved: rounds alternate between the two, so that clock and
thermal drift over the run fall on both alike. Prints each case's median
time per side, the after / before ratio of the medians and the range of the
per-round ratios; a change within that range is noise.

  ab_time.py BEFORE_DIR AFTER_DIR [--rounds R]

Each directory holds the workload libraries of `wgmma_ab.sh pack`
(workloads_f32_fp32.so, workloads_f32_tf32.so, workloads_bf16.so).
"""
import argparse
import math
import pathlib
import statistics
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from check_and_bench import (Library, make_inputs, precision_setup,  # noqa
                             timed)
from wgmma_check import BENCH, DTYPES, LIBRARIES  # noqa


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("before", type=pathlib.Path)
    parser.add_argument("after", type=pathlib.Path)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--precisions", default="fp32,tf32,bf16")
    args = parser.parse_args()
    device = torch.cuda.get_device_name()
    rows = []
    for precision in args.precisions.split(","):
        sides = {side: Library(directory / LIBRARIES[precision])
                 for side, directory in (("before", args.before),
                                         ("after", args.after))}
        precision_setup(precision)
        for workload, name, m in BENCH:
            k, n = (int(v) for v in name.split("_")[1].split("x"))
            inputs = make_inputs(workload.lower(), m, k, n, DTYPES[precision])
            outputs = {side: [torch.empty([m if d is None else d
                                           for d in o["shape"]],
                                          device="cuda",
                                          dtype=DTYPES[precision])
                              for o in lib.entries[name]["outputs"]]
                       for side, lib in sides.items()}
            times = {side: [] for side in sides}
            for _ in range(args.rounds):
                for side, lib in sides.items():
                    times[side].append(timed(
                        lambda: lib.run(name, m, inputs, outputs[side])))
            ratios = [a / b for a, b in zip(times["after"], times["before"])]
            before = statistics.median(times["before"])
            after = statistics.median(times["after"])
            rows.append((workload, precision, f"{m}x{k}x{n}", before, after,
                         after / before, min(ratios), max(ratios)))
            print(f"timed {workload} {precision}: {before:.3f} -> "
                  f"{after:.3f}", flush=True)
    print(f"\n## Interleaved A/B ({device}, ms, median of {args.rounds} "
          "rounds of 10 calls' medians)\n")
    print("| workload | precision | MxKxN | before | after | after / before "
          "| per-round ratios |")
    print("|" + "---|" * 7)
    for workload, precision, shape, before, after, ratio, low, high in rows:
        print(f"| {workload} | {precision} | {shape} | {before:.3f} | "
              f"{after:.3f} | {ratio:.3f} | {low:.3f}-{high:.3f} |")
    for precision in args.precisions.split(","):
        logs = [math.log(r[5]) for r in rows if r[1] == precision]
        print(f"{precision}: geomean after / before "
              f"{math.exp(sum(logs) / len(logs)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
