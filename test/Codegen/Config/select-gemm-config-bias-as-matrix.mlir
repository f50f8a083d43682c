// strategy=auto on sm_90 for outputs that a row program reads after they are
// written: cuBLASLt's GEMM, except for 16-bit GEMMs with a bias, which
// cuBLASLt reads as a broadcast C matrix (its bias epilogue rounds before
// adding): those take the wgmma kernel. Not for tf32 GEMMs with a bias
// (cuBLASLt's bias epilogue), 16-bit GEMMs without one, other strategies
// or sm_80.
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_90" | FileCheck %s --check-prefix=AUTO
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=cublas target=sm_90" | FileCheck %s --check-prefix=CUBLAS
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_80" | FileCheck %s --check-prefix=SM80

// AUTO-LABEL: func.func @softmax_bf16_bias
// AUTO: } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16,
// AUTO-LABEL: func.func @softmax_f16_bias
// AUTO: } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = f16,
// AUTO-LABEL: func.func @softmax_bf16_no_bias
// AUTO: } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>,
// AUTO-LABEL: func.func @centred_tf32_bias
// AUTO: } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>,
// CUBLAS-NOT: wgmma
// SM80-NOT: wgmma

func.func @softmax_bf16_bias(%x: tensor<?x64xbf16>, %w: tensor<4096x64xbf16>, %b: tensor<4096xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.fused_linear %x, %w bias(%b) epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<4096x64xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
  %1 = fusion.reduce max %0 : tensor<?x4096xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<?x1xbf16>) : tensor<?x4096xbf16> {
  ^bb0(%v: f32, %m: f32):
    %3 = arith.subf %v, %m : f32
    %4 = math.exp %3 : f32
    fusion.yield %4 : f32
  }
  return %2 : tensor<?x4096xbf16>
}

func.func @softmax_f16_bias(%x: tensor<?x64xf16>, %w: tensor<4096x64xf16>, %b: tensor<4096xf16>) -> tensor<?x4096xf16> {
  %0 = fusion.fused_linear %x, %w bias(%b) epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf16>, tensor<4096x64xf16>, tensor<4096xf16>) -> tensor<?x4096xf16>
  %1 = fusion.reduce max %0 : tensor<?x4096xf16> -> tensor<?x1xf16> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<?x1xf16>) : tensor<?x4096xf16> {
  ^bb0(%v: f32, %m: f32):
    %3 = arith.subf %v, %m : f32
    %4 = math.exp %3 : f32
    fusion.yield %4 : f32
  }
  return %2 : tensor<?x4096xf16>
}

func.func @softmax_bf16_no_bias(%x: tensor<?x64xbf16>, %w: tensor<4096x64xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<4096x64xbf16>) -> tensor<?x4096xbf16>
  %1 = fusion.reduce max %0 : tensor<?x4096xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<?x1xbf16>) : tensor<?x4096xbf16> {
  ^bb0(%v: f32, %m: f32):
    %3 = arith.subf %v, %m : f32
    %4 = math.exp %3 : f32
    fusion.yield %4 : f32
  }
  return %2 : tensor<?x4096xbf16>
}

func.func @centred_tf32_bias(%x: tensor<?x64xf32>, %w: tensor<4096x64xf32>, %b: tensor<4096xf32>) -> tensor<?x4096xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<4096x64xf32>, tensor<4096xf32>) -> tensor<?x4096xf32>
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
