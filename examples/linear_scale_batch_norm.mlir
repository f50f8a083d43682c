// Workload (B): batch_norm_training(linear(x) * scale).
// nn.Linear(4096, 4096) with bias, a learned per-column `scale` of shape
// (4096,), then nn.BatchNorm1d(4096, eps=1e-5, momentum=0.1) in training mode
// (affine, tracking running stats), f32, batch 16384. Returns the normalized
// output and the updated running mean and variance.
func.func @linear_scale_batch_norm(
    %x: tensor<?x4096xf32>, %weight: tensor<4096x4096xf32>, %bias: tensor<4096xf32>,
    %scale: tensor<4096xf32>, %bn_weight: tensor<4096xf32>, %bn_bias: tensor<4096xf32>,
    %running_mean: tensor<4096xf32>, %running_var: tensor<4096xf32>)
    -> (tensor<?x4096xf32>, tensor<4096xf32>, tensor<4096xf32>) {
  %0 = fusion.linear %x, %weight, %bias
      : tensor<?x4096xf32>, tensor<4096x4096xf32>, tensor<4096xf32> -> tensor<?x4096xf32>
  %1 = fusion.mul %0, %scale : tensor<?x4096xf32>, tensor<4096xf32>
  %y, %new_mean, %new_var = fusion.batch_norm %1,
      <training, epsilon = 1.0e-05, momentum = 0.1>
      weight(%bn_weight) bias(%bn_bias) running_stats(%running_mean, %running_var)
      : (tensor<?x4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>)
      -> (tensor<?x4096xf32>, tensor<4096xf32>, tensor<4096xf32>)
  return %y, %new_mean, %new_var : tensor<?x4096xf32>, tensor<4096xf32>, tensor<4096xf32>
}
