// A column operand of one element (a single value) is read at index 0 for
// every element: (m, n) -> (0) where a per-column vector is (m, n) -> (n),
// and not regrouped with the matrix in a reduction over groups of columns.
// RUN: fusion-opt %s --split-input-file --fusion-lower-to-linalg | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-lower-to-cpu | FileCheck %s --check-prefix=CPU

// CHECK-DAG: #[[MN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[N:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[FIRST:.*]] = affine_map<(d0, d1) -> (0)>
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[S:.*]]: tensor<1xf32>, %[[C:.*]]: tensor<4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[MN]], #[[FIRST]], #[[N]], #[[MN]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[S]], %[[C]] : tensor<?x4xf32>, tensor<1xf32>, tensor<4xf32>)
// CHECK: arith.minimumf
// CHECK: arith.subf
// CPU-LABEL: llvm.func @elementwise
// CPU-NOT: fusion.
func.func @elementwise(%x: tensor<?x4xf32>, %s: tensor<1xf32>, %c: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.elementwise %x columns(%s, %c : tensor<1xf32>, tensor<4xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %one: f32, %col: f32):
    %1 = arith.minimumf %v, %one : f32
    %2 = arith.subf %1, %col : f32
    fusion.yield %2 : f32
  }
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[FIRST3:.*]] = affine_map<(d0, d1, d2) -> (0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @reduce_groups
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<1xf32>
// CHECK: %[[X3:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] {{.*}} : tensor<?x6xf32> into tensor<?x2x3xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[FIRST3]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X3]], %[[S]] : tensor<?x2x3xf32>, tensor<1xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CPU-LABEL: llvm.func @reduce_groups
// CPU-NOT: fusion.
func.func @reduce_groups(%x: tensor<?x6xf32>, %s: tensor<1xf32>) -> tensor<?x2xf32> {
  %0 = fusion.reduce sum %x columns(%s : tensor<1xf32>) : tensor<?x6xf32> -> tensor<?x2xf32> {
  ^bb0(%v: f32, %one: f32):
    %1 = arith.mulf %v, %one : f32
    fusion.yield %1 : f32
  }
  return %0 : tensor<?x2xf32>
}

// -----

// The fused op's epilogue reads it the same way, after the bias (a vector).
// CHECK-DAG: #[[MN2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[N2:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[FIRST2:.*]] = affine_map<(d0, d1) -> (0)>
// CHECK-LABEL: func.func @fused_linear
// CHECK: linalg.generic {indexing_maps = [#[[MN2]], #[[N2]], #[[FIRST2]], #[[MN2]]]
// CHECK: arith.addf
// CHECK: arith.minimumf
func.func @fused_linear(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>,
                        %c: tensor<1xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) epilogue(%c) {
  ^bb0(%acc: f32, %one: f32):
    %1 = arith.minimumf %acc, %one : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<1xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
