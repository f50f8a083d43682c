// A draw is a linalg.generic computing each element from its index i: the
// key the bits of the seed's two elements, the counter (i / 4, stream, 0),
// Philox4x32-10's ten rounds (two 32 x 32 -> 64-bit products each), word
// i mod 4 (picked by i's two low bits), its top 24 bits scaled into
// [0, 1), rounded to the element type as stored.
// RUN: fusion-opt %s --fusion-lower-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @f32_draw
// CHECK-DAG: %[[FIRST:.*]] = tensor.extract %arg0[%c0]
// CHECK-DAG: %[[SECOND:.*]] = tensor.extract %arg0[%c1]
// CHECK-DAG: %[[K0:.*]] = arith.bitcast %[[FIRST]] : f32 to i32
// CHECK-DAG: %[[K1:.*]] = arith.bitcast %[[SECOND]] : f32 to i32
// CHECK: %[[ROWS:.*]] = tensor.dim %arg1, %{{.*}} : tensor<?x8xf32>
// CHECK: %[[EMPTY:.*]] = tensor.empty(%[[ROWS]]) : tensor<?x4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[EMPTY]] : tensor<?x4xf32>)
// CHECK-DAG: %[[N:.*]] = linalg.index 1
// CHECK-DAG: %[[M:.*]] = linalg.index 0
// CHECK-DAG: %[[WIDTH:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[M64:.*]] = arith.index_castui %[[M]] : index to i64
// CHECK-DAG: %[[N64:.*]] = arith.index_castui %[[N]] : index to i64
// CHECK: %[[ROW:.*]] = arith.muli %[[M64]], %[[WIDTH]] : i64
// CHECK: %[[INDEX:.*]] = arith.addi %[[ROW]], %[[N64]] : i64
// CHECK: %[[BLOCK:.*]] = arith.shrui %[[INDEX]], %{{.*}} : i64
// CHECK: arith.trunci %[[BLOCK]] : i64 to i32
// CHECK: arith.shrui %[[BLOCK]], %{{.*}} : i64
// CHECK: arith.constant -766435501 : i32
// CHECK: arith.constant -845247145 : i32
// CHECK-COUNT-20: arith.mului_extended
// CHECK: arith.andi %[[INDEX]]
// CHECK: arith.andi %[[INDEX]]
// CHECK-COUNT-3: arith.select
// CHECK: arith.constant 8 : i32
// CHECK: arith.shrui
// CHECK: arith.uitofp
// CHECK: arith.constant 5.96046448E-8 : f32
// CHECK: linalg.yield
func.func @f32_draw(%seed: tensor<2xf32>, %x: tensor<?x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.random_uniform seed(%seed : tensor<2xf32>) rows_of(%x : tensor<?x8xf32>) stream 0 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A bf16 draw is the f32 one rounded to nearest as it is stored.
// CHECK-LABEL: func.func @bf16_draw
// CHECK: linalg.generic
// CHECK: arith.constant 5 : i32
// CHECK: arith.uitofp
// CHECK: arith.constant 5.96046448E-8 : f32
// CHECK: linalg.generic
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @bf16_draw(%seed: tensor<2xf32>, %x: tensor<16x8xbf16>) -> tensor<16x4xbf16> {
  %0 = fusion.random_uniform seed(%seed : tensor<2xf32>) rows_of(%x : tensor<16x8xbf16>) stream 5 : tensor<16x4xbf16>
  return %0 : tensor<16x4xbf16>
}
