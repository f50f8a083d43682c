// fusion_rt ops become calls of the runtime's C ABI; nothing else changes.
// RUN: fusion-opt %s --fusion-lower-runtime-to-llvm | FileCheck %s

// CHECK-DAG: llvm.func @__fusion_rt_launch(!llvm.ptr, !llvm.ptr, i64, i64, i32, i32, i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG: llvm.mlir.global internal constant @__fusion_kernel_name_scale("scale\00")
// CHECK-DAG: llvm.func @__fusion_rt_gemm(!llvm.ptr, i32, i32, i32, i64, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, f32, !llvm.ptr, i64) -> i32
// CHECK-LABEL: llvm.func @host(
// CHECK-SAME: %[[STREAM:[a-z0-9]+]]: !llvm.ptr, %[[ROWS:[a-z0-9]+]]: i64, %[[X:[a-z0-9]+]]: !llvm.ptr, %[[W:[a-z0-9]+]]: !llvm.ptr, %[[OUT:[a-z0-9]+]]: !llvm.ptr)
// The runtime's codes: bf16 is 1, tf32 precision 1, nn.Linear's weight
// layout 0.
// CHECK: %[[BF16:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[TF32:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[OUT_IN:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG: %[[N:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK-DAG: %[[K:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-DAG: %[[ALPHA:.*]] = llvm.mlir.constant(-2.500000e-01 : f32) : f32
// The output's rows are N apart unless out_stride says otherwise.
// CHECK: %[[STRIDE:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK: %[[GEMM:.*]] = llvm.call @__fusion_rt_gemm(%[[STREAM]], %[[BF16]], %[[TF32]], %[[OUT_IN]], %[[ROWS]], %[[N]], %[[K]], %[[X]], %[[W]], %{{.*}}, %[[ALPHA]], %[[OUT]], %[[STRIDE]])
// A weight stored [K, N]: layout 1 (after f32's 0 and fp32's 0).
// CHECK: %[[IN_OUT:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[WIDE:.*]] = llvm.mlir.constant(24 : i64) : i64
// CHECK: llvm.call @__fusion_rt_gemm(%[[STREAM]], %{{.*}}, %{{.*}}, %[[IN_OUT]], %[[ROWS]], %{{.*}}, %{{.*}}, %[[X]], %[[W]], %{{.*}}, %{{.*}}, %[[OUT]], %[[WIDE]])
// Two arguments: an array of two pointers, each to a slot holding one.
// CHECK: %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK: %[[ARGS:.*]] = llvm.alloca %[[TWO]] x !llvm.ptr
// CHECK: %[[SLOT0:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// CHECK: llvm.store %[[OUT]], %[[SLOT0]]
// CHECK: %[[SLOT1:.*]] = llvm.alloca %{{.*}} x i64
// CHECK: llvm.store %[[ROWS]], %[[SLOT1]]
// CHECK-DAG: %[[IMAGE:.*]] = llvm.mlir.addressof @__fusion_kernels_image
// CHECK-DAG: %[[NAME:.*]] = llvm.mlir.addressof @__fusion_kernel_name_scale
// CHECK-DAG: %[[BLOCK:.*]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-DAG: %[[SHARED:.*]] = llvm.mlir.constant(1024 : i32) : i32
// The launch's flags (fusion_runtime.h): none.
// CHECK-DAG: %[[PLAIN:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[LAUNCH:.*]] = llvm.call @__fusion_rt_launch(%[[IMAGE]], %[[NAME]], %[[ROWS]], %[[ROWS]], %[[BLOCK]], %[[SHARED]], %[[PLAIN]], %[[STREAM]], %[[ARGS]])
// A persistent launch (flag 1): the runtime cuts its grid to the device.
// CHECK: %[[PERSISTENT_FLAG:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.call @__fusion_rt_launch(%{{.*}}, %{{.*}}, %[[ROWS]], %[[ROWS]], %{{.*}}, %{{.*}}, %[[PERSISTENT_FLAG]], %[[STREAM]], %{{.*}})
// A launch that may overlap its predecessor (flag 2), and both (3).
// CHECK: %[[OVERLAP_FLAG:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: llvm.call @__fusion_rt_launch(%{{.*}}, %{{.*}}, %[[ROWS]], %[[ROWS]], %{{.*}}, %{{.*}}, %[[OVERLAP_FLAG]], %[[STREAM]], %{{.*}})
// CHECK: %[[BOTH_FLAGS:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK: %[[BOTH:.*]] = llvm.call @__fusion_rt_launch(%{{.*}}, %{{.*}}, %[[ROWS]], %[[ROWS]], %{{.*}}, %{{.*}}, %[[BOTH_FLAGS]], %[[STREAM]], %{{.*}})
// CHECK: llvm.return %[[BOTH]]
// CHECK-NOT: fusion_rt.
module attributes {gpu.container_module} {
  llvm.mlir.global external constant @__fusion_kernels_image() : i8
  llvm.func @host(%stream: !llvm.ptr, %rows: i64, %x: !llvm.ptr, %w: !llvm.ptr, %out: !llvm.ptr) -> i32 {
    %null = llvm.mlir.zero : !llvm.ptr
    %s0 = fusion_rt.cublaslt_gemm <bf16> in <tf32>, %stream, %x, %w, %null, %out, rows %rows, n 16, k 8, alpha -0.25 : i32
    %s0b = fusion_rt.cublaslt_gemm <f32> in <fp32> weight_layout <in_out>, %stream, %x, %w, %null, %out, rows %rows, n 8, k 16, alpha 1.0 out_stride 24 : i32
    %s1 = fusion_rt.launch @kernels::@scale grid(%rows, %rows) block 128 shared 1024 stream(%stream) args(%out, %rows : !llvm.ptr, i64) : i32
    %s2 = fusion_rt.launch @kernels::@scale grid(%rows, %rows) block 128 shared 1024 persistent stream(%stream) args(%out, %rows : !llvm.ptr, i64) : i32
    %s3 = fusion_rt.launch @kernels::@waits grid(%rows, %rows) block 128 shared 0 overlap_predecessor stream(%stream) : i32
    %s4 = fusion_rt.launch @kernels::@waits grid(%rows, %rows) block 128 shared 0 persistent overlap_predecessor stream(%stream) : i32
    llvm.return %s4 : i32
  }
  gpu.module @kernels {
    gpu.func @scale(%a: !llvm.ptr, %n: i64) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      gpu.return
    }
    gpu.func @waits() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      nvvm.griddepcontrol wait
      gpu.return
    }
  }
}

// A module without fusion_rt ops is left as it is.
// RUN: fusion-opt %S/../../Codegen/NVVM/embed-kernel-image.mlir --split-input-file --fusion-lower-runtime-to-llvm | FileCheck %s --check-prefix=UNCHANGED
// UNCHANGED-NOT: llvm.call @__fusion_rt_launch
// UNCHANGED-NOT: llvm.call @__fusion_rt_gemm
