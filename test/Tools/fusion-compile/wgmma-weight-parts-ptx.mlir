// The PTX of a grouped GEMM's wgmma kernel (a weight and a bias joined of
// three parts): five tensor-map parameters (x, w's first part, x's last
// rows, w's other parts), each prefetched through its generic address
// (grid constants, as CUTLASS passes its TMA descriptors); ptxas takes it
// without local memory.
// REQUIRES: cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: fusion-compile %s --emit=ptx --target=sm_90 -o %t/k.ptx
// RUN: FileCheck %s < %t/k.ptx
// RUN: %ptxas -arch=sm_90a -v %t/k.ptx -o %t/k.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: .entry grouped_{{[0-9]+}}_gemm(
// CHECK-COUNT-5: .param .align 64 .b8 grouped_{{[0-9]+}}_gemm_param_{{[0-4]}}[128],
// CHECK-NOT: .local
// CHECK-COUNT-4: prefetch.tensormap
// CHECK: cp.async.bulk.tensor.2d
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @grouped(%x: tensor<?x256xbf16>, %a: tensor<256x256xbf16>, %b: tensor<128x256xbf16>, %c: tensor<128x256xbf16>, %ba: tensor<256xbf16>, %bb: tensor<128xbf16>, %bc: tensor<128xbf16>) -> tensor<?x512xbf16> {
    %w = fusion.concat %a, %b, %c dim 0 : (tensor<256x256xbf16>, tensor<128x256xbf16>, tensor<128x256xbf16>) -> tensor<512x256xbf16>
    %bias = fusion.concat %ba, %bb, %bc dim 0 : (tensor<256xbf16>, tensor<128xbf16>, tensor<128xbf16>) -> tensor<512xbf16>
    %0 = fusion.fused_linear %x, %w bias(%bias) epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x256xbf16>, tensor<512x256xbf16>, tensor<512xbf16>) -> tensor<?x512xbf16>
    return %0 : tensor<?x512xbf16>
  }
}
