// The lowering-config verifier: a lowering's batch configs' checks
// against the op, its config and tile reductions, each rule with its located
// diagnostic.
// RUN: fusion-opt %s --fusion-verify-lowering --split-input-file --verify-diagnostics

// A cuBLASLt op's batch configs are of one generated backend.
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{the batch GEMM config for up to 128 rows must keep the first batch config's wgmma backend, not mma_sync}}
  } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>, batches = [#fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x128, warps = 4x1, stages = 8, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<mma_sync, mma = bf16, tile = 128x128, warps = 2x2, stages = 4, group_m = 8>>]>} : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{batch GEMM configs of a cublaslt op with a batch norm stage: cuBLASLt's path and the generated kernels compute its moments in different kernels}}
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {fusion.lowering = #fusion.lowering<gemm = <cublaslt>, batches = [#fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>]>} : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

// An entry of a cuBLASLt op verifies as the op's own config would.
func.func @f(%x: tensor<?x36xbf16>, %w: tensor<512x36xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{a wgmma GEMM loads rows of x and w with TMA, whose rows must be multiples of 16 bytes; K = 36 of 'bf16' is not}}
  } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>, batches = [#fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>]>} : (tensor<?x36xbf16>, tensor<512x36xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{batch GEMM configs must be in increasing max_rows, got 128 after 256}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, batches = [#fusion.batch_gemm_config<max_rows = 256, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>]>} : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{the batch GEMM config for up to 128 rows must keep the op config's wgmma backend, not mma_sync}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, batches = [#fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<mma_sync, mma = bf16, tile = 128x128, warps = 2x2, stages = 4, group_m = 8>>]>} : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{the batch GEMM config for up to 128 rows of an op with a batch norm must keep the op config's 128-row blocks, not 64 (or hold its batches in one block row, which the epilogue batch norm finishes)}}
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, batches = [#fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x128, warps = 4x1, stages = 4, group_m = 8>>]>} : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{mma kind f16 does not compute 'bf16' tensors in bf16 precision (that is bf16)}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, batches = [#fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = f16, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>]>} : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<512x64xf32>) -> tensor<?x1xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{tile reductions over spans of 256 columns: tiles 128 wide reduce whole tiles or groups of 16-byte chunks that tile them and the 512 output columns}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, batches = [#fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>], tile_reductions = <span = 256>>} : (tensor<?x64xf32>, tensor<512x64xf32>) -> tensor<?x512xf32>
  %1 = fusion.reduce sum %0 : tensor<?x512xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %1 : tensor<?x1xf32>
}

// -----

// 64-row tiles for batches of at most 64 rows need the epilogue batch norm
// that finishes them.
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{the batch GEMM config for up to 64 rows of an op with a batch norm must keep the op config's 128-row blocks, not 64 (or hold its batches in one block row, which the epilogue batch norm finishes)}}
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, batches = [#fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 4, group_m = 8>>]>} : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

// With it, but for more rows than one 64-row block row holds.
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @-3 {{the batch GEMM config for up to 128 rows of an op with a batch norm must keep the op config's 128-row blocks, not 64 (or hold its batches in one block row, which the epilogue batch norm finishes)}}
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, batches = [#fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 4, group_m = 8>>], epilogue_batch_norm = <max_rows = 128>>} : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}
