// The swapped kernel of small batches (operands = w_x, tiles of 32 batch
// rows by 64 of w's, one consumer warpgroup) with an epilogue row operand:
// each thread's runs go down a column, so the residual is loaded an element
// a row (rows past the batch read its last row; their results are never
// stored), not through the ring (no tensor map beside x's and w's), and
// its elements reach the epilogue in the accumulators' order.
// RUN: fusion-opt %s --fusion-lower-to-gpu | FileCheck %s

// CHECK-LABEL: llvm.func @residual(
// CHECK: fusion_rt.launch @fusion_kernels::@residual_0_gemm grid({{.*}}) block 256 shared {{[0-9]+}} persistent overlap_predecessor
// CHECK: gpu.func @residual_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[OUT:.*]]: memref<?x128xbf16>, %[[RES:.*]]: memref<?x128xbf16>) kernel attributes {fusion_rt.tensor_map_args = array<i64: 0, 1, 2>
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>
// The first run's two rows of one column: the column clamped to N - 1, each
// row to M - 1.
// CHECK: %[[LAST:.*]] = arith.subi %{{.*}}, %c1{{.*}} : index
// CHECK: %[[COLUMN:.*]] = arith.minui %{{.*}}, %c127 : index
// CHECK: %[[GROUP:.*]] = arith.divui %[[COLUMN]], %c1{{.*}} : index
// CHECK: %[[ROW0:.*]] = arith.minui %{{.*}}, %[[LAST]] : index
// CHECK: %[[R0:.*]] = memref.load %[[RES]][%[[ROW0]], %[[GROUP]]] : memref<?x128xbf16>
// CHECK-NEXT: %[[V0:.*]] = arith.extf %[[R0]] : bf16 to f32
// CHECK: %[[ROW1:.*]] = arith.minui %{{.*}}, %[[LAST]] : index
// CHECK: %[[R1:.*]] = memref.load %[[RES]][%[[ROW1]], %[[GROUP]]] : memref<?x128xbf16>
// CHECK-NEXT: %[[V1:.*]] = arith.extf %[[R1]] : bf16 to f32
// CHECK: arith.addf %{{.*}}, %[[V0]] : f32
// CHECK: arith.addf %{{.*}}, %[[V1]] : f32
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: gpu.return
module attributes {fusion.target = #fusion.target<sm_90>} {
func.func @residual(%x: tensor<?x64xbf16>, %w: tensor<128x64xbf16>, %r: tensor<?x128xbf16>) -> tensor<?x128xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32, %res: f32):
    %s = arith.addf %acc, %res : f32
    fusion.yield %s : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 32x64, warps = 4x1, stages = 4, group_m = 8, operands = w_x>>} : (tensor<?x64xbf16>, tensor<128x64xbf16>, tensor<?x128xbf16>) -> tensor<?x128xbf16>
  return %0 : tensor<?x128xbf16>
}
}
