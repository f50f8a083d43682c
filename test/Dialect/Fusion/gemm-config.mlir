// The lowering decisions round-trip: #fusion.target and #fusion.gemm_config
// of every backend, each a config the lowering-config verifier accepts.
// RUN: fusion-opt %s | fusion-opt | FileCheck %s
// RUN: fusion-opt %s --fusion-verify-lowering | FileCheck %s

// CHECK: module attributes {fusion.target = #fusion.target<sm_86>}
// CHECK: fusion.lowering = #fusion.lowering<gemm = <cublaslt>
// CHECK: fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 128x128, warps = 2x4, stages = 2, group_m = 8>
// CHECK: fusion.lowering = #fusion.lowering<gemm = <simt, tile = 128x128, warps = 2x4, stages = 3, group_m = 8>
// CHECK: fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = bf16, tile = 128x256, warps = 2x4, stages = 2, group_m = 8>
module attributes {fusion.target = #fusion.target<sm_86>} {
  func.func @configs(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>,
                     %xh: tensor<?x64xbf16>, %wh: tensor<48x64xbf16>,
                   %xk: tensor<?x256xbf16>, %wk: tensor<48x256xbf16>)
      -> (tensor<?x48xf32>, tensor<?x48xf32>, tensor<?x48xf32>, tensor<?x48xbf16>) {
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
    %1 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 128x128, warps = 2x4, stages = 2, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
    %2 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <simt, tile = 128x128, warps = 2x4, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
    %3 = fusion.fused_linear %xh, %wh epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = bf16, tile = 128x256, warps = 2x4, stages = 2, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
    return %0, %1, %2, %3 : tensor<?x48xf32>, tensor<?x48xf32>, tensor<?x48xf32>, tensor<?x48xbf16>
  }
}

// The Hopper kernel's config: two consumer warpgroups (8x1 warps), at sm_90.
// CHECK: module attributes {fusion.target = #fusion.target<sm_90>}
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 64x128, warps = 4x1, stages = 3, group_m = 4>
// The ping-pong schedule and clusters are printed; the default cooperative
// schedule and unclustered blocks are not.
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128, warps = 4x1, stages = 6, group_m = 8, schedule = pingpong, cluster = 2>
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x256, warps = 4x1, stages = 5, group_m = 8>
// Consumer warpgroups of 128 rows (two m64 row blocks each).
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 256x128, warps = 8x1, stages = 3, group_m = 8>
// Swapped operands are printed, x_w is not: warpgroups of 128 columns (two
// m64n128 wgmmas each), then of 64 columns by 256 rows.
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, operands = w_x>
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32, tile = 256x128, warps = 8x1, stages = 3, group_m = 8, operands = w_x>
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x64, warps = 4x1, stages = 4, group_m = 8>
// 3xTF32 with swapped operands: a consumer warpgroup of 64 columns.
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>
// Blocks that share a tile's K slices: split_k is printed, 1 is not.
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 12, group_m = 8, operands = w_x, split_k = 2>
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 8, group_m = 8, split_k = 4>
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 8, group_m = 8>
// A block a tile is printed, persistent blocks are not.
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 8, group_m = 8, split_k = 4, tile_scheduler = per_block>
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 8, group_m = 8>
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @wgmma(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>,
                   %xh: tensor<?x64xbf16>, %wh: tensor<48x64xbf16>,
                   %xk: tensor<?x256xbf16>, %wk: tensor<48x256xbf16>)
      -> (tensor<?x48xbf16>, tensor<?x48xf32>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xf32>, tensor<?x48xbf16>, tensor<?x48xf32>, tensor<?x48xf32>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xbf16>) {
    %0 = fusion.fused_linear %xh, %wh epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
    %1 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 64x128, warps = 4x1, stages = 3, group_m = 4>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
    %2 = fusion.fused_linear %xh, %wh epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128, warps = 4x1, stages = 6, group_m = 8, schedule = pingpong, cluster = 2>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
    %3 = fusion.fused_linear %xh, %wh epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x256, warps = 4x1, stages = 5, group_m = 8, schedule = cooperative, cluster = 1>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
    %4 = fusion.fused_linear %xh, %wh epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 256x128, warps = 8x1, stages = 3, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
    %5 = fusion.fused_linear %xh, %wh epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, operands = w_x>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
    %6 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32, tile = 256x128, warps = 8x1, stages = 3, group_m = 8, operands = w_x>>, precision = #fusion.precision<tf32>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
    %7 = fusion.fused_linear %xh, %wh epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x64, warps = 4x1, stages = 4, group_m = 8, operands = x_w>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
    %8 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
    %9 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 12, group_m = 8, operands = w_x, split_k = 2>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
    %10 = fusion.fused_linear %xk, %wk epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 8, group_m = 8, split_k = 4>>} : (tensor<?x256xbf16>, tensor<48x256xbf16>) -> tensor<?x48xbf16>
    %11 = fusion.fused_linear %xh, %wh epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 8, group_m = 8, split_k = 1>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
    %12 = fusion.fused_linear %xk, %wk epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 8, group_m = 8, split_k = 4, tile_scheduler = per_block>>} : (tensor<?x256xbf16>, tensor<48x256xbf16>) -> tensor<?x48xbf16>
    %13 = fusion.fused_linear %xh, %wh epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 8, group_m = 8, tile_scheduler = persistent>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13 : tensor<?x48xbf16>, tensor<?x48xf32>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xf32>, tensor<?x48xbf16>, tensor<?x48xf32>, tensor<?x48xf32>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xbf16>
  }
}

// The tile reductions a generated GEMM computes for its row program.
// CHECK-LABEL: func.func @tile_reductions
// CHECK: {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 32x32, warps = 2x1, stages = 3, group_m = 8>{{.*}} tile_reductions = <span = 32>>}
func.func @tile_reductions(%x: tensor<?x64xf32>, %w: tensor<72x64xf32>) -> tensor<?x1xf32> {
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

// Tile reductions from a batch of 33 rows: the swapped batch configs of up
// to 32 rows write the output instead (the default min_rows = 1 is not
// printed).
// CHECK-LABEL: func.func @tile_reductions_min_rows
// CHECK: tile_reductions = <span = 64, min_rows = 33>>}
func.func @tile_reductions_min_rows(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x1xbf16> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = bf16, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = bf16, tile = 32x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 12, group_m = 8>>], tile_reductions = <span = 64, min_rows = 33>>} : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
  %sum = fusion.reduce sum %y : tensor<?x256xbf16> -> tensor<?x1xbf16> {
  ^bb0(%in: f32):
    fusion.yield %in : f32
  }
  return %sum : tensor<?x1xbf16>
}
