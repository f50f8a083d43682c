// Two GEMMs of one input become one dual GEMM (dual_weight): the GEMM that
// only the other's epilogue reads moves into it, applied to the dual
// accumulator, its value rounded to the element type as storing it was.
// RUN: fusion-opt %s --fusion-fuse-linear-epilogues -split-input-file | FileCheck %s

// A gated MLP's act(gate) * up, in bf16: the up projection (with its bias,
// now an epilogue column) is the dual GEMM; its value is rounded to bf16.
// CHECK-LABEL: func.func @gated
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xbf16>, %[[WG:.*]]: tensor<96x64xbf16>, %[[WU:.*]]: tensor<96x64xbf16>, %[[BU:.*]]: tensor<96xbf16>)
// CHECK: %[[F:.*]] = fusion.fused_linear %[[X]], %[[WG]] dual_weight(%[[WU]]) epilogue(%[[BU]]) {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[COL:.*]]: f32, %[[DUAL:.*]]: f32):
// CHECK: %[[U:.*]] = arith.addf %[[DUAL]], %[[COL]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[U]] : f32 to bf16
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[R]] : bf16 to f32
// CHECK: math.exp
// CHECK: arith.mulf %{{.*}}, %[[E]] : f32
// CHECK: fusion.yield
// CHECK-NOT: fusion.linear
// CHECK-NOT: fusion.fused_linear
// CHECK: return %[[F]]
func.func @gated(%x: tensor<?x64xbf16>, %wg: tensor<96x64xbf16>, %wu: tensor<96x64xbf16>, %bu: tensor<96xbf16>) -> tensor<?x96xbf16> {
  %g = fusion.linear %x, %wg : tensor<?x64xbf16>, tensor<96x64xbf16> -> tensor<?x96xbf16>
  %u = fusion.linear %x, %wu, %bu : tensor<?x64xbf16>, tensor<96x64xbf16>, tensor<96xbf16> -> tensor<?x96xbf16>
  %s = fusion.elementwise %g : tensor<?x96xbf16> {
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %v : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %q = arith.divf %v, %d : f32
    fusion.yield %q : f32
  }
  %h = fusion.elementwise %s rows(%u : tensor<?x96xbf16>) : tensor<?x96xbf16> {
  ^bb0(%a: f32, %b: f32):
    %p = arith.mulf %a, %b : f32
    fusion.yield %p : f32
  }
  return %h : tensor<?x96xbf16>
}

// -----

// In f32 nothing is rounded; the other GEMM's alpha applies to the dual
// accumulator.
// CHECK-LABEL: func.func @sum_f32
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} dual_weight(%{{.*}}) epilogue {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[DUAL:.*]]: f32):
// CHECK-NEXT: %[[C:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[DUAL]], %[[C]] : f32
// CHECK-NOT: arith.truncf
// CHECK: arith.addf %[[ACC]], %[[S]] : f32
func.func @sum_f32(%x: tensor<?x8xf32>, %w1: tensor<4x8xf32>, %w2: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %a = fusion.linear %x, %w1 : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %b = fusion.fused_linear %x, %w2 alpha 5.000000e-01 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %c = fusion.elementwise %a rows(%b : tensor<?x4xf32>) : tensor<?x4xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    fusion.yield %s : f32
  }
  return %c : tensor<?x4xf32>
}

// -----

// Negative: the other GEMM's result is read elsewhere too (it must be
// written), so the two stay apart.
// CHECK-LABEL: func.func @other_reader
// CHECK-NOT: dual_weight
// CHECK: fusion.fused_linear
// CHECK: fusion.fused_linear
func.func @other_reader(%x: tensor<?x8xf32>, %w1: tensor<4x8xf32>, %w2: tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %a = fusion.linear %x, %w1 : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %b = fusion.linear %x, %w2 : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %c = fusion.elementwise %a rows(%b : tensor<?x4xf32>) : tensor<?x4xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.mulf %p, %q : f32
    fusion.yield %s : f32
  }
  return %c, %b : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Negative: GEMMs of different inputs.
// CHECK-LABEL: func.func @other_input
// CHECK-NOT: dual_weight
func.func @other_input(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>, %w1: tensor<4x8xf32>, %w2: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %a = fusion.linear %x, %w1 : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %b = fusion.linear %y, %w2 : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %c = fusion.elementwise %a rows(%b : tensor<?x4xf32>) : tensor<?x4xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.mulf %p, %q : f32
    fusion.yield %s : f32
  }
  return %c : tensor<?x4xf32>
}

// -----

// Negative: weights of different layouts.
// CHECK-LABEL: func.func @other_layout
// CHECK-NOT: dual_weight
func.func @other_layout(%x: tensor<?x8xf32>, %w1: tensor<4x8xf32>, %w2: tensor<8x4xf32>) -> tensor<?x4xf32> {
  %a = fusion.linear %x, %w1 : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %b = fusion.linear %x, %w2 weight_layout in_out : tensor<?x8xf32>, tensor<8x4xf32> -> tensor<?x4xf32>
  %c = fusion.elementwise %a rows(%b : tensor<?x4xf32>) : tensor<?x4xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.mulf %p, %q : f32
    fusion.yield %s : f32
  }
  return %c : tensor<?x4xf32>
}

// -----

// Negative: a batch norm after a dual GEMM (a gated layer's chunks, then a
// norm) stays its own op: a dual GEMM has no batch-norm stage.
// CHECK-LABEL: func.func @dual_then_batch_norm
// CHECK: %[[F:.*]] = fusion.fused_linear %{{.*}}, %{{.*}} dual_weight(%{{.*}}) epilogue {
// CHECK-NOT: batch_norm <
// CHECK: fusion.batch_norm %[[F]], <training
func.func @dual_then_batch_norm(%x: tensor<?x8xf32>, %w1: tensor<4x8xf32>, %w2: tensor<4x8xf32>,
                                %g: tensor<4xf32>, %b: tensor<4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = fusion.linear %x, %w1 : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %c = fusion.linear %x, %w2 : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %h = fusion.elementwise %a rows(%c : tensor<?x4xf32>) : tensor<?x4xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.mulf %p, %q : f32
    fusion.yield %s : f32
  }
  %y:3 = fusion.batch_norm %h, <training, epsilon = 1.0e-05, momentum = 0.1> weight(%g) bias(%b) running_stats(%rm, %rv)
      : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y#0, %y#1, %y#2 : tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>
}
