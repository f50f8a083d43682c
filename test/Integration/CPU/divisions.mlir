// fusion-expand-divisions' quotients against IEEE division (f32 values
// divided in f64 and rounded once, which is RN(x / d) for f32 x and d), on
// the CPU: constant divisors of either sign, small and large, a power of
// two among them, over one f32 bit pattern in 4099 (every sign and
// exponent, zeros, subnormals, infinities and NaNs among them) and the
// special values; and computed divisors that a loop's divisions share
// (normal, scaled into [2^-64, 2^64], subnormal, zeros, infinities, NaN)
// over one bit pattern in 65537 and the special values. Where |x| and
// |x / d| are at least 2^-100 the quotients must be the same bits (NaN for
// NaN); below, within one unit in the last place. With both strides at 1
// the module checks every f32 (docs/benchmarks.md, runs 44 and 45).
// RUN: fusion-opt %s --fusion-expand-divisions | FileCheck %s --check-prefix=EXPANDED
// RUN: fusion-opt %s --fusion-expand-divisions --fusion-lower-to-cpu | %run_cpu | FileCheck %s
// EXPANDED-LABEL: func.func @check(
// EXPANDED-NOT: arith.divf {{.*}} : f32
// EXPANDED-COUNT-14: math.fma
// EXPANDED-NOT: arith.divf {{.*}} : f32
// EXPANDED-LABEL: func.func @sweep(
// EXPANDED: arith.divf {{.*}} : f32
// EXPANDED-NOT: arith.divf {{.*}} : f32
// EXPANDED: return
// The values checked, those that differ where |x| and |x / d| are at least
// 2^-100, those beyond an ulp below:
// CHECK: {{^}}2096623{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}0{{$}}

memref.global "private" constant @specials : memref<14xi32> = dense<[
  0, -2147483648, 2139095040, -8388608, 2143289344, 2139095039, -8388609,
  8388608, -2139095040, 1, -2147483647, 1065353216, -1082130432, 8388607]>

// Whether q, the expanded x / c, differs from IEEE's quotient where |x| and
// |x / c| are at least 2^-100, and whether it is beyond an ulp from it
// below.
func.func @differs(%x: f32, %q: f32, %c: f32) -> (i64, i64) {
  %x64 = arith.extf %x : f32 to f64
  %c64 = arith.extf %c : f32 to f64
  %exact = arith.divf %x64, %c64 : f64
  %ref = arith.truncf %exact : f64 to f32
  %qbits = arith.bitcast %q : f32 to i32
  %refbits = arith.bitcast %ref : f32 to i32
  %same = arith.cmpi eq, %qbits, %refbits : i32
  %bothnan = arith.cmpf uno, %q, %ref : f32
  %qnan = arith.cmpf uno, %q, %q : f32
  %refnan = arith.cmpf uno, %ref, %ref : f32
  %nans = arith.andi %qnan, %refnan : i1
  %equal = arith.ori %same, %nans : i1
  // Tiny: |x| or |x / c| below 2^-100, where the remainder may underflow.
  %bound = arith.constant 7.88860905e-31 : f32
  %ax = math.absf %x : f32
  %aref = math.absf %ref : f32
  %xtiny = arith.cmpf olt, %ax, %bound : f32
  %reftiny = arith.cmpf olt, %aref, %bound : f32
  %tiny = arith.ori %xtiny, %reftiny : i1
  // An ulp: |ref| 2^-23, at least 2^-149.
  %diff = arith.subf %q, %ref : f32
  %adiff = math.absf %diff : f32
  %eps = arith.constant 1.1920929e-07 : f32
  %least = arith.constant 1.40129846e-45 : f32
  %scaled = arith.mulf %aref, %eps : f32
  %ulp = arith.maximumf %scaled, %least : f32
  %near = arith.cmpf ole, %adiff, %ulp : f32
  %true = arith.constant true
  %notequal = arith.xori %equal, %true : i1
  %nottiny = arith.xori %tiny, %true : i1
  %notnear = arith.xori %near, %true : i1
  %differ = arith.andi %notequal, %nottiny : i1
  %tinyfar = arith.andi %notequal, %tiny : i1
  %far = arith.andi %tinyfar, %notnear : i1
  %d = arith.extui %differ : i1 to i64
  %f = arith.extui %far : i1 to i64
  return %d, %f : i64, i64
}

// The counts over the divisors for one x.
func.func @check(%x: f32) -> (i64, i64) {
  %c0 = arith.constant 3.0 : f32
  %c1 = arith.constant -0.7 : f32
  %c2 = arith.constant 0.1 : f32
  %c3 = arith.constant 1.7 : f32
  %c4 = arith.constant -12.5 : f32
  %c5 = arith.constant 1.0e-30 : f32
  %c6 = arith.constant -6.0e37 : f32
  %c7 = arith.constant -0.25 : f32
  %q0 = arith.divf %x, %c0 : f32
  %q1 = arith.divf %x, %c1 : f32
  %q2 = arith.divf %x, %c2 : f32
  %q3 = arith.divf %x, %c3 : f32
  %q4 = arith.divf %x, %c4 : f32
  %q5 = arith.divf %x, %c5 : f32
  %q6 = arith.divf %x, %c6 : f32
  %q7 = arith.divf %x, %c7 : f32
  %d0, %f0 = func.call @differs(%x, %q0, %c0) : (f32, f32, f32) -> (i64, i64)
  %d1, %f1 = func.call @differs(%x, %q1, %c1) : (f32, f32, f32) -> (i64, i64)
  %d2, %f2 = func.call @differs(%x, %q2, %c2) : (f32, f32, f32) -> (i64, i64)
  %d3, %f3 = func.call @differs(%x, %q3, %c3) : (f32, f32, f32) -> (i64, i64)
  %d4, %f4 = func.call @differs(%x, %q4, %c4) : (f32, f32, f32) -> (i64, i64)
  %d5, %f5 = func.call @differs(%x, %q5, %c5) : (f32, f32, f32) -> (i64, i64)
  %d6, %f6 = func.call @differs(%x, %q6, %c6) : (f32, f32, f32) -> (i64, i64)
  %d7, %f7 = func.call @differs(%x, %q7, %c7) : (f32, f32, f32) -> (i64, i64)
  %s1 = arith.addi %d0, %d1 : i64
  %s2 = arith.addi %s1, %d2 : i64
  %s3 = arith.addi %s2, %d3 : i64
  %s4 = arith.addi %s3, %d4 : i64
  %s5 = arith.addi %s4, %d5 : i64
  %s6 = arith.addi %s5, %d6 : i64
  %s7 = arith.addi %s6, %d7 : i64
  %t1 = arith.addi %f0, %f1 : i64
  %t2 = arith.addi %t1, %f2 : i64
  %t3 = arith.addi %t2, %f3 : i64
  %t4 = arith.addi %t3, %f4 : i64
  %t5 = arith.addi %t4, %f5 : i64
  %t6 = arith.addi %t5, %f6 : i64
  %t7 = arith.addi %t6, %f7 : i64
  return %s7, %t7 : i64, i64
}

// The divisions of a loop by d, computed outside it: x / d over one f32 bit
// pattern in STRIDE and the special values, counted as @check counts.
func.func @sweep(%d: f32, %stride: i64) -> (i64, i64, i64) {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %start = arith.constant 0 : i64
  %end = arith.constant 4294967296 : i64
  %sampled:3 = scf.for %i = %start to %end step %stride
      iter_args(%n = %zero, %d0 = %zero, %f0 = %zero) -> (i64, i64, i64) : i64 {
    %bits = arith.trunci %i : i64 to i32
    %x = arith.bitcast %bits : i32 to f32
    %q = arith.divf %x, %d : f32
    %di, %fi = func.call @differs(%x, %q, %d) : (f32, f32, f32) -> (i64, i64)
    %n1 = arith.addi %n, %one : i64
    %d1 = arith.addi %d0, %di : i64
    %f1 = arith.addi %f0, %fi : i64
    scf.yield %n1, %d1, %f1 : i64, i64, i64
  }
  %specials = memref.get_global @specials : memref<14xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c14 = arith.constant 14 : index
  %all:3 = scf.for %i = %c0 to %c14 step %c1
      iter_args(%n = %sampled#0, %d0 = %sampled#1, %f0 = %sampled#2)
      -> (i64, i64, i64) {
    %bits = memref.load %specials[%i] : memref<14xi32>
    %x = arith.bitcast %bits : i32 to f32
    %q = arith.divf %x, %d : f32
    %di, %fi = func.call @differs(%x, %q, %d) : (f32, f32, f32) -> (i64, i64)
    %n1 = arith.addi %n, %one : i64
    %d1 = arith.addi %d0, %di : i64
    %f1 = arith.addi %f0, %fi : i64
    scf.yield %n1, %d1, %f1 : i64, i64, i64
  }
  return %all#0, %all#1, %all#2 : i64, i64, i64
}

// Computed divisors: normal ones of either sign, those scaled by 2^64 or
// 2^-64 (2^-70, subnormals, 2^80, 1.5e38 and the largest f32, whose
// reciprocals are not normal), zeros, infinities and NaN.
memref.global "private" constant @divisors : memref<16xi32> = dense<[
  1077936128, -1087163597, 1036831949, 228737632, -30110126, 2128720358,
  731, -2147483647, 478150656, 2139095039, 0, -2147483648, 2139095040,
  -8388608, 2143289344, 1736441856]>

func.func @main() {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %start = arith.constant 0 : i64
  %end = arith.constant 4294967296 : i64
  %stride = arith.constant 4099 : i64
  %sampled:3 = scf.for %i = %start to %end step %stride
      iter_args(%n = %zero, %d = %zero, %f = %zero) -> (i64, i64, i64) : i64 {
    %bits = arith.trunci %i : i64 to i32
    %x = arith.bitcast %bits : i32 to f32
    %di, %fi = func.call @check(%x) : (f32) -> (i64, i64)
    %n1 = arith.addi %n, %one : i64
    %d1 = arith.addi %d, %di : i64
    %f1 = arith.addi %f, %fi : i64
    scf.yield %n1, %d1, %f1 : i64, i64, i64
  }
  %specials = memref.get_global @specials : memref<14xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c14 = arith.constant 14 : index
  %all:3 = scf.for %i = %c0 to %c14 step %c1
      iter_args(%n = %sampled#0, %d = %sampled#1, %f = %sampled#2)
      -> (i64, i64, i64) {
    %bits = memref.load %specials[%i] : memref<14xi32>
    %x = arith.bitcast %bits : i32 to f32
    %di, %fi = func.call @check(%x) : (f32) -> (i64, i64)
    %n1 = arith.addi %n, %one : i64
    %d1 = arith.addi %d, %di : i64
    %f1 = arith.addi %f, %fi : i64
    scf.yield %n1, %d1, %f1 : i64, i64, i64
  }
  %divisors = memref.get_global @divisors : memref<16xi32>
  %c16 = arith.constant 16 : index
  %sparse = arith.constant 65537 : i64
  %shared:3 = scf.for %i = %c0 to %c16 step %c1
      iter_args(%n = %all#0, %d = %all#1, %f = %all#2) -> (i64, i64, i64) {
    %bits = memref.load %divisors[%i] : memref<16xi32>
    %divisor = arith.bitcast %bits : i32 to f32
    %ni, %di, %fi = func.call @sweep(%divisor, %sparse)
        : (f32, i64) -> (i64, i64, i64)
    %n1 = arith.addi %n, %ni : i64
    %d1 = arith.addi %d, %di : i64
    %f1 = arith.addi %f, %fi : i64
    scf.yield %n1, %d1, %f1 : i64, i64, i64
  }
  func.call @printI64(%shared#0) : (i64) -> ()
  func.call @printNewline() : () -> ()
  func.call @printI64(%shared#1) : (i64) -> ()
  func.call @printNewline() : () -> ()
  func.call @printI64(%shared#2) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}
func.func private @printI64(i64)
func.func private @printNewline()
