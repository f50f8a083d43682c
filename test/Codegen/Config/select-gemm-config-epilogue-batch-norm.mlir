// fusion-select-gemm-config gives a fused_linear with a training batch norm
// and a generated config `fusion.epilogue_batch_norm`: batches of up to one
// block row of tiles are normalized by the GEMM kernel itself. Inference
// batch norms (elementwise), other epilogues and cuBLASLt get none.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90" | FileCheck %s --check-prefix=WGMMA
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_90" | FileCheck %s --check-prefix=WGMMA
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90 schedule=pingpong" | FileCheck %s --check-prefix=PINGPONG
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=tiled target=sm_80" | FileCheck %s --check-prefix=TILED
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=cublas target=sm_90" | FileCheck %s --check-prefix=NONE
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_80" | FileCheck %s --check-prefix=NONE

// NONE-NOT: epilogue_batch_norm

// The tiled kernel's 128-row blocks: its staged tile's scratch for the
// coefficients still leaves 3 stages on sm_80.
// TILED-LABEL: func.func @training
// TILED: fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = bf16, tile = 128x256, warps = 2x4, stages = 3
// TILED-SAME: epilogue_batch_norm = <max_rows = 128>
// TILED-LABEL: func.func @training_fp32
// TILED: epilogue_batch_norm = <max_rows = 128>
// TILED-LABEL: func.func @inference
// TILED-NOT: epilogue_batch_norm
// TILED: return

// WGMMA-LABEL: func.func @training
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256
// WGMMA-SAME: epilogue_batch_norm = <max_rows = 128>
// PINGPONG-LABEL: func.func @training
// PINGPONG: tile = 128x128
// PINGPONG-SAME: epilogue_batch_norm = <max_rows = 128>
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
// WGMMA: epilogue_batch_norm = <max_rows = 128>
// PINGPONG-LABEL: func.func @training_fp32
// PINGPONG: tile = 64x128
// PINGPONG-SAME: epilogue_batch_norm = <max_rows = 64>
func.func @training_fp32(%x: tensor<?x64xf32>, %w: tensor<512x64xf32>) -> tensor<?x512xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    {precision = #fusion.precision<fp32>}
    : (tensor<?x64xf32>, tensor<512x64xf32>) -> tensor<?x512xf32>
  return %0 : tensor<?x512xf32>
}

// A static batch takes its config (64 rows: the 64-row tiles), and keeps
// the attribute, for that config's block rows.
// WGMMA-LABEL: func.func @static_batch
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x64
// WGMMA-SAME: epilogue_batch_norm = <max_rows = 64>
func.func @static_batch(%x: tensor<64x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<64x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<64x64xbf16>, tensor<512x64xbf16>) -> tensor<64x512xbf16>
  return %0 : tensor<64x512xbf16>
}

// A static batch of more than one block row never fits: no attribute.
// WGMMA-LABEL: func.func @static_large_batch
// WGMMA-NOT: epilogue_batch_norm
// WGMMA: return
func.func @static_large_batch(%x: tensor<256x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<256x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<256x64xbf16>, tensor<512x64xbf16>) -> tensor<256x512xbf16>
  return %0 : tensor<256x512xbf16>
}

// WGMMA-LABEL: func.func @inference
// WGMMA-NOT: epilogue_batch_norm
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
// WGMMA-NOT: epilogue_batch_norm
// WGMMA: return
func.func @no_batch_norm(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// Seventeen epilogue columns leave the tiled kernel's 3 stages on sm_80
// (163 KiB) no room for the coefficients' scratch: no attribute, the three
// kernels for every batch.
// TILED-LABEL: func.func @crowded
// TILED-NOT: epilogue_batch_norm
// TILED: return
func.func @crowded(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>, %c0: tensor<512xbf16>, %c1: tensor<512xbf16>, %c2: tensor<512xbf16>, %c3: tensor<512xbf16>, %c4: tensor<512xbf16>, %c5: tensor<512xbf16>, %c6: tensor<512xbf16>, %c7: tensor<512xbf16>, %c8: tensor<512xbf16>, %c9: tensor<512xbf16>, %c10: tensor<512xbf16>, %c11: tensor<512xbf16>, %c12: tensor<512xbf16>, %c13: tensor<512xbf16>, %c14: tensor<512xbf16>, %c15: tensor<512xbf16>, %c16: tensor<512xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue(%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11, %c12, %c13, %c14, %c15, %c16) {
  ^bb0(%acc: f32, %v0: f32, %v1: f32, %v2: f32, %v3: f32, %v4: f32, %v5: f32, %v6: f32, %v7: f32, %v8: f32, %v9: f32, %v10: f32, %v11: f32, %v12: f32, %v13: f32, %v14: f32, %v15: f32, %v16: f32):
    %s0 = arith.addf %acc, %v0 : f32
    %s1 = arith.addf %s0, %v1 : f32
    %s2 = arith.addf %s1, %v2 : f32
    %s3 = arith.addf %s2, %v3 : f32
    %s4 = arith.addf %s3, %v4 : f32
    %s5 = arith.addf %s4, %v5 : f32
    %s6 = arith.addf %s5, %v6 : f32
    %s7 = arith.addf %s6, %v7 : f32
    %s8 = arith.addf %s7, %v8 : f32
    %s9 = arith.addf %s8, %v9 : f32
    %s10 = arith.addf %s9, %v10 : f32
    %s11 = arith.addf %s10, %v11 : f32
    %s12 = arith.addf %s11, %v12 : f32
    %s13 = arith.addf %s12, %v13 : f32
    %s14 = arith.addf %s13, %v14 : f32
    %s15 = arith.addf %s14, %v15 : f32
    %s16 = arith.addf %s15, %v16 : f32
    fusion.yield %s16 : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<?x64xbf16>, tensor<512x64xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// A swapped config (operands = w_x) gets a batch config with x_w for
// batches of one block row, which the kernel that finishes the batch norm
// takes, where no narrower tiling gives one (48 columns fill no tile).
// WGMMA-LABEL: func.func @narrow_training
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 4, group_m = 8, operands = w_x>, batches = [#fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>], epilogue_batch_norm = <max_rows = 128>>
// PINGPONG-LABEL: func.func @narrow_training
// PINGPONG-NOT: operands = w_x
// PINGPONG: return
func.func @narrow_training(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}
