// fusion-expand-trigonometry's sine, cosine and tangent against the f64
// functions (libm's), on the CPU, in ulps of the f32 nearest the f64
// result: over one f32 bit pattern in 257 (every sign and exponent,
// subnormals, arguments past 105615 (libm's f32 functions, out of line)
// and NaNs among them) and the special values (zeros, infinities, the
// bound and the next f32, pi/2, pi). Each must be within the bound
// the pass's description gives (1.55 ulps for sine and cosine, 3.44
// for tangent; `fusion-expand-trigonometry` documents the exhaustive sweep),
// zeros of the right sign, NaN for NaN.
// RUN: fusion-opt %s --fusion-expand-trigonometry | FileCheck %s --check-prefix=EXPANDED
// RUN: fusion-opt %s --fusion-expand-trigonometry --fusion-lower-to-cpu | %run_cpu | FileCheck %s
// EXPANDED-LABEL: func.func @check(
// EXPANDED-COUNT-3: scf.if
// The values checked, and for each function those past its bound:
// CHECK: {{^}}16711950{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}0{{$}}

// Whether `got` is more than `bound` ulps from `exact`: ulps of the f32
// nearest it (2^-149 for subnormals); a zero must be the same bits, NaN
// must be NaN.
func.func @beyond(%got: f32, %exact: f64, %bound: f64) -> i64 {
  %nearest = arith.truncf %exact : f64 to f32
  %bits = arith.bitcast %nearest : f32 to i32
  %gotbits = arith.bitcast %got : f32 to i32
  %c23 = arith.constant 23 : i32
  %c255 = arith.constant 255 : i32
  %c1 = arith.constant 1 : i32
  %shifted = arith.shrui %bits, %c23 : i32
  %field = arith.andi %shifted, %c255 : i32
  %exponent = arith.maxui %field, %c1 : i32
  // ulp = 2^(exponent - 150), an f64 of exponent field exponent - 150 + 1023.
  %bias = arith.constant 873 : i32
  %ulpfield = arith.addi %exponent, %bias : i32
  %ulpfield64 = arith.extui %ulpfield : i32 to i64
  %c52 = arith.constant 52 : i64
  %ulpbits = arith.shli %ulpfield64, %c52 : i64
  %ulp = arith.bitcast %ulpbits : i64 to f64
  %got64 = arith.extf %got : f32 to f64
  %difference = arith.subf %got64, %exact : f64
  %distance = math.absf %difference : f64
  %ulps = arith.divf %distance, %ulp : f64
  // NaN where either is (ule is true for unordered operands).
  %close = arith.cmpf ule, %ulps, %bound : f64
  %zero = arith.constant 0.0 : f32
  %iszero = arith.cmpf oeq, %nearest, %zero : f32
  %samebits = arith.cmpi eq, %bits, %gotbits : i32
  %gotnan = arith.cmpf uno, %got, %got : f32
  %exactnan = arith.cmpf uno, %exact, %exact : f64
  %nanmatch = arith.cmpi eq, %gotnan, %exactnan : i1
  %valueok = arith.select %iszero, %samebits, %close : i1
  %ok = arith.andi %valueok, %nanmatch : i1
  %true = arith.constant true
  %bad = arith.xori %ok, %true : i1
  %result = arith.extui %bad : i1 to i64
  return %result : i64
}

memref.global "private" constant @specials : memref<14xi32> = dense<[
  0, -2147483648, 2139095040, -8388608, 2143289344, 1204701056, -942782592,
  1204701057, 1, -2147483647, 1070141403, 1078530011, -246811958,
  2139095039]>

// sin, cos and tan of x: whether each is beyond its bound.
func.func @check(%x: f32) -> (i64, i64, i64) {
  %x64 = arith.extf %x : f32 to f64
  %s = math.sin %x : f32
  %c = math.cos %x : f32
  %t = math.tan %x : f32
  %s64 = math.sin %x64 : f64
  %c64 = math.cos %x64 : f64
  %t64 = math.tan %x64 : f64
  %narrow = arith.constant 1.55 : f64
  %wide = arith.constant 3.44 : f64
  %ds = func.call @beyond(%s, %s64, %narrow) : (f32, f64, f64) -> i64
  %dc = func.call @beyond(%c, %c64, %narrow) : (f32, f64, f64) -> i64
  %dt = func.call @beyond(%t, %t64, %wide) : (f32, f64, f64) -> i64
  return %ds, %dc, %dt : i64, i64, i64
}

func.func @main() {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %start = arith.constant 0 : i64
  %end = arith.constant 4294967296 : i64
  %stride = arith.constant 257 : i64
  %all:4 = scf.for %i = %start to %end step %stride
      iter_args(%n = %zero, %bs = %zero, %bc = %zero, %bt = %zero)
      -> (i64, i64, i64, i64) : i64 {
    %bits = arith.trunci %i : i64 to i32
    %x = arith.bitcast %bits : i32 to f32
    %ds, %dc, %dt = func.call @check(%x) : (f32) -> (i64, i64, i64)
    %n1 = arith.addi %n, %one : i64
    %bs1 = arith.addi %bs, %ds : i64
    %bc1 = arith.addi %bc, %dc : i64
    %bt1 = arith.addi %bt, %dt : i64
    scf.yield %n1, %bs1, %bc1, %bt1 : i64, i64, i64, i64
  }
  %specials = memref.get_global @specials : memref<14xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c14 = arith.constant 14 : index
  %sum:4 = scf.for %k = %c0 to %c14 step %c1
      iter_args(%n = %all#0, %bs = %all#1, %bc = %all#2, %bt = %all#3)
      -> (i64, i64, i64, i64) {
    %bits = memref.load %specials[%k] : memref<14xi32>
    %x = arith.bitcast %bits : i32 to f32
    %ds, %dc, %dt = func.call @check(%x) : (f32) -> (i64, i64, i64)
    %n1 = arith.addi %n, %one : i64
    %bs1 = arith.addi %bs, %ds : i64
    %bc1 = arith.addi %bc, %dc : i64
    %bt1 = arith.addi %bt, %dt : i64
    scf.yield %n1, %bs1, %bc1, %bt1 : i64, i64, i64, i64
  }
  func.call @printI64(%sum#0) : (i64) -> ()
  func.call @printNewline() : () -> ()
  func.call @printI64(%sum#1) : (i64) -> ()
  func.call @printNewline() : () -> ()
  func.call @printI64(%sum#2) : (i64) -> ()
  func.call @printNewline() : () -> ()
  func.call @printI64(%sum#3) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}
func.func private @printI64(i64)
func.func private @printNewline()
