// RUN: fusion-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @mul_scalar_by_one
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @mul_scalar_by_one(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, 1.0 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Multiplying by -1 is not the identity.
// CHECK-LABEL: func.func @mul_scalar_by_minus_one
// CHECK: fusion.mul_scalar %{{.*}}, -1.000000e+00
func.func @mul_scalar_by_minus_one(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, -1.0 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Scalar muls compose only where the result is bit-identical for every
// input (see fusion-simplify in docs/passes.md): a factor of +-1, or two
// powers of two >= 1 whose product is an f32.

// CHECK-LABEL: func.func @compose_powers_of_two
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: %[[Y:.*]] = fusion.mul_scalar %[[X]], -8.000000e+00 : tensor<?x4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @compose_powers_of_two(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, 2.0 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, -4.0 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @compose_minus_one
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: %[[Y:.*]] = fusion.mul_scalar %[[X]], -3.000000e-01 : tensor<?x4xf32>
// CHECK-NEXT: %[[Z:.*]] = fusion.mul_scalar %[[X]], -3.000000e+00 : tensor<?x4xf32>
// CHECK-NEXT: return %[[Y]], %[[Z]]
func.func @compose_minus_one(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = fusion.mul_scalar %x, -1.0 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 0.3 : tensor<?x4xf32>
  %2 = fusion.mul_scalar %x, 3.0 : tensor<?x4xf32>
  %3 = fusion.mul_scalar %2, -1.0 : tensor<?x4xf32>
  return %1, %3 : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// -1 * -1 composes to 1.0, which then folds away.
// CHECK-LABEL: func.func @compose_to_identity
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @compose_to_identity(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, -1.0 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, -1.0 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// x * 0.1 * 3 rounds twice: it differs from x * 0.3 in the last bit for
// about a third of the x in [-1, 1).
// CHECK-LABEL: func.func @keep_inexact_factor
// CHECK: fusion.mul_scalar %{{.*}}, 1.000000e-01
// CHECK-NEXT: fusion.mul_scalar %{{.*}}, 3.000000e+00
func.func @keep_inexact_factor(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, 0.1 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 3.0 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// (x * 1.3) * 2 rounds a subnormal product before doubling it.
// CHECK-LABEL: func.func @keep_power_of_two_after_inexact
// CHECK: fusion.mul_scalar %{{.*}}, 1.300000e+00
// CHECK-NEXT: fusion.mul_scalar %{{.*}}, 2.000000e+00
func.func @keep_power_of_two_after_inexact(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, 1.3 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// x * 0.125 * 0.5 rounds twice in the subnormal range, x * 0.0625 once:
// for x = 21 * 2^-149 they give 2^-148 and 2^-149.
// CHECK-LABEL: func.func @keep_powers_of_two_below_one
// CHECK: fusion.mul_scalar %{{.*}}, 1.250000e-01
// CHECK-NEXT: fusion.mul_scalar %{{.*}}, 5.000000e-01
func.func @keep_powers_of_two_below_one(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, 0.125 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 0.5 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// x * 2 * 0.5 overflows for |x| > 2^127, x * 1 does not.
// CHECK-LABEL: func.func @keep_up_then_down
// CHECK: fusion.mul_scalar %{{.*}}, 2.000000e+00
// CHECK-NEXT: fusion.mul_scalar %{{.*}}, 5.000000e-01
func.func @keep_up_then_down(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, 2.0 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 0.5 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// 2^100 * 2^100 is no f32: x * inf would be NaN for x = 0.
// CHECK-LABEL: func.func @keep_product_beyond_f32
// CHECK: fusion.mul_scalar %{{.*}}, 1.2676506002282294E+30
// CHECK-NEXT: fusion.mul_scalar %{{.*}}, 1.2676506002282294E+30
func.func @keep_product_beyond_f32(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, 1.2676506002282294e30 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 1.2676506002282294e30 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// A product that overflows double is not formed.
// CHECK-LABEL: func.func @compose_overflow
// CHECK: fusion.mul_scalar %{{.*}}, 1.000000e+300
// CHECK: fusion.mul_scalar %{{.*}}, 1.000000e+300
func.func @compose_overflow(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, 1.0e300 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 1.0e300 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @leaky_relu_slope_one
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @leaky_relu_slope_one(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.leaky_relu %x, negative_slope = 1.0 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @leaky_relu_other_slope
// CHECK: fusion.leaky_relu %{{.*}}, negative_slope = 1.000000e-01
func.func @leaky_relu_other_slope(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.leaky_relu %x, negative_slope = 0.1 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @mul_by_ones
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @mul_by_ones(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %ones = arith.constant dense<1.0> : tensor<4xf32>
  %0 = fusion.mul %x, %ones : tensor<?x4xf32>, tensor<4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @mul_by_twos
// CHECK: fusion.mul
func.func @mul_by_twos(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %twos = arith.constant dense<2.0> : tensor<4xf32>
  %0 = fusion.mul %x, %twos : tensor<?x4xf32>, tensor<4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @mul_by_argument
// CHECK: fusion.mul
func.func @mul_by_argument(%x: tensor<?x4xf32>, %s: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul %x, %s : tensor<?x4xf32>, tensor<4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @drop_unused_epilogue_operand
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<4xf32>, %[[T:[a-z0-9]+]]: tensor<4xf32>)
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} epilogue(%[[T]]) {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[COL:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[ACC]], %[[COL]]
// CHECK-NEXT: fusion.yield %[[P]]
func.func @drop_unused_epilogue_operand(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>,
                                        %s: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w epilogue(%s, %t) {
  ^bb0(%acc: f32, %unused: f32, %col: f32):
    %1 = arith.mulf %acc, %col : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// An unread dual accumulator: the dual GEMM goes too.
// CHECK-LABEL: func.func @drop_unused_dual_weight
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} epilogue {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32):
// CHECK: } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
func.func @drop_unused_dual_weight(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>,
                                   %w2: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w dual_weight(%w2) epilogue {
  ^bb0(%acc: f32, %dual: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A read dual accumulator stays (the negative case).
// CHECK-LABEL: func.func @keep_used_dual_weight
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} dual_weight(%{{.*}}) epilogue {
func.func @keep_used_dual_weight(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>,
                                 %w2: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w dual_weight(%w2) epilogue {
  ^bb0(%acc: f32, %dual: f32):
    %1 = arith.mulf %acc, %dual : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @keep_used_epilogue_operands
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} epilogue(%{{.*}}, %{{.*}}) {
func.func @keep_used_epilogue_operands(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>,
                                       %s: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w epilogue(%s, %t) {
  ^bb0(%acc: f32, %c0: f32, %c1: f32):
    %1 = arith.mulf %acc, %c0 : f32
    %2 = arith.addf %1, %c1 : f32
    fusion.yield %2 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Intermediate results nothing reads go, with their yielded values (the ops
// computing them then die); those read stay, the statistics too,
// and so do the config attributes.
// CHECK-LABEL: func.func @unread_intermediates
// CHECK: %[[F:.*]]:6 = fusion.fused_linear
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32):
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[ACC]] : f32
// CHECK-NEXT: fusion.yield %[[T]], %[[ACC]] : f32, f32
// CHECK-NEXT: } batch_norm <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> running_stats(%{{[^)]*}}) {keep = 1 : i64}
// CHECK-SAME: -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2, %[[F]]#3, %[[F]]#4, %[[F]]#5
func.func @unread_intermediates(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %y:7 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %0 = math.tanh %acc : f32
    %1 = math.exp %acc : f32
    fusion.yield %0, %1, %acc : f32, f32, f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv) {keep = 1}
    : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y#0, %y#2, %y#3, %y#4, %y#5, %y#6
      : tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Every intermediate read: nothing to drop.
// CHECK-LABEL: func.func @read_intermediates
// CHECK: %[[F:.*]]:2 = fusion.fused_linear
// CHECK: fusion.yield %{{.*}}, %{{.*}} : f32, f32
func.func @read_intermediates(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %y:2 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %0 = math.tanh %acc : f32
    fusion.yield %0, %acc : f32, f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return %y#0, %y#1 : tensor<?x4xf32>, tensor<?x4xf32>
}
