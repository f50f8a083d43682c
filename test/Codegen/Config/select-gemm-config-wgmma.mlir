// fusion-select-gemm-config and the Hopper kernel: strategy=wgmma picks it
// where it computes the op (sm_90, bf16/f16/tf32/3xTF32 multiplies, K rows
// of 16-byte multiples) and cuBLASLt elsewhere; auto picks it on sm_90 for
// f32 tensors in fp32, for outputs only reductions of rows or of groups
// its tiles hold whole read (any type) and for tf32 and 16-bit multiplies
// unless reductions read the written output, where K rows are whole
// 128-byte lines.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90" | FileCheck %s --check-prefix=WGMMA
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_90" | FileCheck %s --check-prefix=AUTO
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90 schedule=pingpong" | FileCheck %s --check-prefix=PINGPONG
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90 cluster=2" | FileCheck %s --check-prefix=CLUSTER

// schedule=pingpong: 128x128 tiles of one consumer warpgroup each (two
// m64n128 wgmmas a K step), up to 6 stages (32 KiB each); 3xTF32 keeps
// 64x128 (x's parts in registers cover 64 rows), 5 stages; the narrower
// tiles of small batches keep the schedule, with rings up to 8 stages; the spans of whole 8-column
// blocks that the registers reduce keep it too, narrower spans get the
// cooperative schedule; a row sum's tiles reduce spans of 64 columns,
// which the small batches' 128x64 tiles reduce too.
// PINGPONG-LABEL: func.func @fp32
// PINGPONG: gemm = <wgmma, mma = tf32x3, tile = 64x128, warps = 4x1, stages = 5, group_m = 8, schedule = pingpong>
// PINGPONG-SAME: #fusion.gemm_config<wgmma, mma = tf32x3, tile = 64x64, warps = 4x1, stages = 8, group_m = 8, schedule = pingpong>>
// PINGPONG-LABEL: func.func @bf16
// PINGPONG: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128, warps = 4x1, stages = 6, group_m = 8, schedule = pingpong>
// PINGPONG-SAME: #fusion.gemm_config<wgmma, mma = bf16, tile = 128x64, warps = 4x1, stages = 8, group_m = 8, schedule = pingpong>>
// PINGPONG-LABEL: func.func @tf32_reduced
// PINGPONG: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32, tile = 128x128, warps = 4x1, stages = 6, group_m = 8, schedule = pingpong>, batches = [#fusion.batch_gemm_config<max_rows = 4224, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x64, warps = 4x1, stages = 8, group_m = 8, schedule = pingpong>>], tile_reductions = <span = 64>
// PINGPONG-LABEL: func.func @tf32_groups
// PINGPONG: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32, tile = 128x128, warps = 4x1, stages = 6, group_m = 8, schedule = pingpong>{{.*}} tile_reductions = <span = 64>
// PINGPONG-LABEL: func.func @tf32_narrow_groups
// PINGPONG-NOT: pingpong
// PINGPONG: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>{{.*}} tile_reductions = <span = 4, min_rows = 33>

// cluster=2 runs the op configs' blocks in clusters of 2 that multicast
// w's tiles, where the tile reductions come from the registers; the small
// batches' configs, whose tiles are few, run their blocks alone.
// CLUSTER-LABEL: func.func @fp32
// CLUSTER: gemm = <wgmma, mma = tf32x3, tile = 128x128, warps = 8x1, stages = 4, group_m = 8, cluster = 2>
// CLUSTER-SAME: #fusion.gemm_config<wgmma, mma = tf32x3, tile = 128x64, warps = 8x1, stages = 7, group_m = 8>>
// CLUSTER-LABEL: func.func @tf32_groups
// CLUSTER: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, cluster = 2>{{.*}} tile_reductions = <span = 64, min_rows = 33>
// CLUSTER-LABEL: func.func @tf32_narrow_groups
// CLUSTER-NOT: cluster =
// CLUSTER: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>{{.*}} tile_reductions = <span = 4, min_rows = 33>

// Two consumer warpgroups; 128x256 tiles, 128x128 for 3xTF32 (each K slice
// summed apart) and narrow outputs; 4 stages fit the 227 KiB of sm_90.
// WGMMA-LABEL: func.func @fp32
// WGMMA: gemm = <wgmma, mma = tf32x3, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>
// WGMMA-LABEL: func.func @tf32
// WGMMA: gemm = <wgmma, mma = tf32, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>
// WGMMA-LABEL: func.func @bf16
// WGMMA: gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>
// WGMMA-LABEL: func.func @narrow
// WGMMA: gemm = <wgmma, mma = f16, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>
// f32 operands rounded to 16 bits and K rows TMA cannot load stay with
// cuBLASLt.
// WGMMA-LABEL: func.func @f32_in_f16
// WGMMA: gemm = <cublaslt>
// WGMMA-LABEL: func.func @unaligned_k
// WGMMA: gemm = <cublaslt>

// SM80-NOT: wgmma
// SM80-COUNT-23: gemm = <cublaslt>

// AUTO-LABEL: func.func @fp32
// AUTO: gemm = <wgmma, mma = tf32x3
// AUTO-LABEL: func.func @tf32
// AUTO: gemm = <wgmma, mma = tf32
// AUTO-LABEL: func.func @bf16
// AUTO: gemm = <wgmma, mma = bf16
// AUTO-LABEL: func.func @narrow
// AUTO: gemm = <wgmma, mma = f16
// AUTO-LABEL: func.func @f32_in_f16
// AUTO: gemm = <cublaslt>
// AUTO-LABEL: func.func @unaligned_k
// AUTO: gemm = <mma_sync, mma = tf32x3
// AUTO-LABEL: func.func @tf32_reduced
// AUTO: gemm = <wgmma, mma = tf32
// AUTO-LABEL: func.func @bf16_reduced
// AUTO: gemm = <wgmma, mma = bf16
// The output written for a reduction and another reader: cuBLASLt in tf32.
// AUTO-LABEL: func.func @tf32_centred
// AUTO: gemm = <cublaslt>
// Groups of 64 columns, four to a 256-column tile, are reduced from the
// tiles; groups of 96 straddle them, and the output is written.
// AUTO-LABEL: func.func @tf32_groups
// AUTO: gemm = <wgmma, mma = tf32
// AUTO-LABEL: func.func @tf32_straddling_groups
// AUTO: gemm = <cublaslt>
// A residual matrix or a row statistic in the epilogue: the wgmma kernel
// in every precision.
// AUTO-LABEL: func.func @tf32_residual
// AUTO: gemm = <wgmma, mma = tf32,
// AUTO-LABEL: func.func @fp32_residual
// AUTO: gemm = <wgmma, mma = tf32x3
// AUTO-LABEL: func.func @tf32_row_statistic
// AUTO: gemm = <wgmma, mma = tf32,
// AUTO-LABEL: func.func @bf16_residual
// AUTO: gemm = <wgmma, mma = bf16
// K rows that are not whole 128-byte lines (1000 bf16, 1000 f32) keep
// cuBLASLt, but for 3xTF32; strategy=wgmma takes them.
// AUTO-LABEL: func.func @bf16_line_unaligned_k
// AUTO: gemm = <cublaslt>
// AUTO-LABEL: func.func @tf32_line_unaligned_k
// AUTO: gemm = <cublaslt>
// AUTO-LABEL: func.func @fp32_line_unaligned_k
// AUTO: gemm = <wgmma, mma = tf32x3
// Accurate sines and cosines fuse like the other elementwise ops
// (fusion-expand-trigonometry keeps libdevice's range reduction out of
// line), as do approximate ones (16-bit results); accurate tangents in
// tf32, not with 16-bit results (its quotient), but for 3xTF32.
// AUTO-LABEL: func.func @tf32_sine
// AUTO: gemm = <wgmma, mma = tf32,
// AUTO-LABEL: func.func @bf16_cosine_tangent
// AUTO: gemm = <cublaslt>
// AUTO-LABEL: func.func @fp32_sine
// AUTO: gemm = <wgmma, mma = tf32x3
// AUTO-LABEL: func.func @bf16_approximate_sine_cosine
// AUTO: gemm = <wgmma, mma = bf16
// An accurate power (libdevice's powf, long even out of line) keeps
// cuBLASLt and an epilogue kernel, but for 3xTF32.
// AUTO-LABEL: func.func @tf32_power
// AUTO: gemm = <cublaslt>
// AUTO-LABEL: func.func @bf16_power
// AUTO: gemm = <cublaslt>
// AUTO-LABEL: func.func @fp32_power
// AUTO: gemm = <wgmma, mma = tf32x3
// AUTO-LABEL: func.func @tf32_tangent
// AUTO: gemm = <wgmma, mma = tf32,
// Past about 200 instructions an element (functions about 20, correctly
// rounded divisions 10, other ops 1: lgamma's formula about 260), cuBLASLt
// and an epilogue kernel, but for 3xTF32; nine functions and a division
// (190) stay fused.
// AUTO-LABEL: func.func @tf32_costly_epilogue
// AUTO: gemm = <cublaslt>
// AUTO-LABEL: func.func @fp32_costly_epilogue
// AUTO: gemm = <wgmma, mma = tf32x3
// AUTO-LABEL: func.func @tf32_epilogue_below_the_bound
// AUTO: gemm = <wgmma, mma = tf32,
// A special function, called out of line however short its formula, keeps
// cuBLASLt and an epilogue kernel, but for 3xTF32.
// AUTO-LABEL: func.func @tf32_special
// AUTO: gemm = <cublaslt>
// AUTO-LABEL: func.func @bf16_special
// AUTO: gemm = <cublaslt>
// AUTO-LABEL: func.func @fp32_special
// AUTO: gemm = <wgmma, mma = tf32x3
// WGMMA-LABEL: func.func @bf16_line_unaligned_k
// WGMMA: gemm = <wgmma, mma = bf16

func.func @fp32(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @tf32(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
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

func.func @narrow(%x: tensor<?x64xf16>, %w: tensor<96x64xf16>) -> tensor<?x96xf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf16>, tensor<96x64xf16>) -> tensor<?x96xf16>
  return %0 : tensor<?x96xf16>
}

func.func @f32_in_f16(%x: tensor<?x64xf32>, %w: tensor<96x64xf32>) -> tensor<?x96xf32> {
  %0 = fusion.fused_linear %x, %w precision f16 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  return %0 : tensor<?x96xf32>
}

func.func @unaligned_k(%x: tensor<?x30xf32>, %w: tensor<96x30xf32>) -> tensor<?x96xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x30xf32>, tensor<96x30xf32>) -> tensor<?x96xf32>
  return %0 : tensor<?x96xf32>
}

func.func @tf32_reduced(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x1xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  %1 = fusion.reduce sum %0 : tensor<?x256xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %1 : tensor<?x1xf32>
}

func.func @bf16_reduced(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x1xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
  %1 = fusion.reduce max %0 : tensor<?x256xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %1 : tensor<?x1xbf16>
}

func.func @tf32_centred(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  %1 = fusion.reduce sum %0 : tensor<?x256xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %2 = fusion.elementwise %0 rows(%1 : tensor<?x1xf32>) : tensor<?x256xf32> {
  ^bb0(%v: f32, %s: f32):
    %3 = arith.subf %v, %s : f32
    fusion.yield %3 : f32
  }
  return %2 : tensor<?x256xf32>
}

func.func @tf32_groups(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  %1 = fusion.reduce sum %0 : tensor<?x256xf32> -> tensor<?x4xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %1 : tensor<?x4xf32>
}

func.func @tf32_straddling_groups(%x: tensor<?x64xf32>, %w: tensor<384x64xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<384x64xf32>) -> tensor<?x384xf32>
  %1 = fusion.reduce sum %0 : tensor<?x384xf32> -> tensor<?x4xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %1 : tensor<?x4xf32>
}

func.func @tf32_residual(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>, %r: tensor<?x256xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue rows(%r) {
  ^bb0(%acc: f32, %v: f32):
    %1 = arith.addf %acc, %v : f32
    fusion.yield %1 : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>, tensor<?x256xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @fp32_residual(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>, %r: tensor<?x256xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32, %v: f32):
    %1 = arith.addf %acc, %v : f32
    fusion.yield %1 : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>, tensor<?x256xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @tf32_row_statistic(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>, %r: tensor<?x1xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue rows(%r) {
  ^bb0(%acc: f32, %v: f32):
    %1 = arith.addf %acc, %v : f32
    fusion.yield %1 : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>, tensor<?x1xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @bf16_residual(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>,
                         %r: tensor<?x256xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32, %res: f32):
    %1 = arith.addf %acc, %res : f32
    fusion.yield %1 : f32
  } : (tensor<?x64xbf16>, tensor<256x64xbf16>, tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// Groups of 4 columns (one 16-byte chunk of f32) are reduced over spans of
// 4 columns from the staged tile, which both ping-pong consumers would
// stage in the ring at once: the schedule stays cooperative there.
func.func @tf32_narrow_groups(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x64xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  %1 = fusion.reduce sum %0 : tensor<?x256xf32> -> tensor<?x64xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %1 : tensor<?x64xf32>
}

func.func @bf16_line_unaligned_k(%x: tensor<?x1000xbf16>, %w: tensor<256x1000xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x1000xbf16>, tensor<256x1000xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

func.func @tf32_line_unaligned_k(%x: tensor<?x1000xf32>, %w: tensor<256x1000xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x1000xf32>, tensor<256x1000xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @fp32_line_unaligned_k(%x: tensor<?x1000xf32>, %w: tensor<256x1000xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x1000xf32>, tensor<256x1000xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @tf32_sine(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    %s = math.sin %acc : f32
    fusion.yield %s : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @bf16_cosine_tangent(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %c = math.cos %acc fastmath<afn> : f32
    %t = math.tan %c : f32
    fusion.yield %t : f32
  } : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

func.func @fp32_sine(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %s = math.sin %acc : f32
    fusion.yield %s : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @bf16_approximate_sine_cosine(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %s = math.sin %acc fastmath<afn> : f32
    %c = math.cos %s fastmath<afn> : f32
    fusion.yield %c : f32
  } : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

func.func @tf32_power(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    %e = arith.constant 2.5 : f32
    %a = math.absf %acc : f32
    %p = math.powf %a, %e : f32
    fusion.yield %p : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @bf16_power(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %s = math.sin %acc fastmath<afn> : f32
    %p = math.powf %acc, %s : f32
    fusion.yield %p : f32
  } : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

func.func @fp32_power(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %e = arith.constant 2.5 : f32
    %a = math.absf %acc : f32
    %p = math.powf %a, %e : f32
    fusion.yield %p : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @tf32_tangent(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    %t = math.tan %acc : f32
    fusion.yield %t : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @tf32_costly_epilogue(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    %l0 = math.log %acc : f32
    %l1 = math.log %l0 : f32
    %l2 = math.log %l1 : f32
    %l3 = math.log %l2 : f32
    %l4 = math.log %l3 : f32
    %l5 = math.log %l4 : f32
    %l6 = math.log %l5 : f32
    %l7 = math.log %l6 : f32
    %l8 = math.log %l7 : f32
    %l9 = math.log %l8 : f32
    %d0 = arith.divf %l9, %acc : f32
    fusion.yield %d0 : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @fp32_costly_epilogue(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %l0 = math.log %acc : f32
    %l1 = math.log %l0 : f32
    %l2 = math.log %l1 : f32
    %l3 = math.log %l2 : f32
    %l4 = math.log %l3 : f32
    %l5 = math.log %l4 : f32
    %l6 = math.log %l5 : f32
    %l7 = math.log %l6 : f32
    %l8 = math.log %l7 : f32
    %l9 = math.log %l8 : f32
    %d0 = arith.divf %l9, %acc : f32
    fusion.yield %d0 : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @tf32_epilogue_below_the_bound(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    %l0 = math.log %acc : f32
    %l1 = math.log %l0 : f32
    %l2 = math.log %l1 : f32
    %l3 = math.log %l2 : f32
    %l4 = math.log %l3 : f32
    %l5 = math.log %l4 : f32
    %l6 = math.log %l5 : f32
    %l7 = math.log %l6 : f32
    %l8 = math.log %l7 : f32
    %d0 = arith.divf %l8, %acc : f32
    fusion.yield %d0 : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @tf32_special(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    %g = fusion.special "lgamma"(%acc) libdevice "__nv_lgammaf" : (f32) -> f32 {
    ^bb0(%t: f32):
      %l = math.log %t : f32
      fusion.yield %l : f32
    }
    fusion.yield %g : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

func.func @bf16_special(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %g = fusion.special "square"(%acc) : (f32) -> f32 {
    ^bb0(%t: f32):
      %q = arith.mulf %t, %t : f32
      fusion.yield %q : f32
    }
    fusion.yield %g : f32
  } : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

func.func @fp32_special(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>) -> tensor<?x256xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %g = fusion.special "lgamma"(%acc) libdevice "__nv_lgammaf" : (f32) -> f32 {
    ^bb0(%t: f32):
      %l = math.log %t : f32
      fusion.yield %l : f32
    }
    fusion.yield %g : f32
  } : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}
