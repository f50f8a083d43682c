// A row program keeps the lanes of its column and row operands at the
// chunks of the row it keeps in registers, loaded once for every step that
// reads them, where they fit beside the row (kMaxCachedElements): each step
// then computes the same expression of an element, which the kernels'
// first CSE evaluates once (here y * g, exp(y * g - max) for the sum and
// the output). Where the operands do not fit (8192 f32 columns: 32 of the
// row's elements a thread, two column operands), each step loads them
// again.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config --fusion-lower-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config --fusion-lower-to-gpu --fusion-lower-kernels-to-nvvm | FileCheck %s --check-prefix=NVVM

// CHECK-LABEL: gpu.func @kept_0_rows(
// CHECK-SAME: %[[X:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %[[G:[^:]*]]: !llvm.ptr
// CHECK: llvm.getelementptr %[[X]]
// CHECK: llvm.getelementptr %[[G]]
// CHECK-NOT: llvm.getelementptr %[[G]]
// CHECK: gpu.return
// NVVM-LABEL: llvm.func @kept_0_rows(
// NVVM-COUNT-4: llvm.call @__nv_expf
// NVVM-NOT: llvm.call @__nv_expf
// NVVM: llvm.return
func.func @kept(%x: tensor<?x40xf32>, %g: tensor<40xf32>) -> tensor<?x40xf32> {
  %max = fusion.reduce max %x columns(%g : tensor<40xf32>) : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %c: f32):
    %0 = arith.mulf %v, %c : f32
    fusion.yield %0 : f32
  }
  %sum = fusion.reduce sum %x columns(%g : tensor<40xf32>) rows(%max : tensor<?x1xf32>)
      : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %c: f32, %m: f32):
    %0 = arith.mulf %v, %c : f32
    %1 = arith.subf %0, %m : f32
    %2 = math.exp %1 : f32
    fusion.yield %2 : f32
  }
  %y = fusion.elementwise %x columns(%g : tensor<40xf32>) rows(%max, %sum : tensor<?x1xf32>, tensor<?x1xf32>)
      : tensor<?x40xf32> {
  ^bb0(%v: f32, %c: f32, %m: f32, %s: f32):
    %0 = arith.mulf %v, %c : f32
    %1 = arith.subf %0, %m : f32
    %2 = math.exp %1 : f32
    %3 = arith.divf %2, %s : f32
    fusion.yield %3 : f32
  }
  return %y : tensor<?x40xf32>
}

// -----

// CHECK-LABEL: gpu.func @reloaded_0_rows(
// CHECK-SAME: %[[X:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %[[G:[^:]*]]: !llvm.ptr
// CHECK: llvm.getelementptr %[[G]]
// CHECK: gpu.shuffle
// CHECK: llvm.getelementptr %[[G]]
// CHECK: gpu.shuffle
// CHECK: llvm.getelementptr %[[G]]
// CHECK: gpu.return
func.func @reloaded(%x: tensor<?x8192xf32>, %g: tensor<8192xf32>, %b: tensor<8192xf32>) -> tensor<?x8192xf32> {
  %max = fusion.reduce max %x columns(%g, %b : tensor<8192xf32>, tensor<8192xf32>) : tensor<?x8192xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %c: f32, %d: f32):
    %p = arith.mulf %v, %c : f32
    %0 = arith.addf %p, %d : f32
    fusion.yield %0 : f32
  }
  %sum = fusion.reduce sum %x columns(%g, %b : tensor<8192xf32>, tensor<8192xf32>) rows(%max : tensor<?x1xf32>)
      : tensor<?x8192xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %c: f32, %d: f32, %m: f32):
    %p = arith.mulf %v, %c : f32
    %0 = arith.addf %p, %d : f32
    %1 = arith.subf %0, %m : f32
    %2 = math.exp %1 : f32
    fusion.yield %2 : f32
  }
  %y = fusion.elementwise %x columns(%g, %b : tensor<8192xf32>, tensor<8192xf32>) rows(%max, %sum : tensor<?x1xf32>, tensor<?x1xf32>)
      : tensor<?x8192xf32> {
  ^bb0(%v: f32, %c: f32, %d: f32, %m: f32, %s: f32):
    %p = arith.mulf %v, %c : f32
    %0 = arith.addf %p, %d : f32
    %1 = arith.subf %0, %m : f32
    %2 = math.exp %1 : f32
    %3 = arith.divf %2, %s : f32
    fusion.yield %3 : f32
  }
  return %y : tensor<?x8192xf32>
}
