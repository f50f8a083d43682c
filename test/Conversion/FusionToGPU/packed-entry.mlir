// An entry point's host code in three functions (fusion_runtime.h): the C
// ABI's form NAME(stream, batch, buffers...) calls the body with no flags;
// the packed form NAME_packed(stream, batch, table, flags) loads the
// buffers from the table and passes its flags; the body (internal) checks
// each buffer with the driver unless the flags have
// FUSION_CALL_BUFFERS_CHECKED (1), and checks the batch either way.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=cublas" --fusion-lower-to-gpu | FileCheck %s

// CHECK-LABEL: llvm.func @scaled(
// CHECK-SAME: %[[S:[a-z0-9]+]]: !llvm.ptr, %[[B:[a-z0-9]+]]: i64, %[[X:[a-z0-9]+]]: !llvm.ptr, %[[W:[a-z0-9]+]]: !llvm.ptr, %[[OUT:[a-z0-9]+]]: !llvm.ptr) -> i32
// CHECK-NEXT: %[[NONE:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[STATUS:.*]] = llvm.call @__fusion_body_scaled(%[[S]], %[[B]], %[[X]], %[[W]], %[[OUT]], %[[NONE]])
// CHECK-NEXT: llvm.return %[[STATUS]] : i32

// CHECK-LABEL: llvm.func @scaled_packed(
// CHECK-SAME: %[[S:[a-z0-9]+]]: !llvm.ptr, %[[B:[a-z0-9]+]]: i64, %[[TABLE:[a-z0-9]+]]: !llvm.ptr, %[[FLAGS:[a-z0-9]+]]: i32) -> i32
// CHECK-NEXT: %[[S0:.*]] = llvm.getelementptr %[[TABLE]][0]
// CHECK-NEXT: %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[S1:.*]] = llvm.getelementptr %[[TABLE]][1]
// CHECK-NEXT: %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[S2:.*]] = llvm.getelementptr %[[TABLE]][2]
// CHECK-NEXT: %[[P2:.*]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[STATUS:.*]] = llvm.call @__fusion_body_scaled(%[[S]], %[[B]], %[[P0]], %[[P1]], %[[P2]], %[[FLAGS]])
// CHECK-NEXT: llvm.return %[[STATUS]] : i32

// CHECK-LABEL: llvm.func internal @__fusion_body_scaled(
// CHECK-SAME: %[[FLAGS:[a-z0-9]+]]: i32) -> i32
// CHECK: fusion_rt.check_size "batch"
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[BIT:.*]] = llvm.and %[[FLAGS]], %[[ONE]] : i32
// CHECK-NEXT: %[[VOUCHED:.*]] = llvm.icmp "ne" %[[BIT]], %{{.*}} : i32
// CHECK-NEXT: llvm.cond_br %[[VOUCHED]], ^[[CHECKED:bb[0-9]+]], ^[[CHECKING:bb[0-9]+]]
// CHECK-NEXT: ^[[CHECKING]]:
// CHECK-NEXT: fusion_rt.check_buffer "input #0"
// CHECK: fusion_rt.check_buffer "input #1"
// CHECK: fusion_rt.check_buffer "output #0"
// CHECK: llvm.br ^[[CHECKED]]
// CHECK-NEXT: ^[[CHECKED]]:
// CHECK-NOT: fusion_rt.check_buffer
// CHECK: fusion_rt.cublaslt_gemm
// CHECK-NOT: fusion_rt.check_buffer
// CHECK: llvm.return
func.func @scaled(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> tensor<?x16xf32> {
  %0 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    %two = arith.constant 2.0 : f32
    %1 = arith.mulf %acc, %two : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
