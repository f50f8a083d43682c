// Bad input gets a diagnostic and exit code 1, never a crash.
// REQUIRES: cuda-toolkit
// RUN: not fusion-compile %s -o %t.so 2>&1 | FileCheck %s --check-prefix=INVALID
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.so --strategy=fastest 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.so --precision=fp64 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.so --emit=cubin 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.so --strategy=tiled --tile=128x256 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.so --strategy=tiled --fp32-math=fast 2>&1 | FileCheck %s --check-prefix=FP32MATH
// RUN: not fusion-compile %t.missing.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=MISSING

// INVALID: errors.mlir:[[# @LINE + 3]]:8: error: 'fusion.linear' op weight in_features 4 does not match input K 8
// STRATEGY: error: fusion-compile: unknown strategy 'fastest' (expected cublas, tiled or auto)
func.func @bad(%x: tensor<?x8xf32>, %w: tensor<16x4xf32>) -> tensor<?x16xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<16x4xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
// PRECISION: unknown f32-precision 'fp64' (expected fp32, tf32, bf16 or f16)
// EMIT: error: fusion-compile: unknown emit kind 'cubin' (expected so, mlir or ptx)
// TILE: error: fusion-compile: bad tiling '128x256' (expected BMxBN,WARPSMxWARPSN,STAGES, e.g. 128x256,2x4,3)
// FP32MATH: error: fusion-lower-to-gpu: unknown fp32-math 'fast' (expected tf32x3 or simt)
// MISSING: fusion-compile: cannot open input file
