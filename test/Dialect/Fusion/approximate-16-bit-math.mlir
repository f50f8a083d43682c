// fusion-approximate-16-bit-math: the erfs, exps, sines, cosines and
// divisions of fused_linear, elementwise and reduce ops whose results are
// bf16 or f16, and their tanhs where results are bf16, take fastmath<afn>;
// other math, f16 results' tanh, ops with f32 results and an op already
// marked keep what they have.
// RUN: fusion-opt %s --split-input-file --fusion-approximate-16-bit-math | FileCheck %s
// fusion-optimize runs it unless told not to (fusion-compile --math16=exact).
// RUN: fusion-opt %s --split-input-file --fusion-optimize | FileCheck %s --check-prefix=OPTIMIZE
// RUN: fusion-opt %s --split-input-file --fusion-optimize="approximate-16-bit-math=false" | FileCheck %s --check-prefix=EXACT
// OPTIMIZE-LABEL: func.func @sixteen_bit_results
// OPTIMIZE: fastmath<afn>
// OPTIMIZE-LABEL: func.func @f32_results
// EXACT-LABEL: func.func @sixteen_bit_results
// EXACT-NOT: fastmath<afn>
// EXACT-LABEL: func.func @f32_results

// gelu's erf and a tanh in a bf16 epilogue, an erf, an exp, a quotient, a
// sine and a cosine in an f16 elementwise body, and an exp in a bf16
// reduction's map: all approximate; the f16 body's tanh, tan and log stay
// exact.
// CHECK-LABEL: func.func @sixteen_bit_results
// CHECK: fusion.fused_linear
// CHECK: %[[S:.*]] = arith.mulf
// CHECK-NEXT: math.erf %[[S]] fastmath<afn> : f32
// CHECK: %[[A:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[G:.*]] = arith.mulf %[[A]], %{{.*}} : f32
// CHECK-NEXT: math.tanh %[[G]] fastmath<afn> : f32
// CHECK: fusion.elementwise
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = math.erf %[[V]] fastmath<afn> : f32
// CHECK-NEXT: %[[X:.*]] = math.exp %[[E]] fastmath<afn> : f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[X]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[T]], %[[V]] fastmath<afn> : f32
// CHECK-NEXT: %[[SN:.*]] = math.sin %[[Q]] fastmath<afn> : f32
// CHECK-NEXT: %[[CS:.*]] = math.cos %[[SN]] fastmath<afn> : f32
// CHECK-NEXT: math.tan %[[CS]] : f32
// CHECK: fusion.reduce sum
// CHECK-NEXT: ^bb0(%[[R:.*]]: f32):
// CHECK-NEXT: %[[L:.*]] = math.log %[[R]] : f32
// CHECK-NEXT: math.exp %[[L]] fastmath<afn> : f32
func.func @sixteen_bit_results(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>, %h: tensor<?x4xf16>) -> (tensor<?x4xbf16>, tensor<?x4xf16>, tensor<?x1xbf16>) {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.70710678 : f32
    %s = arith.mulf %acc, %rsqrt2 : f32
    %e = math.erf %s : f32
    %p = arith.addf %e, %one : f32
    %a = arith.mulf %acc, %half : f32
    %g = arith.mulf %a, %p : f32
    %th = math.tanh %g : f32
    fusion.yield %th : f32
  } : (tensor<?x8xbf16>, tensor<4x8xbf16>) -> tensor<?x4xbf16>
  %z = fusion.elementwise %h : tensor<?x4xf16> {
  ^bb0(%v: f32):
    %e = math.erf %v : f32
    %x2 = math.exp %e : f32
    %t = math.tanh %x2 : f32
    %q = arith.divf %t, %v : f32
    %sn = math.sin %q : f32
    %cs = math.cos %sn : f32
    %tn = math.tan %cs : f32
    fusion.yield %tn : f32
  }
  %r = fusion.reduce sum %y : tensor<?x4xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32):
    %l = math.log %v : f32
    %e = math.exp %l : f32
    fusion.yield %e : f32
  }
  return %y, %z, %r : tensor<?x4xbf16>, tensor<?x4xf16>, tensor<?x1xbf16>
}

// -----

// f32 results keep the exact functions, in every precision of the GEMM
// (tf32 here); an erf marked by hand stays marked.
// CHECK-LABEL: func.func @f32_results
// CHECK: fusion.fused_linear
// CHECK: math.erf %{{.*}} : f32
// CHECK: fusion.elementwise
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = math.erf %[[V]] : f32
// CHECK-NEXT: %[[X:.*]] = math.exp %[[E]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[X]], %[[V]] : f32
// CHECK-NEXT: math.sin %[[Q]] : f32
// CHECK: fusion.elementwise
// CHECK-NEXT: ^bb0(%[[U:.*]]: f32):
// CHECK-NEXT: math.erf %[[U]] fastmath<afn> : f32
func.func @f32_results(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %y = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    %e = math.erf %acc : f32
    fusion.yield %e : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %z = fusion.elementwise %y : tensor<?x4xf32> {
  ^bb0(%v: f32):
    %e = math.erf %v : f32
    %x2 = math.exp %e : f32
    %q = arith.divf %x2, %v : f32
    %sn = math.sin %q : f32
    fusion.yield %sn : f32
  }
  %u = fusion.elementwise %y : tensor<?x4xf32> {
  ^bb0(%v: f32):
    %e = math.erf %v fastmath<afn> : f32
    fusion.yield %e : f32
  }
  return %y, %z, %u : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// An erf outside the fusion ops' regions is not the pass's.
// CHECK-LABEL: func.func @outside
// CHECK: math.erf %{{.*}} : f32
func.func @outside(%v: f32) -> f32 {
  %e = math.erf %v : f32
  return %e : f32
}
