// Tile reductions from a batch of 33 rows (min_rows = 33): batches of at
// most 32 rows take the swapped batch configs, which write the output to
// the workspace (reserved only for such batches), and the row program
// that reduces it; larger ones the tile-reducing kernels (partials) and
// the row program that merges them. Each branch joins before the row
// program, which branches on the batch again.
// RUN: fusion-opt %s --fusion-lower-to-gpu | FileCheck %s

// CHECK-LABEL: llvm.func @row_sums(
// CHECK-SAME: %[[STREAM:[^:]*]]: !llvm.ptr, %[[ROWS:[^:]*]]: i64
// CHECK: %[[C33:.*]] = llvm.mlir.constant(33 : i64) : i64
// CHECK: %[[BELOW:.*]] = llvm.icmp "slt" %[[ROWS]], %[[C33]] : i64
// CHECK: llvm.select %[[BELOW]], %{{.*}}, %{{.*}} : i1, i64
// CHECK: fusion_rt.alloc
// CHECK: %[[WORKSPACE:.*]] = llvm.load
// CHECK: %[[OUTPUT:.*]] = llvm.getelementptr %[[WORKSPACE]][%{{.*}}]
// CHECK: %[[PARTIALS:.*]] = llvm.getelementptr %[[WORKSPACE]][%{{.*}}]
// CHECK: %[[C32:.*]] = llvm.mlir.constant(32 : i64) : i64
// CHECK: %[[SMALL:.*]] = llvm.icmp "ule" %[[ROWS]], %[[C32]] : i64
// CHECK: llvm.cond_br %[[SMALL]], ^[[UNREDUCED:bb[0-9]+]], ^[[REDUCED:bb[0-9]+]]
// The row program, where both paths join (its block comes first), branches
// on the batch again.
// CHECK: ^[[ROW_PROGRAM:bb[0-9]+]]:  // 2 preds
// CHECK-NEXT: %[[C32B:.*]] = llvm.mlir.constant(32 : i64) : i64
// CHECK-NEXT: %[[SMALL2:.*]] = llvm.icmp "ule" %[[ROWS]], %[[C32B]] : i64
// CHECK-NEXT: llvm.cond_br %[[SMALL2]]
// CHECK: ^[[UNREDUCED]]:
// CHECK: llvm.mlir.constant(16 : i64)
// CHECK: ^[[REDUCED]]:
// CHECK: llvm.mlir.constant(64 : i64)
// CHECK: fusion_rt.launch @fusion_kernels::@row_sums_0_gemm_rows_le_16 {{.*}} args(%{{.*}}, %{{.*}}, %[[OUTPUT]], %[[OUTPUT]],
// CHECK: fusion_rt.launch @fusion_kernels::@row_sums_0_gemm_rows_le_32 {{.*}} args(%{{.*}}, %{{.*}}, %[[OUTPUT]], %[[OUTPUT]],
// CHECK: fusion_rt.launch @fusion_kernels::@row_sums_0_gemm_rows_le_64 {{.*}} args(%{{.*}}, %{{.*}}, %[[PARTIALS]], %[[PARTIALS]],
// CHECK: fusion_rt.launch @fusion_kernels::@row_sums_0_gemm {{.*}} args(%{{.*}}, %{{.*}}, %[[PARTIALS]], %[[PARTIALS]],
// CHECK: fusion_rt.launch @fusion_kernels::@row_sums_1_rows_le_32 {{.*}} args(%[[OUTPUT]], %[[ROWS]], %{{.*}} : !llvm.ptr, i64, !llvm.ptr)
// CHECK: fusion_rt.launch @fusion_kernels::@row_sums_1_rows {{.*}} args(%[[PARTIALS]], %[[ROWS]], %[[PARTIALS]], %{{.*}} : !llvm.ptr, i64, !llvm.ptr, !llvm.ptr)
// The swapped kernels store the output; the others the partials of 4
// spans a row.
// CHECK: gpu.func @row_sums_0_gemm_rows_le_16(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x256xbf16>)
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 16>
// CHECK: gpu.func @row_sums_0_gemm_rows_le_32(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x256xbf16>)
// CHECK: gpu.func @row_sums_0_gemm_rows_le_64(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x4xf32>)
// CHECK: gpu.func @row_sums_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x4xf32>)
module attributes {fusion.target = #fusion.target<sm_90>} {
func.func @row_sums(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x1xbf16> {
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
}
