#!/usr/bin/env python3
"""Checks a library compiled for several GPUs (--target=sm_80,sm_90).

Needs the artifacts of `scripts/gpu-check.sh build` (multi/: the workloads
for sm_80 and sm_90 in one library, and in multi/sm_80 and multi/sm_90 for
each alone, all with the `auto` strategy) and an sm_90 GPU. Each entry
point of a multi-target library runs the variant of the newest target the
device runs: the check runs every workload against float64, and compares
the launch of workload A's GEMM kernel (grid, block, shared memory, from
the profiler's trace) with the single-target libraries', which must equal
the sm_90 one and differ from the sm_80 one. Prints a table last.
"""
import argparse
import json
import pathlib
import sys
import tempfile
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from check_and_bench import (Library, check, make_inputs,  # noqa: E402
                             print_correctness)
from wgmma_check import CHECKS, DTYPES, LIBRARIES  # noqa: E402

# The precisions whose `auto` choice differs between sm_80 (the tiled
# mma.sync kernel) and sm_90 (the wgmma kernel) for workload A.
LAUNCH_PRECISIONS = ("fp32", "tf32")


def gemm_launch(lib, name, precision):
    """The launch (grid, block, shared memory) of `name`'s GEMM kernel."""
    k, n = (int(v) for v in name.split("_")[1].split("x"))
    m = 333
    inputs = make_inputs(name[0], m, k, n, DTYPES[precision])
    outputs = [torch.empty(m, n, device="cuda", dtype=DTYPES[precision])]
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        lib.run(name, m, inputs, outputs)
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as trace:
        prof.export_chrome_trace(trace.name)
        events = json.loads(pathlib.Path(trace.name).read_text())
    launches = [(tuple(e["args"].get("grid", ())),
                 tuple(e["args"].get("block", ())),
                 e["args"].get("shared memory"))
                for e in events["traceEvents"]
                if e.get("cat") == "kernel" and e["name"].endswith("_gemm")]
    return launches[0] if launches else None


def call_overhead(lib, precision, calls=2000):
    """Host time of one call of a tiny workload, in us (median of 5 runs of
    `calls` calls; the GPU work is far shorter than the host's)."""
    inputs = make_inputs("a", 1, 513, 129, DTYPES[precision])
    outputs = [torch.empty(1, 129, device="cuda", dtype=DTYPES[precision])]
    lib.run("a_513x129", 1, inputs, outputs)
    runs = []
    for _ in range(5):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            lib.run("a_513x129", 1, inputs, outputs)
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return sorted(runs)[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--artifacts", type=pathlib.Path, required=True)
    parser.add_argument("--precisions", default="fp32,tf32,bf16")
    args = parser.parse_args()
    precisions = args.precisions.split(",")
    major, minor = torch.cuda.get_device_capability()
    print(f"device: {torch.cuda.get_device_name()} (sm_{major}{minor})",
          flush=True)

    failures, rows = [], []
    # The single-target libraries too: the sm_80 one runs through the
    # driver's JIT of its PTX here, as the sm_80 variant would on an sm_8x
    # device.
    for precision in precisions:
        for sub in ("", "sm_90", "sm_80"):
            lib = Library(args.artifacts / "multi" / sub / LIBRARIES[precision])
            for name, kind, batches in CHECKS:
                k, n = (int(v) for v in name.split("_")[1].split("x"))
                for m in batches:
                    check(lib, name, kind, m, k, n, DTYPES[precision],
                          precision, failures, rows)

    launches = []
    for precision in LAUNCH_PRECISIONS:
        if precision not in precisions:
            continue
        library = LIBRARIES[precision]
        multi, sm90, sm80 = (
            gemm_launch(Library(args.artifacts / "multi" / sub / library),
                        "a_1000x4000", precision)
            for sub in ("", "sm_90", "sm_80"))
        ok = multi is not None and multi == sm90 and multi != sm80
        launches.append((precision, multi, sm90, sm80, ok))
        if not ok:
            failures.append(f"{precision}: the multi-target library's GEMM "
                            "launch is not the sm_90 variant's")

    overhead = {sub or "multi": call_overhead(
        Library(args.artifacts / "multi" / sub / LIBRARIES["bf16"]), "bf16")
        for sub in ("", "sm_90")}

    print_correctness("multi-target library, sm_80 + sm_90", rows)
    print("\n## The variant that ran (GEMM launch: grid, block, shared)\n")
    print("| precision | multi-target | sm_90 alone | sm_80 alone | ok |")
    print("|---|---|---|---|---|")
    for precision, multi, sm90, sm80, ok in launches:
        print(f"| {precision} | {multi} | {sm90} | {sm80} | "
              f"{'yes' if ok else 'NO'} |")
    print("\nhost time a call (bf16 a_513x129, M = 1, through ctypes): "
          + ", ".join(f"{k} {v:.2f} us" for k, v in overhead.items()))
    print(f"\n{len(rows) + len(launches) - len(failures)} passed, "
          f"{len(failures)} failed")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
