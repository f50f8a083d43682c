// RUN: fusion-opt %s --fusion-simplify -split-input-file | FileCheck %s

// Every rewrite is bit-exact for every input: the multiplier moves only
// where (t * s) * m == (t * m) * s for all t (s = -1, or s and m powers of
// two >= 1) and m >= 1.

// CHECK-LABEL: func.func @hoist_past_slope_minus_one
// CHECK-SAME: (%[[T:.*]]: tensor<?x4xf32>)
// CHECK: %[[M:.*]] = fusion.mul_scalar %[[T]], 3.000000e+00
// CHECK: %[[L:.*]] = fusion.leaky_relu %[[M]], negative_slope = -1.000000e+00
// CHECK: return %[[L]]
func.func @hoist_past_slope_minus_one(%t: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.leaky_relu %t, negative_slope = -1.0 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 3.0 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// Hoisting composes with the scalar mul already in front (2 * 4, exact).
// CHECK-LABEL: func.func @hoist_and_compose
// CHECK-SAME: (%[[T:.*]]: tensor<?x4xf32>)
// CHECK: %[[M:.*]] = fusion.mul_scalar %[[T]], 8.000000e+00
// CHECK: fusion.leaky_relu %[[M]], negative_slope = 2.000000e+00
func.func @hoist_and_compose(%t: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %t, 2.0 : tensor<?x4xf32>
  %1 = fusion.leaky_relu %0, negative_slope = 2.0 : tensor<?x4xf32>
  %2 = fusion.mul_scalar %1, 4.0 : tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}

// -----

// The usual slope: (t * 0.1) * 2 and (t * 2) * 0.1 differ (t * 2 overflows
// first for t near -FLT_MAX), so nothing moves.
// CHECK-LABEL: func.func @keep_inexact_slope
// CHECK-SAME: (%[[T:.*]]: tensor<?x4xf32>)
// CHECK: %[[L:.*]] = fusion.leaky_relu %[[T]], negative_slope = 1.000000e-01
// CHECK: %[[M:.*]] = fusion.mul_scalar %[[L]], 2.000000e+00
// CHECK: return %[[M]]
func.func @keep_inexact_slope(%t: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.leaky_relu %t, negative_slope = 0.1 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// m < 1 can underflow a tiny positive t to zero, which then takes the slope.
// CHECK-LABEL: func.func @keep_multiplier_below_one
// CHECK: %[[L:.*]] = fusion.leaky_relu %{{.*}}, negative_slope = -1.000000e+00
// CHECK: fusion.mul_scalar %[[L]], 5.000000e-01
func.func @keep_multiplier_below_one(%t: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.leaky_relu %t, negative_slope = -1.0 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 0.5 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// leaky_relu(m * t) != m * leaky_relu(t) for m < 0: nothing moves.
// CHECK-LABEL: func.func @keep_negative_multiplier
// CHECK-SAME: (%[[T:.*]]: tensor<?x4xf32>)
// CHECK: %[[L:.*]] = fusion.leaky_relu %[[T]]
// CHECK: %[[M:.*]] = fusion.mul_scalar %[[L]], -2.000000e+00
// CHECK: return %[[M]]
func.func @keep_negative_multiplier(%t: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.leaky_relu %t, negative_slope = -1.0 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, -2.0 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// The leaky_relu result is used elsewhere: hoisting would compute it twice.
// CHECK-LABEL: func.func @keep_shared_leaky_relu
// CHECK: %[[L:.*]] = fusion.leaky_relu
// CHECK: %[[M:.*]] = fusion.mul_scalar %[[L]], 2.000000e+00
// CHECK: return %[[L]], %[[M]]
func.func @keep_shared_leaky_relu(%t: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = fusion.leaky_relu %t, negative_slope = -1.0 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x4xf32>
  return %0, %1 : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// alpha = 1: round(sum * c) either way.
// CHECK-LABEL: func.func @alpha_without_bias
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} alpha -0.30000001192092896 epilogue {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32):
// CHECK-NEXT: fusion.yield %[[ACC]] : f32
func.func @alpha_without_bias(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %c = arith.constant -0.3 : f32
    %1 = arith.mulf %c, %acc : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// alpha = 4 and c = -2 compose exactly.
// CHECK-LABEL: func.func @alpha_composes_powers_of_two
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} alpha -8.000000e+00 epilogue {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32):
// CHECK-NEXT: fusion.yield %[[ACC]] : f32
func.func @alpha_composes_powers_of_two(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w alpha 4.0 epilogue {
  ^bb0(%acc: f32):
    %c = arith.constant -2.0 : f32
    %1 = arith.mulf %acc, %c : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// round(round(sum * 1e38) * 1e-38) is inf for sum >= 4, round(sum * 1.0)
// is not: it stays.
// CHECK-LABEL: func.func @alpha_keeps_inexact_composition
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} alpha 9.99999996802856{{[0-9]*}}E+37 epilogue {
// CHECK: arith.mulf
func.func @alpha_keeps_inexact_composition(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w alpha 9.9999999680285652E+37 epilogue {
  ^bb0(%acc: f32):
    %c = arith.constant 1.0e-38 : f32
    %1 = arith.mulf %c, %acc : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// c * (sum + bias) is not alpha * sum + bias.
// CHECK-LABEL: func.func @no_alpha_with_bias
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} bias(%{{.*}}) epilogue {
// CHECK: arith.mulf
func.func @no_alpha_with_bias(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) epilogue {
  ^bb0(%acc: f32):
    %c = arith.constant 2.0 : f32
    %1 = arith.mulf %acc, %c : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// The accumulator is read twice: only one of the reads is scaled.
// CHECK-LABEL: func.func @no_alpha_when_acc_reused
// CHECK-NOT: alpha
// CHECK: arith.mulf
func.func @no_alpha_when_acc_reused(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %c = arith.constant 2.0 : f32
    %1 = arith.mulf %acc, %c : f32
    %2 = arith.addf %1, %acc : f32
    fusion.yield %2 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A per-column multiplier is no scalar.
// CHECK-LABEL: func.func @no_alpha_for_column
// CHECK-NOT: alpha
// CHECK: arith.mulf
func.func @no_alpha_for_column(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %s: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w epilogue(%s) {
  ^bb0(%acc: f32, %col: f32):
    %1 = arith.mulf %acc, %col : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @batch_norm_inference_to_epilogue
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<4xf32>, %[[B:[a-z0-9]+]]: tensor<4xf32>, %[[RM:[a-z0-9]+]]: tensor<4xf32>, %[[RV:[a-z0-9]+]]: tensor<4xf32>)
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} epilogue(%[[RM]], %[[RV]], %[[G]], %[[B]]) {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[MEAN:.*]]: f32, %[[VAR:.*]]: f32, %[[GAMMA:.*]]: f32, %[[BETA:.*]]: f32):
// CHECK: %[[EPS:.*]] = arith.constant 1.000000e-03 : f32
// CHECK: %[[SHIFTED:.*]] = arith.addf %[[VAR]], %[[EPS]]
// CHECK: %[[INVSTD:.*]] = math.rsqrt %[[SHIFTED]]
// CHECK: %[[CENTERED:.*]] = arith.subf %[[ACC]], %[[MEAN]]
// CHECK: %[[NORM:.*]] = arith.mulf %[[CENTERED]], %[[INVSTD]]
// CHECK: %[[SCALED:.*]] = arith.mulf %[[NORM]], %[[GAMMA]]
// CHECK: %[[OUT:.*]] = arith.addf %[[SCALED]], %[[BETA]]
// CHECK: fusion.yield %[[OUT]]
// CHECK-NEXT: } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
func.func @batch_norm_inference_to_epilogue(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %g: tensor<4xf32>,
                                            %b: tensor<4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <inference, epsilon = 1.0e-03, momentum = 0.1> bn_weight(%g) bn_bias(%b) running_stats(%rm, %rv)
    : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Training needs statistics over all rows: the stage stays.
// CHECK-LABEL: func.func @batch_norm_training_stays
// CHECK: } batch_norm <training
func.func @batch_norm_training_stays(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
