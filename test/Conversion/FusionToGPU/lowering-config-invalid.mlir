// fusion-lower-to-gpu checks the configs it is given (without
// fusion-select-gemm-config, written by hand) against the kernels and the
// chip before it lowers them: refused with a located diagnostic, never
// miscompiled.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics --fusion-lower-to-gpu

// wgmma needs sm_90.
module attributes {fusion.target = #fusion.target<sm_80>} {
  func.func @f(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
    // expected-error @+1 {{'fusion.fused_linear' op wgmma GEMM kernels need TMA and wgmma (sm_90), which sm_80 lacks}}
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
    return %0 : tensor<?x256xbf16>
  }
}

// -----

// Tile reductions need a generated GEMM.
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xf32>, %w: tensor<72x64xf32>) -> tensor<?x72xf32> {
    // expected-error @+1 {{'fusion.fused_linear' op tile reductions need a generated GEMM config}}
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>, tile_reductions = <span = 72>>} : (tensor<?x64xf32>, tensor<72x64xf32>) -> tensor<?x72xf32>
    return %0 : tensor<?x72xf32>
  }
}
