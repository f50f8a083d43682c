// fusion-expand-division-by-constant: an f32 arith.divf without fastmath
// flags by a finite, nonzero constant c whose reciprocal r is a normal f32
// becomes q0 = x r corrected by two multiply-adds, e = q0 |c| - sign(c) x
// and q0 - e |r|, selected where |q0| is finite (q0 itself otherwise); by a
// power of two, the product alone. Other divisions are left alone.
// RUN: fusion-opt %s --split-input-file --fusion-expand-division-by-constant | FileCheck %s

// CHECK-LABEL: func.func @positive(
// CHECK-SAME: %[[X:.*]]: f32
// CHECK-DAG: %[[R:.*]] = arith.constant 0.333333343 : f32
// CHECK-DAG: %[[C:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-DAG: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[Q0:.*]] = arith.mulf %[[X]], %[[R]] : f32
// CHECK-NEXT: %[[NX:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: %[[E:.*]] = math.fma %[[Q0]], %[[C]], %[[NX]] : f32
// CHECK-NEXT: %[[NE:.*]] = arith.negf %[[E]] : f32
// CHECK-NEXT: %[[Q1:.*]] = math.fma %[[NE]], %[[R]], %[[Q0]] : f32
// CHECK-NEXT: %[[A:.*]] = math.absf %[[Q0]] : f32
// CHECK-NEXT: %[[FINITE:.*]] = arith.cmpf olt, %[[A]], %[[INF]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.select %[[FINITE]], %[[Q1]], %[[Q0]] : f32
// CHECK-NEXT: return %[[Q]]
// CHECK-NOT: arith.divf
func.func @positive(%x: f32) -> f32 {
  %c = arith.constant 3.0 : f32
  %q = arith.divf %x, %c : f32
  return %q : f32
}

// -----

// A negative divisor: the remainder takes x itself, r and c their
// magnitudes, the product the signed reciprocal.
// CHECK-LABEL: func.func @negative(
// CHECK-SAME: %[[X:.*]]: f32
// CHECK-DAG: %[[SR:.*]] = arith.constant -1.42857146 : f32
// CHECK-DAG: %[[R:.*]] = arith.constant 1.42857146 : f32
// CHECK-DAG: %[[C:.*]] = arith.constant 0.699999988 : f32
// CHECK: %[[Q0:.*]] = arith.mulf %[[X]], %[[SR]] : f32
// CHECK-NEXT: %[[E:.*]] = math.fma %[[Q0]], %[[C]], %[[X]] : f32
// CHECK-NEXT: %[[NE:.*]] = arith.negf %[[E]] : f32
// CHECK-NEXT: math.fma %[[NE]], %[[R]], %[[Q0]] : f32
// CHECK: arith.select
// CHECK-NOT: arith.divf
func.func @negative(%x: f32) -> f32 {
  %c = arith.constant -0.7 : f32
  %q = arith.divf %x, %c : f32
  return %q : f32
}

// -----

// A power of two: one exact product.
// CHECK-LABEL: func.func @power_of_two(
// CHECK-SAME: %[[X:.*]]: f32
// CHECK: %[[R:.*]] = arith.constant -4.000000e+00 : f32
// CHECK-NEXT: %[[Q:.*]] = arith.mulf %[[X]], %[[R]] : f32
// CHECK-NEXT: return %[[Q]]
func.func @power_of_two(%x: f32) -> f32 {
  %c = arith.constant -0.25 : f32
  %q = arith.divf %x, %c : f32
  return %q : f32
}

// -----

// Left alone: a divisor that is not a constant, a constant numerator, a
// division with fastmath flags, f64, and divisors that are 0, infinite,
// NaN or whose reciprocal is not a normal f32.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: math.fma
// CHECK-COUNT-9: arith.divf
// CHECK-NOT: math.fma
func.func @kept(%x: f32, %y: f32, %d: f64) -> (f32, f32, f32, f64, f32, f32, f32, f32, f32) {
  %three = arith.constant 3.0 : f32
  %three64 = arith.constant 3.0 : f64
  %zero = arith.constant 0.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %huge = arith.constant 1.0e38 : f32
  %tiny = arith.constant 1.0e-39 : f32
  %0 = arith.divf %x, %y : f32
  %1 = arith.divf %three, %x : f32
  %2 = arith.divf %x, %three fastmath<afn> : f32
  %3 = arith.divf %d, %three64 : f64
  %4 = arith.divf %x, %zero : f32
  %5 = arith.divf %x, %inf : f32
  %6 = arith.divf %x, %nan : f32
  %7 = arith.divf %x, %huge : f32
  %8 = arith.divf %x, %tiny : f32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : f32, f32, f32, f64, f32, f32, f32, f32, f32
}
