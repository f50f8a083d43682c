// The PTX of the wgmma kernels of a weight stored [in_features,
// out_features] (GPT-2's Conv1D: addmm(b, x, W), W [in, out]), by the
// default strategy: w's tile read N-major, imm-trans-b in every wgmma of
// the x_w configs (the last two immediates: trans-a 0, trans-b 1) and
// imm-trans-a in the small batches' swapped ones (w's tile their A); no
// local memory.
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %s --emit=ptx --target=sm_90 -o - | FileCheck %s

// CHECK: .entry conv1d_0_gemm_rows_le_16(
// CHECK-NOT: .local
// CHECK: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {{.*}}, p, 1,  1, 1,  0;
// CHECK: .entry conv1d_0_gemm_rows_le_32(
// CHECK-NOT: .local
// CHECK: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{.*}}, p, 1,  1, 1,  0;
// CHECK: .entry conv1d_0_gemm_rows_le_2048(
// CHECK-NOT: .local
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1,  1, 0,  1;
// CHECK: .entry conv1d_0_gemm(
// CHECK-NOT: .local
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {{.*}}, p, 1,  1, 0,  1;
// CHECK-NOT: p, 1,  1, 0,  0;
func.func @conv1d(%x: tensor<?x256xbf16>, %w: tensor<256x200xbf16>, %b: tensor<200xbf16>) -> tensor<?x200xbf16> {
  %0 = fusion.fused_linear %x, %w bias(%b) weight_layout in_out epilogue {
  ^bb0(%acc: f32):
    %r = math.tanh %acc : f32
    fusion.yield %r : f32
  } : (tensor<?x256xbf16>, tensor<256x200xbf16>, tensor<200xbf16>) -> tensor<?x200xbf16>
  return %0 : tensor<?x200xbf16>
}
