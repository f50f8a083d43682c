// fusion-inline-special-functions: each fusion.special with a formula
// becomes its body's ops where it stood, nested ones included; other ops
// stay.
// RUN: fusion-opt %s --fusion-inline-special-functions | FileCheck %s

// CHECK-LABEL: func.func @inlined
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32)
// CHECK-NEXT: %[[L:.*]] = math.log %[[X]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[L]], %[[L]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.mulf %[[Y]], %[[Y]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[S]], %[[Q]] : f32
// CHECK-NEXT: return %[[SUM]], %[[Y]] : f32, f32
// CHECK-NOT: fusion.special
func.func @inlined(%x: f32, %y: f32) -> (f32, f32) {
  %g = fusion.special "lgamma"(%x) libdevice "__nv_lgammaf" : (f32) -> f32 {
  ^bb0(%t: f32):
    %l = math.log %t : f32
    fusion.yield %l : f32
  }
  %h = fusion.special "sum_of_squares"(%g, %y) : (f32, f32) -> f32 {
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
  // The identity: its result is its input.
  %i = fusion.special "identity"(%y) : (f32) -> f32 {
  ^bb0(%a: f32):
    fusion.yield %a : f32
  }
  return %h, %i : f32, f32
}

// The C library's functions have no formula: they stay, for
// fusion-math-to-libm.
// CHECK-LABEL: func.func @library_functions_stay
// CHECK-NEXT: %[[J:.*]] = fusion.special "bessel_j0"(%{{.*}}) libdevice "__nv_j0f" libm "j0f" : (f32) -> f32
// CHECK-NEXT: return %[[J]]
func.func @library_functions_stay(%x: f32) -> f32 {
  %j = fusion.special "bessel_j0"(%x) libdevice "__nv_j0f" libm "j0f" : (f32) -> f32
  return %j : f32
}

// A formula that calls the C library's function: inlined around it.
// CHECK-LABEL: func.func @formula_around_a_library_function
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK-NEXT: %[[Y:.*]] = fusion.special "bessel_y1"(%[[X]]) libdevice "__nv_y1f" libm "y1f" : (f32) -> f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[Y]], %[[X]] : f32
// CHECK-NEXT: return %[[T]]
func.func @formula_around_a_library_function(%x: f32) -> f32 {
  %w = fusion.special "wave"(%x) : (f32) -> f32 {
  ^bb0(%a: f32):
    %y = fusion.special "bessel_y1"(%a) libdevice "__nv_y1f" libm "y1f" : (f32) -> f32
    %t = arith.mulf %y, %a : f32
    fusion.yield %t : f32
  }
  return %w : f32
}

// Nothing to inline: unchanged.
// CHECK-LABEL: func.func @none
// CHECK-NEXT: math.log
// CHECK-NEXT: return
func.func @none(%x: f32) -> f32 {
  %l = math.log %x : f32
  return %l : f32
}
