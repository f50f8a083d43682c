// Every fusion op round-trips through its pretty and its generic form.
// RUN: fusion-opt %s | fusion-opt | FileCheck %s
// RUN: fusion-opt %s -mlir-print-op-generic | fusion-opt | FileCheck %s

// CHECK-LABEL: func.func @linear
func.func @linear(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  // CHECK: fusion.linear %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %0 = fusion.linear %x, %w, %b : tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<?x4xf32>
  // CHECK: fusion.linear %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  return %0, %1 : tensor<?x4xf32>, tensor<?x4xf32>
}

// A weight stored [in_features, out_features] (x @ w): the layout is printed,
// nn.Linear's default is not.
// CHECK-LABEL: func.func @linear_in_out
func.func @linear_in_out(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  // CHECK: fusion.linear %{{.*}}, %{{.*}}, %{{.*}} weight_layout in_out : tensor<?x8xf32>, tensor<8x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %0 = fusion.linear %x, %w, %b weight_layout in_out : tensor<?x8xf32>, tensor<8x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
  // CHECK: fusion.fused_linear %{{.*}}, %{{.*}} weight_layout in_out epilogue
  %1 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  return %0, %1 : tensor<?x4xf32>, tensor<?x4xf32>
}

// CHECK-LABEL: func.func @linear_static_bf16
func.func @linear_static_bf16(%x: tensor<3x8xbf16>, %w: tensor<4x8xbf16>) -> tensor<3x4xbf16> {
  // CHECK: fusion.linear {{.*}} : tensor<3x8xbf16>, tensor<4x8xbf16> -> tensor<3x4xbf16>
  %0 = fusion.linear %x, %w : tensor<3x8xbf16>, tensor<4x8xbf16> -> tensor<3x4xbf16>
  return %0 : tensor<3x4xbf16>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<?x4xf16>, %s: tensor<4xf16>) -> tensor<?x4xf16> {
  // CHECK: %[[A:.*]] = fusion.mul_scalar %{{.*}}, -2.000000e+00 : tensor<?x4xf16>
  %0 = fusion.mul_scalar %x, -2.0 : tensor<?x4xf16>
  // CHECK: %[[B:.*]] = fusion.mul %[[A]], %{{.*}} : tensor<?x4xf16>, tensor<4xf16>
  %1 = fusion.mul %0, %s : tensor<?x4xf16>, tensor<4xf16>
  // CHECK: fusion.leaky_relu %[[B]], negative_slope = 1.500000e+00 : tensor<?x4xf16>
  %2 = fusion.leaky_relu %1, negative_slope = 1.5 : tensor<?x4xf16>
  return %2 : tensor<?x4xf16>
}

// CHECK-LABEL: func.func @batch_norm_training
func.func @batch_norm_training(%x: tensor<?x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>,
                               %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: fusion.batch_norm %{{.*}}, <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> weight(%{{.*}}) bias(%{{.*}}) running_stats(%{{.*}}, %{{.*}}) : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  %y, %mean, %var = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1>
      weight(%g) bias(%b) running_stats(%rm, %rv)
      : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y, %mean, %var : tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// The batch statistics follow the updated running statistics; without
// running statistics they are the only vectors. In f32 (PyTorch's type on
// GPUs) or the input's element type (on CPUs).
// CHECK-LABEL: func.func @batch_norm_batch_stats
func.func @batch_norm_batch_stats(%x: tensor<?x4xbf16>, %rm: tensor<4xbf16>, %rv: tensor<4xbf16>)
    -> (tensor<4xbf16>, tensor<4xf32>, tensor<4xbf16>) {
  // CHECK: %[[A:.*]], %[[AU:.*]]:2, %[[AB:.*]]:2 = fusion.batch_norm %{{.*}}, <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> running_stats(%{{.*}}, %{{.*}}) : (tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> (tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>)
  %a:5 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
      : (tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>)
      -> (tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>)
  // CHECK: %[[B:.*]], %[[BB:.*]]:2 = fusion.batch_norm %{{.*}}, <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> : (tensor<?x4xbf16>) -> (tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>)
  %b:3 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1>
      : (tensor<?x4xbf16>) -> (tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>)
  // CHECK: return %[[AU]]#0, %[[AB]]#1, %[[BB]]#1
  return %a#1, %a#4, %b#2 : tensor<4xbf16>, tensor<4xf32>, tensor<4xbf16>
}

// CHECK-LABEL: func.func @batch_norm_variants
func.func @batch_norm_variants(%x: tensor<8x4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  // No affine, no running stats: one result.
  // CHECK: fusion.batch_norm %{{.*}}, <training, epsilon = 1.000000e-03, momentum = 0.000000e+00> : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %0 = fusion.batch_norm %x, <training, epsilon = 1.0e-3, momentum = 0.0> : (tensor<8x4xf32>) -> tensor<8x4xf32>
  // CHECK: fusion.batch_norm %{{.*}}, <inference, epsilon = 1.000000e-05, momentum = 1.000000e-01> running_stats(%{{.*}}, %{{.*}}) : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %1 = fusion.batch_norm %x, <inference, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
      : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}

// CHECK-LABEL: func.func @fused_linear_identity
func.func @fused_linear_identity(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>) -> tensor<?x4xbf16> {
  // CHECK: fusion.fused_linear %{{.*}}, %{{.*}} epilogue {
  // CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32):
  // CHECK-NEXT: fusion.yield %[[ACC]] : f32
  // CHECK-NEXT: } : (tensor<?x8xbf16>, tensor<4x8xbf16>) -> tensor<?x4xbf16>
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xbf16>, tensor<4x8xbf16>) -> tensor<?x4xbf16>
  return %0 : tensor<?x4xbf16>
}

// CHECK-LABEL: func.func @fused_linear_full
func.func @fused_linear_full(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>,
                             %s: tensor<4xf32>, %g: tensor<4xf32>, %beta: tensor<4xf32>,
                             %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: fusion.fused_linear %{{.*}}, %{{.*}} bias(%{{.*}}) precision tf32 epilogue(%{{.*}}) {
  // CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[COL:.*]]: f32):
  // CHECK: arith.mulf %[[ACC]], %[[COL]] : f32
  // CHECK: } batch_norm <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> bn_weight(%{{.*}}) bn_bias(%{{.*}}) running_stats(%{{.*}}, %{{.*}}) : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  %y:3 = fusion.fused_linear %x, %w bias(%b) precision tf32 epilogue(%s) {
  ^bb0(%acc: f32, %col: f32):
    %0 = arith.mulf %acc, %col : f32
    %zero = arith.constant 0.0 : f32
    %slope = arith.constant 0.1 : f32
    %neg = arith.mulf %0, %slope : f32
    %pos = arith.cmpf oge, %0, %zero : f32
    %1 = arith.select %pos, %0, %neg : f32
    %2 = math.tanh %1 : f32
    fusion.yield %2 : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1>
    bn_weight(%g) bn_bias(%beta) running_stats(%rm, %rv)
    : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
       tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y#0, %y#1, %y#2 : tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Intermediate results: the epilogue yields the result's value, then one
// per intermediate (here the batch norm's input and the GEMM output); the
// result types list them between the result and the running statistics.
// CHECK-LABEL: func.func @fused_linear_intermediates
// CHECK: %[[Y:.*]]:5 = fusion.fused_linear %{{.*}}, %{{.*}} epilogue(%{{.*}}) {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[COL:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[ACC]], %[[COL]] : f32
// CHECK-NEXT: fusion.yield %[[M]], %[[M]], %[[ACC]] : f32, f32, f32
// CHECK-NEXT: } batch_norm <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> running_stats(%{{.*}}, %{{.*}}) : (tensor<?x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> (tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>)
// CHECK: return %[[Y]]#0, %[[Y]]#1, %[[Y]]#2, %[[Y]]#3, %[[Y]]#4
// CHECK-LABEL: func.func @fused_linear_one_intermediate
// CHECK: fusion.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK-NEXT: } : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
func.func @fused_linear_intermediates(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>, %s: tensor<4xbf16>,
                                      %rm: tensor<4xbf16>, %rv: tensor<4xbf16>)
    -> (tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>) {
  %y:5 = fusion.fused_linear %x, %w epilogue(%s) {
  ^bb0(%acc: f32, %col: f32):
    %0 = arith.mulf %acc, %col : f32
    fusion.yield %0, %0, %acc : f32, f32, f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
    : (tensor<?x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>)
    -> (tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>)
  return %y#0, %y#1, %y#2, %y#3, %y#4
      : tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>
}

func.func @fused_linear_one_intermediate(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %y:2 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %0 = math.tanh %acc : f32
    fusion.yield %0, %acc : f32, f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return %y#0, %y#1 : tensor<?x4xf32>, tensor<?x4xf32>
}

// A batch-norm stage's batch statistics come last, after the intermediates
// and the updated running statistics.
// CHECK-LABEL: func.func @fused_linear_batch_stats
// CHECK: %[[Y:.*]]:6 = fusion.fused_linear
// CHECK: } batch_norm <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> running_stats(%{{.*}}, %{{.*}}) : (tensor<?x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> (tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>)
// CHECK: return %[[Y]]#1, %[[Y]]#4, %[[Y]]#5
// CHECK-LABEL: func.func @fused_linear_batch_stats_only
// CHECK: } batch_norm <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
func.func @fused_linear_batch_stats(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>,
                                    %rm: tensor<4xbf16>, %rv: tensor<4xbf16>)
    -> (tensor<?x4xbf16>, tensor<4xf32>, tensor<4xf32>) {
  %y:6 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %0 = math.tanh %acc : f32
    fusion.yield %0, %0 : f32, f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
    : (tensor<?x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>, tensor<4xbf16>)
    -> (tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>)
  return %y#1, %y#4, %y#5 : tensor<?x4xbf16>, tensor<4xf32>, tensor<4xf32>
}

func.func @fused_linear_batch_stats_only(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>)
    -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %y:3 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1>
    : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y#0, %y#1, %y#2 : tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @fused_linear_inference_f16
func.func @fused_linear_inference_f16(%x: tensor<16x8xf16>, %w: tensor<4x8xf16>,
                                      %rm: tensor<4xf16>, %rv: tensor<4xf16>) -> tensor<16x4xf16> {
  // CHECK: fusion.fused_linear {{.*}} precision fp32 alpha -2.500000e-01 epilogue {
  // CHECK: } batch_norm <inference, epsilon = 1.000000e-05, momentum = 1.000000e-01> running_stats(%{{.*}}, %{{.*}}) : (tensor<16x8xf16>, tensor<4x8xf16>, tensor<4xf16>, tensor<4xf16>) -> tensor<16x4xf16>
  %y = fusion.fused_linear %x, %w precision fp32 alpha -0.25 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <inference, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
    : (tensor<16x8xf16>, tensor<4x8xf16>, tensor<4xf16>, tensor<4xf16>) -> tensor<16x4xf16>
  return %y : tensor<16x4xf16>
}

// A dual GEMM: the dual accumulator is the epilogue's last argument.
// CHECK-LABEL: func.func @fused_linear_dual_weight
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} dual_weight(%{{.*}}) epilogue(%{{.*}}) rows(%{{.*}}) {
// CHECK-NEXT: ^bb0(%acc: f32, %col: f32, %row: f32, %dual: f32):
// CHECK: } : (tensor<?x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>, tensor<?x1xbf16>) -> tensor<?x4xbf16>
func.func @fused_linear_dual_weight(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>, %w2: tensor<4x8xbf16>,
                                    %c: tensor<4xbf16>, %r: tensor<?x1xbf16>) -> tensor<?x4xbf16> {
  %y = fusion.fused_linear %x, %w dual_weight(%w2) epilogue(%c) rows(%r) {
  ^bb0(%acc: f32, %col: f32, %row: f32, %dual: f32):
    %0 = arith.mulf %acc, %dual : f32
    %1 = arith.addf %0, %col : f32
    %2 = arith.subf %1, %row : f32
    fusion.yield %2 : f32
  } : (tensor<?x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>, tensor<?x1xbf16>) -> tensor<?x4xbf16>
  return %y : tensor<?x4xbf16>
}

// CHECK-LABEL: func.func @relu
// CHECK: fusion.relu %{{.*}} : tensor<?x4xbf16>
func.func @relu(%x: tensor<?x4xbf16>) -> tensor<?x4xbf16> {
  %0 = fusion.relu %x : tensor<?x4xbf16>
  return %0 : tensor<?x4xbf16>
}

// The general elementwise op: its body is cloned as written, block
// arguments named after what they carry.
// CHECK-LABEL: func.func @elementwise_body
// CHECK: %[[Y:.*]] = fusion.elementwise %{{.*}} columns(%{{.*}}, %{{.*}} : tensor<4xbf16>, tensor<4xbf16>) : tensor<?x4xbf16> {
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[C0:.*]]: f32, %[[C1:.*]]: f32):
// CHECK-NEXT: %[[H:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[E:.*]] = math.erf %[[IN]] : f32
// CHECK-NEXT: %[[M:.*]] = math.fma %[[E]], %[[C0]], %[[C1]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.cmpf olt, %[[M]], %[[H]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.select %[[P]], %[[M]], %[[H]] : f32
// CHECK-NEXT: fusion.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK: fusion.elementwise %[[Y]] : tensor<?x4xbf16> {
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT: %[[A:.*]] = math.erf %[[V]] fastmath<afn> : f32
// CHECK-NEXT: %[[SN:.*]] = math.sin %[[A]] fastmath<afn> : f32
// CHECK-NEXT: %[[CS:.*]] = math.cos %[[SN]] fastmath<afn> : f32
// CHECK-NEXT: fusion.yield %[[CS]]
func.func @elementwise_body(%x: tensor<?x4xbf16>, %a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<?x4xbf16> {
  %0 = fusion.elementwise %x columns(%a, %b : tensor<4xbf16>, tensor<4xbf16>) : tensor<?x4xbf16> {
  ^bb0(%v: f32, %c0: f32, %c1: f32):
    %half = arith.constant 0.5 : f32
    %e = math.erf %v : f32
    %m = math.fma %e, %c0, %c1 : f32
    %p = arith.cmpf olt, %m, %half : f32
    %s = arith.select %p, %m, %half : f32
    fusion.yield %s : f32
  }
  %1 = fusion.elementwise %0 : tensor<?x4xbf16> {
  ^bb0(%v: f32):
    %approx = math.erf %v fastmath<afn> : f32
    %sine = math.sin %approx fastmath<afn> : f32
    %cosine = math.cos %sine fastmath<afn> : f32
    fusion.yield %cosine : f32
  }
  return %1 : tensor<?x4xbf16>
}

// Row operands: one value per row (G = 1), per group of columns (G = 2) and
// a whole matrix (G = N); reductions to one value per row and per group.
// CHECK-LABEL: func.func @rows_and_reductions
// CHECK: %[[MAX:.*]] = fusion.reduce max %{{.*}} : tensor<?x4xf32> -> tensor<?x1xf32> {
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32):
// CHECK-NEXT: fusion.yield %[[IN]] : f32
// CHECK: %[[SUMS:.*]] = fusion.reduce sum %{{.*}} columns(%{{.*}} : tensor<4xf32>) rows(%[[MAX]] : tensor<?x1xf32>) : tensor<?x4xf32> -> tensor<?x2xf32> {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: fusion.reduce min %{{.*}} : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK: fusion.elementwise %{{.*}} columns(%{{.*}} : tensor<4xf32>) rows(%[[MAX]], %[[SUMS]], %{{.*}} : tensor<?x1xf32>, tensor<?x2xf32>, tensor<?x4xf32>) : tensor<?x4xf32> {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
func.func @rows_and_reductions(%x: tensor<?x4xf32>, %c: tensor<4xf32>,
                               %r: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %max = fusion.reduce max %x : tensor<?x4xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %sums = fusion.reduce sum %x columns(%c : tensor<4xf32>)
      rows(%max : tensor<?x1xf32>) : tensor<?x4xf32> -> tensor<?x2xf32> {
  ^bb0(%v: f32, %col: f32, %m: f32):
    %0 = arith.subf %v, %m : f32
    %1 = math.exp %0 : f32
    %2 = arith.mulf %1, %col : f32
    fusion.yield %2 : f32
  }
  %same = fusion.reduce min %x : tensor<?x4xf32> -> tensor<?x4xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %y = fusion.elementwise %x columns(%c : tensor<4xf32>)
      rows(%max, %sums, %r : tensor<?x1xf32>, tensor<?x2xf32>, tensor<?x4xf32>)
      : tensor<?x4xf32> {
  ^bb0(%v: f32, %col: f32, %m: f32, %s: f32, %res: f32):
    %0 = arith.subf %v, %m : f32
    %1 = arith.divf %0, %s : f32
    %2 = arith.addf %1, %res : f32
    %3 = arith.mulf %2, %col : f32
    fusion.yield %3 : f32
  }
  %z = fusion.elementwise %y rows(%same : tensor<?x4xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %w: f32):
    %0 = arith.addf %v, %w : f32
    fusion.yield %0 : f32
  }
  return %z : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @fused_linear_rows
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} epilogue(%{{.*}}) rows(%{{.*}}) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
func.func @fused_linear_rows(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>,
                             %c: tensor<4xf32>, %r: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w epilogue(%c) rows(%r) {
  ^bb0(%acc: f32, %col: f32, %res: f32):
    %0 = arith.mulf %acc, %col : f32
    %1 = arith.addf %0, %res : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @concat
func.func @concat(%a: tensor<64x32xbf16>, %b: tensor<16x32xbf16>,
                  %c: tensor<32x8xf32>, %d: tensor<32x24xf32>,
                  %u: tensor<64xbf16>, %v: tensor<16xbf16>)
    -> (tensor<80x32xbf16>, tensor<32x32xf32>, tensor<80xbf16>) {
  // CHECK: fusion.concat %{{.*}}, %{{.*}} dim 0 : (tensor<64x32xbf16>, tensor<16x32xbf16>) -> tensor<80x32xbf16>
  %0 = fusion.concat %a, %b dim 0 : (tensor<64x32xbf16>, tensor<16x32xbf16>) -> tensor<80x32xbf16>
  // CHECK: fusion.concat %{{.*}}, %{{.*}} dim 1 : (tensor<32x8xf32>, tensor<32x24xf32>) -> tensor<32x32xf32>
  %1 = fusion.concat %c, %d dim 1 : (tensor<32x8xf32>, tensor<32x24xf32>) -> tensor<32x32xf32>
  // CHECK: fusion.concat %{{.*}}, %{{.*}} dim 0 : (tensor<64xbf16>, tensor<16xbf16>) -> tensor<80xbf16>
  %2 = fusion.concat %u, %v dim 0 : (tensor<64xbf16>, tensor<16xbf16>) -> tensor<80xbf16>
  return %0, %1, %2 : tensor<80x32xbf16>, tensor<32x32xf32>, tensor<80xbf16>
}

// A column operand of one element is a single value that every column
// reads (a scalar parameter), in each op that takes column operands.
// CHECK-LABEL: func.func @single_value_columns
// CHECK: fusion.mul %{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<1xf32>
// CHECK: fusion.elementwise %{{.*}} columns(%{{.*}}, %{{.*}} : tensor<1xf32>, tensor<4xf32>) : tensor<?x4xf32>
// CHECK: fusion.reduce max %{{.*}} columns(%{{.*}} : tensor<1xf32>) : tensor<?x4xf32> -> tensor<?x1xf32>
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} epilogue(%{{.*}}) {
// CHECK: } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<1xf32>) -> tensor<?x4xf32>
func.func @single_value_columns(%x: tensor<?x4xf32>, %s: tensor<1xf32>,
                                %c: tensor<4xf32>, %h: tensor<?x8xf32>,
                                %w: tensor<4x8xf32>)
    -> (tensor<?x4xf32>, tensor<?x1xf32>, tensor<?x4xf32>) {
  %0 = fusion.mul %x, %s : tensor<?x4xf32>, tensor<1xf32>
  %1 = fusion.elementwise %0 columns(%s, %c : tensor<1xf32>, tensor<4xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %one: f32, %col: f32):
    %2 = arith.minimumf %v, %one : f32
    %3 = arith.subf %2, %col : f32
    fusion.yield %3 : f32
  }
  %4 = fusion.reduce max %1 columns(%s : tensor<1xf32>) : tensor<?x4xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %one: f32):
    %5 = arith.mulf %v, %one : f32
    fusion.yield %5 : f32
  }
  %6 = fusion.fused_linear %h, %w epilogue(%s) {
  ^bb0(%acc: f32, %one: f32):
    %7 = arith.subf %acc, %one : f32
    fusion.yield %7 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<1xf32>) -> tensor<?x4xf32>
  return %1, %4, %6 : tensor<?x4xf32>, tensor<?x1xf32>, tensor<?x4xf32>
}

// A draw of uniform random numbers, as many rows as its rows_of.
// CHECK-LABEL: func.func @random_uniform
// CHECK: fusion.random_uniform seed(%{{.*}} : tensor<2xf32>) rows_of(%{{.*}} : tensor<?x8xbf16>) stream 3 : tensor<?x4xbf16>
func.func @random_uniform(%seed: tensor<2xf32>, %x: tensor<?x8xbf16>)
    -> tensor<?x4xbf16> {
  %0 = fusion.random_uniform seed(%seed : tensor<2xf32>) rows_of(%x : tensor<?x8xbf16>) stream 3 : tensor<?x4xbf16>
  return %0 : tensor<?x4xbf16>
}
