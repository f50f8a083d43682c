// An elementwise op read only as the input of reductions and elementwise ops
// is computed inside each of them; one read by anything else stays.
// RUN: fusion-opt %s --split-input-file --fusion-fuse-elementwise-producers | FileCheck %s

// Softmax's sum of exp(x - max): the exponential is never materialized. Both
// reductions reading it take it, the producer's row operand after their own
// (none) and its column operand after the reduction's own.
// CHECK-LABEL: func.func @softmax_sum
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[C:.*]]: tensor<8xf32>, %[[D:.*]]: tensor<8xf32>)
// CHECK: %[[MAX:.*]] = fusion.reduce max %[[X]]
// CHECK-NOT: fusion.elementwise
// CHECK: %[[SUM:.*]] = fusion.reduce sum %[[X]] columns(%[[C]], %[[D]] : tensor<8xf32>, tensor<8xf32>) rows(%[[MAX]] : tensor<?x1xf32>) : tensor<?x8xf32> -> tensor<?x1xf32> {
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OWN:.*]]: f32, %[[SHIFT:.*]]: f32, %[[M:.*]]: f32):
// CHECK-NEXT: %[[A:.*]] = arith.subf %[[IN]], %[[M]] : f32
// CHECK-NEXT: %[[B:.*]] = arith.addf %[[A]], %[[SHIFT]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[B]] : f32
// CHECK-NEXT: %[[W:.*]] = arith.mulf %[[E]], %[[OWN]] : f32
// CHECK-NEXT: fusion.yield %[[W]] : f32
// CHECK: %[[MIN:.*]] = fusion.reduce min %[[X]] columns(%[[D]] : tensor<8xf32>) rows(%[[MAX]] : tensor<?x1xf32>)
// CHECK: return %[[SUM]], %[[MIN]]
func.func @softmax_sum(%x: tensor<?x8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>)
    -> (tensor<?x1xf32>, tensor<?x1xf32>) {
  %max = fusion.reduce max %x : tensor<?x8xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %e = fusion.elementwise %x columns(%d : tensor<8xf32>)
      rows(%max : tensor<?x1xf32>) : tensor<?x8xf32> {
  ^bb0(%v: f32, %shift: f32, %m: f32):
    %0 = arith.subf %v, %m : f32
    %1 = arith.addf %0, %shift : f32
    %2 = math.exp %1 : f32
    fusion.yield %2 : f32
  }
  %sum = fusion.reduce sum %e columns(%c : tensor<8xf32>)
      : tensor<?x8xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %w: f32):
    %0 = arith.mulf %v, %w : f32
    fusion.yield %0 : f32
  }
  %min = fusion.reduce min %e : tensor<?x8xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %sum, %min : tensor<?x1xf32>, tensor<?x1xf32>
}

// -----

// The elementwise result is also returned: it is materialized anyway, and
// the reduction reads it rather than recomputing it.
// CHECK-LABEL: func.func @also_returned
// CHECK: %[[E:.*]] = fusion.elementwise
// CHECK: %[[S:.*]] = fusion.reduce sum %[[E]] : tensor<?x8xf32> -> tensor<?x1xf32>
// CHECK: return %[[E]], %[[S]]
func.func @also_returned(%x: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x1xf32>) {
  %e = fusion.elementwise %x : tensor<?x8xf32> {
  ^bb0(%v: f32):
    %0 = math.exp %v : f32
    fusion.yield %0 : f32
  }
  %s = fusion.reduce sum %e : tensor<?x8xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %e, %s : tensor<?x8xf32>, tensor<?x1xf32>
}

// -----

// A reduction of something other than an elementwise op is left alone.
// CHECK-LABEL: func.func @reduce_of_reduce
// CHECK: %[[A:.*]] = fusion.reduce sum %{{.*}} : tensor<?x8xf32> -> tensor<?x2xf32>
// CHECK: fusion.reduce max %[[A]] : tensor<?x2xf32> -> tensor<?x1xf32>
func.func @reduce_of_reduce(%x: tensor<?x8xf32>) -> tensor<?x1xf32> {
  %a = fusion.reduce sum %x : tensor<?x8xf32> -> tensor<?x2xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %b = fusion.reduce max %a : tensor<?x2xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %b : tensor<?x1xf32>
}

// -----

// A layer norm's output read by a softmax: the normalization is composed
// into the softmax's reductions and its final elementwise op, which then all
// read the linear's output.
// CHECK-LABEL: func.func @norm_then_softmax
// CHECK-SAME: (%[[Y:.*]]: tensor<?x8xf32>, %[[MEAN:.*]]: tensor<?x1xf32>, %[[RSTD:.*]]: tensor<?x1xf32>)
// CHECK: %[[MAX:.*]] = fusion.reduce max %[[Y]] rows(%[[MEAN]], %[[RSTD]] : tensor<?x1xf32>, tensor<?x1xf32>)
// CHECK: %[[SUM:.*]] = fusion.reduce sum %[[Y]] rows(%[[MAX]], %[[MEAN]], %[[RSTD]] : tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>)
// CHECK: %[[OUT:.*]] = fusion.elementwise %[[Y]] rows(%[[MAX]], %[[SUM]], %[[MEAN]], %[[RSTD]] : tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>) : tensor<?x8xf32> {
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[M:.*]]: f32, %[[S:.*]]: f32, %[[MU:.*]]: f32, %[[R:.*]]: f32):
// CHECK-NEXT: %[[C:.*]] = arith.subf %[[IN]], %[[MU]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.mulf %[[C]], %[[R]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[N]], %[[M]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[E]], %[[S]] : f32
// CHECK-NEXT: fusion.yield %[[Q]] : f32
// CHECK-NOT: fusion.elementwise
// CHECK: return %[[OUT]]
func.func @norm_then_softmax(%y: tensor<?x8xf32>, %mean: tensor<?x1xf32>,
                             %rstd: tensor<?x1xf32>) -> tensor<?x8xf32> {
  %z = fusion.elementwise %y rows(%mean, %rstd : tensor<?x1xf32>, tensor<?x1xf32>)
      : tensor<?x8xf32> {
  ^bb0(%v: f32, %mu: f32, %r: f32):
    %0 = arith.subf %v, %mu : f32
    %1 = arith.mulf %0, %r : f32
    fusion.yield %1 : f32
  }
  %max = fusion.reduce max %z : tensor<?x8xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %sum = fusion.reduce sum %z rows(%max : tensor<?x1xf32>)
      : tensor<?x8xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %m: f32):
    %0 = arith.subf %v, %m : f32
    %1 = math.exp %0 : f32
    fusion.yield %1 : f32
  }
  %out = fusion.elementwise %z rows(%max, %sum : tensor<?x1xf32>, tensor<?x1xf32>)
      : tensor<?x8xf32> {
  ^bb0(%v: f32, %m: f32, %s: f32):
    %0 = arith.subf %v, %m : f32
    %1 = math.exp %0 : f32
    %2 = arith.divf %1, %s : f32
    fusion.yield %2 : f32
  }
  return %out : tensor<?x8xf32>
}

// -----

// Read as a row operand (a residual) too: the producer stays, and so do its
// readers' inputs.
// CHECK-LABEL: func.func @read_as_row_operand
// CHECK: %[[E:.*]] = fusion.elementwise %{{.*}} : tensor<?x8xf32>
// CHECK: fusion.reduce sum %[[E]]
// CHECK: fusion.elementwise %[[E]] rows(%[[E]] : tensor<?x8xf32>)
func.func @read_as_row_operand(%x: tensor<?x8xf32>)
    -> (tensor<?x1xf32>, tensor<?x8xf32>) {
  %e = fusion.elementwise %x : tensor<?x8xf32> {
  ^bb0(%v: f32):
    %0 = math.exp %v : f32
    fusion.yield %0 : f32
  }
  %s = fusion.reduce sum %e : tensor<?x8xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %d = fusion.elementwise %e rows(%e : tensor<?x8xf32>) : tensor<?x8xf32> {
  ^bb0(%v: f32, %w: f32):
    %0 = arith.addf %v, %w : f32
    fusion.yield %0 : f32
  }
  return %s, %d : tensor<?x1xf32>, tensor<?x8xf32>
}
