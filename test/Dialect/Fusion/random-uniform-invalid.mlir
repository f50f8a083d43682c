// Every verifier rule of fusion.random_uniform, one case each.
// RUN: fusion-opt %s -split-input-file -verify-diagnostics

func.func @seed_of_one_element(%seed: tensor<1xf32>, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{seed must be a tensor<2xf32> (64 bits), got 'tensor<1xf32>'}}
  %0 = fusion.random_uniform seed(%seed : tensor<1xf32>) rows_of(%x : tensor<?x8xf32>) stream 0 : tensor<?x4xf32>
  return
}

// -----

func.func @seed_of_bf16(%seed: tensor<2xbf16>, %x: tensor<?x8xbf16>) {
  // expected-error @+1 {{seed must be a tensor<2xf32> (64 bits), got 'tensor<2xbf16>'}}
  %0 = fusion.random_uniform seed(%seed : tensor<2xbf16>) rows_of(%x : tensor<?x8xbf16>) stream 0 : tensor<?x4xbf16>
  return
}

// -----

func.func @dynamic_columns(%seed: tensor<2xf32>, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{result 'tensor<?x?xf32>' must have a static, nonzero column dimension}}
  %0 = fusion.random_uniform seed(%seed : tensor<2xf32>) rows_of(%x : tensor<?x8xf32>) stream 0 : tensor<?x?xf32>
  return
}

// -----

func.func @other_rows(%seed: tensor<2xf32>, %x: tensor<16x8xf32>) {
  // expected-error @+1 {{rows_of 'tensor<16x8xf32>' has other rows than the result 'tensor<?x4xf32>'}}
  %0 = fusion.random_uniform seed(%seed : tensor<2xf32>) rows_of(%x : tensor<16x8xf32>) stream 0 : tensor<?x4xf32>
  return
}

// -----

func.func @negative_stream(%seed: tensor<2xf32>, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{attribute 'stream' failed to satisfy constraint}}
  %0 = fusion.random_uniform seed(%seed : tensor<2xf32>) rows_of(%x : tensor<?x8xf32>) stream -1 : tensor<?x4xf32>
  return
}
