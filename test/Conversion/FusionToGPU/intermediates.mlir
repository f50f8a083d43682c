// Intermediate results of a fused_linear on the GPU: every backend writes
// them beside the result from the values it computes anyway.
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=cublas" --fusion-lower-to-gpu | FileCheck %s --check-prefix=CUBLAS
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=tiled" --fusion-lower-to-gpu | FileCheck %s --check-prefix=TILED
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s --check-prefix=WGMMA

// tanh(2 y) and the saved 2 y. cuBLASLt's GEMM writes y into the result's
// buffer; the epilogue kernel reads it there, writes tanh(2 y) in place and
// 2 y (its last operand). The generated kernels store both from their
// registers: the intermediate's memref comes after the output's. tanh reads
// 2 y as it is stored, rounded to bf16.
// CUBLAS-LABEL: llvm.func @saved_scaled(
// CUBLAS-SAME: %[[STREAM:[a-z0-9]+]]: !llvm.ptr, %[[BATCH:[a-z0-9]+]]: i64, %[[X:[a-z0-9]+]]: !llvm.ptr, %[[W:[a-z0-9]+]]: !llvm.ptr, %[[B:[a-z0-9]+]]: !llvm.ptr, %[[SAVED:[a-z0-9]+]]: !llvm.ptr, %[[OUT:[a-z0-9]+]]: !llvm.ptr)
// CUBLAS: fusion_rt.cublaslt_gemm <bf16> in <bf16>, %[[STREAM]], %[[X]], %[[W]], %[[B]], %[[OUT]], rows %[[BATCH]]
// CUBLAS: fusion_rt.launch @fusion_kernels::@saved_scaled_0_epilogue {{.*}} args(%[[OUT]], %[[OUT]], %[[BATCH]], %[[SAVED]] :
// CUBLAS: gpu.func @saved_scaled_0_epilogue(%[[IN:.*]]: !llvm.ptr, %[[RESULT:.*]]: !llvm.ptr, %{{.*}}: i64, %[[KEPT:.*]]: !llvm.ptr)
// CUBLAS: %[[TWO_Y:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CUBLAS: %[[STORED:.*]] = arith.truncf %[[TWO_Y]] : f32 to bf16
// CUBLAS: %[[READ:.*]] = arith.extf %[[STORED]] : bf16 to f32
// CUBLAS: math.tanh %[[READ]]
// CUBLAS: llvm.getelementptr %[[RESULT]]
// CUBLAS: llvm.getelementptr %[[KEPT]]
// TILED-LABEL: llvm.func @saved_scaled(
// TILED-SAME: %[[SAVED:[a-z0-9]+]]: !llvm.ptr, %[[OUT:[a-z0-9]+]]: !llvm.ptr) -> i32
// TILED: fusion_rt.launch @fusion_kernels::@saved_scaled_0_gemm {{.*}} args({{.*}}, %[[OUT]], %[[OUT]], {{.*}}, %[[SAVED]], %[[SAVED]],
// TILED: gpu.func @saved_scaled_0_gemm(%{{.*}}: memref<?x64xbf16>, %{{.*}}: memref<48x64xbf16>, %{{.*}}: memref<48xbf16>, %[[O:.*]]: memref<?x48xbf16>, %[[S:.*]]: memref<?x48xbf16>)
// TILED: vector.store %{{.*}}, %[[S]][%{{.*}}, %{{.*}}] {{.*}} : memref<?x48xbf16>, vector<2xbf16>
// TILED: vector.store %{{.*}}, %[[O]][%{{.*}}, %{{.*}}] {{.*}} : memref<?x48xbf16>, vector<8xbf16>
// WGMMA-LABEL: llvm.func @saved_scaled(
// WGMMA-SAME: %[[SAVED:[a-z0-9]+]]: !llvm.ptr, %[[OUT:[a-z0-9]+]]: !llvm.ptr) -> i32
// WGMMA: fusion_rt.launch @fusion_kernels::@saved_scaled_0_gemm {{.*}} args({{.*}}, %[[OUT]], %[[OUT]], {{.*}}, %[[SAVED]], %[[SAVED]],
// WGMMA: gpu.func @saved_scaled_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<48xbf16>, %[[O:.*]]: memref<?x48xbf16>, %[[S:.*]]: memref<?x48xbf16>)
// WGMMA: vector.store %{{.*}}, %[[S]][%{{.*}}, %{{.*}}] {{.*}} : memref<?x48xbf16>, vector<8xbf16>
// WGMMA: vector.store %{{.*}}, %[[O]][%{{.*}}, %{{.*}}] {{.*}} : memref<?x48xbf16>, vector<8xbf16>
func.func @saved_scaled(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %b: tensor<48xbf16>)
    -> (tensor<?x48xbf16>, tensor<?x48xbf16>) {
  %0 = fusion.linear %x, %w, %b : tensor<?x64xbf16>, tensor<48x64xbf16>, tensor<48xbf16> -> tensor<?x48xbf16>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x48xbf16>
  %2 = fusion.elementwise %1 : tensor<?x48xbf16> {
  ^bb0(%v: f32):
    %t = math.tanh %v : f32
    fusion.yield %t : f32
  }
  return %1, %2 : tensor<?x48xbf16>, tensor<?x48xbf16>
}

// -----

// A training batch norm whose input (y s) and GEMM output (y) are saved.
// cuBLASLt's GEMM writes y into its intermediate's buffer, from which the
// statistics kernel reads and the normalizing pass writes the result and
// y s. The general generated kernels write y s (the epilogue's output) into
// its intermediate's buffer, whence the normalizing pass reads it, and y
// beside; the kernel that finishes a one-block-row batch writes the result,
// y s and y.
// CUBLAS-LABEL: llvm.func @saved_batch_norm_input(
// CUBLAS-SAME: %[[STREAM:[a-z0-9]+]]: !llvm.ptr, %[[BATCH:[a-z0-9]+]]: i64, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %[[S:[a-z0-9]+]]: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %[[OUT:[a-z0-9]+]]: !llvm.ptr, %[[Y:[a-z0-9]+]]: !llvm.ptr, %[[YS:[a-z0-9]+]]: !llvm.ptr,
// CUBLAS: fusion_rt.cublaslt_gemm <bf16> in <bf16>, %[[STREAM]], %{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %[[Y]], rows %[[BATCH]]
// CUBLAS: fusion_rt.launch @fusion_kernels::@saved_batch_norm_input_0_stats {{.*}} args(%[[Y]], %[[BATCH]], %{{.*}}, %{{.*}}, %{{.*}}, %[[S]] :
// CUBLAS: fusion_rt.launch @fusion_kernels::@saved_batch_norm_input_0_normalize {{.*}} args(%[[Y]], %[[OUT]], %[[BATCH]], %[[S]], %{{.*}}, %{{.*}}, %{{.*}}, %[[YS]] :
// WGMMA-LABEL: llvm.func @saved_batch_norm_input(
// WGMMA-SAME: %[[OUT:[a-z0-9]+]]: !llvm.ptr, %[[Y:[a-z0-9]+]]: !llvm.ptr, %[[YS:[a-z0-9]+]]: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr) -> i32
// WGMMA: fusion_rt.launch @fusion_kernels::@saved_batch_norm_input_0_gemm_batch_norm {{.*}} args({{.*}}, %[[OUT]], %[[OUT]], {{.*}}, %[[YS]], %[[YS]], {{.*}}, %[[Y]], %[[Y]],
// WGMMA: fusion_rt.launch @fusion_kernels::@saved_batch_norm_input_0_gemm {{.*}} args({{.*}}, %[[YS]], %[[YS]], {{.*}}, %[[Y]], %[[Y]],
// WGMMA: fusion_rt.launch @fusion_kernels::@saved_batch_norm_input_0_normalize {{.*}} args(%[[YS]], %[[OUT]],
// TILED-LABEL: llvm.func @saved_batch_norm_input(
// TILED: fusion_rt.launch @fusion_kernels::@saved_batch_norm_input_0_normalize
func.func @saved_batch_norm_input(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %s: tensor<48xbf16>,
                                  %rm: tensor<48xbf16>, %rv: tensor<48xbf16>)
    -> (tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>) {
  %0 = fusion.linear %x, %w : tensor<?x64xbf16>, tensor<48x64xbf16> -> tensor<?x48xbf16>
  %1 = fusion.mul %0, %s : tensor<?x48xbf16>, tensor<48xbf16>
  %y:3 = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
      : (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>) -> (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>)
  return %y#0, %0, %1, %y#1, %y#2
      : tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>
}
