// The lowering consumes decisions, it does not make them: it needs the
// module's target and every fused op's config.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics --fusion-lower-to-gpu

module attributes {fusion.target = #fusion.target<sm_80>} {
  func.func @no_config(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
    // expected-error @+1 {{'fusion.fused_linear' op has no #fusion.gemm_config (run --fusion-select-gemm-config)}}
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
}

// -----

// expected-error @+1 {{the module has no #fusion.target (run --fusion-select-gemm-config)}}
module {
  func.func @no_target(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    return %x : tensor<?x8xf32>
  }
}
