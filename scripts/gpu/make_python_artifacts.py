#!/usr/bin/env python3
"""Compiles the workloads from their PyTorch definitions with
fusion.compile (sm_80) and saves them, one directory per workload and
precision, for python_check.py to load on a GPU machine."""
import argparse
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import fusion  # noqa: E402
from workload_modules import PRECISIONS, WORKLOADS  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=pathlib.Path)
    args = parser.parse_args()
    for name, (cls, _) in WORKLOADS.items():
        for precision, dtype in PRECISIONS.items():
            module = cls().to(dtype)
            example = torch.randn(8, module.linear.in_features, dtype=dtype)
            compiled = fusion.compile(module, (example,), target="sm_80",
                                      precision=precision)
            compiled.save(args.out / f"{name}_{precision}")


if __name__ == "__main__":
    main()
