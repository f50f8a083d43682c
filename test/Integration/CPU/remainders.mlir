// fusion-expand-remainders' fmod against the exact one (f32 values' fmod in
// f64, which is representable, so its truncation is exact), on the CPU,
// with fusion-expand-divisions taking the approximate quotients as the GPU
// pipeline does: by constants, one product with the reciprocal (within 1.5
// ulps: trunc of it falls below the integer quotient, which the first
// multiply-add tells); by a divisor that a loop's remainders share, the
// correctly rounded quotient. Constant divisors of either sign, small and
// large, over one f32 bit pattern in 4099 (every sign and exponent, zeros,
// subnormals, infinities and NaNs among them) and the special values;
// computed ones (normal, subnormal, zeros, infinities, NaN) over one bit
// pattern in 65537. Each must be the same bits (NaN for NaN).
// RUN: fusion-opt %s --fusion-expand-remainders | FileCheck %s --check-prefix=EXPANDED
// RUN: fusion-opt %s --fusion-expand-remainders --fusion-expand-divisions --fusion-lower-to-cpu | %run_cpu | FileCheck %s
// EXPANDED-LABEL: func.func @check(
// EXPANDED-COUNT-6: scf.if
// EXPANDED-LABEL: func.func @sweep(
// EXPANDED: scf.if
// The values checked, those that differ:
// CHECK: {{^}}7204442{{$}}
// CHECK-NEXT: {{^}}0{{$}}

memref.global "private" constant @specials : memref<14xi32> = dense<[
  0, -2147483648, 2139095040, -8388608, 2143289344, 2139095039, -8388609,
  8388608, -2139095040, 1, -2147483647, 1065353216, -1082130432, 8388607]>

// Whether r, the expanded fmod(x, y), differs from the exact one.
func.func @differs(%x: f32, %r: f32, %y: f32) -> i64 {
  %x64 = arith.extf %x : f32 to f64
  %y64 = arith.extf %y : f32 to f64
  %exact = arith.remf %x64, %y64 : f64
  %ref = arith.truncf %exact : f64 to f32
  %rbits = arith.bitcast %r : f32 to i32
  %refbits = arith.bitcast %ref : f32 to i32
  %same = arith.cmpi eq, %rbits, %refbits : i32
  %rnan = arith.cmpf uno, %r, %r : f32
  %refnan = arith.cmpf uno, %ref, %ref : f32
  %nans = arith.andi %rnan, %refnan : i1
  %equal = arith.ori %same, %nans : i1
  %true = arith.constant true
  %differ = arith.xori %equal, %true : i1
  %d = arith.extui %differ : i1 to i64
  return %d : i64
}

// The count over the constant divisors for one x.
func.func @check(%x: f32) -> i64 {
  %c0 = arith.constant 3.0 : f32
  %c1 = arith.constant -0.7 : f32
  %c2 = arith.constant 0.1 : f32
  %c3 = arith.constant -12.5 : f32
  %c4 = arith.constant 1.0e-30 : f32
  %c5 = arith.constant -6.0e37 : f32
  %r0 = arith.remf %x, %c0 : f32
  %r1 = arith.remf %x, %c1 : f32
  %r2 = arith.remf %x, %c2 : f32
  %r3 = arith.remf %x, %c3 : f32
  %r4 = arith.remf %x, %c4 : f32
  %r5 = arith.remf %x, %c5 : f32
  %d0 = func.call @differs(%x, %r0, %c0) : (f32, f32, f32) -> i64
  %d1 = func.call @differs(%x, %r1, %c1) : (f32, f32, f32) -> i64
  %d2 = func.call @differs(%x, %r2, %c2) : (f32, f32, f32) -> i64
  %d3 = func.call @differs(%x, %r3, %c3) : (f32, f32, f32) -> i64
  %d4 = func.call @differs(%x, %r4, %c4) : (f32, f32, f32) -> i64
  %d5 = func.call @differs(%x, %r5, %c5) : (f32, f32, f32) -> i64
  %s1 = arith.addi %d0, %d1 : i64
  %s2 = arith.addi %s1, %d2 : i64
  %s3 = arith.addi %s2, %d3 : i64
  %s4 = arith.addi %s3, %d4 : i64
  %s5 = arith.addi %s4, %d5 : i64
  return %s5 : i64
}

// The remainders of a loop by y, computed outside it, over one f32 bit
// pattern in STRIDE: the values checked and those that differ.
func.func @sweep(%y: f32, %stride: i64) -> (i64, i64) {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %start = arith.constant 0 : i64
  %end = arith.constant 4294967296 : i64
  %all:2 = scf.for %i = %start to %end step %stride
      iter_args(%n = %zero, %d0 = %zero) -> (i64, i64) : i64 {
    %bits = arith.trunci %i : i64 to i32
    %x = arith.bitcast %bits : i32 to f32
    %r = arith.remf %x, %y : f32
    %di = func.call @differs(%x, %r, %y) : (f32, f32, f32) -> i64
    %n1 = arith.addi %n, %one : i64
    %d1 = arith.addi %d0, %di : i64
    scf.yield %n1, %d1 : i64, i64
  }
  return %all#0, %all#1 : i64, i64
}

// Computed divisors: normal ones of either sign, 2^-70, subnormals, 2^80,
// the largest f32, zeros, infinities and NaN.
memref.global "private" constant @divisors : memref<14xi32> = dense<[
  1077936128, -1087163597, 1036831949, 228737632, 731, -2147483647,
  1736441856, 2139095039, 0, -2147483648, 2139095040, -8388608, 2143289344,
  1060320051]>

func.func @main() {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %six = arith.constant 6 : i64
  %start = arith.constant 0 : i64
  %end = arith.constant 4294967296 : i64
  %stride = arith.constant 4099 : i64
  %sampled:2 = scf.for %i = %start to %end step %stride
      iter_args(%n = %zero, %d = %zero) -> (i64, i64) : i64 {
    %bits = arith.trunci %i : i64 to i32
    %x = arith.bitcast %bits : i32 to f32
    %di = func.call @check(%x) : (f32) -> i64
    %n1 = arith.addi %n, %six : i64
    %d1 = arith.addi %d, %di : i64
    scf.yield %n1, %d1 : i64, i64
  }
  %specials = memref.get_global @specials : memref<14xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c14 = arith.constant 14 : index
  %all:2 = scf.for %i = %c0 to %c14 step %c1
      iter_args(%n = %sampled#0, %d = %sampled#1) -> (i64, i64) {
    %bits = memref.load %specials[%i] : memref<14xi32>
    %x = arith.bitcast %bits : i32 to f32
    %di = func.call @check(%x) : (f32) -> i64
    %n1 = arith.addi %n, %six : i64
    %d1 = arith.addi %d, %di : i64
    scf.yield %n1, %d1 : i64, i64
  }
  %divisors = memref.get_global @divisors : memref<14xi32>
  %sparse = arith.constant 65537 : i64
  %shared:2 = scf.for %i = %c0 to %c14 step %c1
      iter_args(%n = %all#0, %d = %all#1) -> (i64, i64) {
    %bits = memref.load %divisors[%i] : memref<14xi32>
    %divisor = arith.bitcast %bits : i32 to f32
    %ni, %di = func.call @sweep(%divisor, %sparse) : (f32, i64) -> (i64, i64)
    %n1 = arith.addi %n, %ni : i64
    %d1 = arith.addi %d, %di : i64
    scf.yield %n1, %d1 : i64, i64
  }
  func.call @printI64(%shared#0) : (i64) -> ()
  func.call @printNewline() : () -> ()
  func.call @printI64(%shared#1) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}
func.func private @printI64(i64)
func.func private @printNewline()
