#!/usr/bin/env python3
"""Calls one entry point of a fusion library once on random inputs: the
target of `ncu` and `compute-sanitizer` runs.

  run_once.py LIBRARY ENTRY M [precision]
"""
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from check_and_bench import (Library, TORCH_DTYPES, make_inputs,  # noqa
                             precision_setup)

path, name, m = sys.argv[1], sys.argv[2], int(sys.argv[3])
precision_setup(sys.argv[4] if len(sys.argv) > 4 else "fp32")
lib = Library(path)
entry = lib.entries[name]
dtype = TORCH_DTYPES[entry["inputs"][0]["dtype"]]
k = entry["inputs"][0]["shape"][1]
n = entry["outputs"][0]["shape"][1]
inputs = make_inputs(name[0], m, k, n, dtype)
outputs = [torch.full([m if d is None else d for d in o["shape"]],
                      float("nan"), device="cuda", dtype=dtype)
           for o in entry["outputs"]]
lib.run(name, m, inputs, outputs)
torch.cuda.synchronize()
print(f"{name} M={m}: ok")
