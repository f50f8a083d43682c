// fusion.special round-trips, with and without a libdevice function, in an
// elementwise body and in another special function's body, and without a
// formula where libdevice and the C library name the function.
// RUN: fusion-opt %s | FileCheck %s
// RUN: fusion-opt %s | fusion-opt | FileCheck %s
// RUN: fusion-opt %s --mlir-print-op-generic | fusion-opt | FileCheck %s
// The CPU reference computes the formulas inline.
// RUN: fusion-opt %s --fusion-lower-to-cpu | FileCheck %s --check-prefix=CPU

// CPU-NOT: fusion.special
// CPU: llvm.call @logf
// CPU: llvm.call @sqrtf
// CPU: llvm.call @j1f

// CHECK-LABEL: func.func @special
// CHECK: fusion.elementwise
// CHECK: %[[G:.*]] = fusion.special "lgamma"(%{{.*}}) libdevice "__nv_lgammaf" : (f32) -> f32 {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT: %[[L:.*]] = math.log %[[A]] : f32
// CHECK-NEXT: fusion.yield %[[L]] : f32
// CHECK-NEXT: }
// CHECK: fusion.special "hypot"(%[[G]], %{{.*}}) : (f32, f32) -> f32 {
// CHECK: fusion.special "square"(%{{.*}}) : (f32) -> f32 {
// CHECK: fusion.yield
// CHECK: fusion.special "bessel_j1"(%{{.*}}) libdevice "__nv_j1f" libm "j1f" : (f32) -> f32
// CHECK-NEXT: fusion.yield
func.func @special(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = fusion.elementwise %x : tensor<?x8xf32> {
  ^bb0(%a: f32):
    %g = fusion.special "lgamma"(%a) libdevice "__nv_lgammaf" : (f32) -> f32 {
    ^bb0(%t: f32):
      %l = math.log %t : f32
      fusion.yield %l : f32
    }
    %h = fusion.special "hypot"(%g, %a) : (f32, f32) -> f32 {
    ^bb0(%p: f32, %q: f32):
      %p2 = fusion.special "square"(%p) : (f32) -> f32 {
      ^bb0(%r: f32):
        %s = arith.mulf %r, %r : f32
        fusion.yield %s : f32
      }
      %q2 = arith.mulf %q, %q : f32
      %sum = arith.addf %p2, %q2 : f32
      %root = math.sqrt %sum : f32
      fusion.yield %root : f32
    }
    %j = fusion.special "bessel_j1"(%h) libdevice "__nv_j1f" libm "j1f" : (f32) -> f32
    fusion.yield %j : f32
  }
  return %y : tensor<?x8xf32>
}
