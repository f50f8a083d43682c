// Tilings the chip cannot run are refused where the config is made, with a
// located diagnostic naming both sizes.
// RUN: fusion-opt %s --verify-diagnostics --fusion-select-gemm-config="strategy=tiled tile=128,256 warps=2,4 stages=4" --fusion-lower-to-gpu
// RUN: not fusion-opt %s --fusion-select-gemm-config="strategy=tiled tile=48,256" --fusion-lower-to-gpu 2>&1 | FileCheck %s --check-prefix=TILING
// RUN: not fusion-opt %s --fusion-select-gemm-config="strategy=fastest" --fusion-lower-to-gpu 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not fusion-opt %s --fusion-select-gemm-config="strategy=tiled tile=128" 2>&1 | FileCheck %s --check-prefix=EXTENTS
// Negative and absurd values (shared/reliability/flags-small.mlir) are
// range-checked, never used.
// RUN: not fusion-opt %s --fusion-select-gemm-config="strategy=tiled tile=-32,128" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not fusion-opt %s --fusion-select-gemm-config="strategy=tiled warps=2,9223372036854775807 stages=1125899906842624" 2>&1 | FileCheck %s --check-prefix=ABSURD
// The same tiling fits the 227 KiB of an sm_90 block.
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_90 strategy=tiled tile=128,256 warps=2,4 stages=4" --fusion-lower-to-gpu 2>&1 | FileCheck %s --check-prefix=SHARED90

// TILING: error: 'fusion.fused_linear' op tiling 48x256 with 2x2 warps: warp tiles must be multiples of 16x16
// SHARED90-NOT: shared memory
// SHARED90: gpu.func @tf32_0_gemm
// STRATEGY: for the --strategy option: Cannot find option named 'fastest'!
// EXTENTS: error: option 'tile' takes two extents (M,N), got 1
// NEGATIVE: error: 'fusion.fused_linear' op tile rows -32 is out of range [16, 1024]
// ABSURD: error: 'fusion.fused_linear' op warps along N 9223372036854775807 is out of range [1, 32]
func.func @tf32(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  // expected-error @+1 {{'fusion.fused_linear' op tiling 128x256 with 4 stages needs 196608 bytes of shared memory, sm_80 has 166912}}
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}
