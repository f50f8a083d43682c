// fusion-select-gemm-config gives a fused_linear with a training batch norm
// and a wgmma config `fusion.epilogue_batch_norm`: batches of up to one
// block row of tiles are normalized by the GEMM kernel itself. Inference
// batch norms (elementwise), other epilogues and other backends get none.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90" | FileCheck %s --check-prefix=WGMMA
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_90" | FileCheck %s --check-prefix=WGMMA
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90 schedule=pingpong" | FileCheck %s --check-prefix=PINGPONG
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=tiled target=sm_90" | FileCheck %s --check-prefix=NONE
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=cublas target=sm_90" | FileCheck %s --check-prefix=NONE
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_80" | FileCheck %s --check-prefix=NONE

// NONE-NOT: fusion.epilogue_batch_norm

// WGMMA-LABEL: func.func @training
// WGMMA: fusion.epilogue_batch_norm = #fusion.epilogue_batch_norm<max_rows = 128>
// WGMMA-SAME: fusion.gemm_config = #fusion.gemm_config<wgmma, mma = bf16, tile = 128x256
// PINGPONG-LABEL: func.func @training
// PINGPONG: fusion.epilogue_batch_norm = #fusion.epilogue_batch_norm<max_rows = 128>
// PINGPONG-SAME: tile = 128x128
func.func @training(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// 3xTF32 keeps 64-row ping-pong tiles: up to 64 rows.
// WGMMA-LABEL: func.func @training_fp32
// WGMMA: fusion.epilogue_batch_norm = #fusion.epilogue_batch_norm<max_rows = 128>
// PINGPONG-LABEL: func.func @training_fp32
// PINGPONG: fusion.epilogue_batch_norm = #fusion.epilogue_batch_norm<max_rows = 64>
// PINGPONG-SAME: tile = 64x128
func.func @training_fp32(%x: tensor<?x64xf32>, %w: tensor<512x64xf32>) -> tensor<?x512xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    {precision = #fusion.precision<fp32>}
    : (tensor<?x64xf32>, tensor<512x64xf32>) -> tensor<?x512xf32>
  return %0 : tensor<?x512xf32>
}

// A static batch takes its config, and keeps the attribute.
// WGMMA-LABEL: func.func @static_batch
// WGMMA: fusion.epilogue_batch_norm = #fusion.epilogue_batch_norm<max_rows = 128>
func.func @static_batch(%x: tensor<64x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<64x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<64x64xbf16>, tensor<512x64xbf16>) -> tensor<64x512xbf16>
  return %0 : tensor<64x512xbf16>
}

// WGMMA-LABEL: func.func @inference
// WGMMA-NOT: fusion.epilogue_batch_norm
// WGMMA: return
func.func @inference(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>,
                     %mean: tensor<512xbf16>, %var: tensor<512xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <inference, epsilon = 1.0e-05, momentum = 1.0e-01>
    running_stats(%mean, %var)
    : (tensor<?x64xbf16>, tensor<512x64xbf16>, tensor<512xbf16>, tensor<512xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// WGMMA-LABEL: func.func @no_batch_norm
// WGMMA-NOT: fusion.epilogue_batch_norm
// WGMMA: return
func.func @no_batch_norm(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}
