// The lowering-config verifier: a lowering's tile reductions' checks against
// the op and its configs, each rule with its located diagnostic.
// RUN: fusion-opt %s --fusion-verify-lowering --split-input-file --verify-diagnostics

func.func @cublaslt(%x: tensor<?x64xf32>, %w: tensor<72x64xf32>) -> tensor<?x72xf32> {
  // expected-error @+1 {{tile reductions need a generated GEMM config}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>, tile_reductions = <span = 32>>} : (tensor<?x64xf32>, tensor<72x64xf32>) -> tensor<?x72xf32>
  return %0 : tensor<?x72xf32>
}

// -----

func.func @batch_norm(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{tile reductions of an output with a batch norm stage: its statistics take the tiles}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1> {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 32x32, warps = 2x1, stages = 3, group_m = 8>, tile_reductions = <span = 32>>} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// Spans of 12 f32 columns are no whole 16-byte chunks.
func.func @span(%x: tensor<?x64xf32>, %w: tensor<72x64xf32>) -> tensor<?x72xf32> {
  // expected-error @+1 {{tile reductions over spans of 12 columns: tiles 32 wide reduce whole tiles or groups of 16-byte chunks that tile them and the 72 output columns}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 32x32, warps = 2x1, stages = 3, group_m = 8>, tile_reductions = <span = 12>>} : (tensor<?x64xf32>, tensor<72x64xf32>) -> tensor<?x72xf32>
  return %0 : tensor<?x72xf32>
}

// -----

// Spans of 16 columns tile the tiles but not the 72 columns.
func.func @span_of_columns(%x: tensor<?x64xf32>, %w: tensor<72x64xf32>) -> tensor<?x72xf32> {
  // expected-error @+1 {{tile reductions over spans of 16 columns}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 32x32, warps = 2x1, stages = 3, group_m = 8>, tile_reductions = <span = 16>>} : (tensor<?x64xf32>, tensor<72x64xf32>) -> tensor<?x72xf32>
  return %0 : tensor<?x72xf32>
}

// -----

func.func @swapped_operands(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{tile reductions need a GEMM config whose accumulators hold rows of the tile, not operands = w_x}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, operands = w_x>, tile_reductions = <span = 256>>} : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

func.func @min_rows_zero(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{tile reductions from min_rows = 0: a batch of at least 1 row}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, tile_reductions = <span = 256, min_rows = 0>>} : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

func.func @min_rows_without_batch_configs(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{tile reductions from min_rows = 33: batches of at most 32 rows must end a batch GEMM config}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, tile_reductions = <span = 256, min_rows = 33>>} : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

// Batches below min_rows must end a batch config (where the host branches).
func.func @min_rows_inside_a_batch_config(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{tile reductions from min_rows = 17: batches of at most 16 rows must end a batch GEMM config}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, batches = [#fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = bf16, tile = 32x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>], tile_reductions = <span = 256, min_rows = 17>>} : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

// A swapped batch config from min_rows on would have to reduce its tiles.
func.func @swapped_from_min_rows(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{tile reductions need a GEMM config whose accumulators hold rows of the tile, not operands = w_x}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = bf16, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = bf16, tile = 32x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>], tile_reductions = <span = 64, min_rows = 17>>} : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}
