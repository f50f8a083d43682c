// fusion-select-gemm-config's tile-scheduler option: per_block gives the
// wgmma config and its batch configs (narrower tiles, split_k) a block a
// tile; persistent, the default, prints nothing. Kernels other than
// wgmma's keep their config (the option is a wgmma kernel's, as schedule
// and cluster are), and ping-pong is refused: its consumers take a
// block's tiles in turn.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90 tile-scheduler=per_block" | FileCheck %s --check-prefix=PER-BLOCK
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90" | FileCheck %s --check-prefix=DEFAULT
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=tiled target=sm_80 tile-scheduler=per_block" | FileCheck %s --check-prefix=TILED
// RUN: not fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90 schedule=pingpong tile-scheduler=per_block" 2>&1 | FileCheck %s --check-prefix=PINGPONG

// PER-BLOCK-LABEL: func.func @bf16
// PER-BLOCK: gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, tile_scheduler = per_block>
// PER-BLOCK-SAME: batches = [
// PER-BLOCK-SAME: tile_scheduler = per_block>>
// PER-BLOCK-NOT: >>,{{[^]]*}}group_m = 8>>
// DEFAULT-LABEL: func.func @bf16
// DEFAULT: gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>
// DEFAULT-NOT: tile_scheduler
// TILED-LABEL: func.func @bf16
// TILED: gemm = <mma_sync, mma = bf16, tile = 128x256, warps = 2x4, stages = 3, group_m = 8>
// TILED-NOT: tile_scheduler
// PINGPONG: error: option 'tile-scheduler=per_block' takes the cooperative schedule (ping-pong's consumers take a block's tiles in turn)
func.func @bf16(%x: tensor<?x1024xbf16>, %w: tensor<4096x1024xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x1024xbf16>, tensor<4096x1024xbf16>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}
