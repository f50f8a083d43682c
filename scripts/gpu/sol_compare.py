#!/usr/bin/env python3
"""Where a fusion entry's kernels and the raw cuBLAS GEMM of the same inputs
meet their limits: ncu's speed-of-light and memory sections of both, from
one process (`--profile-from-start off`: only the calls between
cudaProfilerStart and Stop, after a warm-up of each), with the cache
flushed before each kernel as ncu does by default.

  sol_compare.py LIBRARY ENTRY M PRECISION OUTDIR   (GPU machine, ncu)
      writes OUTDIR/ENTRY_M.txt (ncu's details page) and prints each
      kernel's duration, SM, L2 and DRAM throughput, and bytes moved.
  sol_compare.py --target LIBRARY ENTRY M PRECISION   (what ncu runs)
"""
import csv
import pathlib
import subprocess
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from run_once import prepare  # noqa

# The metrics printed, by the short names of the table's header.
METRICS = {"us": "gpu__time_duration.sum",
           "SM %": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
           "L2 %": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
           "DRAM %": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
           "L2 bytes": "lts__t_bytes.sum",
           "DRAM bytes read": "dram__bytes_read.sum",
           "blocks": "launch__grid_size"}


def target(library, entry, m, precision):
    lib, inputs, outputs = prepare(library, entry, int(m), precision)
    x, w, b = inputs[:3]
    calls = [lambda: lib.run(entry, int(m), inputs, outputs),
             lambda: torch.addmm(b, x, w.t())]
    for call in calls:
        call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for call in calls:
        call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def main(argv):
    if argv[0] == "--target":
        target(*argv[1:5])
        return 0
    library, entry, m, precision, out = argv[:5]
    pathlib.Path(out).mkdir(parents=True, exist_ok=True)
    report = f"{out}/{entry}_{m}_{precision}"
    ncu = ["ncu", "--profile-from-start", "off", "-f", "-o", report,
           "--section", "SpeedOfLight", "--section", "MemoryWorkloadAnalysis",
           "--section", "LaunchStats", "--metrics", ",".join(METRICS.values()),
           sys.executable, __file__, "--target", library, entry, m, precision]
    subprocess.run(ncu, check=True, stdout=subprocess.DEVNULL)
    with open(f"{report}.txt", "w") as details:
        subprocess.run(["ncu", "-i", f"{report}.ncu-rep", "--page",
                        "details"], check=True, stdout=details)
    raw = subprocess.run(["ncu", "-i", f"{report}.ncu-rep", "--page", "raw",
                          "--csv", "--metrics", ",".join(METRICS.values())],
                         check=True, capture_output=True, text=True).stdout
    # A header row, a units row, then a row per kernel.
    rows = list(csv.DictReader(raw.strip().splitlines()))[1:]
    print(f"# {entry} M={m} {precision}: kernel: " + ", ".join(METRICS))
    for row in rows:
        print(f"  {row.get('Kernel Name', '?')[:48]}: "
              + ", ".join(row.get(name, "?") for name in METRICS.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
