#!/usr/bin/env python3
"""On a GPU machine without the compiler: binds the saved libraries to
freshly built PyTorch modules with fusion.load and compares them with the
eager modules (same parameters; a float64 copy as the reference), outputs
and, for batch norm, running statistics after two training steps; then
times both. Prints a table last."""
import argparse
import copy
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import fusion  # noqa: E402
from check_and_bench import relative_error, timed  # noqa: E402
from workload_modules import PRECISIONS, WORKLOADS  # noqa: E402

BOUNDS = {"fp32": 1e-5, "tf32": 2e-3, "bf16": 2e-2}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("artifacts", type=pathlib.Path)
    args = parser.parse_args()
    rows, failures = [], []
    for name, (cls, batch) in WORKLOADS.items():
        for precision, dtype in PRECISIONS.items():
            torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
            torch.manual_seed(0)
            module = cls().to("cuda", dtype)
            reference = copy.deepcopy(module).double()
            loaded = fusion.load(args.artifacts / f"{name}_{precision}",
                                 module)
            errors = []
            for _ in range(2):  # Two steps: the running stats accumulate.
                x = torch.randn(batch, module.linear.in_features,
                                device="cuda", dtype=dtype)
                with torch.no_grad():  # fusion computes no gradients yet.
                    y = loaded(x)
                errors.append(relative_error(y, reference(x.double())))
            if hasattr(module, "bn"):
                errors.append(relative_error(module.bn.running_mean,
                                             reference.bn.running_mean))
                errors.append(relative_error(module.bn.running_var,
                                             reference.bn.running_var))
                if int(module.bn.num_batches_tracked) != 2:
                    failures.append(f"{name} {precision}: num_batches_tracked")
            ok = max(errors) <= BOUNDS[precision]
            if not ok:
                failures.append(f"{name} {precision}")
            eager = copy.deepcopy(module)
            x = torch.randn(batch, module.linear.in_features, device="cuda",
                            dtype=dtype)
            with torch.no_grad():
                t_fusion = timed(lambda: loaded(x))
                t_eager = timed(lambda: eager(x))
            rows.append((name, precision, max(errors), BOUNDS[precision], ok,
                         t_fusion, t_eager))
    print(f"\ndevice: {torch.cuda.get_device_name()}; torch {torch.__version__}")
    print("| workload | precision | max rel. error (outputs, running stats) "
          "| bound | fusion.load ms | eager ms | eager/fusion |")
    print("|---|---|---|---|---|---|---|")
    for name, precision, error, bound, ok, t_f, t_e in rows:
        print(f"| {name} | {precision} | {error:.2e} {'ok' if ok else 'FAIL'}"
              f" | {bound:.0e} | {t_f:.3f} | {t_e:.3f} | {t_e / t_f:.2f} |")
    if failures:
        print("FAILURES: " + "; ".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
