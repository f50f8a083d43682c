#!/usr/bin/env python3
"""Calls one entry point of a fusion library once on random inputs, its
outputs poisoned with NaN first: the target of `ncu` and
`compute-sanitizer` runs.

  run_once.py LIBRARY ENTRY M [precision] [--save FILE]
      A workload's entry (a_..., b_..., g_...) gets the workload's inputs;
      any other entry standard normal ones, drawn in the order of their
      shapes, so that entries whose arguments have the same shapes in
      another order see the same values. Prints how many elements of each
      output were left unwritten; --save keeps the outputs (torch.save).
  run_once.py compare FILE FILE
      Which rows of each output differ between two saved runs.
"""
import argparse
import re
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from check_and_bench import (Library, TORCH_DTYPES, make_inputs,  # noqa
                             precision_setup)


def inputs_of(entry, m):
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


def poisoned_outputs_of(entry, m):
    """The entry's outputs at batch m, NaN until written."""
    return [torch.full([m if d is None else d for d in o["shape"]],
                       float("nan"), device="cuda",
                       dtype=TORCH_DTYPES[o["dtype"]])
            for o in entry["outputs"]]


def prepare(library, entry_name, m, precision):
    """The library, and its entry's inputs and poisoned outputs at batch m."""
    precision_setup(precision)
    lib = Library(library)
    entry = lib.entries[entry_name]
    return lib, inputs_of(entry, m), poisoned_outputs_of(entry, m)


def run(args):
    lib, inputs, outputs = prepare(args.library, args.entry, args.m,
                                   args.precision)
    lib.run(args.entry, args.m, inputs, outputs)
    torch.cuda.synchronize()
    unwritten = [int(o.isnan().sum()) for o in outputs]
    if args.save:
        torch.save([o.cpu() for o in outputs], args.save)
    print(f"{args.entry} M={args.m}: "
          + ("ok" if not any(unwritten) else f"unwritten {unwritten}"))
    return 0 if not any(unwritten) else 1


def compare(first, second):
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


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        return compare(sys.argv[2], sys.argv[3])
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("library")
    parser.add_argument("entry")
    parser.add_argument("m", type=int)
    parser.add_argument("precision", nargs="?", default="fp32")
    parser.add_argument("--save")
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
