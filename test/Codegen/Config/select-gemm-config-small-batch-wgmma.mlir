// strategy=auto on sm_90 for outputs that reductions read after they are
// written (norms, softmax) in tf32 and 16 bits: cuBLASLt's GEMM as the op's
// config, and the wgmma kernels' batch configs for the batches whose
// 128x256 tiles would leave more than half of the SMs idle (no tile
// reductions: both paths write the output for the same row program). Not
// for K rows that are not whole 128-byte lines, a tiling in the options,
// batch-configs=false, other strategies or sm_80 (a training batch norm
// stage takes the wgmma kernel for every batch:
// select-gemm-config-batch-statistics.mlir).
// A static batch takes the config that fits it.
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_90" | FileCheck %s --check-prefix=AUTO
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_90 batch-configs=false" | FileCheck %s --check-prefix=NONE
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=cublas target=sm_90" | FileCheck %s --check-prefix=NONE
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_80" | FileCheck %s --check-prefix=NONE

// AUTO-LABEL: func.func @centred_4096
// AUTO-SAME: {
// AUTO: fusion.fused_linear
// AUTO: } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>, batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = tf32, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = tf32, tile = 32x64, {{.*}}>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = tf32, tile = 64x64, {{.*}}>>, #fusion.batch_gemm_config<max_rows = 256, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x64, {{.*}}>>, #fusion.batch_gemm_config<max_rows = 512, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x128, {{.*}}>>]>} :
// AUTO-NOT: tile_reductions
// AUTO-LABEL: func.func @softmax_bf16_16384
// AUTO: } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>, batches = [#fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = bf16, tile = 32x128, {{.*}} operands = w_x>>, #fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x128, {{.*}}>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x128, {{.*}}>>]>} :
// AUTO-NOT: tile_reductions
// AUTO-LABEL: func.func @centred_static_16
// AUTO: } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>} :
// AUTO-LABEL: func.func @centred_static_4096
// AUTO: } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>>} :
// 32768 columns fill the GPU at any batch: no batch configs.
// AUTO-LABEL: func.func @centred_wide
// AUTO: } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>>} :
// AUTO-LABEL: func.func @centred_line_unaligned_k
// AUTO: } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>>} :

// NONE-NOT: batches =
// NONE-NOT: wgmma

func.func @centred_4096(%x: tensor<?x64xf32>, %w: tensor<4096x64xf32>) -> tensor<?x4096xf32> {
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

func.func @softmax_bf16_16384(%x: tensor<?x64xbf16>, %w: tensor<16384x64xbf16>) -> tensor<?x16384xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<16384x64xbf16>) -> tensor<?x16384xbf16>
  %1 = fusion.reduce max %0 : tensor<?x16384xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<?x1xbf16>) : tensor<?x16384xbf16> {
  ^bb0(%v: f32, %m: f32):
    %3 = arith.subf %v, %m : f32
    %4 = math.exp %3 : f32
    fusion.yield %4 : f32
  }
  return %2 : tensor<?x16384xbf16>
}

func.func @centred_static_16(%x: tensor<16x64xf32>, %w: tensor<4096x64xf32>) -> tensor<16x4096xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<16x64xf32>, tensor<4096x64xf32>) -> tensor<16x4096xf32>
  %1 = fusion.reduce sum %0 : tensor<16x4096xf32> -> tensor<16x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<16x1xf32>) : tensor<16x4096xf32> {
  ^bb0(%v: f32, %s: f32):
    %3 = arith.subf %v, %s : f32
    fusion.yield %3 : f32
  }
  return %2 : tensor<16x4096xf32>
}

func.func @centred_static_4096(%x: tensor<4096x64xf32>, %w: tensor<4096x64xf32>) -> tensor<4096x4096xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<4096x64xf32>, tensor<4096x64xf32>) -> tensor<4096x4096xf32>
  %1 = fusion.reduce sum %0 : tensor<4096x4096xf32> -> tensor<4096x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<4096x1xf32>) : tensor<4096x4096xf32> {
  ^bb0(%v: f32, %s: f32):
    %3 = arith.subf %v, %s : f32
    fusion.yield %3 : f32
  }
  return %2 : tensor<4096x4096xf32>
}

func.func @centred_wide(%x: tensor<?x64xbf16>, %w: tensor<32768x64xbf16>) -> tensor<?x32768xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<32768x64xbf16>) -> tensor<?x32768xbf16>
  %1 = fusion.reduce sum %0 : tensor<?x32768xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<?x1xbf16>) : tensor<?x32768xbf16> {
  ^bb0(%v: f32, %s: f32):
    %3 = arith.subf %v, %s : f32
    fusion.yield %3 : f32
  }
  return %2 : tensor<?x32768xbf16>
}

func.func @centred_line_unaligned_k(%x: tensor<?x1000xbf16>, %w: tensor<4096x1000xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x1000xbf16>, tensor<4096x1000xbf16>) -> tensor<?x4096xbf16>
  %1 = fusion.reduce sum %0 : tensor<?x4096xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<?x1xbf16>) : tensor<?x4096xbf16> {
  ^bb0(%v: f32, %s: f32):
    %3 = arith.subf %v, %s : f32
    fusion.yield %3 : f32
  }
  return %2 : tensor<?x4096xbf16>
}
