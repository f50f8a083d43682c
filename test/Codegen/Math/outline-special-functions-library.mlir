// fusion-outline-special-functions on ops without a formula (libdevice's
// and the C library's function): libdevice's call, one function for both
// ops, also where a formula calls one.
// RUN: fusion-opt %s --fusion-outline-special-functions | FileCheck %s

// CHECK-LABEL: llvm.func internal @__fusion_special_wave
// CHECK-SAME: (%[[A:.*]]: f32) -> f32 attributes {no_inline}
// CHECK-NEXT: %[[J:.*]] = llvm.call @__fusion_special_bessel_j0(%[[A]]) : (f32) -> f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[J]], %[[A]] : f32
// CHECK-NEXT: llvm.return %[[T]] : f32
// CHECK-LABEL: llvm.func internal @__fusion_special_bessel_j0
// CHECK-SAME: (%[[B:.*]]: f32) -> f32 attributes {no_inline}
// CHECK-NEXT: %[[C:.*]] = llvm.call @__nv_j0f(%[[B]]) : (f32) -> f32
// CHECK-NEXT: llvm.return %[[C]] : f32
// CHECK: llvm.func @__nv_j0f(f32) -> f32
// CHECK-NOT: llvm.func

// CHECK-LABEL: func.func @calls
// CHECK-NEXT: %[[J0:.*]] = llvm.call @__fusion_special_bessel_j0(%{{.*}}) : (f32) -> f32
// CHECK-NEXT: %[[J1:.*]] = llvm.call @__fusion_special_bessel_j0(%[[J0]]) : (f32) -> f32
// CHECK-NEXT: %[[W:.*]] = llvm.call @__fusion_special_wave(%[[J1]]) : (f32) -> f32
// CHECK-NEXT: return %[[W]] : f32
// CHECK-NOT: fusion.special
func.func @calls(%x: f32) -> f32 {
  %j0 = fusion.special "bessel_j0"(%x) libdevice "__nv_j0f" libm "j0f" : (f32) -> f32
  %j1 = fusion.special "bessel_j0"(%j0) libdevice "__nv_j0f" libm "j0f" : (f32) -> f32
  %w = fusion.special "wave"(%j1) : (f32) -> f32 {
  ^bb0(%a: f32):
    %j = fusion.special "bessel_j0"(%a) libdevice "__nv_j0f" libm "j0f" : (f32) -> f32
    %t = arith.mulf %j, %a : f32
    fusion.yield %t : f32
  }
  return %w : f32
}
