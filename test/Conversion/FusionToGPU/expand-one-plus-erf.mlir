// fusion-expand-one-plus-erf: an f32 `1 + erf(s)` whose erf has no other use
// (either operand order) becomes erfc(|s|) as one ex2.approx.ftz of
// |s| q(|s|), selected for s <= 0, else 2 minus it: q of degree 9 for an
// exact erf, of degree 6 for one marked fastmath<afn>. Other erfs, other
// sums and f64 are left alone.
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
