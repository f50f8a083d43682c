// Workload (A), leaky_relu(linear(x) * m, slope), and its variants: the
// unfused program and the program after --fusion-optimize run through the CPU
// reference on the same pseudo-random inputs and must agree.
//
// DEFINE: %{entry} =
// DEFINE: %{rows} =
// DEFINE: %{rtol} =
// DEFINE: %{harness} = fusion-opt %s --fusion-generate-test-harness="entry=%{entry} rows=%{rows}"
// DEFINE: %{check} = %{harness} --fusion-lower-to-cpu | %run_cpu > %t.%{entry}.ref && %{harness} --fusion-optimize --fusion-lower-to-cpu | %run_cpu > %t.%{entry}.fused && %compare %t.%{entry}.ref %t.%{entry}.fused --rtol %{rtol} | FileCheck %s --check-prefix=CMP
//
// CMP-NOT: FAIL
// CMP: result 0: {{.*}}: ok
// CMP: PASS
//
// The structure after fusion: one fused_linear per chain, nothing else left.
// RUN: fusion-opt %s --fusion-optimize | FileCheck %s
//
// REDEFINE: %{entry} = workload_a
// REDEFINE: %{rows} = 64
// REDEFINE: %{rtol} = 1e-5
// RUN: %{check}
// REDEFINE: %{entry} = workload_a_ragged
// REDEFINE: %{rows} = 37
// RUN: %{check}
// REDEFINE: %{entry} = no_bias
// RUN: %{check}
// REDEFINE: %{entry} = negative_multiplier_no_bias
// RUN: %{check}
// REDEFINE: %{entry} = negative_multiplier
// RUN: %{check}
// REDEFINE: %{entry} = relu
// RUN: %{check}
// REDEFINE: %{entry} = slope_1_5
// RUN: %{check}
// REDEFINE: %{entry} = two_chains
// RUN: %{check}
// REDEFINE: %{entry} = shared_intermediate
// RUN: %{check}
// REDEFINE: %{entry} = per_column_scale
// RUN: %{check}
// REDEFINE: %{entry} = workload_a_tf32
// RUN: %{check}
// Half precision: the unfused program rounds after every op, the fused one
// once at the end, so they agree to the 16-bit type's precision.
// REDEFINE: %{entry} = workload_a_bf16
// REDEFINE: %{rtol} = 2e-2
// RUN: %{check}
// REDEFINE: %{entry} = workload_a_f16
// REDEFINE: %{rtol} = 5e-3
// RUN: %{check}

// The check can fail: moving -2.0 in front of leaky_relu, the rewrite that
// fusion-simplify refuses, changes the results.
// RUN: fusion-opt %s --fusion-generate-test-harness="entry=negative_multiplier_no_bias rows=37" --fusion-lower-to-cpu | %run_cpu > %t.right
// RUN: fusion-opt %s --fusion-generate-test-harness="entry=wrongly_commuted rows=37" --fusion-lower-to-cpu | %run_cpu > %t.wrong
// RUN: not %compare %t.right %t.wrong --rtol 1e-5 | FileCheck %s --check-prefix=WRONG
// WRONG: result 0: {{.*}}: too large
// WRONG: FAIL

// CHECK-LABEL: func.func @workload_a(
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} bias(%{{.*}}) epilogue {
// CHECK-NOT: fusion.{{(linear|mul_scalar|mul|leaky_relu|batch_norm) }}
// CHECK: return
func.func @workload_a(%x: tensor<?x96xf32>, %w: tensor<80x96xf32>, %b: tensor<80xf32>) -> tensor<?x80xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x96xf32>, tensor<80x96xf32>, tensor<80xf32> -> tensor<?x80xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x80xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x80xf32>
  return %2 : tensor<?x80xf32>
}

// CHECK-LABEL: func.func @workload_a_ragged(
// CHECK: fusion.fused_linear
// CHECK-NOT: fusion.{{(linear|mul_scalar|mul|leaky_relu|batch_norm) }}
// CHECK: return
func.func @workload_a_ragged(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %b: tensor<29xf32>) -> tensor<?x29xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xf32>, tensor<29x50xf32>, tensor<29xf32> -> tensor<?x29xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x29xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x29xf32>
  return %2 : tensor<?x29xf32>
}

// Without bias the multiplier commutes with leaky_relu and becomes alpha.
// CHECK-LABEL: func.func @no_bias(
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} alpha 2.000000e+00 epilogue {
// CHECK-NOT: arith.constant 2.0
// CHECK: return
func.func @no_bias(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>) -> tensor<?x29xf32> {
  %0 = fusion.linear %x, %w : tensor<?x50xf32>, tensor<29x50xf32> -> tensor<?x29xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x29xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x29xf32>
  return %2 : tensor<?x29xf32>
}

// A negative multiplier after leaky_relu must not move in front of it (nor
// into alpha): the CPU comparison would catch the wrong sign pattern.
// CHECK-LABEL: func.func @negative_multiplier_no_bias(
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} epilogue {
// CHECK: %[[M:.*]] = arith.constant -2.000000e+00 : f32
// CHECK: %[[S:.*]] = arith.select
// CHECK: %[[R:.*]] = arith.mulf %[[S]], %[[M]] : f32
// CHECK: fusion.yield %[[R]]
func.func @negative_multiplier_no_bias(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>) -> tensor<?x29xf32> {
  %0 = fusion.linear %x, %w : tensor<?x50xf32>, tensor<29x50xf32> -> tensor<?x29xf32>
  %1 = fusion.leaky_relu %0, negative_slope = 0.1 : tensor<?x29xf32>
  %2 = fusion.mul_scalar %1, -2.0 : tensor<?x29xf32>
  return %2 : tensor<?x29xf32>
}

// CHECK-LABEL: func.func @negative_multiplier(
// CHECK: fusion.fused_linear
// CHECK-NOT: alpha
// CHECK: return
func.func @negative_multiplier(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %b: tensor<29xf32>) -> tensor<?x29xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xf32>, tensor<29x50xf32>, tensor<29xf32> -> tensor<?x29xf32>
  %1 = fusion.mul_scalar %0, -2.0 : tensor<?x29xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x29xf32>
  return %2 : tensor<?x29xf32>
}

// CHECK-LABEL: func.func @relu(
func.func @relu(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %b: tensor<29xf32>) -> tensor<?x29xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xf32>, tensor<29x50xf32>, tensor<29xf32> -> tensor<?x29xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x29xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 0.0 : tensor<?x29xf32>
  return %2 : tensor<?x29xf32>
}

// CHECK-LABEL: func.func @slope_1_5(
func.func @slope_1_5(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %b: tensor<29xf32>) -> tensor<?x29xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xf32>, tensor<29x50xf32>, tensor<29xf32> -> tensor<?x29xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x29xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 1.5 : tensor<?x29xf32>
  return %2 : tensor<?x29xf32>
}

// An MLP: one fused op per chain.
// CHECK-LABEL: func.func @two_chains(
// CHECK-COUNT-2: fusion.fused_linear
// CHECK-NOT: fusion.{{(linear|mul_scalar|mul|leaky_relu|batch_norm|fused_linear) }}
// CHECK: return
func.func @two_chains(%x: tensor<?x50xf32>, %w1: tensor<64x50xf32>, %b1: tensor<64xf32>,
                      %w2: tensor<29x64xf32>, %b2: tensor<29xf32>) -> tensor<?x29xf32> {
  %0 = fusion.linear %x, %w1, %b1 : tensor<?x50xf32>, tensor<64x50xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x64xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x64xf32>
  %3 = fusion.linear %2, %w2, %b2 : tensor<?x64xf32>, tensor<29x64xf32>, tensor<29xf32> -> tensor<?x29xf32>
  %4 = fusion.mul_scalar %3, 0.5 : tensor<?x29xf32>
  %5 = fusion.leaky_relu %4, negative_slope = 0.2 : tensor<?x29xf32>
  return %5 : tensor<?x29xf32>
}

// The scaled value is also returned: the fused op returns it as an
// intermediate result beside the leaky_relu's, nothing is computed twice.
// CHECK-LABEL: func.func @shared_intermediate(
// CHECK: %[[F:.*]]:2 = fusion.fused_linear
// CHECK: %[[S:.*]] = arith.mulf
// CHECK: %[[L:.*]] = arith.select
// CHECK: fusion.yield %[[L]], %[[S]] : f32, f32
// CHECK-NOT: fusion.leaky_relu
// CHECK: return %[[F]]#1, %[[F]]#0
func.func @shared_intermediate(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %b: tensor<29xf32>)
    -> (tensor<?x29xf32>, tensor<?x29xf32>) {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xf32>, tensor<29x50xf32>, tensor<29xf32> -> tensor<?x29xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x29xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x29xf32>
  return %1, %2 : tensor<?x29xf32>, tensor<?x29xf32>
}

// CHECK-LABEL: func.func @per_column_scale(
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} bias(%{{.*}}) epilogue(%{{.*}}) {
func.func @per_column_scale(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %b: tensor<29xf32>,
                            %s: tensor<29xf32>) -> tensor<?x29xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xf32>, tensor<29x50xf32>, tensor<29xf32> -> tensor<?x29xf32>
  %1 = fusion.mul %0, %s : tensor<?x29xf32>, tensor<29xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x29xf32>
  %3 = fusion.mul_scalar %2, -3.0 : tensor<?x29xf32>
  return %3 : tensor<?x29xf32>
}

// Same chain, the fused op computed in tf32 on both sides.
// CHECK-LABEL: func.func @workload_a_tf32(
func.func @workload_a_tf32(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %b: tensor<29xf32>) -> tensor<?x29xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x50xf32>, tensor<29x50xf32>, tensor<29xf32>) -> tensor<?x29xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x29xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x29xf32>
  return %2 : tensor<?x29xf32>
}

// CHECK-LABEL: func.func @workload_a_bf16(
// CHECK: fusion.fused_linear
// CHECK: } : (tensor<?x50xbf16>
func.func @workload_a_bf16(%x: tensor<?x50xbf16>, %w: tensor<29x50xbf16>, %b: tensor<29xbf16>) -> tensor<?x29xbf16> {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xbf16>, tensor<29x50xbf16>, tensor<29xbf16> -> tensor<?x29xbf16>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x29xbf16>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x29xbf16>
  return %2 : tensor<?x29xbf16>
}

// CHECK-LABEL: func.func @workload_a_f16(
func.func @workload_a_f16(%x: tensor<?x50xf16>, %w: tensor<29x50xf16>, %b: tensor<29xf16>) -> tensor<?x29xf16> {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xf16>, tensor<29x50xf16>, tensor<29xf16> -> tensor<?x29xf16>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x29xf16>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x29xf16>
  return %2 : tensor<?x29xf16>
}

// CHECK-LABEL: func.func @wrongly_commuted(
func.func @wrongly_commuted(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>) -> tensor<?x29xf32> {
  %0 = fusion.linear %x, %w : tensor<?x50xf32>, tensor<29x50xf32> -> tensor<?x29xf32>
  %1 = fusion.mul_scalar %0, -2.0 : tensor<?x29xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x29xf32>
  return %2 : tensor<?x29xf32>
}
