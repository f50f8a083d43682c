// fusion-outline-powers: an accurate f32 powf becomes a call of the powf
// in a function of its own that LLVM may not inline, made once for all.
// RUN: fusion-opt %s --fusion-outline-powers | FileCheck %s
// Applied again, it leaves the out-of-line function's powf alone.
// RUN: fusion-opt %s --fusion-outline-powers --fusion-outline-powers | FileCheck %s

// CHECK-LABEL: llvm.func internal @__fusion_powf
// CHECK-SAME: (%[[A0:.*]]: f32, %[[A1:.*]]: f32) -> f32 attributes {no_inline}
// CHECK-NEXT: %[[P:.*]] = math.powf %[[A0]], %[[A1]] : f32
// CHECK-NEXT: llvm.return %[[P]] : f32
// CHECK-NOT: llvm.func

// CHECK-LABEL: func.func @powers
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32)
// CHECK-NEXT: %[[C:.*]] = arith.constant 2.500000e+00 : f32
// CHECK-NEXT: %[[P0:.*]] = llvm.call @__fusion_powf(%[[X]], %[[C]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[P1:.*]] = llvm.call @__fusion_powf(%[[P0]], %[[Y]]) : (f32, f32) -> f32
// CHECK-NEXT: return %[[P1]] : f32
func.func @powers(%x: f32, %y: f32) -> f32 {
  %c = arith.constant 2.5 : f32
  %0 = math.powf %x, %c : f32
  %1 = math.powf %0, %y : f32
  return %1 : f32
}

// Approximate (afn: libdevice's __nv_fast_powf, a few instructions) and
// f64 powers stay.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT: math.powf %{{.*}}, %{{.*}} fastmath<afn> : f32
// CHECK-NEXT: math.powf %{{.*}}, %{{.*}} : f64
// CHECK-NEXT: return
func.func @kept(%x: f32, %y: f64) -> (f32, f64) {
  %0 = math.powf %x, %x fastmath<afn> : f32
  %1 = math.powf %y, %y : f64
  return %0, %1 : f32, f64
}
