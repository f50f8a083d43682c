// RUN: fusion-opt %s --inline | FileCheck %s

// CHECK-LABEL: func.func @caller
// CHECK-NOT: call @layer
// CHECK: fusion.fused_linear
// CHECK: fusion.leaky_relu
func.func private @layer(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %1 = fusion.leaky_relu %0, negative_slope = 0.1 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

func.func @caller(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = call @layer(%x, %w) : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
