#!/usr/bin/env python3
"""Times the same entry points of two sets of fusion libraries, `before` and
`after`, and the raw cuBLAS GEMM of the same inputs and precision
(`torch.addmm`), interleaved: rounds alternate between the three, so that
clock and thermal drift over the run fall on all alike. Prints each case's
median time per side, the after / before and after / gemm ratios of the
medians and the ranges of the per-round ratios; a change within its range
is noise.

  ab_time.py BEFORE_DIR AFTER_DIR [--rounds R] [--bench W:ENTRY:M,...]
      [--compile [MODE]]

--compile adds torch.compile (mode MODE, default: default) of each
workload's PyTorch model as a side, and its kernels to --kernels' list;
--eager the model itself, uncompiled.

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
from check_and_bench import (MODELS, Library, make_inputs,  # noqa
                             model_b, precision_setup, timed)
from wgmma_check import BENCH, DTYPES, LIBRARIES  # noqa


def kernel_times(run, calls=5):
    """Each kernel of `run`'s calls, by name: its median GPU time (us)."""
    run()
    torch.cuda.synchronize()
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            run()
        torch.cuda.synchronize()
    times = {}
    for event in prof.events():
        if event.device_time > 0:
            times.setdefault(event.name, []).append(event.device_time)
    return {name: statistics.median(t) for name, t in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("before", type=pathlib.Path)
    parser.add_argument("after", type=pathlib.Path)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--precisions", default="fp32,tf32,bf16")
    parser.add_argument("--kernels", default="B",
                        help="workloads whose kernels' times are listed")
    parser.add_argument("--compile", nargs="?", const="default",
                        metavar="MODE",
                        help="also time torch.compile of the workload's "
                        "PyTorch model (mode MODE, default: default)")
    parser.add_argument("--eager", action="store_true",
                        help="also time the workload's PyTorch model")
    parser.add_argument("--bench", default=None,
                        help="cases WORKLOAD:ENTRY:M, comma-separated "
                        "(default: wgmma_check.py's BENCH)")
    args = parser.parse_args()
    # The PyTorch sides, each a column of its time and its ratio to after's.
    pytorch_sides = ["compile"] * bool(args.compile) + ["eager"] * args.eager
    bench = BENCH if args.bench is None else [
        (workload, name, int(m)) for workload, name, m in
        (case.split(":") for case in args.bench.split(","))]
    device = torch.cuda.get_device_name()
    rows = []
    kernels = {}
    for precision in args.precisions.split(","):
        sides = {side: Library(directory / LIBRARIES[precision])
                 for side, directory in (("before", args.before),
                                         ("after", args.after))}
        precision_setup(precision)
        for workload, name, m in bench:
            k, n = (int(v) for v in name.split("_")[1].split("x"))
            inputs = make_inputs(workload.lower(), m, k, n, DTYPES[precision])
            outputs = {side: [torch.empty([m if d is None else d
                                           for d in o["shape"]],
                                          device="cuda",
                                          dtype=DTYPES[precision])
                              for o in lib.entries[name]["outputs"]]
                       for side, lib in sides.items()}
            runs = {side: (lambda lib=lib, out=outputs[side]:
                           lib.run(name, m, inputs, out))
                    for side, lib in sides.items()}
            x, w, b = inputs[:3]
            runs["gemm"] = lambda: torch.addmm(b, x, w.t())
            if args.compile:
                torch._dynamo.reset()
                inductor = torch.compile(
                    MODELS.get(workload.lower(), model_b),
                    mode=None if args.compile == "default" else args.compile)
                runs["compile"] = lambda: inductor(*inputs)
            if args.eager:
                eager = MODELS.get(workload.lower(), model_b)
                runs["eager"] = lambda: eager(*inputs)
            times = {side: [] for side in runs}
            order = list(runs)
            for round in range(args.rounds):
                # Alternate the order, so that no side always follows another.
                for side in order if round % 2 == 0 else reversed(order):
                    times[side].append(timed(runs[side], iters=5))
            if workload in args.kernels:
                for side in runs.keys() - {"gemm"}:
                    kernels[(workload, f"{m}x{k}x{n}", precision,
                             side)] = kernel_times(
                        runs[side])
            median = {side: statistics.median(t) for side, t in times.items()}

            def ratios(over, of="after"):
                r = [a / b for a, b in zip(times[of], times[over])]
                return (median[of] / median[over], min(r), max(r))
            rows.append((workload, precision, f"{m}x{k}x{n}", median,
                         ratios("before"), ratios("gemm"),
                         [ratios("after", of=side)
                          for side in pytorch_sides]))
            print(f"timed {workload} {precision}: {median['before']:.3f} -> "
                  f"{median['after']:.3f} (gemm {median['gemm']:.3f})",
                  flush=True)
    print(f"\n## Interleaved A/B ({device}, ms per call, median of "
          f"{args.rounds} rounds, each the median of 5 x 10 back-to-back "
          "calls)\n")
    print("| workload | precision | MxKxN | before | after | after / before "
          "| per-round ratios | gemm | after / gemm | per-round ratios |"
          + "".join(f" {side} | {side} / after | per-round ratios |"
                    for side in pytorch_sides))
    print("|" + "---|" * (10 + 3 * len(pytorch_sides)))
    for workload, precision, shape, median, (ratio, low, high), \
            (overGemm, lowGemm, highGemm), overAfter in rows:
        print(f"| {workload} | {precision} | {shape} | {median['before']:.3f}"
              f" | {median['after']:.3f} | {ratio:.3f} | {low:.3f}-{high:.3f}"
              f" | {median['gemm']:.3f} | {overGemm:.3f} | "
              f"{lowGemm:.3f}-{highGemm:.3f} |" + "".join(
                  f" {median[side]:.3f} | {over:.3f} | "
                  f"{lowest:.3f}-{highest:.3f} |"
                  for side, (over, lowest, highest)
                  in zip(pytorch_sides, overAfter)))
    if kernels:
        print("\n## Kernels of one call (us, median of 5 calls)\n")
        print("| workload | MxKxN | precision | side | kernel | us |")
        print("|" + "---|" * 6)
        for (workload, shape, precision, side), times in kernels.items():
            for name, us in times.items():
                print(f"| {workload} | {shape} | {precision} | {side} | "
                      f"{name} | {us:.1f} |")
    for precision in args.precisions.split(","):
        logs = [math.log(r[4][0]) for r in rows if r[1] == precision]
        print(f"{precision}: geomean after / before "
              f"{math.exp(sum(logs) / len(logs)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
