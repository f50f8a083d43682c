// Workload (A): leaky_relu(linear(x) * 2.0, negative_slope = 0.1).
// nn.Linear(8192, 8192) with bias, f32, batch 1024. The batch dimension is
// dynamic so one compiled binary serves every batch size.
func.func @linear_leaky_relu(%x: tensor<?x8192xf32>, %weight: tensor<8192x8192xf32>,
                             %bias: tensor<8192xf32>) -> tensor<?x8192xf32> {
  %0 = fusion.linear %x, %weight, %bias
      : tensor<?x8192xf32>, tensor<8192x8192xf32>, tensor<8192xf32> -> tensor<?x8192xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x8192xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x8192xf32>
  return %2 : tensor<?x8192xf32>
}
