// Every rule of #fusion.lowering and of the discardable attribute that
// holds it, with its located diagnostic. The checks of its parts against
// the op and the chip: test/Codegen/Config/verify-lowering-*.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{'fusion.lowering' must be a #fusion.lowering on a fusion.fused_linear}}
func.func @not_fused(%x: tensor<?x64xf32>) -> tensor<?x64xf32> attributes {fusion.lowering = #fusion.lowering<gemm = <cublaslt>>} {
  return %x : tensor<?x64xf32>
}

// -----

func.func @not_a_lowering(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  // expected-error @+1 {{'fusion.lowering' must be a #fusion.lowering on a fusion.fused_linear}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.gemm_config<cublaslt>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

// The parts of a lowering are attributes of fusion.lowering, no longer
// discardable attributes of their own.
func.func @old_name(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  // expected-error @+1 {{unknown fusion attribute 'fusion.gemm_config'}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.gemm_config = #fusion.gemm_config<cublaslt>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

// A lowering needs its GEMM config.
// expected-error @+1 {{expected 'gemm'}}
#lowering = #fusion.lowering<tile_reductions = <span = 32>>

// -----

// Each part is of its own kind.
// expected-error @+1 {{invalid kind of attribute specified}}
#lowering = #fusion.lowering<gemm = <cublaslt>, tile_reductions = #fusion.epilogue_batch_norm<max_rows = 128>>

// -----

// expected-error @+1 {{invalid kind of attribute specified}}
#lowering = #fusion.lowering<gemm = <cublaslt>, batches = [#fusion.gemm_config<cublaslt>]>

// -----

// expected-error @+1 {{'tile_reductions' is given twice}}
#lowering = #fusion.lowering<gemm = <cublaslt>, tile_reductions = <span = 32>, tile_reductions = <span = 32>>

// -----

// expected-error @+1 {{unknown lowering key 'tiles' (expected batches, tile_reductions or epilogue_batch_norm)}}
#lowering = #fusion.lowering<gemm = <cublaslt>, tiles = <span = 32>>
