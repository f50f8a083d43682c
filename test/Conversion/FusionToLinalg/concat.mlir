// A concat is its inputs copied one after another into their slices of an
// empty tensor, along its dimension (a linalg.copy, which bufferizes to
// loops in place); the CPU backend takes any (the GPU backends only a
// grouped GEMM's weight and bias).
// RUN: fusion-opt %s --fusion-lower-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @rows
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<96x32xbf16>
// CHECK: %[[SLOT0:.*]] = tensor.extract_slice %[[EMPTY]][0, 0] [64, 32] [1, 1] : tensor<96x32xbf16> to tensor<64x32xbf16>
// CHECK: %[[COPY0:.*]] = linalg.copy ins(%arg0 : tensor<64x32xbf16>) outs(%[[SLOT0]] : tensor<64x32xbf16>)
// CHECK: %[[A:.*]] = tensor.insert_slice %[[COPY0]] into %[[EMPTY]][0, 0] [64, 32] [1, 1] : tensor<64x32xbf16> into tensor<96x32xbf16>
// CHECK: %[[SLOT1:.*]] = tensor.extract_slice %[[A]][64, 0] [16, 32] [1, 1]
// CHECK: %[[COPY1:.*]] = linalg.copy ins(%arg1 : tensor<16x32xbf16>) outs(%[[SLOT1]] : tensor<16x32xbf16>)
// CHECK: %[[B:.*]] = tensor.insert_slice %[[COPY1]] into %[[A]][64, 0] [16, 32] [1, 1]
// CHECK: %[[SLOT2:.*]] = tensor.extract_slice %[[B]][80, 0] [16, 32] [1, 1]
// CHECK: %[[COPY2:.*]] = linalg.copy ins(%arg2 : tensor<16x32xbf16>) outs(%[[SLOT2]] : tensor<16x32xbf16>)
// CHECK: %[[C:.*]] = tensor.insert_slice %[[COPY2]] into %[[B]][80, 0] [16, 32] [1, 1]
// CHECK: return %[[C]]
func.func @rows(%a: tensor<64x32xbf16>, %b: tensor<16x32xbf16>, %c: tensor<16x32xbf16>) -> tensor<96x32xbf16> {
  %0 = fusion.concat %a, %b, %c dim 0 : (tensor<64x32xbf16>, tensor<16x32xbf16>, tensor<16x32xbf16>) -> tensor<96x32xbf16>
  return %0 : tensor<96x32xbf16>
}

// -----

// CHECK-LABEL: func.func @columns
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<32x40xf32>
// CHECK: linalg.copy ins(%arg0 : tensor<32x8xf32>)
// CHECK: %[[A:.*]] = tensor.insert_slice %{{.*}} into %[[EMPTY]][0, 0] [32, 8] [1, 1]
// CHECK: %[[SLOT:.*]] = tensor.extract_slice %[[A]][0, 8] [32, 32] [1, 1]
// CHECK: linalg.copy ins(%arg1 : tensor<32x32xf32>) outs(%[[SLOT]] : tensor<32x32xf32>)
func.func @columns(%a: tensor<32x8xf32>, %b: tensor<32x32xf32>) -> tensor<32x40xf32> {
  %0 = fusion.concat %a, %b dim 1 : (tensor<32x8xf32>, tensor<32x32xf32>) -> tensor<32x40xf32>
  return %0 : tensor<32x40xf32>
}
