// Every rule of fusion-verify-entry-points, one case each.
// RUN: fusion-opt %s -split-input-file --fusion-verify-entry-points -verify-diagnostics

// shared/reliability/f64-signature-says-float32.mlir: the signature file
// said float32.
// expected-error @+2 {{'func.func' op entry point argument #0 has type 'tensor<4xf64>'; entry-point tensors must have an f32, bf16 or f16 element type}}
// expected-error @+1 {{'func.func' op entry point result #0 has type 'tensor<4xf64>'; entry-point tensors must have an f32, bf16 or f16 element type}}
func.func @f(%s: tensor<4xf64>) -> tensor<4xf64> {
  return %s : tensor<4xf64>
}

// -----

// expected-error @+1 {{'func.func' op entry point argument #1 has type 'tensor<4xi32>'; entry-point tensors must have an f32, bf16 or f16 element type}}
func.func @f(%x: tensor<4xf32>, %i: tensor<4xi32>) {
  return
}

// -----

// expected-error @+1 {{'func.func' op entry point argument #0 has type 'f32'; entry points take and return ranked tensors}}
func.func @f(%s: f32) {
  return
}

// -----

// expected-error @+1 {{'func.func' op entry point result #0 has type 'tensor<*xf32>'; entry points take and return ranked tensors}}
func.func @f(%x: tensor<4xf32>) -> tensor<*xf32> {
  %0 = tensor.cast %x : tensor<4xf32> to tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// shared/reliability/huge-splat-constant.mlir: 8 GiB, out of memory.
func.func @f(%x: tensor<?x2147483648xf32>) -> tensor<?x2147483648xf32> {
  // expected-error @+1 {{'arith.constant' op has a constant of type 'tensor<2147483648xf32>' (8589934592 bytes) that is too large to materialize (the limit is 1073741824 bytes)}}
  %c = arith.constant dense<3.0> : tensor<2147483648xf32>
  %0 = fusion.mul %x, %c : tensor<?x2147483648xf32>, tensor<2147483648xf32>
  return %0 : tensor<?x2147483648xf32>
}

// -----

// A size that overflows int64, in a private function too.
// expected-error @+1 {{'func.func' op has a value of type 'tensor<4611686018427387904x4xf32>' whose size in bytes overflows int64}}
func.func private @g(%x: tensor<4611686018427387904x4xf32>) {
  return
}

// -----

func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'tensor.empty' op has a value of type 'tensor<4611686018427387904x4xf32>' whose size in bytes overflows int64}}
  %e = tensor.empty() : tensor<4611686018427387904x4xf32>
  return %x : tensor<?x4xf32>
}
