// fusion-select-gemm-config: the strategy's backend, the heuristic tiling
// fitted to the chip, the options' overrides; hand-written configs kept.
// RUN: fusion-opt %s --fusion-select-gemm-config | FileCheck %s --check-prefix=AUTO
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=tiled" | FileCheck %s --check-prefix=TILED80
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=tiled target=sm_90" | FileCheck %s --check-prefix=TILED90
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=tiled target=sm_86 fp32-math=simt" | FileCheck %s --check-prefix=SIMT86
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=cublas" | FileCheck %s --check-prefix=CUBLAS
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=tiled tile=64,64 warps=2,2 stages=3" | FileCheck %s --check-prefix=OVERRIDE
// RUN: fusion-opt %s --fusion-select-gemm-config --fusion-select-gemm-config="strategy=cublas" | FileCheck %s --check-prefix=AUTO

// The default is the measured rule: the generated kernel for f32 in fp32
// (3xTF32), cuBLASLt for the rest; the target defaults to sm_80.
// AUTO: module attributes {fusion.target = #fusion.target<sm_80>}
// AUTO-LABEL: func.func @fp32
// AUTO: fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 128x128, warps = 2x4, stages = 4, group_m = 8>
// AUTO-LABEL: func.func @bf16
// AUTO: fusion.lowering = #fusion.lowering<gemm = <cublaslt>
// AUTO-LABEL: func.func @f32_in_f16
// AUTO: fusion.lowering = #fusion.lowering<gemm = <cublaslt>
// AUTO-LABEL: func.func @kept
// AUTO: fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32, tile = 64x32, warps = 2x1, stages = 2, group_m = 1>

// 128x256 bf16 blocks: 3 stages fit the 163 KiB of sm_80, 4 the 227 KiB of
// sm_90.
// TILED80-LABEL: func.func @bf16
// TILED80: gemm = <mma_sync, mma = bf16, tile = 128x256, warps = 2x4, stages = 3, group_m = 8>
// TILED80-LABEL: func.func @f32_in_f16
// TILED80: gemm = <mma_sync, mma = f32_as_f16, tile = 128x128, warps = 2x2, stages = 4, group_m = 8>
// TILED90: module attributes {fusion.target = #fusion.target<sm_90>}
// TILED90-LABEL: func.func @bf16
// TILED90: gemm = <mma_sync, mma = bf16, tile = 128x256, warps = 2x4, stages = 4, group_m = 8>

// SIMT only for f32 in fp32; 99 KiB of sm_86 hold 3 stages of 128x128.
// SIMT86-LABEL: func.func @fp32
// SIMT86: gemm = <simt, tile = 128x128, warps = 2x4, stages = 3, group_m = 8>
// SIMT86-LABEL: func.func @bf16
// SIMT86: gemm = <mma_sync, mma = bf16, tile = 128x256, warps = 2x4, stages = 2, group_m = 8>

// CUBLAS-LABEL: func.func @fp32
// CUBLAS: gemm = <cublaslt>
// CUBLAS-LABEL: func.func @kept
// CUBLAS: gemm = <mma_sync, mma = tf32, tile = 64x32, warps = 2x1, stages = 2, group_m = 1>

// OVERRIDE-LABEL: func.func @fp32
// OVERRIDE: gemm = <mma_sync, mma = tf32x3, tile = 64x64, warps = 2x2, stages = 3, group_m = 8>

func.func @fp32(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @bf16(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

func.func @f32_in_f16(%x: tensor<?x64xf32>, %w: tensor<96x64xf32>) -> tensor<?x96xf32> {
  %0 = fusion.fused_linear %x, %w precision f16 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  return %0 : tensor<?x96xf32>
}

func.func @kept(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32, tile = 64x32, warps = 2x1, stages = 2, group_m = 1>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}
