#!/usr/bin/env python3
"""Checks and times the Hopper (wgmma) GEMM kernels against PyTorch.

Needs the artifacts of `scripts/gpu-check.sh build` (wgmma/, tiled/ and the
cublas libraries at the top) and an sm_90 GPU. Correctness: every workload
of the wgmma libraries (ragged M, N and K included) against float64, as
check_and_bench.py checks the other backends, plus bad arguments.
Timing, same run: the wgmma kernel, backend 1 (cuBLASLt + epilogue), the
sm_80 tiled kernel, the raw cuBLAS GEMM (torch.addmm), eager, and with
--compile torch.compile default. The GEMM alone (workload G, identity
epilogue) measures the mainloop against cuBLAS. Prints tables last.
"""
import argparse
import datetime
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from check_and_bench import (BOUNDS, Library, bench, check,  # noqa: E402
                             check_errors, precision_setup,
                             print_correctness)

LIBRARIES = {"fp32": "workloads_f32_fp32.so", "tf32": "workloads_f32_tf32.so",
             "bf16": "workloads_bf16.so", "f16": "workloads_f16.so"}
DTYPES = {"fp32": torch.float32, "tf32": torch.float32,
          "bf16": torch.bfloat16, "f16": torch.float16}
# (function, kind, batches): ragged M, N (4000, 129) and K (1000, 513);
# more tiles than an H100's 132 blocks (2000, 1500, 4100 rows), so that the
# persistent kernel's blocks run several each; batch norms past the batch
# configs' rows (1500, 1000) take the kernel with swapped operands, and so
# do batches of at most 32 rows (1, 7, 16, 20, 30) of the other workloads
# (tiles 64 of w's rows wide, at 16384 columns 128); at 4000 and 4096
# columns batches of at most 64 rows (and batch norms of at most 128) take
# split_k, blocks that share each tile's K slices (1, 7, 16, 40, 48, 64,
# 77, 128); batch norms of at most 64 rows finish in 64-row tiles (7, 40,
# 64).
CHECKS = [("a_8192x8192", "a", [256, 77, 2000, 1, 30]),
          ("a_1000x4000", "a", [333, 7, 40]),
          ("a_513x129", "a", [97]),
          ("b_4096x4096", "b", [512, 77, 1500, 128, 7, 64]),
          ("b_1000x4000", "b", [300, 1000, 40]), ("b_513x129", "b", [97]),
          ("g_4096x4096", "g", [130, 4100, 16, 1, 48, 64]),
          ("g_16384x16384", "g", [20])]
# (workload, function, M): the headline shapes, and batch 128, whose
# 128x256 tiles leave half of an H100's SMs idle (the batch configs) and
# whose batch norm one block row of tiles holds (the kernel finishes it).
BENCH = [("A", "a_8192x8192", 1024), ("B", "b_8192x8192", 1024),
         ("B", "b_4096x4096", 16384), ("G", "g_8192x8192", 1024),
         ("G", "g_4096x4096", 16384), ("G", "g_8192x8192", 8192),
         ("A", "a_16384x16384", 128), ("B", "b_16384x16384", 128),
         ("B", "b_4096x4096", 128), ("G", "g_16384x16384", 128),
         ("G", "g_8192x8192", 128)]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--artifacts", type=pathlib.Path, required=True)
    parser.add_argument("--precisions", default="fp32,tf32,bf16")
    parser.add_argument("--compile", action="store_true",
                        help="also time torch.compile (default mode)")
    parser.add_argument("--max-autotune", action="store_true",
                        help="also time torch.compile max-autotune-no-"
                        "cudagraphs (A and B)")
    parser.add_argument("--workloads", default="A,B,G")
    parser.add_argument("--cases", default=None,
                        help="W:FUNCTION:M,... of BENCH: time these alone")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--no-bench", action="store_true")
    args = parser.parse_args()
    precisions = args.precisions.split(",")
    dirs = {"wgmma": args.artifacts / "wgmma", "cublas": args.artifacts,
            "tiled": args.artifacts / "tiled"}
    if args.no_bench:  # Only the wgmma libraries are checked.
        dirs = {"wgmma": dirs["wgmma"]}
    libs = {(s, p): Library(d / LIBRARIES[p])
            for s, d in dirs.items() for p in precisions}
    device = torch.cuda.get_device_name()
    print(f"device: {device}; torch {torch.__version__}; "
          f"{datetime.date.today()}", flush=True)

    failures, rows = [], []
    for precision in precisions if not args.no_check else []:
        precision_setup("fp32")  # references in float64 regardless
        lib = libs["wgmma", precision]
        for name, kind, batches in CHECKS:
            k, n = (int(v) for v in name.split("_")[1].split("x"))
            for m in batches:
                check(lib, name, kind, m, k, n, DTYPES[precision], precision,
                      failures, rows)
    errors = [] if args.no_check else check_errors(
        libs["wgmma", precisions[0]], "a_1000x4000", failures)

    table = []
    if not args.no_bench:
        for precision in precisions:
            for workload, name, m in BENCH:
                if workload not in args.workloads.split(",") or (
                        args.cases and f"{workload}:{name}:{m}" not in
                        args.cases.split(",")):
                    continue
                k, n = (int(v) for v in name.split("_")[1].split("x"))
                kind = workload.lower()
                strategy_libs = {s: libs[s, precision] for s in dirs}
                modes = []
                if workload != "G":
                    modes += [None] if args.compile else []
                    modes += (["max-autotune-no-cudagraphs"]
                              if args.max_autotune else [])
                times = bench(strategy_libs, name, kind, m, k, n,
                              DTYPES[precision], precision, modes)
                table.append((workload, precision, m, k, n, times))
                print(f"timed {workload} {precision} {m}x{k}x{n}: "
                      + ", ".join(f"{key} {v:.3f}" for key, v in
                                  times.items()), flush=True)

    print_correctness("wgmma", rows)
    for what, status, message in errors:
        print(f"bad argument, {what}: status {status}: {message}")
    if table:
        print(f"\n## Timing ({device}, ms per call, median of 10 x 10 "
              "back-to-back calls)\n")
        print("| workload | precision | MxKxN | wgmma | cublas | tiled | gemm "
              "| eager | compile | wgmma TFLOP/s | wgmma/gemm | cublas/gemm "
              "| tiled/gemm | eager/wgmma | compile/wgmma | autotune/wgmma |")
        print("|" + "---|" * 16)
        for workload, precision, m, k, n, t in table:
            tflops = 2 * m * k * n / (t["wgmma"] * 1e-3) / 1e12
            compiled = t.get("compile:default")
            tuned = t.get("compile:max-autotune-no-cudagraphs")
            print(f"| {workload} | {precision} | {m}x{k}x{n} "
                  f"| {t['wgmma']:.3f} | {t['cublas']:.3f} | {t['tiled']:.3f}"
                  f" | {t['gemm']:.3f} | {t['eager']:.3f} | "
                  + (f"{compiled:.3f}" if compiled else "-")
                  + f" | {tflops:.0f} | {t['wgmma'] / t['gemm']:.3f}"
                  f" | {t['cublas'] / t['gemm']:.3f}"
                  f" | {t['tiled'] / t['gemm']:.3f}"
                  f" | {t['eager'] / t['wgmma']:.2f} | "
                  + (f"{compiled / t['wgmma']:.2f}" if compiled else "-")
                  + " | " + (f"{tuned / t['wgmma']:.2f}" if tuned else "-")
                  + " |")
    print(f"\n{len(rows) - len(failures)} passed, {len(failures)} failed")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
