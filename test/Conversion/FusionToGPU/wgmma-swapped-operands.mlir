// A training batch norm's wgmma kernel with swapped operands (operands =
// w_x, the selection's choice): each wgmma multiplies the consumer's rows of
// w's stage by all of x's, so a quad of lanes holds whole columns of the
// tile; their moments sum within each lane and the quad (shuffles at
// distances 1 and 2), with no scratch in shared memory and no barrier
// between the warps; 16-bit results are transposed across the warp
// (movmatrix) and leave in 16-byte chunks; f32 ones an element at a time.
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=wgmma target=sm_90 swap-operands=false" | FileCheck %s --check-prefix=UNSWAPPED

// Batches past the batch configs' take the swapped kernel: 4 stages of
// (128 + 256) x 128 bytes, the scale column (1 KiB) and the alignment
// shift, no moments scratch. Batches of one block row take the kernel that
// finishes the batch norm, whose config keeps x_w.
// CHECK-LABEL: llvm.func @bn(
// CHECK: fusion_rt.launch @fusion_kernels::@bn_0_gemm_batch_norm
// CHECK-NOT: @bn_0_gemm_rows_le_128
// CHECK: fusion_rt.launch @fusion_kernels::@bn_0_gemm grid(%{{.*}}, %{{.*}}) block 384 shared 198656 persistent
// CHECK-LABEL: gpu.func @bn_0_gemm(
// Two m64n128 wgmmas a K step (the warpgroup's 128 columns by the tile's
// 128 rows), 64 accumulators each.
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, {{.*}} : !llvm.struct<(f32{{(, f32){63}[)]}}> -> !llvm.struct<(f32{{(, f32){63}[)]}}>
// CHECK-NOT: memref<9x256xf32
// The output: each quad of runs transposed, then traded within the quad.
// CHECK-COUNT-4: llvm.inline_asm asm_dialect = att "movmatrix.sync.aligned.m8n8.trans.b16 $0, $1;", "=r,r"
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}} : i32
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<?x256xbf16>, vector<8xbf16>
// The moments, of the f32 results (no stored bf16 values widened back):
// the whole tile unmasked, the last block row masked; each lane's 4 columns
// summed over the quad, the means, then the squared deviations; the quad's
// first lane stores them.
// CHECK-NOT: arith.extf
// CHECK: %[[WHOLE:.*]] = arith.cmpi ule
// CHECK: scf.if %[[WHOLE]] -> (f32, f32, f32, f32)
// CHECK-NOT: arith.select
// CHECK: } else {
// CHECK: arith.select
// CHECK-COUNT-4: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}} : f32
// CHECK-NOT: nvvm.barrier
// CHECK: arith.divf
// CHECK: math.fma
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}} : f32
// CHECK: scf.if
// CHECK-COUNT-4: memref.store %{{.*}} : memref<?xf32>
// CHECK: gpu.return
// UNSWAPPED-LABEL: func.func @bn(
// UNSWAPPED-NOT: operands = w_x
// UNSWAPPED: return
func.func @bn(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>, %s: tensor<256xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue(%s) {
  ^bb0(%acc: f32, %col: f32):
    %1 = arith.mulf %acc, %col : f32
    fusion.yield %1 : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<?x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

// tf32 (f32 results): no transposes; each element stored alone.
// CHECK-LABEL: gpu.func @bn_tf32_0_gemm(
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 8>
// CHECK-NOT: movmatrix
// CHECK: vector.store %{{.*}} : memref<?x256xf32>, vector<1xf32>
// CHECK-NOT: movmatrix
// CHECK: gpu.return
func.func @bn_tf32(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    {precision = #fusion.precision<tf32>}
    : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

// -----

// 3xTF32 keeps x_w (its x parts come from registers), and so does an
// epilogue that reads a row operand.
// UNSWAPPED-LABEL: func.func @bn_fp32(
// CHECK-LABEL: gpu.func @bn_fp32_0_gemm(
// CHECK: memref<9x128xf32
// CHECK: gpu.return
func.func @bn_fp32(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    {precision = #fusion.precision<fp32>}
    : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}
