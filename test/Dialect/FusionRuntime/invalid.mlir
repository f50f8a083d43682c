// Every rule of fusion_rt.launch and fusion_rt.cublaslt_gemm.
// The checks against the chip: test/Codegen/Config/verify-lowering-launch.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics

module attributes {gpu.container_module, fusion.target = #fusion.target<sm_86>} {
  llvm.func @host(%stream: !llvm.ptr, %n: i64, %p: !llvm.ptr) -> i32 {
    // expected-error @+1 {{'fusion_rt.launch' op names @kernels::@missing, which is not a kernel}}
    %0 = fusion_rt.launch @kernels::@missing grid(%n, %n) block 256 shared 0 stream(%stream) : i32
    llvm.return %0 : i32
  }
  gpu.module @kernels {
  }
}

// -----

module attributes {gpu.container_module, fusion.target = #fusion.target<sm_86>} {
  llvm.func @host(%stream: !llvm.ptr, %n: i64, %p: !llvm.ptr) -> i32 {
    // expected-error @+1 {{'fusion_rt.launch' op launches 128 threads a block, the kernel is built for 256}}
    %0 = fusion_rt.launch @kernels::@k grid(%n, %n) block 128 shared 0 stream(%stream) args(%p, %n : !llvm.ptr, i64) : i32
    llvm.return %0 : i32
  }
  gpu.module @kernels {
    gpu.func @k(%a: !llvm.ptr, %b: i64) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module, fusion.target = #fusion.target<sm_86>} {
  llvm.func @host(%stream: !llvm.ptr, %n: i64, %p: !llvm.ptr) -> i32 {
    // A memref is passed as its expanded descriptor: 5 values for rank 1.
    // expected-error @+1 {{'fusion_rt.launch' op passes 1 arguments that do not match the kernel's 5 (memrefs as expanded descriptors)}}
    %0 = fusion_rt.launch @kernels::@k grid(%n, %n) block 256 shared 0 stream(%stream) args(%p : !llvm.ptr) : i32
    llvm.return %0 : i32
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

llvm.func @gemm(%stream: !llvm.ptr, %n: i64, %p: !llvm.ptr) -> i32 {
  // expected-error @+1 {{'fusion_rt.cublaslt_gemm' op attribute 'k' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = fusion_rt.cublaslt_gemm <f32> in <fp32>, %stream, %p, %p, %p, %p, rows %n, n 16, k 0, alpha 1.0 : i32
  llvm.return %0 : i32
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{'fusion_rt.tensor_map_args' must be an array<i64> of argument indices on a kernel}}
    gpu.func @k(%a: !llvm.ptr) kernel attributes {fusion_rt.tensor_map_args = [0]} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{tensor-map argument #1 is out of range}}
    gpu.func @k(%a: !llvm.ptr) kernel attributes {fusion_rt.tensor_map_args = array<i64: 1>} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{tensor-map argument #0 must be an !llvm.ptr}}
    gpu.func @k(%a: i64) kernel attributes {fusion_rt.tensor_map_args = array<i64: 0>} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{unknown fusion_rt attribute 'fusion_rt.tensor_maps'}}
  gpu.module @kernels attributes {fusion_rt.tensor_maps} {
  }
}

// -----

// A tensor map is passed by value, not as a pointer.
module attributes {gpu.container_module} {
  llvm.func @host(%stream: !llvm.ptr, %n: i64, %p: !llvm.ptr) -> i32 {
    // expected-error @+1 {{'fusion_rt.launch' op passes 1 arguments that do not match the kernel's 1 (memrefs as expanded descriptors)}}
    %0 = fusion_rt.launch @kernels::@k grid(%n, %n) block 384 shared 0 stream(%stream) args(%p : !llvm.ptr) : i32
    llvm.return %0 : i32
  }
  gpu.module @kernels {
    gpu.func @k(%map: !llvm.ptr) kernel attributes {known_block_size = array<i32: 384, 1, 1>, fusion_rt.tensor_map_args = array<i64: 0>} {
      gpu.return
    }
  }
}

// -----

// Started while its predecessor runs, a kernel that never waits for it
// would race it.
module attributes {gpu.container_module, fusion.target = #fusion.target<sm_90>} {
  llvm.func @host(%stream: !llvm.ptr, %n: i64) -> i32 {
    // expected-error @+1 {{'fusion_rt.launch' op overlaps its predecessor, but @kernels::@k never waits for it (nvvm.griddepcontrol wait)}}
    %0 = fusion_rt.launch @kernels::@k grid(%n, %n) block 256 shared 0 overlap_predecessor stream(%stream) : i32
    llvm.return %0 : i32
  }
  gpu.module @kernels {
    gpu.func @k() kernel {
      nvvm.griddepcontrol launch_dependents
      gpu.return
    }
  }
}
