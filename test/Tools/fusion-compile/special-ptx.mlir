// A special function in a GEMM epilogue is called out of line in every
// backend's kernels (fusion-outline-special-functions): libdevice's lgammaf,
// linked into the one function that calls it, and the formula of a
// function libdevice lacks.
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %s --emit=ptx --strategy=cublas -o - | FileCheck %s
// RUN: fusion-compile %s --emit=ptx --strategy=tiled -o - | FileCheck %s
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma -o - | FileCheck %s

// CHECK-NOT: .extern .func
// CHECK-DAG: .func {{.*}}__fusion_special_lgamma(
// CHECK-DAG: .func {{.*}}__fusion_special_square_plus_one(
// CHECK: .visible .entry
// CHECK-DAG: call.uni (retval0), __fusion_special_lgamma
// CHECK-DAG: call.uni (retval0), __fusion_special_square_plus_one
func.func @special(%x: tensor<?x64xf32>, %w: tensor<128x64xf32>) -> tensor<?x128xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%a: f32):
    %g = fusion.special "lgamma"(%a) libdevice "__nv_lgammaf" : (f32) -> f32 {
    ^bb0(%t: f32):
      %l = math.log %t : f32
      fusion.yield %l : f32
    }
    %s = fusion.special "square_plus_one"(%g) : (f32) -> f32 {
    ^bb0(%t: f32):
      %one = arith.constant 1.0 : f32
      %q = math.fma %t, %t, %one : f32
      fusion.yield %q : f32
    }
    fusion.yield %s : f32
  } : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  return %0 : tensor<?x128xf32>
}
