// A function of empty tensors is refused with a located error: a kernel
// would have no work to divide among its threads (the fusion ops'
// verifiers refuse empty matrices: test/Dialect/Fusion/invalid.mlir).
// PyTorch computes the empty result; fusion's front ends leave such layers
// to it.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics --fusion-select-gemm-config --fusion-lower-to-gpu

// expected-error @+1 {{'tensor<?x0xbf16>' has a zero-sized dimension; the GPU kernels take no empty tensors}}
func.func @passes_an_empty_tensor_on(%x: tensor<?x0xbf16>) -> tensor<?x0xbf16> {
  return %x : tensor<?x0xbf16>
}
