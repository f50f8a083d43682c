// Batch configs whose tiles leave more than half of the SMs idle take
// split_k (pairs of blocks that share each tile's K slices; with
// max-split-k=4, clusters of 4 where those fit the 132 SMs) where the
// tiles' main loop is
// bound by their arithmetic, not by w's stream from DRAM: 3xTF32 tiles
// (at least 16 slices a block) and tf32 tiles of 128 rows (a batch norm's;
// at least 32). An entry whose first block rows alone leave the SMs idle
// gets entries of its own for them (64x64 tiles: 64 rows by 4096
// columns; with max-split-k=4, 4 blocks a tile where those fit, then 2).
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_90" | FileCheck %s
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_90 max-split-k=4" | FileCheck %s --check-prefix=MAX4
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_90 max-split-k=1" | FileCheck %s --check-prefix=NONE

// NONE-NOT: split_k

module attributes {fusion.target = #fusion.target<sm_90>} {
// 64 tiles of 64 columns: 2 blocks a tile.
// CHECK-LABEL: func.func @fp32_4096
// CHECK: batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x, split_k = 2>>, #fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 32x64, warps = 4x1, stages = 13, group_m = 8, operands = w_x, split_k = 2>>, #fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 64x64, warps = 4x1, stages = 8, group_m = 8, split_k = 2>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 64x64, warps = 4x1, stages = 9, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 256, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 128x64, warps = 8x1, stages = 7, group_m = 8>>]
func.func @fp32_4096(%x: tensor<?x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<?x4096xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {precision = #fusion.precision<fp32>} : (tensor<?x4096xf32>, tensor<4096x4096xf32>) -> tensor<?x4096xf32>
  return %0 : tensor<?x4096xf32>
}
// 16 swapped tiles: 2 blocks a tile (max-split-k=4: 4); 64x64 tiles up to
// 256 rows 2 (max-split-k=4: up to 128 rows 4, then 2).
// CHECK-LABEL: func.func @fp32_1024
// CHECK: batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x, split_k = 2>>, #fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 32x64, warps = 4x1, stages = 13, group_m = 8, operands = w_x, split_k = 2>>, #fusion.batch_gemm_config<max_rows = 256, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 64x64, warps = 4x1, stages = 8, group_m = 8, split_k = 2>>, #fusion.batch_gemm_config<max_rows = 512, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 64x64, warps = 4x1, stages = 9, group_m = 8>>,
// MAX4-LABEL: func.func @fp32_1024
// MAX4: batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x, split_k = 4>>, #fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 32x64, warps = 4x1, stages = 12, group_m = 8, operands = w_x, split_k = 4>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 64x64, warps = 4x1, stages = 7, group_m = 8, split_k = 4>>, #fusion.batch_gemm_config<max_rows = 256, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 64x64, warps = 4x1, stages = 8, group_m = 8, split_k = 2>>, #fusion.batch_gemm_config<max_rows = 512, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 64x64, warps = 4x1, stages = 9, group_m = 8>>,
func.func @fp32_1024(%x: tensor<?x4096xf32>, %w: tensor<1024x4096xf32>) -> tensor<?x1024xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {precision = #fusion.precision<fp32>} : (tensor<?x4096xf32>, tensor<1024x4096xf32>) -> tensor<?x1024xf32>
  return %0 : tensor<?x1024xf32>
}
// A batch norm's 128-row tiles in tf32 (one block row: 64 tiles); its
// 64-row tiles up to 64 rows keep one block a tile.
// CHECK-LABEL: func.func @tf32_batch_norm
// CHECK: batches = [#fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = tf32, tile = 64x64, warps = 4x1, stages = 12, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x64, warps = 8x1, stages = 7, group_m = 8, split_k = 2>>, #fusion.batch_gemm_config<max_rows = 256, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x64, warps = 8x1, stages = 8, group_m = 8>>,
func.func @tf32_batch_norm(%x: tensor<?x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<?x4096xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {precision = #fusion.precision<tf32>}
    : (tensor<?x4096xf32>, tensor<4096x4096xf32>) -> tensor<?x4096xf32>
  return %0 : tensor<?x4096xf32>
}
// tf32 and 16-bit tiles of small batches stream w at the DRAM's rate.
// CHECK-LABEL: func.func @tf32_4096
// CHECK-NOT: split_k
// CHECK: return
func.func @tf32_4096(%x: tensor<?x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<?x4096xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {precision = #fusion.precision<tf32>} : (tensor<?x4096xf32>, tensor<4096x4096xf32>) -> tensor<?x4096xf32>
  return %0 : tensor<?x4096xf32>
}
// CHECK-LABEL: func.func @bf16_4096
// CHECK-NOT: split_k
// CHECK: return
func.func @bf16_4096(%x: tensor<?x4096xbf16>, %w: tensor<4096x4096xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}
// K = 448 of f32: 14 slices, too few to share.
// CHECK-LABEL: func.func @fp32_short_k
// CHECK-NOT: split_k
// CHECK: return
func.func @fp32_short_k(%x: tensor<?x448xf32>, %w: tensor<4096x448xf32>) -> tensor<?x4096xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {precision = #fusion.precision<fp32>} : (tensor<?x448xf32>, tensor<4096x448xf32>) -> tensor<?x4096xf32>
  return %0 : tensor<?x4096xf32>
}
// 128 tiles of 64 columns fill the SMs.
// CHECK-LABEL: func.func @fp32_8192
// CHECK-NOT: split_k
// CHECK: return
func.func @fp32_8192(%x: tensor<?x4096xf32>, %w: tensor<8192x4096xf32>) -> tensor<?x8192xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {precision = #fusion.precision<fp32>} : (tensor<?x4096xf32>, tensor<8192x4096xf32>) -> tensor<?x8192xf32>
  return %0 : tensor<?x8192xf32>
}
// A static batch: the config that fits it, with split_k.
// CHECK-LABEL: func.func @fp32_static
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x, split_k = 2>
func.func @fp32_static(%x: tensor<7x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<7x4096xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {precision = #fusion.precision<fp32>} : (tensor<7x4096xf32>, tensor<4096x4096xf32>) -> tensor<7x4096xf32>
  return %0 : tensor<7x4096xf32>
}
}
