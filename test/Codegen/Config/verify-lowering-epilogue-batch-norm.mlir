// The lowering-config verifier: a lowering's epilogue batch norm's checks
// against the op and its configs, each rule with its located diagnostic.
// RUN: fusion-opt %s --fusion-verify-lowering --split-input-file --verify-diagnostics

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{an epilogue batch norm for up to 0 rows: one block row of the config's tiles holds 1 to 128}}
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, epilogue_batch_norm = <max_rows = 0>>}
    : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{an epilogue batch norm for up to 256 rows: one block row of the config's tiles holds 1 to 128}}
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, epilogue_batch_norm = <max_rows = 256>>}
    : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{an epilogue batch norm needs a training batch_norm stage}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, epilogue_batch_norm = <max_rows = 128>>}
    : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>, %m: tensor<512xbf16>, %v: tensor<512xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{an epilogue batch norm needs a training batch_norm stage}}
  } batch_norm <inference, epsilon = 1.0e-05, momentum = 1.0e-01> running_stats(%m, %v) {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, epilogue_batch_norm = <max_rows = 128>>}
    : (tensor<?x64xbf16>, tensor<512x64xbf16>, tensor<512xbf16>, tensor<512xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{an epilogue batch norm needs a generated GEMM config}}
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {fusion.lowering = #fusion.lowering<gemm = <cublaslt>, epilogue_batch_norm = <max_rows = 128>>}
    : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

// The kernel that finishes the batch norm reads rows of its tile: the
// config for its batches keeps operands = x_w.
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{an epilogue batch norm for up to 128 rows needs a GEMM config for those rows with operands = x_w (a batch config where the op's swaps them)}}
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, operands = w_x>, epilogue_batch_norm = <max_rows = 128>>}
    : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

// Each config that finishes some of its batches reads rows of the tile:
// a swapped entry below max_rows too.
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{an epilogue batch norm for up to 128 rows needs a GEMM config for those rows with operands = x_w (a batch config where the op's swaps them)}}
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = bf16, tile = 16x64, warps = 4x1, stages = 8, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x64, warps = 8x1, stages = 4, group_m = 8>>], epilogue_batch_norm = <max_rows = 128>>} : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

// The op after the norm reads its updated running mean: the kernel writes
// the statistics after it stages that op's columns.
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>, %rm: tensor<512xbf16>, %rv: tensor<512xbf16>) -> (tensor<?x512xbf16>, tensor<512xbf16>) {
  %y:3 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{an epilogue batch norm computes the op after the norm, which here reads the norm's statistics: the kernel writes them after it stages that op's columns}}
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> running_stats(%rm, %rv) {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, epilogue_batch_norm = <max_rows = 128>>}
    : (tensor<?x64xbf16>, tensor<512x64xbf16>, tensor<512xbf16>, tensor<512xbf16>) -> (tensor<?x512xbf16>, tensor<512xbf16>, tensor<512xbf16>)
  %0 = fusion.elementwise %y#0 columns(%y#1 : tensor<512xbf16>) : tensor<?x512xbf16> {
  ^bb0(%a: f32, %m: f32):
    %r = arith.subf %a, %m : f32
    fusion.yield %r : f32
  }
  return %0, %y#2 : tensor<?x512xbf16>, tensor<512xbf16>
}

// -----

// The columns of the op after the norm, which the finishing kernel stages
// too, count against the chip's shared memory.
module attributes {fusion.target = #fusion.target<sm_90>} {
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>, %c0: tensor<512xbf16>, %c1: tensor<512xbf16>, %c2: tensor<512xbf16>, %c3: tensor<512xbf16>, %c4: tensor<512xbf16>, %c5: tensor<512xbf16>, %c6: tensor<512xbf16>, %c7: tensor<512xbf16>, %c8: tensor<512xbf16>, %c9: tensor<512xbf16>, %c10: tensor<512xbf16>, %c11: tensor<512xbf16>, %c12: tensor<512xbf16>, %c13: tensor<512xbf16>, %c14: tensor<512xbf16>, %c15: tensor<512xbf16>, %c16: tensor<512xbf16>, %c17: tensor<512xbf16>, %c18: tensor<512xbf16>, %c19: tensor<512xbf16>, %c20: tensor<512xbf16>, %c21: tensor<512xbf16>, %c22: tensor<512xbf16>, %c23: tensor<512xbf16>, %c24: tensor<512xbf16>, %c25: tensor<512xbf16>, %c26: tensor<512xbf16>, %c27: tensor<512xbf16>, %c28: tensor<512xbf16>, %c29: tensor<512xbf16>, %c30: tensor<512xbf16>, %c31: tensor<512xbf16>) -> tensor<?x512xbf16> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{tiling 128x256 with 4 stages needs 239688 bytes of shared memory, sm_90 has 232448}}
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, epilogue_batch_norm = <max_rows = 128>>}
    : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  %0 = fusion.elementwise %y columns(%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11, %c12, %c13, %c14, %c15, %c16, %c17, %c18, %c19, %c20, %c21, %c22, %c23, %c24, %c25, %c26, %c27, %c28, %c29, %c30, %c31 : tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>, tensor<512xbf16>) : tensor<?x512xbf16> {
  ^bb0(%a: f32, %v0: f32, %v1: f32, %v2: f32, %v3: f32, %v4: f32, %v5: f32, %v6: f32, %v7: f32, %v8: f32, %v9: f32, %v10: f32, %v11: f32, %v12: f32, %v13: f32, %v14: f32, %v15: f32, %v16: f32, %v17: f32, %v18: f32, %v19: f32, %v20: f32, %v21: f32, %v22: f32, %v23: f32, %v24: f32, %v25: f32, %v26: f32, %v27: f32, %v28: f32, %v29: f32, %v30: f32, %v31: f32):
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
    fusion.yield %s31 : f32
  }
  return %0 : tensor<?x512xbf16>
}
}
