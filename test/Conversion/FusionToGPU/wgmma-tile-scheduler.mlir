// tile_scheduler = per_block: the wgmma kernel is launched with a block a
// tile (ceil(M / 128) row tiles by 2 column tiles of 256), without
// `persistent`, so the runtime does not cap the grid at the blocks the GPU
// holds at once. The kernel is the persistent one's (its blocks stride
// over the tiles by the grid, one stride each): the persistent launch of
// the same GEMM shares it. With split_k, a tile's cluster of blocks; the
// default keeps `persistent`.
// RUN: fusion-opt %s --fusion-lower-to-gpu | FileCheck %s

// CHECK-LABEL: llvm.func @per_block(
// CHECK: %[[ROW_TILES:.*]] = llvm.udiv %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: %[[COLUMN_TILES:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: %[[GRID:.*]] = llvm.mul %[[ROW_TILES]], %[[COLUMN_TILES]] : i64
// CHECK-NEXT: fusion_rt.launch @fusion_kernels::@per_block_0_gemm grid(%[[GRID]], %{{.*}}) block 384 shared {{[0-9]+}} overlap_predecessor
// CHECK-LABEL: llvm.func @per_block_split_k(
// CHECK: fusion_rt.launch @fusion_kernels::@per_block_split_k_0_gemm grid(%{{.*}}, %{{.*}}) block 256 shared {{[0-9]+}} overlap_predecessor
// CHECK-LABEL: llvm.func @persistent(
// CHECK: fusion_rt.launch @fusion_kernels::@per_block_0_gemm grid(%{{.*}}, %{{.*}}) block 384 shared {{[0-9]+}} persistent overlap_predecessor
// CHECK-LABEL: gpu.func @per_block_0_gemm
// CHECK: %[[BLOCK:.*]] = gpu.block_id x
// CHECK-NEXT: %[[GRID_DIM:.*]] = gpu.grid_dim x
// CHECK: scf.for %{{.*}} = %[[BLOCK]] to %{{.*}} step %[[GRID_DIM]]
module attributes {fusion.target = #fusion.target<sm_90>} {
func.func @per_block(%x: tensor<?x1024xbf16>, %w: tensor<512x1024xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, tile_scheduler = per_block>>} : (tensor<?x1024xbf16>, tensor<512x1024xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}
func.func @per_block_split_k(%x: tensor<?x1024xbf16>, %w: tensor<256x1024xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 4, group_m = 8, split_k = 2, tile_scheduler = per_block>>} : (tensor<?x1024xbf16>, tensor<256x1024xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}
func.func @persistent(%x: tensor<?x1024xbf16>, %w: tensor<512x1024xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, tile_scheduler = persistent>>} : (tensor<?x1024xbf16>, tensor<512x1024xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}
}
