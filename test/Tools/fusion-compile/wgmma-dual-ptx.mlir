// The PTX of a dual GEMM's wgmma kernel (a gated MLP's gate and up
// projections, fused into one fused_linear with a dual_weight): four tensor
// maps (x, w, x's last rows, the dual weight), both weights' tiles loaded
// into each stage, two m64n128 wgmmas a K step (one per weight, the same x
// descriptor), and no local memory: both sets of accumulators stay in
// registers through the epilogue, which writes the gated product once.
// REQUIRES: cuda-toolkit
// RUN: fusion-opt %s --fusion-fuse-linear-epilogues | FileCheck %s --check-prefix=IR
// RUN: fusion-compile %s --emit=ptx --target=sm_90 -o - | FileCheck %s
// On sm_80 no kernel computes a dual GEMM: the two GEMMs stay apart
// (cuBLASLt's, here), an epilogue kernel reading both.
// RUN: fusion-compile %s --emit=ptx --target=sm_80 -o - | FileCheck %s --check-prefix=SM80

// IR: fusion.fused_linear %arg0, %arg1 dual_weight(%arg2)

// CHECK: .entry gated_0_gemm(
// CHECK-NEXT: .param .align 64 .b8 gated_0_gemm_param_0[128],
// CHECK-NEXT: .param .align 64 .b8 gated_0_gemm_param_1[128],
// CHECK-NEXT: .param .align 64 .b8 gated_0_gemm_param_2[128],
// CHECK-NEXT: .param .align 64 .b8 gated_0_gemm_param_3[128],
// CHECK-NEXT: .param .u64
// CHECK-NOT: .local
// Each K step: w's wgmma, then the dual weight's, of the same x descriptor
// into the other accumulators.
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {[[ACC:%r[0-9]+]], {{.*}}}, [[A:%rd[0-9]+]], [[B:%rd[0-9]+]], p
// CHECK-NEXT: }
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {[[DUAL:%r[0-9]+]], {{.*}}}, [[A]], [[B2:%rd[0-9]+]], p
// The producer's loads into each stage: x's, w's and the dual weight's.
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-NEXT: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-NEXT: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-NOT: .entry

// SM80: .entry gated_1_epilogue(
// SM80-NOT: wgmma
func.func @gated(%x: tensor<?x256xbf16>, %wg: tensor<384x256xbf16>, %wu: tensor<384x256xbf16>) -> tensor<?x384xbf16> {
  %g = fusion.linear %x, %wg : tensor<?x256xbf16>, tensor<384x256xbf16> -> tensor<?x384xbf16>
  %u = fusion.linear %x, %wu : tensor<?x256xbf16>, tensor<384x256xbf16> -> tensor<?x384xbf16>
  %s = fusion.elementwise %g : tensor<?x384xbf16> {
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %v : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %q = arith.divf %v, %d : f32
    fusion.yield %q : f32
  }
  %h = fusion.elementwise %s rows(%u : tensor<?x384xbf16>) : tensor<?x384xbf16> {
  ^bb0(%a: f32, %b: f32):
    %p = arith.mulf %a, %b : f32
    fusion.yield %p : f32
  }
  return %h : tensor<?x384xbf16>
}
