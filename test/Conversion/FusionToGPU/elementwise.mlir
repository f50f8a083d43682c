// fusion.elementwise after a training batch_norm (nothing to fuse into)
// becomes an elementwise kernel through ElementwiseOpInterface: its body,
// cloned once per lane, with the column operand loaded as one vector.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config --fusion-lower-to-gpu | FileCheck %s

// CHECK-LABEL: llvm.func @bn_gelu(
// CHECK: fusion_rt.launch @fusion_kernels::@bn_gelu_0_stats
// CHECK: fusion_rt.launch @fusion_kernels::@bn_gelu_0_finalize
// CHECK: fusion_rt.launch @fusion_kernels::@bn_gelu_0_normalize
// CHECK: fusion_rt.launch @fusion_kernels::@bn_gelu_1_elementwise grid(%{{.*}}, %{{.*}}) block 256 shared 0 stream(%{{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr, !llvm.ptr, i64, !llvm.ptr) : i32
// CHECK: gpu.func @bn_gelu_1_elementwise(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr) kernel
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-COUNT-4: math.erf
// CHECK-NOT: fusion.elementwise
func.func @bn_gelu(%x: tensor<?x8xf32>, %s: tensor<8xf32>) -> tensor<?x8xf32> {
  %y = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1>
      : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %g = fusion.elementwise %y columns(%s) : tensor<?x8xf32>, tensor<8xf32> {
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
