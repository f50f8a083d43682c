// fusion-lower-tensor-map-args: a lowered kernel's tensor-map pointers
// become 128-byte byval grid constants, 64-byte aligned; other arguments and
// kernels without the attribute are left alone.
// RUN: fusion-opt %s --pass-pipeline="builtin.module(gpu.module(fusion-lower-tensor-map-args))" | FileCheck %s

// CHECK-LABEL: llvm.func @maps(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 64 : i32, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant},
// CHECK-SAME: %{{.*}}: !llvm.ptr,
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 64 : i32, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant})
// CHECK-NOT: fusion_rt.tensor_map_args
// CHECK-SAME: attributes {gpu.kernel, nvvm.kernel}
// CHECK-LABEL: llvm.func @plain(
// CHECK-SAME: %{{.*}}: !llvm.ptr)
// CHECK-NOT: llvm.byval
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @maps(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel, fusion_rt.tensor_map_args = array<i64: 0, 2>} {
      llvm.return
    }
    llvm.func @plain(%a: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}
