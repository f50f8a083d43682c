// The PTX of the tiled kernels (backend 2): the cp.async pipeline, ldmatrix,
// tensor-core mma.sync in every precision, the output tile leaving shared
// memory in 16-byte stores, no local memory in the GEMM.
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %s --emit=ptx --strategy=tiled -o - | FileCheck %s
// RUN: fusion-compile %S/../../../examples/linear_leaky_relu.mlir --emit=ptx --strategy=tiled --precision=tf32 -o - | FileCheck %s --check-prefix=TF32
// RUN: fusion-compile %S/../../../examples/linear_scale_batch_norm.mlir --emit=ptx --strategy=tiled -o - | FileCheck %s --check-prefix=FP32
// RUN: fusion-compile %S/../../../examples/linear_leaky_relu.mlir --emit=ptx --strategy=tiled --precision=f16 -o - | FileCheck %s --check-prefix=F32F16
// RUN: fusion-compile %S/../../../examples/linear_leaky_relu.mlir --emit=ptx --strategy=tiled --precision=fp32 --fp32-math=simt -o - | FileCheck %s --check-prefix=SIMT

// CHECK: .entry bf16_0_gemm(
// CHECK-NOT: .local
// CHECK: cp.async.cg.shared.global [%{{.*}}], [%{{.*}}], 16, %{{.*}};
// CHECK: cp.async.commit_group;
// CHECK: cp.async.wait_group 1;
// CHECK: bar.sync 0;
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK: ld.shared.v4.b32
// CHECK: st.global.v4.b32
// CHECK: .entry f16_0_gemm(
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @bf16(%x: tensor<?x256xbf16>, %w: tensor<256x256xbf16>, %b: tensor<256xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.linear %x, %w, %b : tensor<?x256xbf16>, tensor<256x256xbf16>, tensor<256xbf16> -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}
func.func @f16(%x: tensor<?x256xf16>, %w: tensor<256x256xf16>) -> tensor<?x256xf16> {
  %0 = fusion.linear %x, %w : tensor<?x256xf16>, tensor<256x256xf16> -> tensor<?x256xf16>
  %1 = fusion.leaky_relu %0, negative_slope = 0.2 : tensor<?x256xf16>
  return %1 : tensor<?x256xf16>
}

// TF32: .entry linear_leaky_relu_0_gemm(
// TF32: cp.async.wait_group 1;
// TF32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// FP32: .entry linear_scale_batch_norm_0_gemm(
// FP32-NOT: .local
// FP32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// FP32: st.global.v4.b32
// FP32: ld.shared.b32
// FP32: .entry linear_scale_batch_norm_0_finalize(
// F32F16: .entry linear_leaky_relu_0_gemm(
// F32F16-NOT: .local
// F32F16: cvt.rn.f16x2.f32
// F32F16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// SIMT: .entry linear_leaky_relu_0_gemm(
// SIMT-NOT: .local
// SIMT-NOT: mma.sync
// SIMT: ld.shared.v4.b32
// SIMT: fma.rn.f32
