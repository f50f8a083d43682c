// fusion_rt ops round-trip, and a launch verifies against its kernel.
// RUN: fusion-opt %s | fusion-opt | FileCheck %s

// CHECK-LABEL: llvm.func @host(
// CHECK: fusion_rt.cublaslt_gemm <bf16> in <bf16>, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, rows %{{.*}}, n 16, k 8, alpha -2.500000e-01 : i32
// CHECK: fusion_rt.launch @kernels::@scale grid(%{{.*}}, %{{.*}}) block 128 shared 1024 stream(%{{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64) : i32
// CHECK: fusion_rt.launch @kernels::@empty grid(%{{.*}}, %{{.*}}) block 32 shared 0 stream(%{{.*}}) : i32
// CHECK: fusion_rt.launch @kernels::@empty grid(%{{.*}}, %{{.*}}) block 32 shared 0 persistent stream(%{{.*}}) : i32
module attributes {gpu.container_module, fusion.target = #fusion.target<sm_80>} {
  llvm.func @host(%stream: !llvm.ptr, %rows: i64, %x: !llvm.ptr, %w: !llvm.ptr, %out: !llvm.ptr) -> i32 {
    %null = llvm.mlir.zero : !llvm.ptr
    %s0 = fusion_rt.cublaslt_gemm <bf16> in <bf16>, %stream, %x, %w, %null, %out, rows %rows, n 16, k 8, alpha -0.25 : i32
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c16 = llvm.mlir.constant(16 : i64) : i64
    %s1 = fusion_rt.launch @kernels::@scale grid(%rows, %c1) block 128 shared 1024 stream(%stream) args(%out, %out, %c0, %rows, %c16, %c16, %c1, %rows : !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64) : i32
    %s2 = fusion_rt.launch @kernels::@empty grid(%c1, %c1) block 32 shared 0 stream(%stream) : i32
    %s3 = fusion_rt.launch @kernels::@empty grid(%rows, %c1) block 32 shared 0 persistent stream(%stream) : i32
    llvm.return %s3 : i32
  }
  gpu.module @kernels {
    gpu.func @scale(%m: memref<?x16xf32>, %n: i64) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      gpu.return
    }
    gpu.func @empty() kernel {
      gpu.return
    }
  }
}

// A launch that overlaps its predecessor, of a kernel that waits for it
// (sm_90), persistent or not.
// CHECK-LABEL: llvm.func @overlapped(
// CHECK: fusion_rt.launch @waits::@k grid(%{{.*}}, %{{.*}}) block 32 shared 0 overlap_predecessor stream(%{{.*}}) : i32
// CHECK: fusion_rt.launch @waits::@k grid(%{{.*}}, %{{.*}}) block 32 shared 0 persistent overlap_predecessor stream(%{{.*}}) : i32
module attributes {gpu.container_module, fusion.target = #fusion.target<sm_90>} {
  llvm.func @overlapped(%stream: !llvm.ptr, %n: i64) -> i32 {
    %0 = fusion_rt.launch @waits::@k grid(%n, %n) block 32 shared 0 overlap_predecessor stream(%stream) : i32
    %1 = fusion_rt.launch @waits::@k grid(%n, %n) block 32 shared 0 persistent overlap_predecessor stream(%stream) : i32
    llvm.return %1 : i32
  }
  gpu.module @waits {
    gpu.func @k() kernel {
      nvvm.griddepcontrol wait
      gpu.return
    }
  }
}

// A kernel's tensor maps are passed by value: as the 128-byte array to the
// gpu.func that lists them, as its byval type to the lowered llvm.func.
// CHECK-LABEL: llvm.func @tensor_maps(
// CHECK: fusion_rt.launch @maps::@gpu grid({{.*}}) block 384 shared 0 stream(%{{.*}}) args(%{{.*}}, %{{.*}} : !llvm.array<16 x i64>, !llvm.ptr) : i32
// CHECK: fusion_rt.launch @maps::@lowered grid({{.*}}) block 384 shared 0 stream(%{{.*}}) args(%{{.*}} : !llvm.array<16 x i64>) : i32
module attributes {gpu.container_module} {
  llvm.func @tensor_maps(%stream: !llvm.ptr, %n: i64, %p: !llvm.ptr, %map: !llvm.array<16 x i64>) -> i32 {
    %0 = fusion_rt.launch @maps::@gpu grid(%n, %n) block 384 shared 0 stream(%stream) args(%map, %p : !llvm.array<16 x i64>, !llvm.ptr) : i32
    %1 = fusion_rt.launch @maps::@lowered grid(%n, %n) block 384 shared 0 stream(%stream) args(%map : !llvm.array<16 x i64>) : i32
    llvm.return %1 : i32
  }
  gpu.module @maps {
    gpu.func @gpu(%map: !llvm.ptr, %p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 384, 1, 1>, fusion_rt.tensor_map_args = array<i64: 0>} {
      gpu.return
    }
    llvm.func @lowered(%map: !llvm.ptr {llvm.byval = !llvm.array<16 x i64>, llvm.align = 64 : i32, nvvm.grid_constant}) attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}
