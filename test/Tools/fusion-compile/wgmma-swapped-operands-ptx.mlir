// The PTX of a training batch norm's wgmma kernel with swapped operands:
// two m64n128k16 wgmmas a K step into the warpgroup's columns of the tile,
// the 16-bit output transposed by movmatrix and stored in 16-byte chunks,
// no local memory.
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma -o - | FileCheck %s

// CHECK: .target sm_90a
// CHECK: .entry bn_0_gemm(
// CHECK-NEXT: .param
// CHECK-NOT: .local
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: movmatrix.sync.aligned.m8n8.trans.b16
// CHECK: st.global.v4.b32
// CHECK: .entry
func.func @bn(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>, %s: tensor<256xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue(%s) {
  ^bb0(%acc: f32, %col: f32):
    %1 = arith.mulf %acc, %col : f32
    fusion.yield %1 : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<?x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}
