// fusion-expand-remainders: an f32 remf becomes the exact fmod of quotients
// below 2^20 from a truncated approximate quotient and two multiply-adds;
// the rest call the remf in a function of its own that LLVM may not inline.
// RUN: fusion-opt %s --fusion-expand-remainders --split-input-file | FileCheck %s
// Applied again, it leaves the out-of-line function's remf alone.
// RUN: fusion-opt %s --fusion-expand-remainders --fusion-expand-remainders --split-input-file | FileCheck %s

// CHECK-LABEL: llvm.func internal @__fusion_fmodf
// CHECK-SAME: (%[[A0:.*]]: f32, %[[A1:.*]]: f32) -> f32 attributes {no_inline}
// CHECK-NEXT: %[[REM:.*]] = arith.remf %[[A0]], %[[A1]] : f32
// CHECK-NEXT: llvm.return %[[REM]] : f32

// CHECK-LABEL: func.func @remainder
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32)
// |y| where y is defined (here the block's start):
// CHECK-NEXT: %[[B:.*]] = math.absf %[[Y]] : f32
// CHECK-NEXT: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK: %[[Q0:.*]] = arith.divf %[[A]], %[[B]] fastmath<afn> : f32
// CHECK: %[[Q:.*]] = math.trunc %[[Q0]] : f32
// CHECK: %[[NQ:.*]] = arith.negf %[[Q]] : f32
// CHECK: %[[R0:.*]] = math.fma %[[NQ]], %[[B]], %[[A]] : f32
// CHECK: %[[LOW:.*]] = arith.cmpf oge, %[[R0]], %[[B]] : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[Q1:.*]] = arith.addf %[[Q]], %[[ONE]] : f32
// CHECK: %[[Q2:.*]] = arith.select %[[LOW]], %[[Q1]], %[[Q]] : f32
// CHECK: %[[NQ2:.*]] = arith.negf %[[Q2]] : f32
// CHECK: %[[R1:.*]] = math.fma %[[NQ2]], %[[B]], %[[A]] : f32
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[NEG:.*]] = arith.cmpf olt, %[[R1]], %[[ZERO]] : f32
// CHECK: %[[UP:.*]] = arith.addf %[[R1]], %[[B]] : f32
// CHECK: %[[R:.*]] = arith.select %[[NEG]], %[[UP]], %[[R1]] : f32
// CHECK: %[[FAST:.*]] = math.copysign %[[R]], %[[X]] : f32
// 2^20:
// CHECK: %[[LIMIT:.*]] = arith.constant 0x49800000 : f32
// CHECK: %[[SMALL:.*]] = arith.cmpf olt, %[[Q0]], %[[LIMIT]] : f32
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[FINITE:.*]] = arith.cmpf olt, %[[B]], %[[INF]] : f32
// CHECK: %[[FITS:.*]] = arith.andi %[[SMALL]], %[[FINITE]] : i1
// CHECK: %[[EXACT:.*]] = scf.if %[[FITS]] -> (f32) {
// CHECK-NEXT: scf.yield %[[FAST]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[OUTOFLINE:.*]] = llvm.call @__fusion_fmodf(%[[X]], %[[Y]]) : (f32, f32) -> f32
// CHECK-NEXT: scf.yield %[[OUTOFLINE]] : f32
// CHECK: return %[[EXACT]] : f32
func.func @remainder(%x: f32, %y: f32) -> f32 {
  %0 = arith.remf %x, %y : f32
  return %0 : f32
}

// -----

// Not f32: left alone.
// CHECK-LABEL: func.func @f64_remainder
// CHECK-NEXT: arith.remf %{{.*}}, %{{.*}} : f64
// CHECK-NOT: scf.if
func.func @f64_remainder(%x: f64, %y: f64) -> f64 {
  %0 = arith.remf %x, %y : f64
  return %0 : f64
}

// -----

// A constant divisor: its magnitude folds (the division by it is then one
// product), and so does the test that it is finite.
// CHECK-LABEL: func.func @by_constant
// CHECK: %[[C:.*]] = arith.constant 0.699999988 : f32
// CHECK: %[[Q0:.*]] = arith.divf %{{.*}}, %[[C]] fastmath<afn> : f32
// CHECK: %[[SMALL:.*]] = arith.cmpf olt, %[[Q0]]
// CHECK-NOT: arith.cmpf olt, %[[C]]
// CHECK-NOT: arith.andi
// CHECK: scf.if %[[SMALL]]
func.func @by_constant(%x: f32) -> f32 {
  %c = arith.constant -0.7 : f32
  %0 = arith.remf %x, %c : f32
  return %0 : f32
}

// -----

// Remainders by one divisor divide by one magnitude, taken where the
// divisor is defined (outside the loop: fusion-expand-divisions shares it).
// CHECK-COUNT-1: llvm.func internal @__fusion_fmodf
// CHECK-NOT: llvm.func
// CHECK-LABEL: func.func @shared_divisor
// CHECK: %[[Y:.*]] = arith.addf
// CHECK-NEXT: %[[B:.*]] = math.absf %[[Y]] : f32
// CHECK: scf.for
// CHECK: arith.divf %{{.*}}, %[[B]] fastmath<afn> : f32
// CHECK: arith.divf %{{.*}}, %[[B]] fastmath<afn> : f32
// CHECK-NOT: math.absf %[[Y]]
func.func @shared_divisor(%x: f32, %s: f32, %t: f32) -> f32 {
  %y = arith.addf %s, %t : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %x) -> (f32) {
    %r = arith.remf %acc, %y : f32
    %q = arith.remf %x, %y : f32
    %n = arith.addf %r, %q : f32
    scf.yield %n : f32
  }
  return %sum : f32
}

// -----

// Vectors of f32: left alone (the kernels compute scalars).
// CHECK-LABEL: func.func @vector_remainder
// CHECK-NEXT: arith.remf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NOT: scf.if
func.func @vector_remainder(%x: vector<4xf32>, %y: vector<4xf32>) -> vector<4xf32> {
  %0 = arith.remf %x, %y : vector<4xf32>
  return %0 : vector<4xf32>
}
