// fusion-lower-to-gpu takes a row program's reductions from the GEMM's
// tiles exactly where the fused op's #fusion.tile_reductions says so, and
// rejects the attribute where its readers are no such program.
// Hand-written configs, which fusion-select-gemm-config keeps as they are
// (it only sets the target).
// RUN: fusion-opt %s --split-input-file --verify-diagnostics --fusion-select-gemm-config="target=sm_80" --fusion-lower-to-gpu | FileCheck %s

// A hand-written config without the attribute: the GEMM writes the
// [M, 72] output and the row program reads it.
// CHECK-LABEL: gpu.func @written_0_gemm
// CHECK-SAME: memref<?x72xf32>
// CHECK-NOT: memref<?x3xf32>
// CHECK: gpu.return
func.func @written(%x: tensor<?x64xf32>, %w: tensor<72x64xf32>) -> tensor<?x1xf32> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 32x32, warps = 2x1, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<72x64xf32>) -> tensor<?x72xf32>
  %max = fusion.reduce max %y : tensor<?x72xf32> -> tensor<?x1xf32> {
  ^bb0(%in: f32):
    fusion.yield %in : f32
  }
  return %max : tensor<?x1xf32>
}

// -----

// With it: the GEMM writes [M, 3] partial maxima (72 columns in spans of
// 32), not the output.
// CHECK-LABEL: gpu.func @reduced_0_gemm
// CHECK-SAME: memref<?x3xf32>
// CHECK-NOT: memref<?x72xf32>
// CHECK: gpu.return
func.func @reduced(%x: tensor<?x64xf32>, %w: tensor<72x64xf32>) -> tensor<?x1xf32> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 32x32, warps = 2x1, stages = 3, group_m = 8>, tile_reductions = <span = 32>>} : (tensor<?x64xf32>, tensor<72x64xf32>) -> tensor<?x72xf32>
  %max = fusion.reduce max %y : tensor<?x72xf32> -> tensor<?x1xf32> {
  ^bb0(%in: f32):
    fusion.yield %in : f32
  }
  return %max : tensor<?x1xf32>
}

// -----

// The output is returned too.
func.func @returned(%x: tensor<?x64xf32>, %w: tensor<72x64xf32>) -> (tensor<?x72xf32>, tensor<?x1xf32>) {
  // expected-error @+1 {{has tile reductions, but its output is not read by one row program whose reductions its tiles compute}}
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 32x32, warps = 2x1, stages = 3, group_m = 8>, tile_reductions = <span = 32>>} : (tensor<?x64xf32>, tensor<72x64xf32>) -> tensor<?x72xf32>
  %max = fusion.reduce max %y : tensor<?x72xf32> -> tensor<?x1xf32> {
  ^bb0(%in: f32):
    fusion.yield %in : f32
  }
  return %y, %max : tensor<?x72xf32>, tensor<?x1xf32>
}

// -----

// Whole rows of 32-column tiles may reduce in spans of 8 (four a tile,
// as fusion-select-gemm-config's wgmma tiles reduce spans of their
// narrowest batch config): the GEMM writes [M, 9] partials.
// CHECK-LABEL: gpu.func @span_0_gemm
// CHECK-SAME: memref<?x9xf32>
// CHECK-NOT: memref<?x72xf32>
// CHECK: gpu.return
func.func @span(%x: tensor<?x64xf32>, %w: tensor<72x64xf32>) -> tensor<?x1xf32> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 32x32, warps = 2x1, stages = 3, group_m = 8>, tile_reductions = <span = 8>>} : (tensor<?x64xf32>, tensor<72x64xf32>) -> tensor<?x72xf32>
  %max = fusion.reduce max %y : tensor<?x72xf32> -> tensor<?x1xf32> {
  ^bb0(%in: f32):
    fusion.yield %in : f32
  }
  return %max : tensor<?x1xf32>
}

// -----

// Groups of 16 columns in 32-column tiles reduce in spans of 16, not of
// the 32 the attribute says (a span would straddle two groups).
func.func @group_span(%x: tensor<?x64xf32>, %w: tensor<96x64xf32>) -> tensor<?x6xf32> {
  // expected-error @+1 {{has tile reductions over spans of 32 columns, which tiles 32 wide do not reduce: spans must divide the tiles and the reduction's groups}}
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 32x32, warps = 2x1, stages = 3, group_m = 8>, tile_reductions = <span = 32>>} : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  %max = fusion.reduce max %y : tensor<?x96xf32> -> tensor<?x6xf32> {
  ^bb0(%in: f32):
    fusion.yield %in : f32
  }
  return %max : tensor<?x6xf32>
}
