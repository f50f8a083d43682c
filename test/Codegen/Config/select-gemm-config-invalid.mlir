// RUN: fusion-opt %s --split-input-file --verify-diagnostics --fusion-select-gemm-config="target=sm_90 stages=32"

// A module that names another target than the option is refused.
// expected-error @+1 {{the module targets sm_80, option 'target' says sm_90}}
module attributes {fusion.target = #fusion.target<sm_80>} {
}

// -----

// Overrides are range-checked where the config is made.
func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  // expected-error @+1 {{'fusion.fused_linear' op stages 32 is out of range [2, 16]}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

// A config written by hand is kept, and checked against the chip like a
// chosen one: 6 stages of 128x256 bf16 overflow sm_90's shared memory.
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
    // expected-error @+1 {{'fusion.fused_linear' op tiling 128x256 with 6 stages needs}}
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 6, group_m = 8>>} : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
    return %0 : tensor<?x256xbf16>
  }
}
