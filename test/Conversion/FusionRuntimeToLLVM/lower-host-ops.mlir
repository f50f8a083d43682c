// The host code's checks, workspace, copies and tensor maps become calls
// of the runtime's C ABI, each label one string constant.
// RUN: fusion-opt %s --fusion-lower-runtime-to-llvm | FileCheck %s
// RUN: fusion-opt %s --fusion-lower-runtime-to-llvm | FileCheck %s --check-prefix=NONE

// CHECK-DAG: llvm.mlir.global internal constant @__fusion_label_batch("batch\00")
// CHECK-DAG: llvm.mlir.global internal constant @__fusion_label_input__0("input #0\00")
// Labels of one name but for their punctuation take numbered names.
// CHECK-DAG: llvm.mlir.global internal constant @__fusion_label_input__0_1("input_#0\00")
// CHECK-DAG: llvm.func @__fusion_rt_check_size(i64, i64, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @__fusion_rt_check_buffer(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @__fusion_rt_alloc(!llvm.ptr, i64, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @__fusion_rt_tensor_map(!llvm.ptr, !llvm.ptr, i32, i64, i64, i32, i32) -> i32
// CHECK-DAG: llvm.func @__fusion_rt_copy(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> i32
// CHECK-DAG: llvm.func @__fusion_rt_free(!llvm.ptr, !llvm.ptr) -> i32
// CHECK-LABEL: llvm.func @host(
// CHECK-SAME: %[[STREAM:[a-z0-9]+]]: !llvm.ptr, %[[ROWS:[a-z0-9]+]]: i64, %[[X:[a-z0-9]+]]: !llvm.ptr, %[[OUT:[a-z0-9]+]]: !llvm.ptr, %[[SLOT:[a-z0-9]+]]: !llvm.ptr, %[[MAP:[a-z0-9]+]]: !llvm.ptr, %[[BOX:[a-z0-9]+]]: i32)
// CHECK: %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK: %[[BATCH:.*]] = llvm.mlir.addressof @__fusion_label_batch
// CHECK: llvm.call @__fusion_rt_check_size(%[[ROWS]], %[[TWO]], %[[BATCH]])
// CHECK: %[[INPUT:.*]] = llvm.mlir.addressof @__fusion_label_input__0 :
// CHECK: llvm.call @__fusion_rt_check_buffer(%[[STREAM]], %[[X]], %[[ROWS]], %[[INPUT]])
// CHECK: %[[OTHER:.*]] = llvm.mlir.addressof @__fusion_label_input__0_1 :
// CHECK: llvm.call @__fusion_rt_check_buffer(%[[STREAM]], %[[X]], %[[ROWS]], %[[OTHER]])
// The same label again: the same constant.
// CHECK: %[[AGAIN:.*]] = llvm.mlir.addressof @__fusion_label_input__0 :
// CHECK: llvm.call @__fusion_rt_check_buffer(%[[STREAM]], %[[OUT]], %[[ROWS]], %[[AGAIN]])
// CHECK: llvm.call @__fusion_rt_alloc(%[[STREAM]], %[[ROWS]], %[[SLOT]])
// The runtime's code of bf16 is 1; the box's columns a constant.
// CHECK-DAG: %[[BF16:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG: %[[COLUMNS:.*]] = llvm.mlir.constant(64 : i32) : i32
// CHECK: llvm.call @__fusion_rt_tensor_map(%[[MAP]], %[[X]], %[[BF16]], %[[ROWS]], %[[ROWS]], %[[BOX]], %[[COLUMNS]])
// The copy's target first, as memcpy's.
// CHECK: llvm.call @__fusion_rt_copy(%[[STREAM]], %[[OUT]], %[[X]], %[[ROWS]])
// CHECK: %[[FREED:.*]] = llvm.call @__fusion_rt_free(%[[STREAM]], %[[X]])
// CHECK: llvm.return %[[FREED]]
// NONE-NOT: fusion_rt.
llvm.func @host(%stream: !llvm.ptr, %rows: i64, %x: !llvm.ptr, %out: !llvm.ptr,
                %slot: !llvm.ptr, %map: !llvm.ptr, %box: i32) -> i32 {
  %0 = fusion_rt.check_size "batch" %rows at_least 2 : i32
  %1 = fusion_rt.check_buffer "input #0" %x bytes %rows stream(%stream) : i32
  %2 = fusion_rt.check_buffer "input_#0" %x bytes %rows stream(%stream) : i32
  %3 = fusion_rt.check_buffer "input #0" %out bytes %rows stream(%stream) : i32
  %4 = fusion_rt.alloc %rows into %slot stream(%stream) : i32
  %5 = fusion_rt.encode_tensor_map %map, <bf16> %x rows %rows columns %rows box(%box, 64) : i32
  %6 = fusion_rt.copy %rows from %x to %out stream(%stream) : i32
  %7 = fusion_rt.free %x stream(%stream) : i32
  llvm.return %7 : i32
}
