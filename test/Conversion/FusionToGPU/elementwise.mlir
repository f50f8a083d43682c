// fusion.elementwise after a training batch_norm (nothing to fuse into)
// is computed by the batch norm's normalizing pass: its body, cloned once per
// lane after the normalization, with its column operand loaded as one vector
// after the normalization's center, scale and shift; no kernel of its own.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config --fusion-lower-to-gpu | FileCheck %s

// CHECK-LABEL: llvm.func @bn_gelu(
// CHECK: fusion_rt.launch @fusion_kernels::@bn_gelu_0_stats
// CHECK: fusion_rt.launch @fusion_kernels::@bn_gelu_0_finalize
// CHECK: fusion_rt.launch @fusion_kernels::@bn_gelu_0_normalize grid(%{{.*}}, %{{.*}}) block 256 shared 0 stream(%{{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) : i32
// CHECK-NOT: fusion_rt.launch
// CHECK: gpu.func @bn_gelu_0_normalize(
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: math.erf
// CHECK-NOT: fusion.elementwise
func.func @bn_gelu(%x: tensor<?x8xf32>, %s: tensor<8xf32>) -> tensor<?x8xf32> {
  %y = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1>
      : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %g = fusion.elementwise %y columns(%s : tensor<8xf32>) : tensor<?x8xf32> {
  ^bb0(%v: f32, %c: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %e = math.erf %v : f32
    %p = arith.addf %e, %one : f32
    %h = arith.mulf %v, %half : f32
    %g = arith.mulf %h, %p : f32
    %r = arith.mulf %g, %c : f32
    fusion.yield %r : f32
  }
  return %g : tensor<?x8xf32>
}

// -----

// The normalized output is also returned: the elementwise op reads it from
// memory in a kernel of its own.
// CHECK-LABEL: llvm.func @bn_also_returned(
// CHECK: fusion_rt.launch @fusion_kernels::@bn_also_returned_0_normalize
// CHECK: fusion_rt.launch @fusion_kernels::@bn_also_returned_1_elementwise grid(%{{.*}}, %{{.*}}) block 256 shared 0 stream(%{{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr, !llvm.ptr, i64) : i32
// CHECK: gpu.func @bn_also_returned_1_elementwise(
// CHECK: math.tanh
func.func @bn_also_returned(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %y = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1>
      : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %t = fusion.elementwise %y : tensor<?x8xf32> {
  ^bb0(%v: f32):
    %0 = math.tanh %v : f32
    fusion.yield %0 : f32
  }
  return %y, %t : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Bodies that compute the same (names and locations aside) share one kernel;
// another body gets its own.
// CHECK-LABEL: llvm.func @shared_bodies(
// CHECK: fusion_rt.launch @fusion_kernels::@shared_bodies_0_elementwise
// CHECK: fusion_rt.launch @fusion_kernels::@shared_bodies_0_elementwise
// CHECK: fusion_rt.launch @fusion_kernels::@shared_bodies_2_elementwise
// CHECK: gpu.func @shared_bodies_0_elementwise(
// CHECK: math.exp
// CHECK-NOT: gpu.func @shared_bodies_1_elementwise(
// CHECK: gpu.func @shared_bodies_2_elementwise(
// CHECK: math.tanh
// CHECK-NOT: gpu.func @shared_bodies_1_elementwise(
func.func @shared_bodies(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = fusion.elementwise %x : tensor<?x8xf32> {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    fusion.yield %e : f32
  }
  %1 = fusion.elementwise %0 : tensor<?x8xf32> {
  ^bb0(%w: f32):
    %f = math.exp %w : f32 loc("other.py":3:0)
    fusion.yield %f : f32
  }
  %2 = fusion.elementwise %1 : tensor<?x8xf32> {
  ^bb0(%v: f32):
    %t = math.tanh %v : f32
    fusion.yield %t : f32
  }
  return %2 : tensor<?x8xf32>
}
