// The lowering-config verifier accepts what the kernels and the chip can
// honor and leaves the module as it is: a lowering with every part (an
// epilogue batch norm whose batch configs keep x_w), and launches within
// sm_90's shared memory, one overlapping its predecessor (which sm_90 has).
// The rules it refuses: verify-lowering-*.mlir.
// RUN: fusion-opt %s --split-input-file --fusion-verify-lowering | FileCheck %s

// CHECK-LABEL: func.func @training
// CHECK: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, operands = w_x>, batches = [#fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 12, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x64, warps = 8x1, stages = 8, group_m = 8>>], epilogue_batch_norm = <max_rows = 128>>
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @training(%x: tensor<?x64xbf16>, %w: tensor<512x64xbf16>) -> tensor<?x512xbf16> {
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01> {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, operands = w_x>, batches = [#fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 12, group_m = 8>>, #fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x64, warps = 8x1, stages = 8, group_m = 8>>], epilogue_batch_norm = <max_rows = 128>>} : (tensor<?x64xbf16>, tensor<512x64xbf16>) -> tensor<?x512xbf16>
    return %0 : tensor<?x512xbf16>
  }
}

// -----

// CHECK-LABEL: llvm.func @host
// CHECK: fusion_rt.launch @kernels::@k grid(%{{.*}}, %{{.*}}) block 256 shared 232448 stream(%{{.*}}) : i32
// CHECK: fusion_rt.launch @kernels::@k grid(%{{.*}}, %{{.*}}) block 256 shared 0 overlap_predecessor stream(%{{.*}}) : i32
module attributes {gpu.container_module, fusion.target = #fusion.target<sm_90>} {
  llvm.func @host(%stream: !llvm.ptr, %n: i64) -> i32 {
    %0 = fusion_rt.launch @kernels::@k grid(%n, %n) block 256 shared 232448 stream(%stream) : i32
    %1 = fusion_rt.launch @kernels::@k grid(%n, %n) block 256 shared 0 overlap_predecessor stream(%stream) : i32
    llvm.return %1 : i32
  }
  gpu.module @kernels {
    gpu.func @k() kernel {
      nvvm.griddepcontrol wait
      gpu.return
    }
  }
}
