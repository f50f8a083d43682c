#!/usr/bin/env python3
"""On a machine with two or more GPUs: one library serves every device (the
runtime loads its kernels per device on first use), through the C ABI and
through fusion.load with a module on cuda:1; a buffer on another device than
the stream is rejected with a status."""
import argparse
import copy
import ctypes
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import fusion  # noqa: E402
from check_and_bench import Library, model_a, relative_error  # noqa: E402
from workload_modules import WORKLOADS  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("artifacts", type=pathlib.Path)
    args = parser.parse_args()
    if torch.cuda.device_count() < 2:
        print("fewer than two GPUs: nothing to check")
        return 0
    failures = []
    lib = Library(args.artifacts / "workloads_f32_fp32.so")
    for device in ("cuda:1", "cuda:0", "cuda:1"):
        x = torch.randn(77, 513, device=device)
        w = torch.randn(129, 513, device=device) / 513 ** 0.5
        b = torch.randn(129, device=device)
        out = torch.full((77, 129), float("nan"), device=device)
        # The C ABI: a NULL (default) stream runs on the current device.
        with torch.cuda.device(device):
            stream = torch.cuda.current_stream().cuda_stream
            status, message = lib.call("a_513x129", 77, [x, w, b], [out],
                                       stream=stream)
        torch.cuda.synchronize(device)
        error = relative_error(out, model_a(x.double(), w.double(),
                                            b.double())[0])
        print(f"C ABI on {device}: status {status}, error {error:.2e}")
        if status != 0 or error > 1e-5:
            failures.append(f"C ABI on {device}: {message}")

    # Inputs on cuda:1, the stream of cuda:0: refused.
    x = torch.randn(8, 513, device="cuda:1")
    w = torch.randn(129, 513, device="cuda:1")
    b = torch.randn(129, device="cuda:1")
    out = torch.empty(8, 129, device="cuda:1")
    with torch.cuda.device(0):
        status, message = lib.call("a_513x129", 8, [x, w, b], [out],
                                   stream=torch.cuda.current_stream().cuda_stream)
    print(f"wrong device: status {status}: {message}")
    if status == 0 or "device 1" not in message:
        failures.append("a buffer on another device was accepted")

    # The Python front end with a module on cuda:1, cuda:0 current.
    torch.cuda.set_device(0)
    cls, _ = WORKLOADS["B"]
    torch.manual_seed(0)
    module = cls().to("cuda:1")
    reference = copy.deepcopy(module).double()
    loaded = fusion.load(args.artifacts / "python" / "B_fp32", module)
    x = torch.randn(1024, 4096, device="cuda:1")
    with torch.no_grad():  # fusion computes no gradients yet.
        y = loaded(x)
    error = relative_error(y, reference(x.double()))
    stats = relative_error(module.bn.running_var, reference.bn.running_var)
    print(f"fusion.load on cuda:1: output error {error:.2e}, running_var "
          f"error {stats:.2e}")
    if error > 1e-5 or stats > 1e-5:
        failures.append("fusion.load on cuda:1")
    print("multi-device: " + ("FAIL: " + "; ".join(failures) if failures
                              else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
