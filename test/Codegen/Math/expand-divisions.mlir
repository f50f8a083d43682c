// fusion-expand-divisions: an f32 arith.divf without fastmath flags by a
// finite, nonzero constant c whose reciprocal r is a normal f32 becomes
// q0 = x r corrected by two multiply-adds, e = q0 |c| - sign(c) x and
// q = q0 - e |r|, q0 where q is NaN; by a power of two, the product alone.
// The divisions by a computed d that at least four divisions share, or
// that a loop's division reads from outside, divide by d' = |d| s (s a
// power of two, 1 for |d| in [2^-64, 2^64]) from r = 1 / d', computed once
// after d, and multiply by s with d's sign. An approximate division
// (fastmath<afn>) by such a constant is the product x r alone; by a shared
// value it is expanded as above; any other approximate quotient becomes
// llvm.nvvm.div.full. Other divisions are left alone.
// RUN: fusion-opt %s --split-input-file --fusion-expand-divisions | FileCheck %s

// CHECK-LABEL: func.func @positive(
// CHECK-SAME: %[[X:.*]]: f32
// CHECK-DAG: %[[R:.*]] = arith.constant 0.333333343 : f32
// CHECK-DAG: %[[C:.*]] = arith.constant 3.000000e+00 : f32
// CHECK: %[[NX:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: %[[Q0:.*]] = arith.mulf %[[X]], %[[R]] : f32
// CHECK-NEXT: %[[E:.*]] = math.fma %[[Q0]], %[[C]], %[[NX]] : f32
// CHECK-NEXT: %[[NE:.*]] = arith.negf %[[E]] : f32
// CHECK-NEXT: %[[Q1:.*]] = math.fma %[[NE]], %[[R]], %[[Q0]] : f32
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf uno, %[[Q1]], %[[Q1]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.select %[[NAN]], %[[Q0]], %[[Q1]] : f32
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

// Left alone: a computed divisor of one division, a constant numerator, a
// division with other fastmath flags than afn, f64, and constant divisors
// that are 0, infinite, NaN or whose reciprocal is not a normal f32.
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
  %2 = arith.divf %x, %three fastmath<fast> : f32
  %3 = arith.divf %d, %three64 : f64
  %4 = arith.divf %x, %zero : f32
  %5 = arith.divf %x, %inf : f32
  %6 = arith.divf %x, %nan : f32
  %7 = arith.divf %x, %huge : f32
  %8 = arith.divf %x, %tiny : f32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : f32, f32, f32, f64, f32, f32, f32, f32, f32
}

// -----

// Four divisions by an argument: its reciprocal once, each quotient times
// the signed scale.
// CHECK-LABEL: func.func @shared(
// CHECK-SAME: %[[X:[^:]*]]: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %[[D:[^:]*]]: f32
// CHECK-DAG: %[[SIGNBIT:.*]] = arith.constant -2147483648 : i32
// CHECK-DAG: %[[HUGE:.*]] = arith.constant 1.84467441E+19 : f32
// CHECK-DAG: %[[TINY:.*]] = arith.constant 5.42101086E-20 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[A:.*]] = math.absf %[[D]] : f32
// CHECK-NEXT: %[[ABOVE:.*]] = arith.cmpf ogt, %[[A]], %[[HUGE]] : f32
// CHECK-NEXT: %[[DOWN:.*]] = arith.select %[[ABOVE]], %[[TINY]], %[[ONE]] : f32
// CHECK-NEXT: %[[BELOW:.*]] = arith.cmpf olt, %[[A]], %[[TINY]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.select %[[BELOW]], %[[HUGE]], %[[DOWN]] : f32
// CHECK-NEXT: %[[DS:.*]] = arith.mulf %[[A]], %[[S]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[ONE]], %[[DS]] : f32
// CHECK-NEXT: %[[DBITS:.*]] = arith.bitcast %[[D]] : f32 to i32
// CHECK-NEXT: %[[SIGN:.*]] = arith.andi %[[DBITS]], %[[SIGNBIT]] : i32
// CHECK-NEXT: %[[SBITS:.*]] = arith.bitcast %[[S]] : f32 to i32
// CHECK-NEXT: %[[SIGNED:.*]] = arith.ori %[[SBITS]], %[[SIGN]] : i32
// CHECK-NEXT: %[[SCALE:.*]] = arith.bitcast %[[SIGNED]] : i32 to f32
// CHECK-NEXT: %[[NX:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: %[[Q0:.*]] = arith.mulf %[[X]], %[[R]] : f32
// CHECK-NEXT: %[[E:.*]] = math.fma %[[Q0]], %[[DS]], %[[NX]] : f32
// CHECK-NEXT: %[[NE:.*]] = arith.negf %[[E]] : f32
// CHECK-NEXT: %[[Q1:.*]] = math.fma %[[NE]], %[[R]], %[[Q0]] : f32
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf uno, %[[Q1]], %[[Q1]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.select %[[NAN]], %[[Q0]], %[[Q1]] : f32
// CHECK-NEXT: %[[FIRST:.*]] = arith.mulf %[[Q]], %[[SCALE]] : f32
// CHECK-COUNT-3: arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK-NOT: arith.divf
// CHECK: return %[[FIRST]]
func.func @shared(%x: f32, %y: f32, %z: f32, %w: f32, %d: f32) -> (f32, f32, f32, f32) {
  %0 = arith.divf %x, %d : f32
  %1 = arith.divf %y, %d : f32
  %2 = arith.divf %z, %d : f32
  %3 = arith.divf %w, %d : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// -----

// A division in a loop by a value from outside it: the reciprocal before
// the loop; a divisor computed in the loop is left alone.
// CHECK-LABEL: func.func @loop(
// CHECK: arith.divf
// CHECK: scf.for
// CHECK-NOT: arith.divf
// CHECK: math.fma
// CHECK: math.fma
// CHECK: scf.for
// CHECK: %[[D:.*]] = arith.addf
// CHECK-NEXT: arith.divf %{{.*}}, %[[D]] : f32
func.func @loop(%x: memref<8xf32>, %d: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %q = arith.divf %v, %d : f32
    memref.store %q, %x[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %e = arith.addf %v, %d : f32
    %q = arith.divf %v, %e : f32
    memref.store %q, %x[%i] : memref<8xf32>
  }
  return
}

// -----

// Three divisions by one computed value outside a loop: left alone.
// CHECK-LABEL: func.func @few(
// CHECK-NOT: math.fma
// CHECK-COUNT-3: arith.divf
// CHECK-NOT: math.fma
func.func @few(%x: f32, %y: f32, %z: f32, %d: f32) -> (f32, f32, f32) {
  %0 = arith.divf %x, %d : f32
  %1 = arith.divf %y, %d : f32
  %2 = arith.divf %z, %d : f32
  return %0, %1, %2 : f32, f32, f32
}

// -----

// Approximate divisions: by a constant, the product with its reciprocal; by
// a computed value, div.full.f32; a reciprocal stays for LLVM's
// rcp.approx.f32, and so do an f64 division and a constant divisor without
// a normal reciprocal (div.full then).
// CHECK-LABEL: func.func @approximate(
// CHECK-SAME: %[[X:[^:]*]]: f32, %[[D:[^:]*]]: f32, %[[Z:[^:]*]]: f64
// CHECK-DAG: %[[R:.*]] = arith.constant -1.42857146 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[HUGE:.*]] = arith.constant 9.99999968E+37 : f32
// CHECK: %[[Q0:.*]] = arith.mulf %[[X]], %[[R]] : f32
// CHECK-NEXT: %[[Q1:.*]] = llvm.call_intrinsic "llvm.nvvm.div.full"(%[[X]], %[[D]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[Q2:.*]] = arith.divf %[[ONE]], %[[D]] fastmath<afn> : f32
// CHECK-NEXT: %[[Q3:.*]] = arith.divf %[[Z]], %{{.*}} fastmath<afn> : f64
// CHECK-NEXT: %[[Q4:.*]] = llvm.call_intrinsic "llvm.nvvm.div.full"(%[[X]], %[[HUGE]]) : (f32, f32) -> f32
// CHECK-NEXT: return %[[Q0]], %[[Q1]], %[[Q2]], %[[Q3]], %[[Q4]]
func.func @approximate(%x: f32, %d: f32, %z: f64) -> (f32, f32, f32, f64, f32) {
  %c = arith.constant -0.7 : f32
  %one = arith.constant 1.0 : f32
  %three64 = arith.constant 3.0 : f64
  %huge = arith.constant 1.0e38 : f32
  %0 = arith.divf %x, %c fastmath<afn> : f32
  %1 = arith.divf %x, %d fastmath<afn> : f32
  %2 = arith.divf %one, %d fastmath<afn> : f32
  %3 = arith.divf %z, %three64 fastmath<afn> : f64
  %4 = arith.divf %x, %huge fastmath<afn> : f32
  return %0, %1, %2, %3, %4 : f32, f32, f32, f64, f32
}

// -----

// Approximate divisions by a shared value take its correctly rounded
// reciprocal as the exact ones do.
// CHECK-LABEL: func.func @approximate_shared(
// CHECK: math.absf
// CHECK: %[[R:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-4: math.fma %{{.*}}, %[[R]], %{{.*}} : f32
// CHECK-NOT: div
func.func @approximate_shared(%x: f32, %y: f32, %z: f32, %w: f32, %d: f32) -> (f32, f32, f32, f32) {
  %0 = arith.divf %x, %d fastmath<afn> : f32
  %1 = arith.divf %y, %d fastmath<afn> : f32
  %2 = arith.divf %z, %d : f32
  %3 = arith.divf %w, %d fastmath<afn> : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}
