// Every rule of an op's fusion.epilogue_batch_norm, with its located
// diagnostic.
// The checks against the op: test/Codegen/Config/verify-lowering-*.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{'fusion.epilogue_batch_norm' must be a #fusion.epilogue_batch_norm on a fusion.fused_linear}}
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {fusion.epilogue_batch_norm = #fusion.tile_reductions<span = 256>, fusion.gemm_config = #fusion.gemm_config<wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>}
    : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

// expected-error @+1 {{'fusion.epilogue_batch_norm' must be a #fusion.epilogue_batch_norm on a fusion.fused_linear}}
func.func @not_fused(%x: tensor<?x64xbf16>) -> tensor<?x64xbf16> attributes {fusion.epilogue_batch_norm = #fusion.epilogue_batch_norm<max_rows = 128>} {
  return %x : tensor<?x64xbf16>
}
