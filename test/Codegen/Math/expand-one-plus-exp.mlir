// fusion-expand-one-plus-exp: an f32 math.exp with fastmath<afn> whose every
// user adds it to a constant of magnitude at least 2^-102 (either operand
// order; sigmoid's 1 + exp(-x)) becomes ex2.approx.ftz of its argument
// times log2(e). An exp without afn, with another user, added to a value
// or to a smaller constant, and f64 are left alone. An approximate
// reciprocal of such a sum, 1 / (c + exp(a)) with c >= 2^-126 (the exp
// approximate or not), becomes rcp.approx.ftz of the sum times s, times s,
// s = 1/4 past 2^126, else 1; other reciprocals and quotients are left
// alone.
// RUN: fusion-opt %s --split-input-file --pass-pipeline="builtin.module(gpu.module(fusion-expand-one-plus-exp))" | FileCheck %s

// CHECK-LABEL: gpu.func @sigmoid_denominators(
// CHECK-SAME: %[[X:[^:]*]]: f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[NEG:.*]] = arith.constant -3.000000e+38 : f32
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[A:.*]] = arith.mulf %[[X]], %[[LOG2E]] : f32
// CHECK-NEXT: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[A]]) : (f32) -> f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT: %[[D2:.*]] = arith.addf %[[E]], %[[NEG]] : f32
// CHECK-NEXT: %[[D3:.*]] = arith.addf %[[E]], %[[INF]] : f32
// CHECK-NEXT: gpu.return %[[D]], %[[D2]], %[[D3]]
gpu.module @kernels {
  gpu.func @sigmoid_denominators(%x: f32) -> (f32, f32, f32) {
    %one = arith.constant 1.0 : f32
    %neg = arith.constant -3.0e38 : f32
    %inf = arith.constant 0x7F800000 : f32
    %e = math.exp %x fastmath<afn> : f32
    %d = arith.addf %e, %one : f32
    %d2 = arith.addf %neg, %e : f32
    %d3 = arith.addf %e, %inf : f32
    gpu.return %d, %d2, %d3 : f32, f32, f32
  }
}

// -----

// The smallest absorbing constant, 2^-102, and one below it.
// CHECK-LABEL: gpu.func @smallest(
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: math.exp
// CHECK-NOT: llvm.call_intrinsic
gpu.module @kernels {
  gpu.func @smallest(%x: f32) -> (f32, f32) {
    %c = arith.constant 1.97215226E-31 : f32
    %small = arith.constant 1.9e-31 : f32
    %e = math.exp %x fastmath<afn> : f32
    %d = arith.addf %e, %c : f32
    %f = math.exp %x fastmath<afn> : f32
    %g = arith.addf %f, %small : f32
    gpu.return %d, %g : f32, f32
  }
}

// -----

// Left alone: an exact exp, an exp with another user, one added to a value,
// and f64.
// CHECK-LABEL: gpu.func @kept(
// CHECK-NOT: llvm.call_intrinsic
// CHECK-COUNT-4: math.exp
// CHECK-NOT: llvm.call_intrinsic
gpu.module @kernels {
  gpu.func @kept(%x: f32, %y: f32, %z: f64) -> (f32, f32, f32, f32, f32, f64) {
    %one = arith.constant 1.0 : f32
    %one64 = arith.constant 1.0 : f64
    %e0 = math.exp %x : f32
    %d0 = arith.addf %e0, %one : f32
    %e1 = math.exp %x fastmath<afn> : f32
    %d1 = arith.addf %e1, %one : f32
    %m1 = arith.mulf %e1, %y : f32
    %e2 = math.exp %y fastmath<afn> : f32
    %d2 = arith.addf %e2, %x : f32
    %e3 = math.exp %z fastmath<afn> : f64
    %d3 = arith.addf %e3, %one64 : f64
    gpu.return %d0, %d1, %m1, %d2, %d2, %d3 : f32, f32, f32, f32, f32, f64
  }
}

// -----

// CHECK-LABEL: gpu.func @sigmoids(
// CHECK-SAME: %[[X:[^:]*]]: f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[QUARTER:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[LARGE:.*]] = arith.constant 8.50705917E+37 : f32
// CHECK: %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT: %[[ISLARGE:.*]] = arith.cmpf ogt, %[[D]], %[[LARGE]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.select %[[ISLARGE]], %[[QUARTER]], %[[ONE]] : f32
// CHECK-NEXT: %[[DS:.*]] = arith.mulf %[[D]], %[[S]] : f32
// CHECK-NEXT: %[[R:.*]] = nvvm.rcp.approx.ftz.f %[[DS]] : f32
// CHECK-NEXT: %[[SIGMOID:.*]] = arith.mulf %[[R]], %[[S]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: nvvm.rcp.approx.ftz.f
// CHECK: gpu.return %[[SIGMOID]]
gpu.module @kernels {
  gpu.func @sigmoids(%x: f32) -> (f32, f32) {
    %one = arith.constant 1.0 : f32
    %e = math.exp %x : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %one, %d fastmath<afn> : f32
    %f = math.exp %x fastmath<afn> : f32
    %g = arith.addf %one, %f : f32
    %t = arith.divf %one, %g fastmath<afn> : f32
    gpu.return %s, %t : f32, f32
  }
}

// -----

// Left alone: a correctly rounded reciprocal, a quotient, a constant that
// does not keep the sum normal (0), and a sum of another value.
// CHECK-LABEL: gpu.func @kept_reciprocals(
// CHECK-NOT: nvvm.rcp
// CHECK-COUNT-4: arith.divf
// CHECK-NOT: nvvm.rcp
gpu.module @kernels {
  gpu.func @kept_reciprocals(%x: f32, %y: f32) -> (f32, f32, f32, f32) {
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %zero = arith.constant 0.0 : f32
    %e = math.exp %x : f32
    %d = arith.addf %e, %one : f32
    %0 = arith.divf %one, %d : f32
    %1 = arith.divf %two, %d fastmath<afn> : f32
    %z = arith.addf %e, %zero : f32
    %2 = arith.divf %one, %z fastmath<afn> : f32
    %v = arith.addf %y, %one : f32
    %3 = arith.divf %one, %v fastmath<afn> : f32
    gpu.return %0, %1, %2, %3 : f32, f32, f32, f32
  }
}
