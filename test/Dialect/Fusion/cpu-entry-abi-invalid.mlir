// Types the memref ABI cannot take are refused, naming the type; the module
// is left unchanged.
// RUN: fusion-opt %s -split-input-file --fusion-cpu-entry-abi -verify-diagnostics

// shared/reliability/cpu-nontensor-arg.mlir
// expected-error @+1 {{'func.func' op argument #0 has type 'f32', which the CPU entry-point ABI cannot take: only ranked tensors can be passed as memrefs}}
func.func @f(%s: f32) {
  return
}

// -----

// shared/reliability/cpu-unranked-arg.mlir
// expected-error @+2 {{'func.func' op argument #0 has type 'tensor<*xf32>', which the CPU entry-point ABI cannot take}}
// expected-error @+1 {{'func.func' op result #0 has type 'tensor<*xf32>', which the CPU entry-point ABI cannot take}}
func.func @f(%x: tensor<*xf32>) -> tensor<*xf32> {
  return %x : tensor<*xf32>
}

// -----

// expected-error @+1 {{'func.func' op cannot be wrapped: its tensor body would be named @f__tensors, which is taken}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @f__tensors(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
