// Every rule of #fusion.gemm_config and #fusion.target, with its located
// diagnostic.
// The checks against the op and the chip: test/Codegen/Config/verify-lowering-*.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{a cublaslt GEMM config takes no mma kind or tiling}}
  } {fusion.lowering = #fusion.lowering<gemm = <cublaslt, stages = 3>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{an mma_sync GEMM config needs an mma kind}}
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, tile = 128x128, warps = 2x4, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{a simt GEMM config takes no mma kind (it multiplies with f32 fma)}}
  } {fusion.lowering = #fusion.lowering<gemm = <simt, mma = tf32, tile = 128x128, warps = 2x4, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tile rows 8 is out of range [16, 1024]}}
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 8x128, warps = 2x4, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tile columns 2048 is out of range [16, 1024]}}
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 128x2048, warps = 2x4, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{warps along M 0 is out of range [1, 32]}}
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 128x128, warps = 0x4, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{warps along N 64 is out of range [1, 32]}}
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 128x128, warps = 2x64, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{stages 1 is out of range [2, 16]}}
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 128x128, warps = 2x4, stages = 1, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{group_m 0 is out of range [1, 64]}}
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 128x128, warps = 2x4, stages = 3, group_m = 0>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 512x512 with 32x2 warps: 2048 threads, more than 1024 per block}}
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 512x512, warps = 32x2, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 128x120 with 2x4 warps: warp tiles must be multiples of 16x16}}
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 128x120, warps = 2x4, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 16x128 with 1x8 warps: each thread must copy the same number of 16-byte chunks}}
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32x3, tile = 16x128, warps = 1x8, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 16x256 with 1x16 warps: the SIMT thread grid (16 threads along N) must divide the block tile}}
  } {fusion.lowering = #fusion.lowering<gemm = <simt, tile = 16x256, warps = 1x16, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

// expected-error @+1 {{unknown GEMM backend 'tcgen05' (expected cublaslt, mma_sync, simt or wgmma)}}
#config = #fusion.gemm_config<tcgen05>

// -----

// expected-error @+1 {{unknown GEMM config key 'tiles' (expected mma, tile, warps, stages, group_m, schedule, cluster, operands, split_k or tile_scheduler)}}
#config = #fusion.gemm_config<mma_sync, tiles = 128x128>

// -----

// expected-error @+1 {{unknown mma kind 'fp8' (expected bf16, f16, tf32, tf32x3, f32_as_bf16 or f32_as_f16)}}
#config = #fusion.gemm_config<mma_sync, mma = fp8>

// -----

// expected-error @+1 {{expected two extents, MxN}}
#config = #fusion.gemm_config<mma_sync, tile = 128x128x2>

// -----

// expected-error @+2 {{expected ::mlir::fusion::Chip to be one of: sm_80, sm_86, sm_89, sm_90}}
// expected-error @+1 {{failed to parse Fusion_TargetAttr parameter 'chip'}}
module attributes {fusion.target = #fusion.target<sm_60>} {}

// -----

// expected-error @+1 {{'fusion.target' must be a #fusion.target}}
module attributes {fusion.target = "sm_90"} {}

// -----

// expected-error @+1 {{'fusion.lowering' must be a #fusion.lowering on a fusion.fused_linear}}
module attributes {fusion.lowering = #fusion.lowering<gemm = <cublaslt>>} {}

// -----

// expected-error @+1 {{unknown fusion attribute 'fusion.tile'}}
module attributes {fusion.tile = 3} {}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{an wgmma GEMM config needs an mma kind}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{a wgmma GEMM config multiplies with bf16, f16, tf32 or tf32x3, not f32_as_bf16}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = f32_as_bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 128x256 with 2x4 warps: a wgmma kernel has one or two consumer warpgroups (warps = 4x1 or 8x1)}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 2x4, stages = 4, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 192x128 with 8x1 warps: each consumer warpgroup computes 64 or 128 rows}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 192x128, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

// 128 rows of 256 columns: 256 accumulators a thread.
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 256x256 with 8x1 warps: a consumer warpgroup of 128 rows multiplies at most 128 columns, and not in tf32x3}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 256x256, warps = 8x1, stages = 2, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

// 3xTF32 holds x's parts of 64 rows in registers.
func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 128x128 with 4x1 warps: a consumer warpgroup of 128 rows multiplies at most 128 columns, and not in tf32x3}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 128x128, warps = 4x1, stages = 3, group_m = 8, schedule = pingpong>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 128x320 with 8x1 warps: wgmma tiles have at most 256 columns, a multiple of 16}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x320, warps = 8x1, stages = 2, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

// expected-error @+1 {{unknown schedule 'stream_k' (expected cooperative or pingpong)}}
#config = #fusion.gemm_config<wgmma, mma = bf16, schedule = stream_k>

// -----

// expected-error @+1 {{a pingpong schedule is a wgmma kernel's whose tiles are one warpgroup's (warps = 4x1)}}
#config = #fusion.gemm_config<mma_sync, mma = bf16, tile = 64x256, warps = 4x1, stages = 4, group_m = 8, schedule = pingpong>

// -----

// expected-error @+1 {{a pingpong schedule is a wgmma kernel's whose tiles are one warpgroup's (warps = 4x1)}}
#config = #fusion.gemm_config<wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, schedule = pingpong>

// -----

// expected-error @+1 {{cluster 2: a wgmma kernel's blocks run alone or in clusters of 2 (cluster = 1 or 2)}}
#config = #fusion.gemm_config<mma_sync, mma = bf16, tile = 128x256, warps = 2x4, stages = 4, group_m = 8, cluster = 2>

// -----

// expected-error @+1 {{cluster 4: a wgmma kernel's blocks run alone or in clusters of 2 (cluster = 1 or 2)}}
#config = #fusion.gemm_config<wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, cluster = 4>

// -----

// expected-error @+1 {{cluster 0: a wgmma kernel's blocks run alone or in clusters of 2 (cluster = 1 or 2)}}
#config = #fusion.gemm_config<wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, cluster = 0>

// -----

// expected-error @+1 {{split_k 3: a cooperative, unclustered wgmma kernel's clusters of 2 or 4 blocks share a tile's K slices}}
#config = #fusion.gemm_config<wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 8, group_m = 8, split_k = 3>

// -----

// expected-error @+1 {{split_k 0: a cooperative, unclustered wgmma kernel's clusters of 2 or 4 blocks share a tile's K slices}}
#config = #fusion.gemm_config<wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 8, group_m = 8, split_k = 0>

// -----

// expected-error @+1 {{split_k 2: a cooperative, unclustered wgmma kernel's clusters of 2 or 4 blocks share a tile's K slices}}
#config = #fusion.gemm_config<mma_sync, mma = bf16, tile = 128x128, warps = 2x2, stages = 4, group_m = 8, split_k = 2>

// -----

// expected-error @+1 {{split_k 2: a cooperative, unclustered wgmma kernel's clusters of 2 or 4 blocks share a tile's K slices}}
#config = #fusion.gemm_config<wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, cluster = 2, split_k = 2>

// -----

// expected-error @+1 {{split_k 2: a cooperative, unclustered wgmma kernel's clusters of 2 or 4 blocks share a tile's K slices}}
#config = #fusion.gemm_config<wgmma, mma = bf16, tile = 128x128, warps = 4x1, stages = 4, group_m = 8, schedule = pingpong, split_k = 2>

// -----

// operands = w_x: the warpgroups split the tile's columns, each wgmma's N
// is the tile's rows.
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{unknown operands 'y_x' (expected x_w or w_x)}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, operands = y_x>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{operands = w_x is a cooperative, unclustered wgmma kernel's}}
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = bf16, tile = 128x256, warps = 2x4, stages = 4, group_m = 8, operands = w_x>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{operands = w_x is a cooperative, unclustered wgmma kernel's}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128, warps = 4x1, stages = 6, group_m = 8, schedule = pingpong, operands = w_x>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{operands = w_x is a cooperative, unclustered wgmma kernel's}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, cluster = 2, operands = w_x>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 32x128 with 4x1 warps: a consumer warpgroup of 128 columns multiplies at most 128 rows, and not in tf32x3}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 32x128, warps = 4x1, stages = 4, group_m = 8, operands = w_x>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 128x192 with 8x1 warps: each consumer warpgroup computes 64 or 128 columns}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x192, warps = 8x1, stages = 4, group_m = 8, operands = w_x>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 512x128 with 8x1 warps: wgmma tiles have at most 256 rows, a multiple of 16}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 512x128, warps = 8x1, stages = 2, group_m = 8, operands = w_x>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

// 256 columns of 256 rows: 256 accumulators a thread.
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  // expected-error @+1 {{tiling 256x256 with 8x1 warps: a consumer warpgroup of 128 columns multiplies at most 128 rows, and not in tf32x3}}
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 256x256, warps = 8x1, stages = 2, group_m = 8, operands = w_x>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

// expected-error @+1 {{tile_scheduler = per_block is a cooperative wgmma kernel's (ping-pong's consumers take a block's tiles in turn)}}
#config = #fusion.gemm_config<wgmma, mma = bf16, tile = 128x128, warps = 4x1, stages = 4, group_m = 8, schedule = pingpong, tile_scheduler = per_block>

// -----

// expected-error @+1 {{tile_scheduler = per_block is a cooperative wgmma kernel's (ping-pong's consumers take a block's tiles in turn)}}
#config = #fusion.gemm_config<mma_sync, mma = bf16, tile = 128x128, warps = 2x2, stages = 4, group_m = 8, tile_scheduler = per_block>

// -----

// expected-error @+1 {{unknown tile scheduler 'dynamic' (expected persistent or per_block)}}
#config = #fusion.gemm_config<wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, tile_scheduler = dynamic>
