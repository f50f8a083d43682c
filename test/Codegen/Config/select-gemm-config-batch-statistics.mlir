// strategy=auto on sm_90 for a tf32 GEMM with a training batch-norm stage
// whose output a row program reads after it is written (KernelBench 84's
// batch norm and softmax): the wgmma kernel, whose epilogue computes the
// batch's column statistics where cuBLASLt's GEMM needs a pass over its
// output for them. Without the stage, or with an inference one, such
// outputs keep cuBLASLt's GEMM; so do the cublas strategy and sm_80.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="target=sm_90" | FileCheck %s --check-prefix=AUTO
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=cublas target=sm_90" | FileCheck %s --check-prefix=CUBLAS
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="target=sm_80" | FileCheck %s --check-prefix=SM80
// CUBLAS-NOT: wgmma
// SM80-NOT: wgmma

// AUTO-LABEL: func.func @training_softmax
// AUTO: } batch_norm <training
// AUTO-SAME: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32,
func.func @training_softmax(%x: tensor<?x64xf32>, %w: tensor<4096x64xf32>, %b: tensor<4096xf32>) -> tensor<?x4096xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<?x64xf32>, tensor<4096x64xf32>, tensor<4096xf32>) -> tensor<?x4096xf32>
  %1 = fusion.reduce max %0 : tensor<?x4096xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<?x1xf32>) : tensor<?x4096xf32> {
  ^bb0(%v: f32, %m: f32):
    %3 = arith.subf %v, %m : f32
    %4 = math.exp %3 : f32
    fusion.yield %4 : f32
  }
  return %2 : tensor<?x4096xf32>
}

// -----

// In 16 bits without a bias too (no broadcast C matrix for cuBLASLt to read):
// the statistics decide.
// AUTO-LABEL: func.func @batch_norm_then_sum
// AUTO: } batch_norm <training{{.*}} {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, {{.*}}epilogue_batch_norm = <max_rows = 128>>} :
func.func @batch_norm_then_sum(%x: tensor<?x64xbf16>, %w: tensor<4096x64xbf16>) -> (tensor<?x4096xbf16>, tensor<?x1xbf16>) {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<?x64xbf16>, tensor<4096x64xbf16>) -> tensor<?x4096xbf16>
  %1 = fusion.reduce sum %0 : tensor<?x4096xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %0, %1 : tensor<?x4096xbf16>, tensor<?x1xbf16>
}

// -----

// AUTO-LABEL: func.func @inference_softmax
// AUTO: } batch_norm <inference
// AUTO-SAME: fusion.lowering = #fusion.lowering<gemm = <cublaslt>
func.func @inference_softmax(%x: tensor<?x64xf32>, %w: tensor<4096x64xf32>, %b: tensor<4096xf32>,
                             %mean: tensor<4096xf32>, %var: tensor<4096xf32>) -> tensor<?x4096xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <inference, epsilon = 1.0e-05, momentum = 1.0e-01> running_stats(%mean, %var)
    : (tensor<?x64xf32>, tensor<4096x64xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>) -> tensor<?x4096xf32>
  %1 = fusion.reduce max %0 : tensor<?x4096xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<?x1xf32>) : tensor<?x4096xf32> {
  ^bb0(%v: f32, %m: f32):
    %3 = arith.subf %v, %m : f32
    %4 = math.exp %3 : f32
    fusion.yield %4 : f32
  }
  return %2 : tensor<?x4096xf32>
}

// -----

// AUTO-LABEL: func.func @no_stage_softmax
// AUTO: } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>
func.func @no_stage_softmax(%x: tensor<?x64xf32>, %w: tensor<4096x64xf32>, %b: tensor<4096xf32>) -> tensor<?x4096xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<4096x64xf32>, tensor<4096xf32>) -> tensor<?x4096xf32>
  %1 = fusion.reduce max %0 : tensor<?x4096xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<?x1xf32>) : tensor<?x4096xf32> {
  ^bb0(%v: f32, %m: f32):
    %3 = arith.subf %v, %m : f32
    %4 = math.exp %3 : f32
    fusion.yield %4 : f32
  }
  return %2 : tensor<?x4096xf32>
}
