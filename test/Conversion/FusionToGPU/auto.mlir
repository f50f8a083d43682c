// strategy=auto: the tiled kernel for fp32 GEMMs (3xTF32), cuBLASLt for
// the others (docs/architecture.md).
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=auto" --fusion-lower-to-gpu | FileCheck %s

// CHECK-LABEL: llvm.func @fp32(
// CHECK-NOT: fusion_rt.cublaslt_gemm
// CHECK: fusion_rt.launch @fusion_kernels::@fp32_0_gemm
// CHECK-LABEL: llvm.func @tf32(
// CHECK: fusion_rt.cublaslt_gemm <f32> in <tf32>
// CHECK-LABEL: gpu.func @fp32_0_gemm
// 3xTF32: three products per tile pair, the K tile summed from zero.
// CHECK: scf.for
// CHECK: arith.subf %{{.*}} : vector<4x1xf32>
// CHECK-COUNT-3: nvgpu.mma.sync
// CHECK: scf.yield
// CHECK-NOT: gpu.func @tf32_0_gemm
func.func @fp32(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

func.func @tf32(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}
