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
