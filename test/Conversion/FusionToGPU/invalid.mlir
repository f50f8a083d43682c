// RUN: fusion-opt %s --split-input-file --verify-diagnostics --fusion-select-gemm-config="strategy=cublas" --fusion-lower-to-gpu

func.func @unsupported_op(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'arith.addf' op cannot be compiled by the GPU backends}}
  %0 = arith.addf %x, %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{only the row dimension of 'tensor<4x?xf32>' may be dynamic}}
func.func @dynamic_columns(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  return %x : tensor<4x?xf32>
}

// -----

// expected-error @+1 {{'tensor<2x3x4xf32>' is not a 1-D or 2-D tensor of f32, bf16 or f16}}
func.func @rank_three(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  return %x : tensor<2x3x4xf32>
}

// -----

// expected-error @+1 {{no public function to compile}}
module {
  func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// The kernels compute a draw where they read it as a row operand; a draw
// that would have to be stored (here returned) is refused.
func.func @random_uniform_returned(%seed: tensor<2xf32>, %x: tensor<?x8xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'fusion.random_uniform' op is compiled by the GPU backends only as a row operand of elementwise, reduce or fused_linear ops, which compute it where they read it; it is not stored}}
  %0 = fusion.random_uniform seed(%seed : tensor<2xf32>) rows_of(%x : tensor<?x8xf32>) stream 0 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
