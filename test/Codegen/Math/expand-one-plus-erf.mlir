// fusion-expand-one-plus-erf: an f32 `1 + erf(s)` whose erf has no other use
// (either operand order) becomes erfc(|s|) as one ex2.approx.ftz of
// |s| q(|s|), selected for s <= 0, else 2 minus it: q of degree 9 for an
// exact erf, of degree 6 for one marked fastmath<afn>. An argument
// s = x c takes q in |x| (coefficients times powers of |c|; the compare on
// x, reversed for c < 0), and a sum whose one user multiplies it by x' / 2
// becomes x' times (1 + erf(s)) / 2 (ex2 of the exponent minus 1, 1 minus
// it). Other erfs, other sums and f64 are left alone.
// RUN: fusion-opt %s --split-input-file --pass-pipeline="builtin.module(gpu.module(fusion-expand-one-plus-erf))" | FileCheck %s

// CHECK-LABEL: gpu.func @gelu_cdf(
// CHECK-SAME: %[[S:.*]]: f32
// CHECK-NOT: math.erf
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[LEAD:.*]] = arith.constant -7.75086505E-7 : f32
// CHECK: %[[T:.*]] = math.absf %[[S]] : f32
// CHECK-NEXT: math.fma %[[LEAD]], %[[T]], {{.*}} : f32
// CHECK-COUNT-8: math.fma {{.*}}, %[[T]], {{.*}} : f32
// CHECK-NEXT: %[[EXPONENT:.*]] = arith.mulf %{{.*}}, %[[T]] : f32
// CHECK-NEXT: %[[ERFC:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[EXPONENT]]) : (f32) -> f32
// CHECK-NEXT: %[[NONPOSITIVE:.*]] = arith.cmpf ole, %[[S]], %[[ZERO]] : f32
// CHECK-NEXT: %[[UPPER:.*]] = arith.subf %[[TWO]], %[[ERFC]] : f32
// CHECK-NEXT: %[[CDF:.*]] = arith.select %[[NONPOSITIVE]], %[[ERFC]], %[[UPPER]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: %[[CDF2:.*]] = arith.select
// CHECK: gpu.return %[[CDF]], %[[CDF2]]
gpu.module @kernels {
  gpu.func @gelu_cdf(%s: f32) -> (f32, f32) {
    %one = arith.constant 1.0 : f32
    %e = math.erf %s : f32
    %p = arith.addf %one, %e : f32
    %f = math.erf %s : f32
    %q = arith.addf %f, %one : f32
    gpu.return %p, %q : f32, f32
  }
}

// -----

// An approximate erf: q of degree 6, whose coefficients are not the exact
// ones'.
// CHECK-LABEL: gpu.func @approximate_cdf(
// CHECK-SAME: %[[S:.*]]: f32
// CHECK-NOT: math.erf
// CHECK-NOT: -7.75086505E-7
// CHECK-DAG: %[[LEAD:.*]] = arith.constant -2.03180698E-5 : f32
// CHECK-DAG: %[[LAST:.*]] = arith.constant -1.6280632 : f32
// CHECK: %[[T:.*]] = math.absf %[[S]] : f32
// CHECK-NEXT: math.fma %[[LEAD]], %[[T]], {{.*}} : f32
// CHECK-COUNT-4: math.fma {{.*}}, %[[T]], {{.*}} : f32
// CHECK-NEXT: %[[Q:.*]] = math.fma {{.*}}, %[[T]], %[[LAST]] : f32
// CHECK-NEXT: %[[EXPONENT:.*]] = arith.mulf %[[Q]], %[[T]] : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[EXPONENT]])
// CHECK: arith.select
gpu.module @kernels {
  gpu.func @approximate_cdf(%s: f32) -> f32 {
    %one = arith.constant 1.0 : f32
    %e = math.erf %s fastmath<afn> : f32
    %p = arith.addf %e, %one : f32
    gpu.return %p : f32
  }
}

// -----

// CHECK-LABEL: gpu.func @left_alone(
// CHECK: %[[E:.*]] = math.erf %{{.*}} : f32
// CHECK: arith.addf %[[E]], %{{.*}} : f32
// CHECK: %[[F:.*]] = math.erf %{{.*}} : f32
// CHECK: arith.addf %[[F]], %{{.*}} : f32
// CHECK: %[[G:.*]] = math.erf %{{.*}} : f64
// CHECK: arith.addf %[[G]], %{{.*}} : f64
// CHECK: %[[H:.*]] = math.erf %{{.*}} : f32
// CHECK: arith.addf %[[H]], %{{.*}} : f32
// CHECK-NOT: llvm.call_intrinsic
gpu.module @kernels {
  gpu.func @left_alone(%s: f32, %d: f64) -> (f32, f32, f64, f32, f32) {
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %one64 = arith.constant 1.0 : f64
    // Another sum: not 1 + erf.
    %e = math.erf %s : f32
    %p = arith.addf %two, %e : f32
    // erf read twice: computing it once is cheaper.
    %f = math.erf %s : f32
    %q = arith.addf %f, %one : f32
    // f64.
    %g = math.erf %d : f64
    %r = arith.addf %g, %one64 : f64
    // An erf added to a value that is not a constant.
    %h = math.erf %s : f32
    %u = arith.addf %h, %s : f32
    gpu.return %p, %q, %r, %f, %u : f32, f32, f64, f32, f32
  }
}

// -----

// gelu, x / 2 (1 + erf(x / sqrt 2)): both products fold into the
// polynomial in |x| (a_0 / sqrt 2 = -1.15121448), whose exponent ends in a
// multiply-add with -1; x times (s <= 0 ? e : 1 - e).
// CHECK-LABEL: gpu.func @gelu(
// CHECK-SAME: %[[X:.*]]: f32
// CHECK-NOT: math.erf
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[MINUS_ONE:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-DAG: %[[LAST:.*]] = arith.constant -1.15121448 : f32
// CHECK-DAG: %[[LEAD:.*]] = arith.constant -1.79588039E-6 : f32
// CHECK: %[[T:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT: math.fma %[[LEAD]], %[[T]], {{.*}} : f32
// CHECK-COUNT-4: math.fma {{.*}}, %[[T]], {{.*}} : f32
// CHECK-NEXT: %[[Q:.*]] = math.fma {{.*}}, %[[T]], %[[LAST]] : f32
// CHECK-NEXT: %[[EXPONENT:.*]] = math.fma %[[Q]], %[[T]], %[[MINUS_ONE]] : f32
// CHECK-NEXT: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[EXPONENT]])
// CHECK-NEXT: %[[NONPOSITIVE:.*]] = arith.cmpf ole, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: %[[UPPER:.*]] = arith.subf %[[ONE]], %[[E]] : f32
// CHECK-NEXT: %[[CDF:.*]] = arith.select %[[NONPOSITIVE]], %[[E]], %[[UPPER]] : f32
// CHECK-NEXT: %[[G:.*]] = arith.mulf %[[X]], %[[CDF]] : f32
// CHECK-NOT: arith.mulf
// CHECK: gpu.return %[[G]]
gpu.module @kernels {
  gpu.func @gelu(%x: f32) -> f32 {
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.70710678118654752 : f32
    %s = arith.mulf %x, %rsqrt2 : f32
    %e = math.erf %s fastmath<afn> : f32
    %p = arith.addf %e, %one : f32
    %h = arith.mulf %x, %half : f32
    %g = arith.mulf %h, %p : f32
    gpu.return %g : f32
  }
}

// -----

// A negative scale (constant first) compares x >= 0; a product by x / 2
// that is not the sum's only user, and a factor other than 1/2, stay
// products of the sum.
// CHECK-LABEL: gpu.func @scales(
// CHECK-SAME: %[[X:[^:]*]]: f32, %[[Y:[^:]*]]: f32
// CHECK-NOT: math.erf
// CHECK: math.absf %[[X]] : f32
// CHECK: %[[EXPONENT:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[EXPONENT]])
// CHECK-NEXT: arith.cmpf oge, %[[X]], %{{.*}} : f32
// CHECK: %[[CDF:.*]] = arith.select
// CHECK: %[[H:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK: arith.mulf %[[H]], %[[CDF]] : f32
// CHECK: math.absf %[[X]] : f32
// CHECK: %[[EXPONENT2:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[EXPONENT2]])
// CHECK-NEXT: arith.cmpf ole, %[[X]], %{{.*}} : f32
// CHECK: %[[CDF2:.*]] = arith.select
// CHECK-NEXT: %[[K:.*]] = arith.mulf %[[Y]], %{{.*}} : f32
// CHECK-NEXT: arith.mulf %[[K]], %[[CDF2]] : f32
gpu.module @kernels {
  gpu.func @scales(%x: f32, %y: f32) -> (f32, f32, f32) {
    %half = arith.constant 0.5 : f32
    %third = arith.constant 0.333 : f32
    %one = arith.constant 1.0 : f32
    %minus = arith.constant -0.7 : f32
    %rsqrt2 = arith.constant 0.70710678118654752 : f32
    %s = arith.mulf %minus, %x : f32
    %e = math.erf %s : f32
    %p = arith.addf %e, %one : f32
    %h = arith.mulf %x, %half : f32
    %g = arith.mulf %h, %p : f32
    %t = arith.mulf %x, %rsqrt2 : f32
    %f = math.erf %t : f32
    %q = arith.addf %one, %f : f32
    %k = arith.mulf %y, %third : f32
    %r = arith.mulf %k, %q : f32
    gpu.return %g, %p, %r : f32, f32, f32
  }
}

// -----

// A scale whose powers leave f32's normal range (1e5^10) stays a product:
// q in |s| = |x c|.
// CHECK-LABEL: gpu.func @huge_scale(
// CHECK-SAME: %[[X:.*]]: f32
// CHECK: %[[S:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK: math.absf %[[S]] : f32
// CHECK: arith.cmpf ole, %[[S]], %{{.*}} : f32
gpu.module @kernels {
  gpu.func @huge_scale(%x: f32) -> f32 {
    %one = arith.constant 1.0 : f32
    %big = arith.constant 1.0e5 : f32
    %s = arith.mulf %x, %big : f32
    %e = math.erf %s : f32
    %p = arith.addf %e, %one : f32
    gpu.return %p : f32
  }
}
