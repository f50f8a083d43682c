// A cluster size the wgmma kernels do not have is refused where the config
// is made; kernels that are not wgmma's take no cluster option.
// RUN: fusion-opt %s --verify-diagnostics --fusion-select-gemm-config="target=sm_90 strategy=wgmma cluster=3"
// RUN: fusion-opt %s --fusion-select-gemm-config="target=sm_90 strategy=tiled cluster=3" | FileCheck %s

// CHECK: gemm = <mma_sync, mma = bf16, tile = 128x128, warps = 2x2, stages = 4, group_m = 8>>}
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  // expected-error @+1 {{'fusion.fused_linear' op cluster 3: a wgmma kernel's blocks run alone or in clusters of 2 (cluster = 1 or 2)}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}
