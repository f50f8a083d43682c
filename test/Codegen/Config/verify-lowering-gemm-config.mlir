// The lowering-config verifier: a lowering's GEMM config's checks against its
// op and chip, each rule with its located diagnostic.
// RUN: fusion-opt %s --fusion-verify-lowering --split-input-file --verify-diagnostics

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  // expected-error @+1 {{'fusion.fused_linear' op mma kind tf32 does not compute 'f32' tensors in fp32 precision (that is tf32x3)}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = tf32, tile = 128x128, warps = 2x4, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  // expected-error @+1 {{'fusion.fused_linear' op mma kind f16 does not compute 'bf16' tensors in bf16 precision (that is bf16)}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = f16, tile = 128x128, warps = 2x4, stages = 3, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  // expected-error @+1 {{'fusion.fused_linear' op a simt GEMM computes f32 tensors in fp32 only, not 'f32' in tf32}}
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <simt, tile = 128x128, warps = 2x4, stages = 3, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

module attributes {fusion.target = #fusion.target<sm_86>} {
  func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
    // expected-error @+1 {{'fusion.fused_linear' op tiling 128x256 with 3 stages needs 147456 bytes of shared memory, sm_86 has 101376}}
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = bf16, tile = 128x256, warps = 2x4, stages = 3, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
    return %0 : tensor<?x48xbf16>
  }
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  // expected-error @+1 {{mma kind tf32 does not compute 'f32' tensors in bf16 precision (that is f32_as_bf16)}}
  %0 = fusion.fused_linear %x, %w precision bf16 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

func.func @f(%x: tensor<?x60xbf16>, %w: tensor<48x60xbf16>) -> tensor<?x48xbf16> {
  // expected-error @+1 {{a wgmma GEMM loads rows of x and w with TMA, whose rows must be multiples of 16 bytes; K = 60 of 'bf16' is not}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x60xbf16>, tensor<48x60xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

module attributes {fusion.target = #fusion.target<sm_80>} {
  func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
    // expected-error @+1 {{wgmma GEMM kernels need TMA and wgmma (sm_90), which sm_80 lacks}}
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
    return %0 : tensor<?x48xbf16>
  }
}

// -----

module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
    // expected-error @+1 {{tiling 128x256 with 6 stages needs 296040 bytes of shared memory, sm_90 has 232448}}
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 6, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
    return %0 : tensor<?x48xbf16>
  }
}

// -----

// Both ping-pong consumers would stage their tiles in the ring.
func.func @f(%x: tensor<?x64xf32>, %w: tensor<96x64xf32>) -> tensor<?x96xf32> {
  // expected-error @+1 {{tile reductions over spans of 12 columns: a pingpong wgmma kernel reduces spans of whole 8-column blocks, from its registers}}
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 64x96, warps = 4x1, stages = 4, group_m = 8, schedule = pingpong>, tile_reductions = <span = 12>>} : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  return %y : tensor<?x96xf32>
}

// -----

// K = 96 of f32 is 3 slices of 128 bytes, which 2 blocks cannot share
// evenly.
func.func @f(%x: tensor<?x96xf32>, %w: tensor<64x96xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{split_k 2 does not divide the 3 K slices of 128 bytes (K = 96 of 'f32')}}
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 8, group_m = 8, operands = w_x, split_k = 2>>} : (tensor<?x96xf32>, tensor<64x96xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// Only the cluster's first block runs the epilogue, which would stage its
// tile in the ring that its producer keeps filling.
func.func @f(%x: tensor<?x64xf32>, %w: tensor<96x64xf32>) -> tensor<?x96xf32> {
  // expected-error @+1 {{tile reductions over spans of 12 columns: a split_k wgmma kernel reduces spans of whole 8-column blocks, from its registers}}
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 64x96, warps = 4x1, stages = 4, group_m = 8, split_k = 2>, tile_reductions = <span = 12>>} : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  return %y : tensor<?x96xf32>
}

// -----

// The peer's multicast loads land in the ring, where the tile would be
// staged.
func.func @f(%x: tensor<?x64xf32>, %w: tensor<96x64xf32>) -> tensor<?x96xf32> {
  // expected-error @+1 {{tile reductions over spans of 12 columns: a clustered wgmma kernel reduces spans of whole 8-column blocks, from its registers}}
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 128x96, warps = 8x1, stages = 4, group_m = 8, cluster = 2>, tile_reductions = <span = 12>>} : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  return %y : tensor<?x96xf32>
}

// -----

// 3xTF32's buffer of w's remainders a stage counts against the chip's
// shared memory: 4 stages of 128x128 fit, 5 do not (they would in bf16).
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
    // expected-error @+1 {{tiling 128x128 with 5 stages needs}}
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 128x128, warps = 8x1, stages = 5, group_m = 8>>} : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
    return %0 : tensor<?x48xf32>
  }
}

// -----

// Hand-written generated configs for a weight stored [in_features,
// out_features] (N-major): only the wgmma kernel reads one, ...
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x48xbf16>) -> tensor<?x48xbf16> {
    // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (mma_sync) cannot read this weight stored in_out ([in_features, out_features]): only the wgmma kernel reads one}}
    %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = bf16, tile = 128x128, warps = 2x4, stages = 3, group_m = 8>>} : (tensor<?x64xbf16>, tensor<64x48xbf16>) -> tensor<?x48xbf16>
    return %0 : tensor<?x48xbf16>
  }
}

// -----

// ... of 16-bit operands or 3xTF32's (tf32's wgmma reads K-major only;
// 3xTF32's splitters transpose w's stages) ...
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xf32>, %w: tensor<64x48xf32>) -> tensor<?x48xf32> {
    // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (wgmma) cannot read this weight stored in_out ([in_features, out_features]): wgmma reads tf32 operands K-major only, not N-major (3xTF32's splitters transpose w's stages; tf32 has none)}}
    %0 = fusion.fused_linear %x, %w weight_layout in_out precision tf32 epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xf32>, tensor<64x48xf32>) -> tensor<?x48xf32>
    return %0 : tensor<?x48xf32>
  }
}

// -----

// ... not with swapped operands, whose 3xTF32 splits w in registers ...
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (wgmma) cannot read this weight stored in_out ([in_features, out_features]): 3xTF32 with swapped operands splits w's tile in registers, which it loads K-major only}}
    %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 4, group_m = 8, operands = w_x>>} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    return %0 : tensor<?x64xf32>
  }
}

// -----

// ... whose blocks each load whole boxes of 64 columns (a cluster of 2
// splits a 64-column tile into 32 each) ...
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x48xbf16>) -> tensor<?x48xbf16> {
    // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (wgmma) cannot read this weight stored in_out ([in_features, out_features]): each block loads its 32 columns of w's tile in boxes of 64 columns}}
    %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x64, warps = 8x1, stages = 4, group_m = 8, cluster = 2>>} : (tensor<?x64xbf16>, tensor<64x48xbf16>) -> tensor<?x48xbf16>
    return %0 : tensor<?x48xbf16>
  }
}

// -----

// ... from rows of N of whole 16-byte chunks (TMA's strides).
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x44xbf16>) -> tensor<?x44xbf16> {
    // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (wgmma) cannot read this weight stored in_out ([in_features, out_features]): its rows of N = 44 elements are not multiples of 16 bytes (TMA's strides)}}
    %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xbf16>, tensor<64x44xbf16>) -> tensor<?x44xbf16>
    return %0 : tensor<?x44xbf16>
  }
}

// -----

// The wgmma kernel reads a 16-bit one and 3xTF32's x_w tiles an f32 one
// (no diagnostic).
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xf32>, %w: tensor<64x48xf32>) -> tensor<?x48xf32> {
    %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xf32>, tensor<64x48xf32>) -> tensor<?x48xf32>
    return %0 : tensor<?x48xf32>
  }
}

// -----

module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x48xbf16>) -> tensor<?x48xbf16> {
    %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xbf16>, tensor<64x48xbf16>) -> tensor<?x48xbf16>
    return %0 : tensor<?x48xbf16>
  }
}
// -----

// Hand-written generated configs for a weight joined of parts (a grouped
// GEMM): only the wgmma kernel reads one in place ...
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xbf16>, %a: tensor<256x64xbf16>, %b: tensor<128x64xbf16>) -> tensor<?x384xbf16> {
    %w = fusion.concat %a, %b dim 0 : (tensor<256x64xbf16>, tensor<128x64xbf16>) -> tensor<384x64xbf16>
    // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (mma_sync) cannot read this weight in parts (a concat): only the wgmma kernel (a TMA map a part) and cuBLASLt (a GEMM a part) read one}}
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <mma_sync, mma = bf16, tile = 128x128, warps = 2x4, stages = 3, group_m = 8>>} : (tensor<?x64xbf16>, tensor<384x64xbf16>) -> tensor<?x384xbf16>
    return %0 : tensor<?x384xbf16>
  }
}

// -----

// ... whose tiles each lie within one part.
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xbf16>, %a: tensor<128x64xbf16>, %b: tensor<256x64xbf16>) -> tensor<?x384xbf16> {
    %w = fusion.concat %a, %b dim 0 : (tensor<128x64xbf16>, tensor<256x64xbf16>) -> tensor<384x64xbf16>
    // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (wgmma) cannot read this weight in parts (a concat): its parts do not start at whole tiles of 256 columns}}
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xbf16>, tensor<384x64xbf16>) -> tensor<?x384xbf16>
    return %0 : tensor<?x384xbf16>
  }
}

// -----

// ... and not beside a dual weight (whose tile is read whole).
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @f(%x: tensor<?x64xbf16>, %a: tensor<128x64xbf16>, %b: tensor<128x64xbf16>, %w2: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
    %w = fusion.concat %a, %b dim 0 : (tensor<128x64xbf16>, tensor<128x64xbf16>) -> tensor<256x64xbf16>
    // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (wgmma) cannot read this weight in parts (a concat): a dual GEMM's weights are read whole}}
    %0 = fusion.fused_linear %x, %w dual_weight(%w2) epilogue {
    ^bb0(%acc: f32, %dual: f32):
      %p = arith.mulf %acc, %dual : f32
      fusion.yield %p : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x64xbf16>, tensor<256x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
    return %0 : tensor<?x256xbf16>
  }
}
