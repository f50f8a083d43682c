// fusion-expand-tanh: mish's tanh(softplus(x)), log1p(exp(x)) or
// PyTorch's thresholded form (x > T ? x : log1p(exp(x)), T >= 10), becomes
// n / (n + 2) with n = e (e + 2), e = exp(x), and 1 past x = 20, the exp
// keeping the tanh's fastmath flags and the division approximate with
// them, else the approximate reciprocal's corrected quotient (no
// div.rn.f32); gelu's 1 + tanh(y) becomes 2 / (1 + exp(-2y)) (1 - tanh(y):
// exp(2y)), the exact form 0 where exp overflows; an f32 tanh with afn
// that no sum reads becomes tanh.approx.f32. A threshold below 10, a select
// of another value, a log of exp, and an exact tanh of anything else are
// left alone.
// RUN: fusion-opt %s --split-input-file --pass-pipeline="builtin.module(gpu.module(fusion-expand-tanh))" | FileCheck %s

// CHECK-LABEL: gpu.func @mish(
// CHECK-SAME: %[[X:[^:]*]]: f32
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[LIMIT:.*]] = arith.constant 2.000000e+01 : f32
// CHECK: %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT: %[[E2:.*]] = arith.addf %[[E]], %[[TWO]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.mulf %[[E]], %[[E2]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[N]], %[[TWO]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[ONE]], %[[D]] fastmath<afn> : f32
// CHECK-NEXT: %[[Q0:.*]] = arith.mulf %[[N]], %[[R]] : f32
// CHECK-NEXT: %[[NQ0:.*]] = arith.negf %[[Q0]] : f32
// CHECK-NEXT: %[[RES:.*]] = math.fma %[[NQ0]], %[[D]], %[[N]] : f32
// CHECK-NEXT: %[[Q:.*]] = math.fma %[[RES]], %[[R]], %[[Q0]] : f32
// CHECK-NEXT: %[[LARGE:.*]] = arith.cmpf ogt, %[[X]], %[[LIMIT]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[LARGE]], %[[ONE]], %[[Q]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[X]], %[[T]] : f32
// CHECK-NOT: math.tanh
// CHECK-NOT: math.log1p
// CHECK: gpu.return %[[M]]
gpu.module @kernels {
  gpu.func @mish(%x: f32) -> f32 {
    %threshold = arith.constant 20.0 : f32
    %e = math.exp %x : f32
    %l = math.log1p %e : f32
    %large = arith.cmpf ogt, %x, %threshold : f32
    %s = arith.select %large, %x, %l : f32
    %t = math.tanh %s : f32
    %m = arith.mulf %x, %t : f32
    gpu.return %m : f32
  }
}

// -----

// Without the threshold, and approximate (a bf16 result's): the new exp
// and division are approximate too, and no tanh.approx is left.
// CHECK-LABEL: gpu.func @unthresholded(
// CHECK-SAME: %[[X:[^:]*]]: f32
// CHECK: math.exp %[[X]] fastmath<afn> : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} fastmath<afn> : f32
// CHECK: arith.select
// CHECK-NOT: tanh
gpu.module @kernels {
  gpu.func @unthresholded(%x: f32) -> f32 {
    %e = math.exp %x : f32
    %l = math.log1p %e : f32
    %t = math.tanh %l fastmath<afn> : f32
    gpu.return %t : f32
  }
}

// -----

// An approximate tanh of anything else: tanh.approx.f32. An exact one
// stays libdevice's.
// CHECK-LABEL: gpu.func @approximate(
// CHECK-SAME: %[[X:[^:]*]]: f32
// CHECK: %[[A:.*]] = llvm.inline_asm asm_dialect = att "tanh.approx.f32 $0, $1;", "=f,f" %[[X]] : (f32) -> f32
// CHECK: %[[B:.*]] = math.tanh %[[X]] : f32
// CHECK: gpu.return %[[A]], %[[B]]
gpu.module @kernels {
  gpu.func @approximate(%x: f32) -> (f32, f32) {
    %a = math.tanh %x fastmath<afn> : f32
    %b = math.tanh %x : f32
    gpu.return %a, %b : f32, f32
  }
}

// -----

// Not softplus: a threshold below 10 (tanh(x) is not 1 past it), the
// select's true value not x, log instead of log1p, an f64 tanh.
// CHECK-LABEL: gpu.func @not_softplus(
// CHECK-COUNT-3: math.tanh %{{.*}} : f32
// CHECK: math.tanh %{{.*}} : f64
gpu.module @kernels {
  gpu.func @not_softplus(%x: f32, %y: f32, %z: f64) -> (f32, f32, f32, f64) {
    %low = arith.constant 5.0 : f32
    %high = arith.constant 20.0 : f32
    %e = math.exp %x : f32
    %l = math.log1p %e : f32
    %small = arith.cmpf ogt, %x, %low : f32
    %s = arith.select %small, %x, %l : f32
    %t = math.tanh %s : f32
    %large = arith.cmpf ogt, %x, %high : f32
    %s2 = arith.select %large, %y, %l : f32
    %t2 = math.tanh %s2 : f32
    %lg = math.log %e : f32
    %t3 = math.tanh %lg : f32
    %ez = math.exp %z : f64
    %lz = math.log1p %ez : f64
    %tz = math.tanh %lz : f64
    gpu.return %t, %t2, %t3, %tz : f32, f32, f32, f64
  }
}

// -----

// gelu's tanh form: 1 + tanh(y) -> 2 / (1 + exp(-2y)) (either order of the
// sum), 1 - tanh(y) -> 2 / (1 + exp(2y)), with the tanh's flags.
// CHECK-LABEL: gpu.func @one_plus_tanh(
// CHECK-SAME: %[[Y:[^:]*]]: f32
// CHECK-DAG: %[[M2:.*]] = arith.constant -2.000000e+00 : f32
// CHECK-DAG: %[[P2:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[A:.*]] = arith.mulf %[[Y]], %[[M2]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[A]] fastmath<afn> : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[P2]], %[[D]] fastmath<afn> : f32
// CHECK: %[[B:.*]] = arith.mulf %[[Y]], %[[M2]] : f32
// CHECK-NEXT: %[[E2:.*]] = math.exp %[[B]] : f32
// CHECK-NEXT: %[[D2:.*]] = arith.addf %[[E2]], %[[ONE]] : f32
// CHECK-NEXT: %[[R2:.*]] = arith.divf %[[ONE]], %[[D2]] fastmath<afn> : f32
// CHECK-NEXT: %[[Q20:.*]] = arith.mulf %[[R2]], %[[P2]] : f32
// CHECK-NEXT: %[[NQ20:.*]] = arith.negf %[[Q20]] : f32
// CHECK-NEXT: %[[RES2:.*]] = math.fma %[[NQ20]], %[[D2]], %[[P2]] : f32
// CHECK-NEXT: %[[C2:.*]] = math.fma %[[RES2]], %[[R2]], %[[Q20]] : f32
// CHECK-NEXT: %[[OVER:.*]] = arith.cmpf oeq, %[[D2]], %[[INF]] : f32
// CHECK-NEXT: %[[Q2:.*]] = arith.select %[[OVER]], %[[ZERO]], %[[C2]] : f32
// CHECK: %[[C:.*]] = arith.mulf %[[Y]], %[[P2]] : f32
// CHECK-NEXT: %[[E3:.*]] = math.exp %[[C]] : f32
// CHECK-NOT: tanh
// CHECK-NOT: arith.divf %[[P2]]
// CHECK: gpu.return %[[Q]], %[[Q2]]
gpu.module @kernels {
  gpu.func @one_plus_tanh(%y: f32) -> (f32, f32, f32) {
    %one = arith.constant 1.0 : f32
    %t = math.tanh %y fastmath<afn> : f32
    %s = arith.addf %one, %t : f32
    %t2 = math.tanh %y : f32
    %s2 = arith.addf %t2, %one : f32
    %t3 = math.tanh %y : f32
    %d = arith.subf %one, %t3 : f32
    gpu.return %s, %s2, %d : f32, f32, f32
  }
}

// -----

// Not rewritten: a tanh with two users, added to another value, subtracted
// from 1 the other way; an approximate tanh that a sum reads stays exact.
// CHECK-LABEL: gpu.func @kept(
// CHECK-COUNT-3: math.tanh %{{.*}} : f32
// CHECK: math.tanh %{{.*}} fastmath<afn> : f32
// CHECK-NOT: inline_asm
gpu.module @kernels {
  gpu.func @kept(%y: f32, %z: f32) -> (f32, f32, f32, f32, f32) {
    %one = arith.constant 1.0 : f32
    %t = math.tanh %y : f32
    %s = arith.addf %one, %t : f32
    %t2 = math.tanh %z : f32
    %s2 = arith.addf %t2, %y : f32
    %t3 = math.tanh %y : f32
    %d = arith.subf %t3, %one : f32
    %t4 = math.tanh %z fastmath<afn> : f32
    %s4 = arith.addf %t4, %z : f32
    gpu.return %s, %t, %s2, %d, %s4 : f32, f32, f32, f32, f32
  }
}
