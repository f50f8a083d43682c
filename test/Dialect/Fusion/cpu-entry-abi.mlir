// RUN: fusion-opt %s -split-input-file --fusion-cpu-entry-abi | FileCheck %s

// Each public function with a body gets a destination-passing memref
// wrapper; its tensor body becomes private.
// CHECK-LABEL: func.func @model(
// CHECK-SAME: %[[X:.*]]: memref<?x8xf32>, %[[W:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<?x4xf32>) {
// CHECK: %[[XT:.*]] = bufferization.to_tensor %[[X]] restrict : memref<?x8xf32> to tensor<?x8xf32>
// CHECK: %[[WT:.*]] = bufferization.to_tensor %[[W]] restrict : memref<4x8xf32> to tensor<4x8xf32>
// CHECK: %[[Y:.*]] = call @model__tensors(%[[XT]], %[[WT]])
// CHECK: bufferization.materialize_in_destination %[[Y]] in restrict writable %[[OUT]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @model__tensors(
// CHECK-SAME: %{{.*}}: tensor<?x8xf32>, %{{.*}}: tensor<4x8xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: fusion.linear
func.func @model(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Private functions and declarations are no entry points; calls between
// entry points keep calling the tensor functions.
// CHECK-LABEL: func.func private @helper(%{{.*}}: f32) -> f32
// CHECK-LABEL: func.func private @external(tensor<4xf32>)
// CHECK-LABEL: func.func @inner(%{{.*}}: memref<4xbf16>, %{{.*}}: memref<4xbf16>)
// CHECK-LABEL: func.func private @inner__tensors(
// CHECK-LABEL: func.func @outer(%{{.*}}: memref<4xbf16>, %{{.*}}: memref<4xbf16>)
// CHECK-LABEL: func.func private @outer__tensors(
// CHECK: call @inner__tensors(%{{.*}}) : (tensor<4xbf16>) -> tensor<4xbf16>
func.func private @helper(%s: f32) -> f32 {
  return %s : f32
}
func.func private @external(tensor<4xf32>)
func.func @inner(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  return %x : tensor<4xbf16>
}
func.func @outer(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = call @inner(%x) : (tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}
