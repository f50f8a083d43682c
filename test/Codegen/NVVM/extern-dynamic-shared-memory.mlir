// fusion-extern-dynamic-shared-memory: the zero-length shared global that
// convert-gpu-to-nvvm makes of gpu.dynamic_shared_memory becomes an external
// declaration (PTX's `.extern .shared` array, after every static shared
// variable); static shared arrays (the mbarriers), zero-length globals of
// other address spaces and globals outside gpu.modules are left alone.
// RUN: fusion-opt %s --pass-pipeline="builtin.module(gpu.module(fusion-extern-dynamic-shared-memory))" | FileCheck %s

// CHECK: llvm.mlir.global internal @host_zero_length() {addr_space = 3 : i32} : !llvm.array<0 x i8>
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global private @__mbarrier() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<9 x i64>
// CHECK: llvm.mlir.global internal @global_zero_length() {addr_space = 1 : i32} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @shared_scalar() {addr_space = 3 : i32} : i64
module attributes {gpu.container_module} {
  llvm.mlir.global internal @host_zero_length() {addr_space = 3 : i32} : !llvm.array<0 x i8>
  gpu.module @kernels {
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global private @__mbarrier() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<9 x i64>
    llvm.mlir.global internal @global_zero_length() {addr_space = 1 : i32} : !llvm.array<0 x i8>
    llvm.mlir.global internal @shared_scalar() {addr_space = 3 : i32} : i64
    llvm.func @kernel() attributes {gpu.kernel, nvvm.kernel} {
      %0 = llvm.mlir.addressof @__dynamic_shmem__0 : !llvm.ptr<3>
      llvm.return
    }
  }
}
