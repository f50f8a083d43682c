// RUN: fusion-opt %s --verify-diagnostics --fusion-lower-to-gpu="strategy=tiled tile-m=128 tile-n=256 warps-m=2 warps-n=4 stages=4"
// RUN: not fusion-opt %s --fusion-lower-to-gpu="strategy=tiled tile-m=48" 2>&1 | FileCheck %s --check-prefix=TILING
// RUN: not fusion-opt %s --fusion-lower-to-gpu="strategy=fastest" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// The same tiling fits the 227 KiB of an sm_90 block.
// RUN: fusion-opt %s --fusion-lower-to-gpu="strategy=tiled tile-m=128 tile-n=256 warps-m=2 warps-n=4 stages=4 chip=sm_90" 2>&1 | FileCheck %s --check-prefix=SHARED90

// TILING: error: 'fusion.fused_linear' op invalid tiling 48x128 with 2x2 warps, 4 stages: warp tiles must be positive multiples of 16x16
// SHARED90-NOT: shared memory
// SHARED90: gpu.func @tf32_0_gemm
// STRATEGY: error: fusion-lower-to-gpu: unknown strategy 'fastest' (expected cublas, tiled or auto)
func.func @tf32(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  // expected-error @+1 {{'fusion.fused_linear' op invalid tiling 128x256 with 2x4 warps, 4 stages: needs 196608 bytes of shared memory, sm_80 has 166912}}
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}
