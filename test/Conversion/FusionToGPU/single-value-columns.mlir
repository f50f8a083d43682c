// A column operand of one element (a single value) is passed to each kernel
// as it is and read at element 0 by every column: one scalar load where a
// per-column vector is a vector load a chunk (elementwise and normalizing
// kernels, row programs), a [1] memref that the GEMM epilogue stages for
// its columns from element 0.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config --fusion-lower-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s --check-prefix=WGMMA

// CHECK-LABEL: gpu.func @elementwise_0_elementwise(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %[[SINGLE:.*]]: !llvm.ptr, %[[VECTOR:.*]]: !llvm.ptr)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[AT:.*]] = llvm.getelementptr %[[SINGLE]][%[[ZERO]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.load %[[AT]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: %[[CHUNK:.*]] = llvm.getelementptr %[[VECTOR]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.load %[[CHUNK]] {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-NOT: llvm.getelementptr %[[SINGLE]]
// CHECK: gpu.return
func.func @elementwise(%x: tensor<?x8xf32>, %s: tensor<1xf32>, %c: tensor<8xf32>) -> tensor<?x8xf32> {
  %0 = fusion.elementwise %x columns(%s, %c : tensor<1xf32>, tensor<8xf32>) : tensor<?x8xf32> {
  ^bb0(%v: f32, %one: f32, %col: f32):
    %1 = arith.minimumf %v, %one : f32
    %2 = arith.subf %1, %col : f32
    fusion.yield %2 : f32
  }
  return %0 : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: gpu.func @reduce_0_rows(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: i64, %[[SINGLE:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[AT:.*]] = llvm.getelementptr %[[SINGLE]][%[[ZERO]]]
// CHECK-NEXT: llvm.load %[[AT]] {alignment = 4 : i64} : !llvm.ptr -> f32
func.func @reduce(%x: tensor<?x8xf32>, %s: tensor<1xf32>) -> tensor<?x1xf32> {
  %0 = fusion.reduce sum %x columns(%s : tensor<1xf32>) : tensor<?x8xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %one: f32):
    %1 = arith.mulf %v, %one : f32
    fusion.yield %1 : f32
  }
  return %0 : tensor<?x1xf32>
}

// -----

// The batch norm's normalizing pass reads its center, scale and shift as
// vectors and the single value after them once.
// CHECK-LABEL: gpu.func @bn_scale_0_normalize(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[SINGLE:.*]]: !llvm.ptr)
// CHECK-COUNT-3: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[AT:.*]] = llvm.getelementptr %[[SINGLE]][%[[ZERO]]]
// CHECK-NEXT: llvm.load %[[AT]] {alignment = 4 : i64} : !llvm.ptr -> f32
func.func @bn_scale(%x: tensor<?x8xf32>, %s: tensor<1xf32>) -> tensor<?x8xf32> {
  %y = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1>
      : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %g = fusion.elementwise %y columns(%s : tensor<1xf32>) : tensor<?x8xf32> {
  ^bb0(%v: f32, %c: f32):
    %r = arith.mulf %v, %c : f32
    fusion.yield %r : f32
  }
  return %g : tensor<?x8xf32>
}

// -----

// WGMMA-LABEL: gpu.func @gemm_0_gemm(
// WGMMA-SAME: %[[BIAS:[a-z0-9]+]]: memref<128xbf16>, %{{.*}}: memref<?x128xbf16>, %[[SINGLE:[a-z0-9]+]]: memref<1xbf16>)
// WGMMA: memref.load %[[BIAS]][%{{.*}}] : memref<128xbf16>
// WGMMA: memref.load %[[SINGLE]][%c0{{(_[0-9]+)?}}] : memref<1xbf16>
func.func @gemm(%x: tensor<?x64xbf16>, %w: tensor<128x64xbf16>, %b: tensor<128xbf16>, %s: tensor<1xbf16>) -> tensor<?x128xbf16> {
  %0 = fusion.fused_linear %x, %w bias(%b) epilogue(%s) {
  ^bb0(%acc: f32, %one: f32):
    %1 = arith.minimumf %acc, %one : f32
    %2 = arith.subf %1, %one : f32
    fusion.yield %2 : f32
  } : (tensor<?x64xbf16>, tensor<128x64xbf16>, tensor<128xbf16>, tensor<1xbf16>) -> tensor<?x128xbf16>
  return %0 : tensor<?x128xbf16>
}
