// Every rule of #fusion.tile_reductions, with its located diagnostic.
// The checks against the op: test/Codegen/Config/verify-lowering-*.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics

func.func @not_fused(%x: tensor<?x64xf32>) -> tensor<?x1xf32> {
  // expected-error @+1 {{'fusion.tile_reductions' must be a #fusion.tile_reductions on a fusion.fused_linear}}
  %0 = fusion.reduce max %x {fusion.tile_reductions = #fusion.tile_reductions<span = 32>} : tensor<?x64xf32> -> tensor<?x1xf32> {
  ^bb0(%in: f32):
    fusion.yield %in : f32
  }
  return %0 : tensor<?x1xf32>
}

// -----

func.func @not_the_attribute(%x: tensor<?x64xf32>, %w: tensor<72x64xf32>) -> tensor<?x72xf32> {
  // expected-error @+1 {{'fusion.tile_reductions' must be a #fusion.tile_reductions on a fusion.fused_linear}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.gemm_config = #fusion.gemm_config<mma_sync, mma = tf32x3, tile = 32x32, warps = 2x1, stages = 3, group_m = 8>, fusion.tile_reductions = 32 : i64} : (tensor<?x64xf32>, tensor<72x64xf32>) -> tensor<?x72xf32>
  return %0 : tensor<?x72xf32>
}
