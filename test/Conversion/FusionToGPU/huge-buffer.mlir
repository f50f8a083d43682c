// A buffer larger than any GPU memory (K = 2^63 - 1) is refused before the
// kernels index it (shared/reliability/tiled-k-int64max.mlir: its lowering
// used to print IR that did not re-parse).
// RUN: fusion-opt %s --verify-diagnostics --fusion-optimize --fusion-select-gemm-config=strategy=tiled --fusion-lower-to-gpu
// expected-error @+1 {{larger than any GPU's memory}}
func.func @f(%x: tensor<?x9223372036854775807xf32>, %w: tensor<16x9223372036854775807xf32>) -> tensor<?x16xf32> {
  %0 = fusion.linear %x, %w : tensor<?x9223372036854775807xf32>, tensor<16x9223372036854775807xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
