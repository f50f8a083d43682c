// The lowering-config verifier: a fusion_rt.launch's checks against the chip,
// each rule with its located diagnostic.
// RUN: fusion-opt %s --fusion-verify-lowering --split-input-file --verify-diagnostics

module attributes {gpu.container_module, fusion.target = #fusion.target<sm_86>} {
  llvm.func @host(%stream: !llvm.ptr, %n: i64) -> i32 {
    // expected-error @+1 {{'fusion_rt.launch' op asks for 200000 bytes of shared memory, sm_86 has 101376}}
    %0 = fusion_rt.launch @kernels::@k grid(%n, %n) block 256 shared 200000 stream(%stream) : i32
    llvm.return %0 : i32
  }
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// -----

// Programmatic dependent launch is sm_90's.
module attributes {gpu.container_module, fusion.target = #fusion.target<sm_86>} {
  llvm.func @host(%stream: !llvm.ptr, %n: i64) -> i32 {
    // expected-error @+1 {{'fusion_rt.launch' op overlaps its predecessor, which sm_86 cannot (programmatic dependent launch needs sm_90)}}
    %0 = fusion_rt.launch @kernels::@k grid(%n, %n) block 256 shared 0 overlap_predecessor stream(%stream) : i32
    llvm.return %0 : i32
  }
  gpu.module @kernels {
    gpu.func @k() kernel {
      nvvm.griddepcontrol wait
      gpu.return
    }
  }
}
