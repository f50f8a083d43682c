#!/usr/bin/env python3
"""Runs a few models of the epilogue family at one of the sizes users run
(32768 x 1024 -> 4096, tf32, fusion's `auto` strategy) twice each, for a
profiler to measure each kernel's time and DRAM traffic, e.g.

    ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,\
dram__bytes_write.sum python3 profile_rows.py

Libraries come from the cache (`epilogue_family.py prepare bench`).
"""
import pathlib
import sys

import torch

import fusion

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from epilogue_family import BENCH, TARGET, bench_model  # noqa: E402

PROFILED = ("softmax(y)", "layer_norm(y)", "logsumexp(y)", "relu(bn(y)) train",
            "leaky_relu(2y)")


def main():
    m, k, n = 32768, 1024, 4096
    with torch.no_grad():
        for category, name, body, norm, training, square in BENCH:
            if name not in PROFILED:
                continue
            model = bench_model(body, norm, training, k, n, torch.float32,
                                "cuda")
            x = torch.randn(m, k, device="cuda")
            compiled = fusion.compile(model, (x,), target=TARGET,
                                      strategy="auto", precision="tf32")
            for _ in range(2):
                compiled(x)
            torch.cuda.synchronize()
            print(f"ran {name}", flush=True)


if __name__ == "__main__":
    main()
