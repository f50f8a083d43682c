// fusion-math-to-libm: the math ops that libm computes become its calls;
// those it has no pattern for stay, for convert-math-to-llvm, where
// upstream's convert-math-to-libm fails on them. Special functions that
// name the C library's function become its calls, declared once.
// RUN: fusion-opt %s --fusion-math-to-libm | FileCheck %s

// CHECK-DAG: func.func private @erff(f32) -> f32
// CHECK-DAG: func.func private @expm1f(f32) -> f32
// CHECK-DAG: func.func private @lgammaf(f32) -> f32
// CHECK-DAG: func.func private @y1f(f32) -> f32
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @libm_calls
// CHECK: %[[ERF:.*]] = call @erff(%{{.*}}) : (f32) -> f32
// CHECK: %[[EXPM1:.*]] = call @expm1f(%[[ERF]]) : (f32) -> f32
// CHECK: %[[SIGNED:.*]] = math.copysign %[[EXPM1]], %{{.*}} : f32
// CHECK: return %[[SIGNED]]
func.func @libm_calls(%a: f32, %b: f32) -> f32 {
  %0 = math.erf %a : f32
  %1 = math.expm1 %0 : f32
  %2 = math.copysign %1, %b : f32
  return %2 : f32
}

// arith.remf is not math's: it stays for the LLVM lowering (frem, which
// the x86 backend computes with fmodf).
// CHECK-LABEL: func.func @remainder_stays
// CHECK: arith.remf
// CHECK-NOT: call
func.func @remainder_stays(%a: f32, %b: f32) -> f32 {
  %0 = arith.remf %a, %b : f32
  return %0 : f32
}

// CHECK-LABEL: func.func @special_functions
// CHECK-NEXT: %[[G:.*]] = call @lgammaf(%{{.*}}) : (f32) -> f32
// CHECK-NEXT: %[[Y:.*]] = call @y1f(%[[G]]) : (f32) -> f32
// CHECK-NEXT: %[[H:.*]] = call @lgammaf(%[[Y]]) : (f32) -> f32
// CHECK-NEXT: return %[[H]]
func.func @special_functions(%a: f32) -> f32 {
  %0 = fusion.special "lgamma"(%a) libdevice "__nv_lgammaf" libm "lgammaf" : (f32) -> f32
  %1 = fusion.special "bessel_y1"(%0) libdevice "__nv_y1f" libm "y1f" : (f32) -> f32
  %2 = fusion.special "lgamma"(%1) libdevice "__nv_lgammaf" libm "lgammaf" : (f32) -> f32
  return %2 : f32
}

// A nested module's op: the function is declared in that module, where the
// call resolves.
// CHECK-LABEL: module @inner
// CHECK-NEXT: func.func private @j0f(f32) -> f32
// CHECK-LABEL: func.func @nested
// CHECK-NEXT: call @j0f
module @inner {
  func.func @nested(%a: f32) -> f32 {
    %0 = fusion.special "bessel_j0"(%a) libdevice "__nv_j0f" libm "j0f" : (f32) -> f32
    return %0 : f32
  }
}
