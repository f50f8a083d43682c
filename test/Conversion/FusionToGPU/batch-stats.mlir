// A training batch norm's batch mean and inverse standard deviation (the
// values PyTorch's backward pass reads) come out of the kernels that finish
// the norm: the GEMM kernel of one block row, and for larger batches the
// finalize kernel, which writes them beside the running statistics'
// updates. The host passes the two outputs after those updates.
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=tiled target=sm_80" --fusion-lower-to-gpu | FileCheck %s --check-prefix=TILED
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=cublas target=sm_90" --fusion-lower-to-gpu | FileCheck %s --check-prefix=CUBLAS

// Host arguments: stream, batch, x, w, running mean and variance, then the
// outputs: the result, the relu (the norm's input), the updated running
// statistics and the batch statistics (%arg10, %arg11).
// CHECK-LABEL: llvm.func @train(
// CHECK: fusion_rt.launch @fusion_kernels::@train_0_gemm_batch_norm grid({{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %arg6, %arg6, {{.*}}, %arg4, %arg4, {{.*}}, %arg5, %arg5, {{.*}}, %arg8, %arg8, {{.*}}, %arg9, %arg9, {{.*}}, %arg10, %arg10, {{.*}}, %arg11, %arg11, {{.*}} :
// CHECK: fusion_rt.launch @fusion_kernels::@train_0_gemm grid
// CHECK: fusion_rt.launch @fusion_kernels::@train_0_finalize grid({{.*}}) args(%{{.*}}, %{{.*}}, %arg1, %{{.*}}, %{{.*}}, %arg4, %arg5, %arg8, %arg9, %arg10, %arg11, %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK: fusion_rt.launch @fusion_kernels::@train_0_normalize

// The finishing kernel stores the f32 mean and the inverse standard
// deviation that its scale multiplies, once per column.
// CHECK-LABEL: gpu.func @train_0_gemm_batch_norm(
// CHECK-SAME: %[[NVAR:[^:]*]]: memref<48xbf16>, %[[MEAN:[^:]*]]: memref<48xf32>, %[[INVSTD:[^:]*]]: memref<48xf32>)
// CHECK: %[[R:.*]] = math.rsqrt
// CHECK: memref.store %{{.*}}, %[[NVAR]]
// CHECK: memref.store %{{.*}}, %[[MEAN]][%{{.*}}] : memref<48xf32>
// CHECK-NEXT: memref.store %[[R]], %[[INVSTD]][%{{.*}}] : memref<48xf32>
// CHECK-NOT: math.rsqrt
// CHECK: gpu.return

// The finalize kernel (arguments: moments, rows, chunk rows, chunks,
// running statistics, updates, then the batch statistics at 9 and 10):
// the merged mean, and the inverse standard deviation its scale is made
// of.
// CHECK-LABEL: gpu.func @train_0_finalize(
// CHECK: %[[R:.*]] = math.rsqrt
// CHECK: llvm.getelementptr %arg9
// CHECK-NEXT: llvm.store %{{.*}} : f32, !llvm.ptr
// CHECK: llvm.getelementptr %arg10
// CHECK-NEXT: llvm.store %[[R]], %{{.*}} : f32, !llvm.ptr
// CHECK-NOT: math.rsqrt
// CHECK: gpu.return

// TILED-LABEL: gpu.func @train_0_gemm_batch_norm(
// TILED-SAME: memref<48xbf16>, %[[MEAN:[^:]*]]: memref<48xf32>, %[[INVSTD:[^:]*]]: memref<48xf32>)
// TILED: memref.store %{{.*}}, %[[MEAN]]
// TILED: memref.store %{{.*}}, %[[INVSTD]]

// Backend 1: cuBLASLt's GEMM, the statistics kernel, then the finalize
// kernel writes them.
// CUBLAS-LABEL: llvm.func @train(
// CUBLAS: fusion_rt.cublaslt_gemm
// CUBLAS: fusion_rt.launch @fusion_kernels::@train_0_stats
// CUBLAS: fusion_rt.launch @fusion_kernels::@train_0_finalize grid({{.*}}) args(%{{.*}}, %{{.*}}, %arg1, %{{.*}}, %{{.*}}, %arg4, %arg5, %arg8, %arg9, %arg10, %arg11, %{{.*}}, %{{.*}}, %{{.*}} :
func.func @train(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %rm: tensor<48xbf16>, %rv: tensor<48xbf16>)
    -> (tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>, tensor<48xf32>, tensor<48xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x64xbf16>, tensor<48x64xbf16> -> tensor<?x48xbf16>
  %1 = fusion.relu %0 : tensor<?x48xbf16>
  %y:5 = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.2> running_stats(%rm, %rv)
      : (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>)
      -> (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>, tensor<48xf32>, tensor<48xf32>)
  return %y#0, %1, %y#1, %y#2, %y#3, %y#4
      : tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>, tensor<48xf32>, tensor<48xf32>
}

// -----

// The op after the norm reads the batch mean, which the finishing kernel
// writes after it stages that op's columns: the three kernels for every
// batch.
// CHECK-LABEL: llvm.func @reads_batch_mean(
// CHECK-NOT: gemm_batch_norm
// CHECK: fusion_rt.launch @fusion_kernels::@reads_batch_mean_0_finalize
// CHECK: llvm.return
func.func @reads_batch_mean(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>)
    -> (tensor<?x48xbf16>, tensor<48xbf16>) {
  %0 = fusion.linear %x, %w : tensor<?x64xbf16>, tensor<48x64xbf16> -> tensor<?x48xbf16>
  %y:3 = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      : (tensor<?x48xbf16>) -> (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>)
  %1 = fusion.elementwise %y#0 columns(%y#1 : tensor<48xbf16>) : tensor<?x48xbf16> {
  ^bb0(%a: f32, %c: f32):
    %r = arith.subf %a, %c : f32
    fusion.yield %r : f32
  }
  return %1, %y#2 : tensor<?x48xbf16>, tensor<48xbf16>
}
