// Workload (B), batch_norm(linear(x) * scale), and its variants: the unfused
// program and the program after --fusion-optimize run through the CPU
// reference on the same pseudo-random inputs and must agree, outputs and
// updated running statistics alike.
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
// RUN: fusion-opt %s --fusion-optimize | FileCheck %s
//
// REDEFINE: %{entry} = workload_b
// REDEFINE: %{rows} = 64
// REDEFINE: %{rtol} = 1e-5
// RUN: %{check}
// REDEFINE: %{entry} = workload_b_ragged
// REDEFINE: %{rows} = 37
// RUN: %{check}
// REDEFINE: %{entry} = no_affine
// RUN: %{check}
// REDEFINE: %{entry} = no_running_stats
// RUN: %{check}
// REDEFINE: %{entry} = inference
// RUN: %{check}
// REDEFINE: %{entry} = no_bias_negative_scale
// RUN: %{check}
// REDEFINE: %{entry} = mlp_then_batch_norm
// RUN: %{check}
// REDEFINE: %{entry} = shared_before_batch_norm
// RUN: %{check}
// REDEFINE: %{entry} = workload_b_bf16
// REDEFINE: %{rtol} = 2e-2
// RUN: %{check}

// CHECK-LABEL: func.func @workload_b(
// CHECK: %{{.*}}:3 = fusion.fused_linear %{{.*}}, %{{.*}} bias(%{{.*}}) epilogue(%{{.*}}) {
// CHECK: } batch_norm <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> bn_weight(%{{.*}}) bn_bias(%{{.*}}) running_stats(%{{.*}}, %{{.*}})
// CHECK-NOT: fusion.{{(linear|mul_scalar|mul|leaky_relu|batch_norm) }}
// CHECK: return
func.func @workload_b(%x: tensor<?x96xf32>, %w: tensor<80x96xf32>, %b: tensor<80xf32>, %s: tensor<80xf32>,
                      %g: tensor<80xf32>, %beta: tensor<80xf32>, %rm: tensor<80xf32>, %rv: tensor<80xf32>)
    -> (tensor<?x80xf32>, tensor<80xf32>, tensor<80xf32>) {
  %0 = fusion.linear %x, %w, %b : tensor<?x96xf32>, tensor<80x96xf32>, tensor<80xf32> -> tensor<?x80xf32>
  %1 = fusion.mul %0, %s : tensor<?x80xf32>, tensor<80xf32>
  %y:3 = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.1>
      weight(%g) bias(%beta) running_stats(%rm, %rv)
      : (tensor<?x80xf32>, tensor<80xf32>, tensor<80xf32>, tensor<80xf32>, tensor<80xf32>)
      -> (tensor<?x80xf32>, tensor<80xf32>, tensor<80xf32>)
  return %y#0, %y#1, %y#2 : tensor<?x80xf32>, tensor<80xf32>, tensor<80xf32>
}

// CHECK-LABEL: func.func @workload_b_ragged(
// CHECK: fusion.fused_linear
// CHECK-NOT: fusion.{{(linear|mul_scalar|mul|leaky_relu|batch_norm) }}
// CHECK: return
func.func @workload_b_ragged(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %b: tensor<29xf32>, %s: tensor<29xf32>,
                             %g: tensor<29xf32>, %beta: tensor<29xf32>, %rm: tensor<29xf32>, %rv: tensor<29xf32>)
    -> (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>) {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xf32>, tensor<29x50xf32>, tensor<29xf32> -> tensor<?x29xf32>
  %1 = fusion.mul %0, %s : tensor<?x29xf32>, tensor<29xf32>
  %y:3 = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.1>
      weight(%g) bias(%beta) running_stats(%rm, %rv)
      : (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>, tensor<29xf32>, tensor<29xf32>)
      -> (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>)
  return %y#0, %y#1, %y#2 : tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>
}

// CHECK-LABEL: func.func @no_affine(
// CHECK: batch_norm <training, epsilon = 1.000000e-03, momentum = 3.000000e-01> running_stats
func.func @no_affine(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %b: tensor<29xf32>, %s: tensor<29xf32>,
                     %rm: tensor<29xf32>, %rv: tensor<29xf32>)
    -> (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>) {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xf32>, tensor<29x50xf32>, tensor<29xf32> -> tensor<?x29xf32>
  %1 = fusion.mul %0, %s : tensor<?x29xf32>, tensor<29xf32>
  %y:3 = fusion.batch_norm %1, <training, epsilon = 1.0e-03, momentum = 0.3> running_stats(%rm, %rv)
      : (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>) -> (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>)
  return %y#0, %y#1, %y#2 : tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>
}

// CHECK-LABEL: func.func @no_running_stats(
// CHECK: batch_norm <training, {{.*}}> bn_weight(%{{.*}}) bn_bias(%{{.*}}) : {{.*}} -> tensor<?x29xf32>
func.func @no_running_stats(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %b: tensor<29xf32>, %s: tensor<29xf32>,
                            %g: tensor<29xf32>, %beta: tensor<29xf32>) -> tensor<?x29xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xf32>, tensor<29x50xf32>, tensor<29xf32> -> tensor<?x29xf32>
  %1 = fusion.mul %0, %s : tensor<?x29xf32>, tensor<29xf32>
  %y = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.1> weight(%g) bias(%beta)
      : (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>) -> tensor<?x29xf32>
  return %y : tensor<?x29xf32>
}

// Inference mode becomes a per-column affine epilogue: no stage is left.
// CHECK-LABEL: func.func @inference(
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} bias(%{{.*}}) epilogue(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {
// CHECK: math.rsqrt
// CHECK: } : (
// CHECK-NOT: batch_norm
// CHECK: return
func.func @inference(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %b: tensor<29xf32>, %s: tensor<29xf32>,
                     %g: tensor<29xf32>, %beta: tensor<29xf32>, %rm: tensor<29xf32>, %rv: tensor<29xf32>)
    -> tensor<?x29xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xf32>, tensor<29x50xf32>, tensor<29xf32> -> tensor<?x29xf32>
  %1 = fusion.mul %0, %s : tensor<?x29xf32>, tensor<29xf32>
  %y = fusion.batch_norm %1, <inference, epsilon = 1.0e-05, momentum = 0.1>
      weight(%g) bias(%beta) running_stats(%rm, %rv)
      : (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>, tensor<29xf32>, tensor<29xf32>) -> tensor<?x29xf32>
  return %y : tensor<?x29xf32>
}

// CHECK-LABEL: func.func @no_bias_negative_scale(
func.func @no_bias_negative_scale(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %rm: tensor<29xf32>, %rv: tensor<29xf32>)
    -> (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x50xf32>, tensor<29x50xf32> -> tensor<?x29xf32>
  %1 = fusion.mul_scalar %0, -2.0 : tensor<?x29xf32>
  %y:3 = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
      : (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>) -> (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>)
  return %y#0, %y#1, %y#2 : tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>
}

// Two chains, the second ending in batch norm.
// CHECK-LABEL: func.func @mlp_then_batch_norm(
// CHECK-COUNT-2: fusion.fused_linear
// CHECK-NOT: fusion.{{(linear|mul_scalar|mul|leaky_relu|batch_norm|fused_linear) }}
// CHECK: return
func.func @mlp_then_batch_norm(%x: tensor<?x50xf32>, %w1: tensor<40x50xf32>, %b1: tensor<40xf32>,
                               %w2: tensor<29x40xf32>, %s: tensor<29xf32>, %rm: tensor<29xf32>, %rv: tensor<29xf32>)
    -> (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>) {
  %0 = fusion.linear %x, %w1, %b1 : tensor<?x50xf32>, tensor<40x50xf32>, tensor<40xf32> -> tensor<?x40xf32>
  %1 = fusion.leaky_relu %0, negative_slope = 0.0 : tensor<?x40xf32>
  %2 = fusion.linear %1, %w2 : tensor<?x40xf32>, tensor<29x40xf32> -> tensor<?x29xf32>
  %3 = fusion.mul %2, %s : tensor<?x29xf32>, tensor<29xf32>
  %y:3 = fusion.batch_norm %3, <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
      : (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>) -> (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>)
  return %y#0, %y#1, %y#2 : tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>
}

// The value entering batch norm is also returned (as a training step saves
// it for the backward pass): the batch norm joins the fused op, which
// returns that value as an intermediate result.
// CHECK-LABEL: func.func @shared_before_batch_norm(
// CHECK: %[[F:.*]]:4 = fusion.fused_linear
// CHECK: %[[S:.*]] = arith.mulf
// CHECK: fusion.yield %[[S]], %[[S]] : f32, f32
// CHECK: } batch_norm <training
// CHECK-NOT: fusion.batch_norm
// CHECK: return %[[F]]#1, %[[F]]#0, %[[F]]#2, %[[F]]#3
func.func @shared_before_batch_norm(%x: tensor<?x50xf32>, %w: tensor<29x50xf32>, %s: tensor<29xf32>,
                                    %rm: tensor<29xf32>, %rv: tensor<29xf32>)
    -> (tensor<?x29xf32>, tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x50xf32>, tensor<29x50xf32> -> tensor<?x29xf32>
  %1 = fusion.mul %0, %s : tensor<?x29xf32>, tensor<29xf32>
  %y:3 = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
      : (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>) -> (tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>)
  return %1, %y#0, %y#1, %y#2 : tensor<?x29xf32>, tensor<?x29xf32>, tensor<29xf32>, tensor<29xf32>
}

// CHECK-LABEL: func.func @workload_b_bf16(
func.func @workload_b_bf16(%x: tensor<?x50xbf16>, %w: tensor<29x50xbf16>, %b: tensor<29xbf16>, %s: tensor<29xbf16>,
                           %g: tensor<29xbf16>, %beta: tensor<29xbf16>, %rm: tensor<29xbf16>, %rv: tensor<29xbf16>)
    -> (tensor<?x29xbf16>, tensor<29xbf16>, tensor<29xbf16>) {
  %0 = fusion.linear %x, %w, %b : tensor<?x50xbf16>, tensor<29x50xbf16>, tensor<29xbf16> -> tensor<?x29xbf16>
  %1 = fusion.mul %0, %s : tensor<?x29xbf16>, tensor<29xbf16>
  %y:3 = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.1>
      weight(%g) bias(%beta) running_stats(%rm, %rv)
      : (tensor<?x29xbf16>, tensor<29xbf16>, tensor<29xbf16>, tensor<29xbf16>, tensor<29xbf16>)
      -> (tensor<?x29xbf16>, tensor<29xbf16>, tensor<29xbf16>)
  return %y#0, %y#1, %y#2 : tensor<?x29xbf16>, tensor<29xbf16>, tensor<29xbf16>
}
