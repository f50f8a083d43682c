// fusion-expand-trigonometry: an accurate f32 sin, cos or tan reduces
// |x| up to 105615 by j pi/2 inline (three multiply-adds) and evaluates
// the sine and cosine polynomials; larger, infinite and NaN arguments call
// the op in a function of its own that LLVM may not inline.
// RUN: fusion-opt %s --fusion-expand-trigonometry | FileCheck %s
// Applied again, it leaves the out-of-line functions' ops alone.
// RUN: fusion-opt %s --fusion-expand-trigonometry --fusion-expand-trigonometry | FileCheck %s

// CHECK-LABEL: llvm.func internal @__fusion_tanf
// CHECK-SAME: (%[[T0:.*]]: f32) -> f32 attributes {no_inline}
// CHECK-NEXT: %[[T:.*]] = math.tan %[[T0]] : f32
// CHECK-NEXT: llvm.return %[[T]] : f32
// CHECK-LABEL: llvm.func internal @__fusion_cosf
// CHECK-NEXT: math.cos
// CHECK-LABEL: llvm.func internal @__fusion_sinf
// CHECK-NEXT: math.sin

// CHECK-LABEL: func.func @sine
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK: %[[TWO_OVER_PI:.*]] = arith.constant 0.636619746 : f32
// CHECK: %[[AJ:.*]] = arith.mulf %[[A]], %[[TWO_OVER_PI]] : f32
// CHECK: %[[J:.*]] = math.roundeven %[[AJ]] : f32
// CHECK: %[[P1:.*]] = arith.constant -1.57079625 : f32
// CHECK: %[[R1:.*]] = math.fma %[[J]], %[[P1]], %[[A]] : f32
// CHECK: %[[P2:.*]] = arith.constant -7.54978942E-8 : f32
// CHECK: %[[R2:.*]] = math.fma %[[J]], %[[P2]], %[[R1]] : f32
// CHECK: %[[P3:.*]] = arith.constant -5.39030253E-15 : f32
// CHECK: %[[R:.*]] = math.fma %[[J]], %[[P3]], %[[R2]] : f32
// CHECK: %[[Z:.*]] = arith.mulf %[[R]], %[[R]] : f32
// CHECK: %[[CUBE:.*]] = arith.mulf %[[R]], %[[Z]] : f32
// CHECK: %[[S:.*]] = math.fma %[[CUBE]], %{{.*}}, %[[R]] : f32
// CHECK: %[[C1:.*]] = math.fma %[[Z]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[C:.*]] = math.fma %[[Z]], %[[C1]], %{{.*}} : f32
// CHECK: %[[Q:.*]] = arith.fptosi %[[J]] : f32 to i32
// CHECK: arith.addi %[[Q]]
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[LOW:.*]] = arith.andi %[[Q]], %[[ONE]] : i32
// CHECK: %[[ODD:.*]] = arith.cmpi ne, %[[LOW]], %{{.*}} : i32
// CHECK: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK: %[[BIT1:.*]] = arith.andi %[[Q]], %[[TWO]] : i32
// CHECK: %[[HIGH:.*]] = arith.cmpi ne, %[[BIT1]], %{{.*}} : i32
// sin |x| is s, c, -s or -c by j mod 4, then x's sign bit:
// CHECK: %[[BASE:.*]] = arith.select %[[ODD]], %[[C]], %[[S]] : f32
// CHECK: %[[NEG:.*]] = arith.negf %[[BASE]] : f32
// CHECK: %[[SIN:.*]] = arith.select %[[HIGH]], %[[NEG]], %[[BASE]] : f32
// CHECK: %[[XBITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: %[[SIGN:.*]] = arith.andi %[[XBITS]], %{{.*}} : i32
// CHECK: %[[SINBITS:.*]] = arith.bitcast %[[SIN]] : f32 to i32
// CHECK: %[[FLIPPED:.*]] = arith.xori %[[SINBITS]], %[[SIGN]] : i32
// CHECK: %[[FAST:.*]] = arith.bitcast %[[FLIPPED]] : i32 to f32
// CHECK: %[[BOUND:.*]] = arith.constant 1.056150e+05 : f32
// CHECK: %[[REDUCIBLE:.*]] = arith.cmpf ole, %[[A]], %[[BOUND]] : f32
// CHECK: %[[RESULT:.*]] = scf.if %[[REDUCIBLE]] -> (f32) {
// CHECK-NEXT: scf.yield %[[FAST]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[SLOW:.*]] = llvm.call @__fusion_sinf(%[[X]]) : (f32) -> f32
// CHECK-NEXT: scf.yield %[[SLOW]] : f32
// CHECK: return %[[RESULT]] : f32
func.func @sine(%x: f32) -> f32 {
  %0 = math.sin %x : f32
  return %0 : f32
}

// cos |x| is c, -s, -c or s by j mod 4 (negated for j + 1 having bit 1);
// no sign bit (cosine is even).
// CHECK-LABEL: func.func @cosine
// CHECK: %[[Q:.*]] = arith.fptosi
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[NEXT:.*]] = arith.addi %[[Q]], %[[ONE]] : i32
// CHECK: %[[ONE_MASK:.*]] = arith.constant 1 : i32
// CHECK: %[[LOW:.*]] = arith.andi %[[Q]], %[[ONE_MASK]] : i32
// CHECK: %[[ODD:.*]] = arith.cmpi ne, %[[LOW]], %{{.*}} : i32
// CHECK: arith.cmpi ne
// CHECK: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK: %[[NEXTHIGH:.*]] = arith.andi %[[NEXT]], %[[TWO]] : i32
// CHECK: %[[NEGATED:.*]] = arith.cmpi ne, %[[NEXTHIGH]], %{{.*}} : i32
// CHECK: %[[BASE:.*]] = arith.select %[[ODD]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[NEG:.*]] = arith.negf %[[BASE]] : f32
// CHECK: %[[FAST:.*]] = arith.select %[[NEGATED]], %[[NEG]], %[[BASE]] : f32
// CHECK-NOT: arith.xori
// CHECK: scf.if
// CHECK-NEXT: scf.yield %[[FAST]] : f32
// CHECK: llvm.call @__fusion_cosf
func.func @cosine(%x: f32) -> f32 {
  %0 = math.cos %x : f32
  return %0 : f32
}

// tan |x| is s / c, or -c / s for odd j: from the denominator's approximate
// reciprocal and Markstein's correction.
// CHECK-LABEL: func.func @tangent
// CHECK: %[[Z:.*]] = arith.mulf %[[R:.*]], %[[R]] : f32
// CHECK: %[[CUBE:.*]] = arith.mulf %[[R]], %[[Z]] : f32
// CHECK: %[[S:.*]] = math.fma %[[CUBE]], %{{.*}}, %[[R]] : f32
// CHECK: %[[C1:.*]] = math.fma %[[Z]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[C:.*]] = math.fma %[[Z]], %[[C1]], %{{.*}} : f32
// CHECK-NEXT: arith.fptosi
// CHECK: %[[ODD:.*]] = arith.cmpi ne
// CHECK: %[[NEGC:.*]] = arith.negf %[[C]] : f32
// CHECK: %[[NUM:.*]] = arith.select %[[ODD]], %[[NEGC]], %[[S]] : f32
// CHECK: %[[DEN:.*]] = arith.select %[[ODD]], %[[S]], %[[C]] : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[RCP:.*]] = arith.divf %[[ONE]], %[[DEN]] fastmath<afn> : f32
// CHECK: %[[Q0:.*]] = arith.mulf %[[NUM]], %[[RCP]] : f32
// CHECK: %[[NQ0:.*]] = arith.negf %[[Q0]] : f32
// CHECK: %[[E:.*]] = math.fma %[[NQ0]], %[[DEN]], %[[NUM]] : f32
// CHECK: %[[T:.*]] = math.fma %[[E]], %[[RCP]], %[[Q0]] : f32
// CHECK: arith.bitcast %[[T]] : f32 to i32
// CHECK: arith.xori
// CHECK: llvm.call @__fusion_tanf
func.func @tangent(%x: f32) -> f32 {
  %0 = math.tan %x : f32
  return %0 : f32
}

// Approximate (afn) ones have no slow path, and f64 ones are not a GEMM
// epilogue's: both stay.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT: math.sin %{{.*}} fastmath<afn> : f32
// CHECK-NEXT: math.cos %{{.*}} : f64
// CHECK-NEXT: return
func.func @kept(%x: f32, %y: f64) -> (f32, f64) {
  %0 = math.sin %x fastmath<afn> : f32
  %1 = math.cos %y : f64
  return %0, %1 : f32, f64
}
