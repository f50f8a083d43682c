#!/usr/bin/env python3
"""The zoo (python_bindings/tests/zoo.py) on the GPU through fusion.compile,
both GEMM backends, fp32, against PyTorch in float64, running statistics
included; and through torch.compile(backend="fusion").

    zoo_check.py prepare   (build machine) compiles the libraries for sm_90
        into the cache ($FUSION_CACHE_DIR);
    zoo_check.py run       (GPU machine) checks them; prints a table.
"""
import pathlib
import sys

import torch

import fusion
import fusion.dynamo

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] /
                       "python_bindings" / "tests"))
from zoo import ZOO  # noqa: E402

TARGET = "sm_90"
STRATEGIES = ("tiled", "cublas")


def twins(name, device):
    make, shape, training = ZOO[name]
    torch.manual_seed(0)
    model = make().train(training).to(device)
    reference = make().train(training).to(device)
    reference.load_state_dict(model.state_dict())
    return model, reference.double(), torch.randn(*shape, device=device)


def prepare():
    for name in sorted(ZOO):
        for strategy in STRATEGIES:
            model, _, x = twins(name, "cpu")
            fusion.compile(model, (x,), target=TARGET, strategy=strategy)
        torch._dynamo.reset()
        model, _, x = twins(name, "cpu")
        with torch.no_grad():
            torch.compile(model, backend="fusion", options={
                "target": TARGET, "compile_only": True})(x)
    print(f"prepared {len(ZOO)} models")


def error(out, reference):
    return ((out.double() - reference).norm() / reference.norm()).item()


def state_error(model, reference):
    return max([error(model.get_buffer(n), b) for n, b in
                reference.named_buffers() if b.dtype == torch.float64],
               default=0.0)


def run():
    rows, failures = [], []
    with torch.no_grad():
        for name in sorted(ZOO):
            errors = []
            for strategy in STRATEGIES:
                model, reference, x = twins(name, "cuda")
                compiled = fusion.compile(model, (x,), target=TARGET,
                                          strategy=strategy)
                out = compiled(x)
                errors.append(max(error(out, reference(x.double())),
                                  state_error(model, reference)))
            torch._dynamo.reset()
            model, reference, x = twins(name, "cuda")
            out = torch.compile(model, backend="fusion",
                                options={"target": TARGET})(x)
            errors.append(max(error(out, reference(x.double())),
                              state_error(model, reference)))
            if not fusion.dynamo.last_fused:
                errors[-1] = float("inf")
            rows.append((name, errors))
            failures += [f"{name} {what}: {e:.3g}" for what, e in
                         zip(STRATEGIES + ("dynamo",), errors)
                         if not e <= 1e-5]
    print(f"\n## The zoo on {torch.cuda.get_device_name()}, fp32, relative "
          f"error against float64 (outputs and running statistics)")
    print("| model | fusion.compile tiled | fusion.compile cublas | "
          "torch.compile(backend=fusion) |\n|---|---|---|---|")
    for name, errors in rows:
        print(f"| {name} | " + " | ".join(f"{e:.1e}" for e in errors) + " |")
    print(f"\n{len(rows) * 3 - len(failures)}/{len(rows) * 3} within 1e-5; "
          f"failures: {failures or 'none'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(prepare() if sys.argv[1] == "prepare" else run())
