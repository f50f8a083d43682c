// An op of cuBLASLt's GEMM with wgmma batch configs (strategy=auto on sm_90
// for an output that a reduction reads after it is written): the host
// compares the batch with the last batch config's rows; batches up to it
// take the generated kernels (the first whose max_rows they fit, the last
// entry's above them), larger ones cuBLASLt's GEMM; both write the output
// and join before the one row program. The kernel module targets sm_90a
// (wgmma) although the op's own config is cuBLASLt's.
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_90" --fusion-lower-to-gpu | FileCheck %s

// CHECK-LABEL: llvm.func @centred(
// CHECK: fusion_rt.alloc
// CHECK: %[[R512:.*]] = llvm.mlir.constant(512 : i64) : i64
// CHECK-NEXT: %[[SMALL:.*]] = llvm.icmp "ule" %arg1, %[[R512]] : i64
// CHECK-NEXT: llvm.cond_br %[[SMALL]], ^[[GENERATED:bb[0-9]+]], ^[[CUBLAS:bb[0-9]+]]
// The join (its block first): the one row program.
// CHECK: ^[[JOIN:bb[0-9]+]]:  // 2 preds: ^[[GENERATED_DONE:bb[0-9]+]], ^[[CUBLAS_DONE:bb[0-9]+]]
// CHECK: fusion_rt.launch @fusion_kernels::@centred_1_rows grid(%arg1, %{{.*}}) {{.*}} args(%[[Y:.*]], %arg1, %arg4 :
// CHECK: ^[[GENERATED]]:
// CHECK-NEXT: %[[R16:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK-NEXT: llvm.icmp "ule" %arg1, %[[R16]] : i64
// CHECK: ^[[CUBLAS]]:
// CHECK-NEXT: llvm.mlir.zero
// CHECK-NEXT: fusion_rt.cublaslt_gemm <f32> in <tf32>, %arg0, %arg2, %arg3, %{{.*}}, %[[Y]], rows %arg1, n 4096, k 64
// CHECK: llvm.cond_br %{{.*}}, ^bb1(%{{.*}} : i32), ^[[CUBLAS_DONE]]
// CHECK: ^[[GENERATED_DONE]]:  // 5 preds
// CHECK-NEXT: llvm.br ^[[JOIN]]
// CHECK: fusion_rt.launch @fusion_kernels::@centred_0_gemm_rows_le_16 {{.*}} args(%{{.*}}, %{{.*}}, %[[Y]], %[[Y]],
// CHECK: fusion_rt.launch @fusion_kernels::@centred_0_gemm_rows_le_32
// CHECK: fusion_rt.launch @fusion_kernels::@centred_0_gemm_rows_le_128
// CHECK: fusion_rt.launch @fusion_kernels::@centred_0_gemm_rows_le_256
// CHECK: fusion_rt.launch @fusion_kernels::@centred_0_gemm grid
// CHECK-NOT: fusion_rt.launch
// CHECK: ^[[CUBLAS_DONE]]:
// CHECK-NEXT: llvm.br ^[[JOIN]]
// CHECK: gpu.module @fusion_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// CHECK: gpu.func @centred_0_gemm_rows_le_16(
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 8>
// The largest batch config's 128x128 tiles: two consumer warpgroups of
// m64n128.
// CHECK: gpu.func @centred_0_gemm(
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>
// CHECK-NOT: gpu.func
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 8>
// CHECK: gpu.func @centred_1_rows(
func.func @centred(%x: tensor<?x64xf32>, %w: tensor<4096x64xf32>) -> tensor<?x4096xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<4096x64xf32>) -> tensor<?x4096xf32>
  %1 = fusion.reduce sum %0 : tensor<?x4096xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<?x1xf32>) : tensor<?x4096xf32> {
  ^bb0(%v: f32, %s: f32):
    %3 = arith.subf %v, %s : f32
    fusion.yield %3 : f32
  }
  return %2 : tensor<?x4096xf32>
}
