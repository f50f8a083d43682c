// fusion-lower-to-linalg keeps a special function without a formula (the
// C library's, for fusion-math-to-libm) in the generic's body (one with a
// formula: special-invalid.mlir).
// RUN: fusion-opt %s --fusion-lower-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @library_function
// CHECK: linalg.generic
// CHECK: fusion.special "bessel_j0"(%{{.*}}) libdevice "__nv_j0f" libm "j0f" : (f32) -> f32
// CHECK: linalg.yield
func.func @library_function(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = fusion.elementwise %x : tensor<4x8xf32> {
  ^bb0(%a: f32):
    %j = fusion.special "bessel_j0"(%a) libdevice "__nv_j0f" libm "j0f" : (f32) -> f32
    fusion.yield %j : f32
  }
  return %y : tensor<4x8xf32>
}
