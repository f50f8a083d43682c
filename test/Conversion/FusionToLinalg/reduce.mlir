// fusion.reduce becomes a linalg.generic over (row, group, element of the
// group), the matrix and the columns seen as [M, G, N/G] and [G, N/G], its
// init the kind's identity; row operands of elementwise ops and maps index
// (m, n floordiv (N / G)).
// RUN: fusion-opt %s --split-input-file --fusion-lower-to-linalg | FileCheck %s

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, (d1 * 3 + d2) floordiv 6)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @groups
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEG]] : f32)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] {{.*}} : tensor<?x6xf32> into tensor<?x2x3xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] {{.*}} : tensor<6xf32> into tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[COL]], #[[ROW]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.maximumf
func.func @groups(%x: tensor<?x6xf32>, %c: tensor<6xf32>, %r: tensor<?x1xf32>)
    -> tensor<?x2xf32> {
  %0 = fusion.reduce max %x columns(%c : tensor<6xf32>)
      rows(%r : tensor<?x1xf32>) : tensor<?x6xf32> -> tensor<?x2xf32> {
  ^bb0(%v: f32, %w: f32, %s: f32):
    %0 = arith.mulf %v, %w : f32
    %1 = arith.addf %0, %s : f32
    fusion.yield %1 : f32
  }
  return %0 : tensor<?x2xf32>
}

// -----

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[PAIR:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 2)>
// CHECK-LABEL: func.func @rows
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[PAIR]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.subf
// CHECK: arith.addf
func.func @rows(%x: tensor<?x4xbf16>, %g: tensor<?x2xbf16>, %r: tensor<?x4xbf16>)
    -> tensor<?x4xbf16> {
  %0 = fusion.elementwise %x rows(%g, %r : tensor<?x2xbf16>, tensor<?x4xbf16>)
      : tensor<?x4xbf16> {
  ^bb0(%v: f32, %s: f32, %w: f32):
    %0 = arith.subf %v, %s : f32
    %1 = arith.addf %0, %w : f32
    fusion.yield %1 : f32
  }
  return %0 : tensor<?x4xbf16>
}

// -----

// min starts from +inf and combines with arith.minimumf (NaN propagates, as
// PyTorch's amin).
// CHECK-LABEL: func.func @row_min
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: linalg.fill ins(%[[INF]] : f32)
// CHECK: linalg.generic
// CHECK: %[[NEG:.*]] = arith.negf
// CHECK: arith.minimumf %{{.*}}, %[[NEG]] : f32
// CHECK-NOT: arith.maximumf
func.func @row_min(%x: tensor<?x40xf32>) -> tensor<?x1xf32> {
  %0 = fusion.reduce min %x : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    fusion.yield %n : f32
  }
  return %0 : tensor<?x1xf32>
}
