#!/usr/bin/env python3
"""Writes the GPU check's workloads as fusion-dialect modules.

(A) leaky_relu(linear(x) * 2.0, 0.1) and (B) batch_norm_training(linear(x) *
scale), each at the headline shapes and at ragged ones, in one module per
element type, so one library per precision serves every shape; the batch
size M is dynamic. Also the residual and division epilogues of
python_bindings/tests/gpu/epilogues.py (epilogues_{f32,bf16,f16}.mlir).
"""
import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] /
                       "python_bindings" / "tests"))
from gpu.epilogues import write_modules  # noqa: E402

# (K, N) of each function; M is the batch argument at run time.
SHAPES = {
    "a": [(8192, 8192), (16384, 16384), (1000, 4000), (513, 129)],
    "b": [(4096, 4096), (8192, 8192), (16384, 16384), (1000, 4000),
          (513, 129)],
    "g": [(8192, 8192), (16384, 16384), (4096, 4096)],
}


def workload_a(k, n, t):
    x, w, v, y = f"tensor<?x{k}x{t}>", f"tensor<{n}x{k}x{t}>", \
        f"tensor<{n}x{t}>", f"tensor<?x{n}x{t}>"
    return f"""
func.func @a_{k}x{n}(%x: {x}, %w: {w}, %b: {v}) -> {y} {{
  %0 = fusion.linear %x, %w, %b : {x}, {w}, {v} -> {y}
  %1 = fusion.mul_scalar %0, 2.0 : {y}
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : {y}
  return %2 : {y}
}}
"""


def workload_g(k, n, t):
    """The GEMM alone (identity epilogue): the mainloop against cuBLAS."""
    x, w, v, y = f"tensor<?x{k}x{t}>", f"tensor<{n}x{k}x{t}>", \
        f"tensor<{n}x{t}>", f"tensor<?x{n}x{t}>"
    return f"""
func.func @g_{k}x{n}(%x: {x}, %w: {w}, %b: {v}) -> {y} {{
  %0 = fusion.linear %x, %w, %b : {x}, {w}, {v} -> {y}
  return %0 : {y}
}}
"""


def workload_b(k, n, t):
    x, w, v, y = f"tensor<?x{k}x{t}>", f"tensor<{n}x{k}x{t}>", \
        f"tensor<{n}x{t}>", f"tensor<?x{n}x{t}>"
    return f"""
func.func @b_{k}x{n}(%x: {x}, %w: {w}, %b: {v}, %s: {v}, %g: {v}, %beta: {v},
                     %rm: {v}, %rv: {v}) -> ({y}, {v}, {v}) {{
  %0 = fusion.linear %x, %w, %b : {x}, {w}, {v} -> {y}
  %1 = fusion.mul %0, %s : {y}, {v}
  %r:3 = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.1>
      weight(%g) bias(%beta) running_stats(%rm, %rv)
      : ({y}, {v}, {v}, {v}, {v}) -> ({y}, {v}, {v})
  return %r#0, %r#1, %r#2 : {y}, {v}, {v}
}}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=pathlib.Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for t in ["f32", "bf16", "f16"]:
        text = "".join(workload_a(k, n, t) for k, n in SHAPES["a"])
        text += "".join(workload_b(k, n, t) for k, n in SHAPES["b"])
        text += "".join(workload_g(k, n, t) for k, n in SHAPES["g"])
        (args.out / f"workloads_{t}.mlir").write_text(text)
    write_modules(args.out)


if __name__ == "__main__":
    main()
