// A dual GEMM (dual_weight): on sm_90 the wgmma kernel computes it, in
// 128x128 cooperative tiles (two sets of m64n128 accumulators), one config
// for every batch; where the backend computes no dual GEMM (cuBLASLt, the
// tiled kernels, 3xTF32) the selection splits it into two GEMMs, the dual
// one's result a row operand of the other's epilogue.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="target=sm_90" | FileCheck %s --check-prefix=AUTO
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="target=sm_90 strategy=cublas" | FileCheck %s --check-prefix=SPLIT
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="target=sm_80" | FileCheck %s --check-prefix=SPLIT

// AUTO-LABEL: func.func @gated
// AUTO: fusion.fused_linear %{{.*}}, %{{.*}} dual_weight(%{{.*}}) epilogue
// AUTO: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = {{[0-9]+}}, group_m = 8>>
// AUTO-NOT: batches
// SPLIT-LABEL: func.func @gated
// SPLIT-SAME: %[[X:[a-z0-9]+]]: tensor<?x256xbf16>, %[[WG:[a-z0-9]+]]: tensor<512x256xbf16>, %[[WU:[a-z0-9]+]]: tensor<512x256xbf16>
// SPLIT: %[[U:.*]] = fusion.fused_linear %[[X]], %[[WU]] epilogue {
// SPLIT-NEXT: ^bb0(%[[A:.*]]: f32):
// SPLIT-NEXT: fusion.yield %[[A]] : f32
// SPLIT: fusion.lowering
// SPLIT: fusion.fused_linear %[[X]], %[[WG]] epilogue rows(%[[U]]) {
// SPLIT-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[ROW:.*]]: f32):
// SPLIT: arith.mulf %{{.*}}, %[[ROW]] : f32
// SPLIT-NOT: dual_weight
func.func @gated(%x: tensor<?x256xbf16>, %wg: tensor<512x256xbf16>, %wu: tensor<512x256xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %wg dual_weight(%wu) epilogue {
  ^bb0(%acc: f32, %dual: f32):
    %t = math.tanh %acc : f32
    %p = arith.mulf %t, %dual : f32
    fusion.yield %p : f32
  } : (tensor<?x256xbf16>, tensor<512x256xbf16>, tensor<512x256xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

// f32 in fp32 (3xTF32) takes no dual GEMM: split.
// AUTO-LABEL: func.func @fp32
// AUTO: %[[U:.*]] = fusion.fused_linear
// AUTO: fusion.fused_linear {{.*}} rows(%[[U]])
// AUTO-NOT: dual_weight
func.func @fp32(%x: tensor<?x256xf32>, %wg: tensor<512x256xf32>, %wu: tensor<512x256xf32>) -> tensor<?x512xf32> {
  %0 = fusion.fused_linear %x, %wg dual_weight(%wu) epilogue {
  ^bb0(%acc: f32, %dual: f32):
    %p = arith.mulf %acc, %dual : f32
    fusion.yield %p : f32
  } : (tensor<?x256xf32>, tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<?x512xf32>
  return %0 : tensor<?x512xf32>
}
