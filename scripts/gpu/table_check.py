#!/usr/bin/env python3
"""Every op of the importer's table on the GPU, through both GEMM backends,
against PyTorch in float64: the model of python_bindings/tests/
test_aten_table.py (a linear layer, then the op with negative constants and
a per-column vector) at a ragged shape, outputs poisoned with NaN first.

    table_check.py prepare   (build machine) compiles every op's library for
        sm_90 into the cache ($FUSION_CACHE_DIR);
    table_check.py run       (GPU machine) checks them; prints a table.
"""
import pathlib
import sys

import torch

import fusion

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] /
                       "python_bindings" / "tests"))
from test_aten_table import SAMPLES, Apply  # noqa: E402
from frontend_bench import run_poisoned  # noqa: E402

TARGET = "sm_90"
STRATEGIES = ("tiled", "cublas")
BATCH, K = 77, 19


def compiled(name, strategy, device):
    torch.manual_seed(0)
    model = Apply(name).to(device)
    x = torch.randn(BATCH, K, device=device)
    return model, x, fusion.compile(model, (x,), target=TARGET,
                                    strategy=strategy)


def prepare():
    for name in sorted(SAMPLES):
        for strategy in STRATEGIES:
            compiled(name, strategy, "cpu")
    print(f"prepared {len(SAMPLES)} ops x {len(STRATEGIES)} strategies")


def run():
    failures, rows = [], []
    for name in sorted(SAMPLES):
        errors = []
        for strategy in STRATEGIES:
            model, x, module = compiled(name, strategy, "cuda")
            with torch.no_grad():
                out = run_poisoned(module, x)
                reference = model.double()(x.double())
            error = ((out.double() - reference).norm() /
                     reference.norm()).item()
            errors.append(error)
            if not error <= 1e-5:
                failures.append(f"{name} {strategy}: {error:.3g}")
        rows.append((name, errors))
    print(f"\n## The op table on {torch.cuda.get_device_name()}, "
          f"[{BATCH}, {K}] x [13, {K}]^T, fp32 (3xTF32 tiled; cuBLASLt "
          f"+ epilogue kernel), relative error against float64")
    print("| op | tiled | cublas |\n|---|---|---|")
    for name, errors in rows:
        print(f"| {name} | " + " | ".join(f"{e:.1e}" for e in errors) + " |")
    print(f"\n{len(rows) * len(STRATEGIES) - len(failures)}/"
          f"{len(rows) * len(STRATEGIES)} within 1e-5; failures: "
          f"{failures or 'none'}")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare()
    else:
        sys.exit(run())
