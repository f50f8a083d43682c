// The lowering-config verifier's rules for a dual GEMM (dual_weight): a
// wgmma config that computes one, for every batch.
// RUN: fusion-opt %s --fusion-verify-lowering --split-input-file --verify-diagnostics

func.func @cublas(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %w2: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  // expected-error @+1 {{'fusion.fused_linear' op a dual GEMM (dual_weight) is computed by a wgmma kernel of operands = x_w, not 3xTF32, without split_k, its two sets of accumulators at most 128 a thread}}
  %0 = fusion.fused_linear %x, %w dual_weight(%w2) epilogue {
  ^bb0(%acc: f32, %dual: f32):
    fusion.yield %dual : f32
  } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

func.func @wide_tiles(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %w2: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  // expected-error @+1 {{'fusion.fused_linear' op a dual GEMM (dual_weight) is computed by a wgmma kernel}}
  %0 = fusion.fused_linear %x, %w dual_weight(%w2) epilogue {
  ^bb0(%acc: f32, %dual: f32):
    fusion.yield %dual : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 3, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

func.func @batch_configs(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %w2: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  // expected-error @+1 {{'fusion.fused_linear' op a dual GEMM takes one config for every batch, without batch configs or tile reductions}}
  %0 = fusion.fused_linear %x, %w dual_weight(%w2) epilogue {
  ^bb0(%acc: f32, %dual: f32):
    fusion.yield %dual : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 3, group_m = 8>, batches = [#fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x128, warps = 4x1, stages = 3, group_m = 8>>]>} : (tensor<?x64xbf16>, tensor<48x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

// A config that computes it verifies (the negative case).
func.func @fits(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %w2: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w dual_weight(%w2) epilogue {
  ^bb0(%acc: f32, %dual: f32):
    fusion.yield %dual : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 3, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}
