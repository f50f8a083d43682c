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

// The op after the norm reads the norm's updated running mean, which the
// kernel would write after it stages that op's columns: no attribute (the
// three kernels for every batch), and no batch config of other block rows.
// WGMMA-LABEL: func.func @after_reads_statistics
// WGMMA-NOT: epilogue_batch_norm
// WGMMA: fusion.elementwise
func.func @after_reads_statistics(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>,
                                  %rm: tensor<512xbf16>, %rv: tensor<512xbf16>)
    -> (tensor<?x512xbf16>, tensor<512xbf16>) {
  %y:3 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
    : (tensor<?x64xbf16>, tensor<512x64xbf16>, tensor<512xbf16>, tensor<512xbf16>) -> (tensor<?x512xbf16>, tensor<512xbf16>, tensor<512xbf16>)
  %0 = fusion.elementwise %y#0 columns(%y#1 : tensor<512xbf16>) : tensor<?x512xbf16> {
  ^bb0(%a: f32, %m: f32):
    %r = arith.subf %a, %m : f32
    fusion.yield %r : f32
  }
  return %0, %y#2 : tensor<?x512xbf16>, tensor<512xbf16>
}

// The op after the norm stages 40 columns of 256 floats beside the
// 4-stage pipeline of the op config's 128x256 tiles (which fit without
// them), past sm_90's shared memory: no attribute, and no batch config of
// other block rows.
// WGMMA-LABEL: func.func @after_columns_overflow
// WGMMA: tile = 128x256
// WGMMA-NOT: epilogue_batch_norm
// WGMMA-NOT: tile = 64x
// WGMMA: fusion.elementwise
func.func @after_columns_overflow(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>,
                                  %c0: tensor<512xbf16>, %c1: tensor<512xbf16>, %c2: tensor<512xbf16>, %c3: tensor<512xbf16>, %c4: tensor<512xbf16>, %c5: tensor<512xbf16>, %c6: tensor<512xbf16>, %c7: tensor<512xbf16>, %c8: tensor<512xbf16>, %c9: tensor<512xbf16>, %c10: tensor<512xbf16>, %c11: tensor<512xbf16>, %c12: tensor<512xbf16>, %c13: tensor<512xbf16>, %c14: tensor<512xbf16>, %c15: tensor<512xbf16>, %c16: tensor<512xbf16>, %c17: tensor<512xbf16>, %c18: tensor<512xbf16>, %c19: tensor<512xbf16>, %c20: tensor<512xbf16>, %c21: tensor<512xbf16>, %c22: tensor<512xbf16>, %c23: tensor<512xbf16>, %c24: tensor<512xbf16>, %c25: tensor<512xbf16>, %c26: tensor<512xbf16>, %c27: tensor<512xbf16>, %c28: tensor<512xbf16>, %c29: tensor<512xbf16>, %c30: tensor<512xbf16>, %c31: tensor<512xbf16>, %c32: tensor<512xbf16>, %c33: tensor<512xbf16>, %c34: tensor<512xbf16>, %c35: tensor<512xbf16>, %c36: tensor<512xbf16>, %c37: tensor<512xbf16>, %c38: tensor<512xbf16>, %c39: tensor<512xbf16>)
    -> tensor<?x512xbf16> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1>
    : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  %0 = fusion.elementwise %y columns(%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11, %c12, %c13, %c14, %c15, %c16, %c17, %c18, %c19, %c20, %c21, %c22, %c23, %c24, %c25, %c26, %c27, %c28, %c29, %c30, %c31, %c32, %c33, %c34, %c35, %c36, %c37, %c38, %c39 : tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>) : tensor<?x512xbf16> {
  ^bb0(%a: f32, %v0: f32, %v1: f32, %v2: f32, %v3: f32, %v4: f32, %v5: f32, %v6: f32, %v7: f32, %v8: f32, %v9: f32, %v10: f32, %v11: f32, %v12: f32, %v13: f32, %v14: f32, %v15: f32, %v16: f32, %v17: f32, %v18: f32, %v19: f32, %v20: f32, %v21: f32, %v22: f32, %v23: f32, %v24: f32, %v25: f32, %v26: f32, %v27: f32, %v28: f32, %v29: f32, %v30: f32, %v31: f32, %v32: f32, %v33: f32, %v34: f32, %v35: f32, %v36: f32, %v37: f32, %v38: f32, %v39: f32):
    %s0 = arith.addf %a, %v0 : f32
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
    %s17 = arith.addf %s16, %v17 : f32
    %s18 = arith.addf %s17, %v18 : f32
    %s19 = arith.addf %s18, %v19 : f32
    %s20 = arith.addf %s19, %v20 : f32
    %s21 = arith.addf %s20, %v21 : f32
    %s22 = arith.addf %s21, %v22 : f32
    %s23 = arith.addf %s22, %v23 : f32
    %s24 = arith.addf %s23, %v24 : f32
    %s25 = arith.addf %s24, %v25 : f32
    %s26 = arith.addf %s25, %v26 : f32
    %s27 = arith.addf %s26, %v27 : f32
    %s28 = arith.addf %s27, %v28 : f32
    %s29 = arith.addf %s28, %v29 : f32
    %s30 = arith.addf %s29, %v30 : f32
    %s31 = arith.addf %s30, %v31 : f32
    %s32 = arith.addf %s31, %v32 : f32
    %s33 = arith.addf %s32, %v33 : f32
    %s34 = arith.addf %s33, %v34 : f32
    %s35 = arith.addf %s34, %v35 : f32
    %s36 = arith.addf %s35, %v36 : f32
    %s37 = arith.addf %s36, %v37 : f32
    %s38 = arith.addf %s37, %v38 : f32
    %s39 = arith.addf %s38, %v39 : f32
    fusion.yield %s39 : f32
  }
  return %0 : tensor<?x512xbf16>
}
