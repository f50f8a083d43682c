// A config written by hand is honored: fusion-select-gemm-config keeps it
// and the lowering builds exactly the kernel it describes.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=cublas" --fusion-lower-to-gpu | FileCheck %s
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=cublas" | FileCheck %s --check-prefix=CONFIG

// CONFIG: module attributes {fusion.target = #fusion.target<sm_90>}
// CONFIG: fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32, tile = 64x32, warps = 2x1, stages = 3, group_m = 4>
// CONFIG: fusion.lowering = #fusion.lowering<gemm = <cublaslt>

// The hand-written tiled op: one launch of its kernel, 64 threads (2x1
// warps) and the shared memory of 3 stages of 64+32 rows of 128 bytes.
// CHECK-LABEL: llvm.func @hand_written(
// CHECK-NOT: fusion_rt.cublaslt_gemm
// CHECK: fusion_rt.launch @fusion_kernels::@hand_written_0_gemm grid({{.*}}) block 64 shared 36864
// The other op was selected by the strategy: cuBLASLt.
// CHECK-LABEL: llvm.func @selected(
// CHECK: fusion_rt.cublaslt_gemm <f32> in <tf32>
// CHECK: gpu.module @fusion_kernels [#nvvm.target<O = 3, chip = "sm_90">]
// CHECK: gpu.func @hand_written_0_gemm({{.*}}) kernel attributes {known_block_size = array<i32: 64, 1, 1>}
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @hand_written(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
    %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32, tile = 64x32, warps = 2x1, stages = 3, group_m = 4>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
    return %0 : tensor<?x48xf32>
  }
  func.func @selected(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
    %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
    return %0 : tensor<?x48xf32>
  }
}
