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
