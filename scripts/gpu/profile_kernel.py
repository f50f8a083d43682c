#!/usr/bin/env python3
"""Explains a kernel on the GPU machine: one entry point of a fusion
library called once on random inputs (outputs poisoned with NaN first),
under ncu or compute-sanitizer.

  profile_kernel.py ncu LIBRARY ENTRY M PRECISION KERNEL_REGEX OUTDIR
      [--cubin CUBIN]
      Where one kernel spends its time: ncu's full set (OUTDIR/
      profile.ncu-rep, details.txt, source.csv: per-instruction stall
      samples) and, with --cubin, its SASS (OUTDIR/sass.txt).
  profile_kernel.py sanitize LIBRARY ENTRY M [PRECISION] [--tools T,...]
      compute-sanitizer's memcheck, racecheck and synccheck (or T) on one
      call; each synccheck'd output compared with a run without the tool.
  profile_kernel.py sanitize-workloads DIR [--tools T,...]
      the same on small ragged shapes of every multiply of the workload
      libraries in DIR (e.g. ARTIFACTS/wgmma: bf16; tf32 and 3xTF32 with
      a training batch norm; 3xTF32's swapped small-batch tiles at 7 and
      30 rows).
  profile_kernel.py once LIBRARY ENTRY M [PRECISION] [--save FILE]
      the one call the tools run (prints how many elements of each output
      were left unwritten; --save keeps the outputs).
  profile_kernel.py compare FILE FILE
      which rows of each output differ between two saved runs.

A workload's entry (a_..., b_..., g_...) gets the workload's inputs; any
other entry standard normal ones, drawn in the order of their shapes, so
that entries whose arguments have the same shapes in another order see
the same values. scripts/gpu/synccheck_pair.mlir is such a library's
source (fusion-compile it with --strategy=wgmma --target=sm_90; entries
group_norm_gelu and moments_and_y at M = 333).
"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2] / "python_bindings" / "tests"))
TOOLS = ("memcheck", "racecheck", "synccheck")
# (library, entry, M, precision) of sanitize-workloads.
WORKLOAD_CALLS = [("workloads_bf16.so", "a_1000x4000", 77, "bf16"),
                  ("workloads_f32_tf32.so", "g_4096x4096", 130, "tf32"),
                  ("workloads_f32_tf32.so", "b_1000x4000", 77, "tf32"),
                  ("workloads_f32_fp32.so", "b_1000x4000", 77, "fp32"),
                  ("workloads_bf16.so", "b_1000x4000", 77, "bf16"),
                  ("workloads_bf16.so", "b_1000x4000", 333, "bf16"),
                  ("workloads_bf16.so", "b_1000x4000", 1000, "bf16"),
                  ("workloads_f32_tf32.so", "b_1000x4000", 1000, "tf32"),
                  ("workloads_f32_fp32.so", "b_513x129", 333, "fp32"),
                  ("workloads_f32_fp32.so", "a_1000x4000", 7, "fp32"),
                  ("workloads_f32_fp32.so", "g_4096x4096", 30, "fp32")]


def inputs_of(entry, m):
    import torch
    from fusion.dtypes import TORCH_DTYPES
    from gpu.helpers import make_inputs
    name = entry["name"]
    dtype = TORCH_DTYPES[entry["inputs"][0]["dtype"]]
    if re.fullmatch(r"[abg]_\d+x\d+", name):
        k = entry["inputs"][0]["shape"][1]
        n = entry["outputs"][0]["shape"][1]
        return make_inputs(name[0], m, k, n, dtype)
    torch.manual_seed(0)
    shapes = [[m if d is None else d for d in i["shape"]]
              for i in entry["inputs"]]
    inputs = [None] * len(shapes)
    for i in sorted(range(len(shapes)), key=lambda i: str(shapes[i])):
        inputs[i] = torch.randn(shapes[i], device="cuda").to(
            TORCH_DTYPES[entry["inputs"][i]["dtype"]])
    return inputs


def once(library, entry_name, m, precision, save=None):
    import torch
    from gpu.helpers import Library, poisoned_outputs, precision_setup
    precision_setup(precision)
    lib = Library(library)
    entry = lib.entries[entry_name]
    outputs = poisoned_outputs(entry, m)
    lib.run(entry_name, m, inputs_of(entry, m), outputs)
    torch.cuda.synchronize()
    unwritten = [int(o.isnan().sum()) for o in outputs]
    if save:
        torch.save([o.cpu() for o in outputs], save)
    print(f"{entry_name} M={m}: "
          + ("ok" if not any(unwritten) else f"unwritten {unwritten}"))
    return 0 if not any(unwritten) else 1


def compare(first, second):
    import torch
    differ = 0
    for i, (a, b) in enumerate(zip(torch.load(first), torch.load(second))):
        a, b = a.double().nan_to_num(123.0), b.double().nan_to_num(123.0)
        rows = torch.nonzero(a != b)[:, 0].unique().tolist()
        differ += bool(rows)
        print(f"  output {i} {tuple(a.shape)}: " +
              (f"{len(rows)} rows differ: {rows[:12]}" if rows
               else "identical"))
        # The first rows' differing elements, first run then second: what
        # the wrong values are (a neighbour's, a partial sum's) tells how
        # they were made.
        for row in rows[:3]:
            columns = torch.nonzero(a[row] != b[row])[:, 0]
            print(f"    row {row}: {len(columns)} columns differ, "
                  f"first {columns[:16].tolist()}: "
                  f"{a[row, columns[:8]].tolist()} -> "
                  f"{b[row, columns[:8]].tolist()}")
    return 1 if differ else 0


def once_command(library, entry, m, precision, save=None):
    return [sys.executable, str(HERE), "once", str(library), entry, str(m),
            precision] + (["--save", save] if save else [])


def sanitize(library, entry, m, precision, tools):
    status = 0
    for tool in tools:
        print(f"== {tool} {pathlib.Path(library).name} {entry} M={m}",
              flush=True)
        with tempfile.TemporaryDirectory() as work:
            save = tool == "synccheck"
            without, within = f"{work}/without.pt", f"{work}/with.pt"
            if save:
                subprocess.run(once_command(library, entry, m, precision,
                                            without), check=True)
            run = subprocess.run(
                ["compute-sanitizer", "--tool", tool, "--error-exitcode",
                 "9"] + once_command(library, entry, m, precision,
                                     within if save else None),
                capture_output=True, text=True)
            lines = [line for line in (run.stdout + run.stderr).splitlines()
                     if re.search(r"SUMMARY|ok$|unwritten|[Ee]rror", line)]
            print("\n".join(lines[:5]))
            status |= run.returncode != 0
            if save and run.returncode == 0:
                status |= compare(without, within)
    return status


def ncu(library, entry, m, precision, kernel, out, cubin=None):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if cubin:
        (out / "sass.txt").write_text(subprocess.run(
            ["cuobjdump", "-sass", cubin], capture_output=True,
            text=True).stdout)
    with open(out / "ncu.log", "w") as log:
        subprocess.run(["ncu", "--set", "full", "--import-source", "no",
                        "-k", f"regex:{kernel}", "-c", "1", "-f", "-o",
                        str(out / "profile")] +
                       once_command(library, entry, m, precision),
                       stdout=log, stderr=subprocess.STDOUT)
    report = str(out / "profile.ncu-rep")
    for page, name, extra in (("details", "details.txt", []),
                              ("source", "source.csv",
                               ["--csv", "--print-source", "sass"])):
        with open(out / name, "w") as f:
            subprocess.run(["ncu", "-i", report, "--page", page] + extra,
                           stdout=f, stderr=subprocess.STDOUT)
    print((out / "ncu.log").read_text().splitlines()[-3:])
    return 0


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("once", "sanitize", "ncu"):
        p = commands.add_parser(name)
        p.add_argument("library")
        p.add_argument("entry")
        p.add_argument("m", type=int)
        if name == "ncu":
            p.add_argument("precision")
            p.add_argument("kernel")
            p.add_argument("out")
            p.add_argument("--cubin")
        else:
            p.add_argument("precision", nargs="?", default="fp32")
        if name == "once":
            p.add_argument("--save")
        if name == "sanitize":
            p.add_argument("--tools", default=",".join(TOOLS))
    p = commands.add_parser("sanitize-workloads")
    p.add_argument("dir")
    p.add_argument("--tools", default=",".join(TOOLS))
    p = commands.add_parser("compare")
    p.add_argument("first")
    p.add_argument("second")
    args = parser.parse_args()
    if args.command == "once":
        return once(args.library, args.entry, args.m, args.precision,
                    args.save)
    if args.command == "compare":
        return compare(args.first, args.second)
    if args.command == "ncu":
        return ncu(args.library, args.entry, args.m, args.precision,
                   args.kernel, args.out, args.cubin)
    if args.command == "sanitize":
        return sanitize(args.library, args.entry, args.m, args.precision,
                        args.tools.split(","))
    status = 0
    for library, entry, m, precision in WORKLOAD_CALLS:
        path = pathlib.Path(args.dir) / library
        if path.exists():
            status |= sanitize(path, entry, m, precision,
                               args.tools.split(","))
    return status


if __name__ == "__main__":
    sys.exit(main())
