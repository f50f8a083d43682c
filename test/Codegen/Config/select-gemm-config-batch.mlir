// fusion-select-gemm-config's batch configs: where a batch of a few block
// rows leaves more than half of the SMs without a tile (132 on sm_90, 108
// on sm_80), batches up to max_rows get tiles half as wide (wgmma down to
// 64 columns, tiled 128x256 -> 128x128 of 2x2 warps), in increasing
// max_rows, then wgmma's 128x64 tiles 64x64 of one consumer warpgroup,
// and batches up to 64 rows 64-row tiles of the narrowest config's
// columns (a training batch norm's only up to 64 rows, which one block row
// holds and its epilogue batch norm finishes); batches up to 32
// and 16 rows wgmma tiles of 32 and 16 rows by 64 of w's with swapped
// operands where those fit the GPU in one wave, else up to 32 rows 32x128
// where those do (not for batch norms or tile reductions; 3xTF32's only 64
// of w's rows wide); wgmma's with rings as deep
// as shared memory holds, up to 8 stages of 128-row tiles, 12 of 64x64 and
// 16 of the swapped ones (a small batch's main loop waits on its loads); a
// static batch takes the fitting config itself.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90" | FileCheck %s --check-prefix=WGMMA
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=tiled target=sm_80" | FileCheck %s --check-prefix=TILED
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90 batch-configs=false" | FileCheck %s --check-prefix=OFF
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90 tile=128,256" | FileCheck %s --check-prefix=OFF

// 64 tiles of 128x256 at batch 128: 128 of 128x128; twice as many would
// not fit in one wave. Up to 64 rows, 64-row tiles of the narrowest
// columns: 64x128. 256 swapped tiles of 64 columns would take two waves:
// batches up to 32 rows take swapped 32x128 tiles (11 stages of 20 KiB).
// WGMMA-LABEL: func.func @bf16_16384
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>
// WGMMA-SAME: batches = [#fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = bf16, tile = 32x128, warps = 4x1, stages = 11, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x128, warps = 4x1, stages = 8, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 7, group_m = 8>>]
// Two steps: 64 columns up to 128 rows, 128 up to 256; 64x64 up to 64.
// WGMMA-LABEL: func.func @tf32_8192
// WGMMA: tile = 128x256
// WGMMA-SAME: batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = tf32, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = tf32, tile = 32x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = tf32, tile = 64x64, warps = 4x1, stages = 12, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x64, warps = 8x1, stages = 8, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 256, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x128, warps = 8x1, stages = 7, group_m = 8>>]
// 3xTF32 tiles are 128 wide; its swapped ones split x's stages (14 of 12
// KiB at 32 rows).
// WGMMA-LABEL: func.func @fp32_8192
// WGMMA: tile = 128x128
// WGMMA-SAME: batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 32x64, warps = 4x1, stages = 14, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 64x64, warps = 4x1, stages = 9, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 128x64, warps = 8x1, stages = 7, group_m = 8>>]
// 128 tiles of 128x256 fill the GPU from the first block row.
// WGMMA-LABEL: func.func @bf16_32768
// WGMMA-NOT: batches =
// WGMMA: tile = 128x256
// An output no wider than the narrower tiles gains nothing from them.
// WGMMA-LABEL: func.func @bf16_64
// WGMMA-NOT: batches =
// WGMMA: tile = 128x128
// A static batch takes its config: 128 rows the narrowest, 4096 the op's.
// WGMMA-LABEL: func.func @static_128
// WGMMA-NOT: batches =
// WGMMA: tile = 128x64
// WGMMA-LABEL: func.func @static_4096
// WGMMA-NOT: batches =
// WGMMA: tile = 128x256
// Row sums over whole tiles: the 128x256 tiles reduce spans of 64
// columns, which the narrower and 64-row tiles of the batch configs reduce
// too; sums of groups of 64 columns keep their spans. The swapped tiles of
// batches up to 32 rows, whose accumulators hold no rows of the tile,
// write the output for the row program: the tile reductions start at 33
// rows.
// WGMMA-LABEL: func.func @row_sums
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32, tile = 128x256, {{[^>]*}}>
// WGMMA-SAME: batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = tf32, tile = 16x64, {{.*}}, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = tf32, tile = 32x64, {{.*}}, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = tf32, tile = 64x64, {{.*}}>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x64, {{.*}}>>, #fusion.batch_gemm_config<max_rows = 256, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x128, {{.*}}>>]
// WGMMA-SAME: tile_reductions = <span = 64, min_rows = 33>
// WGMMA-LABEL: func.func @group_sums
// WGMMA: batches = [#fusion.batch_gemm_config<max_rows = 16, {{.*}}, #fusion.batch_gemm_config<max_rows = 32, {{.*}}, #fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = tf32, tile = 64x64, {{.*}}>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x64, {{.*}}>>, #fusion.batch_gemm_config<max_rows = 256, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x128, {{.*}}>>]
// WGMMA-SAME: tile_reductions = <span = 64, min_rows = 33>
// A static batch takes one config: a swapped one writes the output (no
// tile reductions), a larger one reduces its tiles from the first row.
// WGMMA-LABEL: func.func @static_row_sums_16
// WGMMA-NOT: tile_reductions
// WGMMA: tile = 16x64, {{.*}}, operands = w_x>>}
// WGMMA-NOT: tile_reductions
// WGMMA-LABEL: func.func @static_row_sums_100
// WGMMA: tile = 128x64, {{.*}}>, tile_reductions = <span = 64>>}
// 4096 columns: 64 tiles of 128x64 at batch 128 still leave half of the
// SMs idle; 64x64 tiles of one consumer warpgroup take up to 128 rows (a
// static batch of 64 too; 3xTF32's, with its split stages, 9 deep), but
// not in a batch norm's op.
// WGMMA-LABEL: func.func @bf16_4096
// WGMMA: batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = bf16, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = bf16, tile = 32x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 12, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 256, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x64, warps = 8x1, stages = 8, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 512, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 7, group_m = 8>>]
// WGMMA-LABEL: func.func @static_64
// WGMMA: tile = 64x64, warps = 4x1
// WGMMA-LABEL: func.func @static_16
// WGMMA: tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x
// A residual (an epilogue row operand) takes them too.
// WGMMA-LABEL: func.func @residual_4096
// WGMMA: batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = bf16, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = bf16, tile = 32x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 12, group_m = 8>>,
// WGMMA-LABEL: func.func @fp32_4096
// WGMMA: batches = [#fusion.batch_gemm_config<max_rows = 16, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 16x64, {{.*}}, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 32, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 32x64, {{.*}}, operands = w_x>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 64x64, warps = 4x1, stages = 9, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 256, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 128x64, {{.*}}>>]
// WGMMA-LABEL: func.func @batch_norm_4096
// WGMMA: batches = [#fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x64, {{.*}}>>, #fusion.batch_gemm_config<max_rows = 256, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x64, {{.*}}>>, #fusion.batch_gemm_config<max_rows = 512, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x128, {{.*}}>>], epilogue_batch_norm = <max_rows = 128>

// sm_80's 108 SMs: 32 tiles of 128x256 at 8192 columns leave room for 64
// of 128x128 up to 128 rows; 64 tiles at 16384 columns do not.
// TILED-LABEL: func.func @bf16_16384
// TILED-NOT: batches =
// TILED: tile = 128x256, warps = 2x4
// TILED-LABEL: func.func @tf32_8192
// TILED: tile = 128x256, warps = 2x4
// TILED-SAME: batches = [#fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<mma_sync, mma = tf32, tile = 128x128, warps = 2x2, stages = 4, group_m = 8>>]
// 3xTF32's 128x128 blocks of 2x4 warps have no narrower tiling.
// TILED-LABEL: func.func @fp32_8192
// TILED-NOT: batches =
// TILED: tile = 128x128, warps = 2x4

// OFF-NOT: batches =
// Without batch configs row sums keep spans of whole tiles.
// OFF: tile_reductions = <span = 256>
// OFF-NOT: batches =
// (A training batch norm's swapped config keeps an x_w entry for one block
// row, whatever the option: the last function.)
// OFF-LABEL: func.func @batch_norm_4096

func.func @bf16_16384(%x: tensor<?x64xbf16>, %w: tensor<16384x64xbf16>) -> tensor<?x16384xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<16384x64xbf16>) -> tensor<?x16384xbf16>
  return %0 : tensor<?x16384xbf16>
}

func.func @tf32_8192(%x: tensor<?x64xf32>, %w: tensor<8192x64xf32>) -> tensor<?x8192xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<8192x64xf32>) -> tensor<?x8192xf32>
  return %0 : tensor<?x8192xf32>
}

func.func @fp32_8192(%x: tensor<?x64xf32>, %w: tensor<8192x64xf32>) -> tensor<?x8192xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<8192x64xf32>) -> tensor<?x8192xf32>
  return %0 : tensor<?x8192xf32>
}

func.func @bf16_32768(%x: tensor<?x64xbf16>, %w: tensor<32768x64xbf16>) -> tensor<?x32768xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<32768x64xbf16>) -> tensor<?x32768xbf16>
  return %0 : tensor<?x32768xbf16>
}

func.func @bf16_64(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x64xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
  return %0 : tensor<?x64xbf16>
}

func.func @static_128(%x: tensor<128x64xbf16>, %w: tensor<8192x64xbf16>) -> tensor<128x8192xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<128x64xbf16>, tensor<8192x64xbf16>) -> tensor<128x8192xbf16>
  return %0 : tensor<128x8192xbf16>
}

func.func @static_4096(%x: tensor<4096x64xbf16>, %w: tensor<8192x64xbf16>) -> tensor<4096x8192xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<4096x64xbf16>, tensor<8192x64xbf16>) -> tensor<4096x8192xbf16>
  return %0 : tensor<4096x8192xbf16>
}

func.func @row_sums(%x: tensor<?x64xf32>, %w: tensor<8192x64xf32>) -> tensor<?x1xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<8192x64xf32>) -> tensor<?x8192xf32>
  %1 = fusion.reduce sum %0 : tensor<?x8192xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %1 : tensor<?x1xf32>
}

func.func @group_sums(%x: tensor<?x64xf32>, %w: tensor<8192x64xf32>) -> tensor<?x128xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<8192x64xf32>) -> tensor<?x8192xf32>
  %1 = fusion.reduce sum %0 : tensor<?x8192xf32> -> tensor<?x128xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %1 : tensor<?x128xf32>
}

func.func @static_row_sums_16(%x: tensor<16x64xf32>, %w: tensor<8192x64xf32>) -> tensor<16x1xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<16x64xf32>, tensor<8192x64xf32>) -> tensor<16x8192xf32>
  %1 = fusion.reduce sum %0 : tensor<16x8192xf32> -> tensor<16x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %1 : tensor<16x1xf32>
}

func.func @static_row_sums_100(%x: tensor<100x64xf32>, %w: tensor<8192x64xf32>) -> tensor<100x1xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<100x64xf32>, tensor<8192x64xf32>) -> tensor<100x8192xf32>
  %1 = fusion.reduce sum %0 : tensor<100x8192xf32> -> tensor<100x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %1 : tensor<100x1xf32>
}

func.func @bf16_4096(%x: tensor<?x64xbf16>, %w: tensor<4096x64xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<4096x64xbf16>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

func.func @static_64(%x: tensor<64x64xbf16>, %w: tensor<4096x64xbf16>) -> tensor<64x4096xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<64x64xbf16>, tensor<4096x64xbf16>) -> tensor<64x4096xbf16>
  return %0 : tensor<64x4096xbf16>
}

func.func @static_16(%x: tensor<16x64xbf16>, %w: tensor<4096x64xbf16>) -> tensor<16x4096xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<16x64xbf16>, tensor<4096x64xbf16>) -> tensor<16x4096xbf16>
  return %0 : tensor<16x4096xbf16>
}

func.func @residual_4096(%x: tensor<?x64xbf16>, %w: tensor<4096x64xbf16>, %r: tensor<?x4096xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32, %res: f32):
    %s = arith.addf %acc, %res : f32
    fusion.yield %s : f32
  } : (tensor<?x64xbf16>, tensor<4096x64xbf16>, tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

func.func @fp32_4096(%x: tensor<?x64xf32>, %w: tensor<4096x64xf32>) -> tensor<?x4096xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<4096x64xf32>) -> tensor<?x4096xf32>
  return %0 : tensor<?x4096xf32>
}

func.func @batch_norm_4096(%x: tensor<?x64xbf16>, %w: tensor<4096x64xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<?x64xbf16>, tensor<4096x64xbf16>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}
