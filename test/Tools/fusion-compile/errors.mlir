// Bad input gets a diagnostic and exit code 1, never a crash.
// REQUIRES: cuda-toolkit
// RUN: not fusion-compile %s -o %t.so 2>&1 | FileCheck %s --check-prefix=INVALID
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.so --strategy=fastest 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.so --precision=fp64 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.so --emit=cubin 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.so --strategy=tiled --tile=128x256 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.so --strategy=tiled --fp32-math=fast 2>&1 | FileCheck %s --check-prefix=FP32MATH
// RUN: not fusion-compile %t.missing.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=MISSING
// Targets and tilings fusion cannot generate code for are refused before
// any code is generated (they used to abort in LLVM or exit 0 with PTX that
// ptxas rejects).
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.ptx --emit=ptx --target= 2>&1 | FileCheck %s --check-prefix=NOTARGET
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.ptx --emit=ptx --target=sm_60 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.ptx --emit=ptx --target=sm_1000 --strategy=tiled 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.ptx --emit=ptx --target=gfx90a 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.ptx --emit=ptx --strategy=tiled --tile=-128x128,2x2,3 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.ptx --emit=ptx --strategy=wgmma --target=sm_90 --schedule=stream_k 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.ptx --emit=ptx --strategy=wgmma --target=sm_90 --cluster=4 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.ptx --emit=ptx --strategy=tiled --tile=64x64,2x2,1125899906842624 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.ptx --emit=ptx --strategy=tiled --precision=bf16 --tile=32x128,2x9223372036854775807,1024 2>&1 | FileCheck %s --check-prefix=WARPS

// INVALID: errors.mlir:[[# @LINE + 3]]:8: error: 'fusion.linear' op weight in_features 4 does not match input K 8
// STRATEGY: fusion-compile: invalid --strategy='fastest' (expected cublas, tiled, wgmma or auto)
func.func @bad(%x: tensor<?x8xf32>, %w: tensor<16x4xf32>) -> tensor<?x16xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<16x4xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
// PRECISION: fusion-compile: invalid --precision='fp64' (expected fp32, tf32, bf16 or f16)
// EMIT: fusion-compile: invalid --emit='cubin' (expected so, mlir or ptx)
// TILE: fusion-compile: invalid --tile='{{.*}}' (expected BMxBN,WMxWN,STAGES of positive integers, e.g. 128x256,2x4,3)
// SCHEDULE: fusion-compile: invalid --schedule='stream_k' (expected cooperative or pingpong)
// CLUSTER: fusion-compile: invalid --cluster='4' (expected 1 or 2)
// FP32MATH: fusion-compile: invalid --fp32-math='fast' (expected tf32x3 or simt)
// NOTARGET: fusion-compile: invalid --target='' (expected cpu, or one or more different supported GPUs separated by commas: sm_80, sm_86, sm_89, sm_90)
// TARGET: fusion-compile: invalid --target='{{.*}}' (expected cpu, or one or more different supported GPUs separated by commas: sm_80, sm_86, sm_89, sm_90)
// STAGES: error: 'fusion.fused_linear' op stages 1125899906842624 is out of range [2, 16]
// WARPS: error: 'fusion.fused_linear' op warps along N 9223372036854775807 is out of range [1, 32]
// MISSING: fusion-compile: cannot open input file
