// fusion-outline-special-functions: each distinct fusion.special becomes a
// call of an internal no_inline function of its own, made once: libdevice's
// function where the op names one, else its formula; nested ones first.
// RUN: fusion-opt %s --fusion-outline-special-functions | FileCheck %s

// A body unlike the first square's: a function of its own, renamed.
// CHECK-LABEL: llvm.func internal @__fusion_special_square_0
// CHECK-SAME: (%[[R:.*]]: f32) -> f32 attributes {no_inline}
// CHECK-NEXT: %[[P:.*]] = math.powf %[[R]], %[[R]] : f32
// CHECK-NEXT: llvm.return %[[P]] : f32
// The formula, its nested function called.
// CHECK-LABEL: llvm.func internal @__fusion_special_sum_of_squares
// CHECK-SAME: (%[[P:.*]]: f32, %[[Q:.*]]: f32) -> f32 attributes {no_inline}
// CHECK-NEXT: %[[P2:.*]] = llvm.call @__fusion_special_square(%[[P]]) : (f32) -> f32
// CHECK-NEXT: %[[Q2:.*]] = arith.mulf %[[Q]], %[[Q]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[P2]], %[[Q2]] : f32
// CHECK-NEXT: llvm.return %[[SUM]] : f32
// CHECK-LABEL: llvm.func internal @__fusion_special_square
// CHECK-SAME: (%[[R:.*]]: f32) -> f32 attributes {no_inline}
// CHECK-NEXT: arith.mulf %[[R]], %[[R]] : f32
// libdevice's function, declared once for both ops.
// CHECK-LABEL: llvm.func internal @__fusion_special_lgamma
// CHECK-SAME: (%[[A:.*]]: f32) -> f32 attributes {no_inline}
// CHECK-NEXT: %[[G:.*]] = llvm.call @__nv_lgammaf(%[[A]]) : (f32) -> f32
// CHECK-NEXT: llvm.return %[[G]] : f32
// CHECK: llvm.func @__nv_lgammaf(f32) -> f32
// CHECK-NOT: llvm.func

// CHECK-LABEL: func.func @calls
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32)
// CHECK-NEXT: %[[G0:.*]] = llvm.call @__fusion_special_lgamma(%[[X]]) : (f32) -> f32
// CHECK-NEXT: %[[G1:.*]] = llvm.call @__fusion_special_lgamma(%[[Y]]) : (f32) -> f32
// CHECK-NEXT: %[[H:.*]] = llvm.call @__fusion_special_sum_of_squares(%[[G0]], %[[G1]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[S:.*]] = llvm.call @__fusion_special_square_0(%[[H]]) : (f32) -> f32
// CHECK-NEXT: return %[[S]] : f32
// CHECK-NOT: fusion.special
func.func @calls(%x: f32, %y: f32) -> f32 {
  %g0 = fusion.special "lgamma"(%x) libdevice "__nv_lgammaf" : (f32) -> f32 {
  ^bb0(%t: f32):
    %l = math.log %t : f32
    fusion.yield %l : f32
  }
  %g1 = fusion.special "lgamma"(%y) libdevice "__nv_lgammaf" : (f32) -> f32 {
  ^bb0(%t: f32):
    %l = math.log %t : f32
    fusion.yield %l : f32
  }
  %h = fusion.special "sum_of_squares"(%g0, %g1) : (f32, f32) -> f32 {
  ^bb0(%p: f32, %q: f32):
    %p2 = fusion.special "square"(%p) : (f32) -> f32 {
    ^bb0(%r: f32):
      %s = arith.mulf %r, %r : f32
      fusion.yield %s : f32
    }
    %q2 = arith.mulf %q, %q : f32
    %sum = arith.addf %p2, %q2 : f32
    fusion.yield %sum : f32
  }
  %s = fusion.special "square"(%h) : (f32) -> f32 {
  ^bb0(%r: f32):
    %s = math.powf %r, %r : f32
    fusion.yield %s : f32
  }
  return %s : f32
}
