// The wgmma kernels' epilogues stay in registers: 128 accumulators a
// thread beside an epilogue with two column vectors (bias and shift) and
// an erf. Loaded all ahead of the runs, the 64 columns a thread of both
// vectors spilled 504 bytes a thread in tf32; a batch of runs loads its own
// now. Both schedules: the ping-pong kernel's warpgroups hold two m64n128
// row blocks of accumulators each. gelu's 1 + erf is one polynomial in |y| (leading
// coefficient -7.75e-7 / 32 = 0fB2D00F88) and one ex2
// (fusion-expand-one-plus-erf), not libdevice's erff, whose two
// branches meet at |s| = 1.00296 (0f3F8060FE).
// REQUIRES: cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma --precision=tf32 -o %t/tf32.ptx
// RUN: %ptxas -arch=sm_90a -v %t/tf32.ptx -o %t/tf32.cubin 2>&1 | FileCheck %s --implicit-check-not=C75
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/tf32.ptx --implicit-check-not=0f3F8060FE
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma --precision=tf32 --schedule=pingpong -o %t/pingpong.ptx
// RUN: %ptxas -arch=sm_90a -v %t/pingpong.ptx -o %t/pingpong.cubin 2>&1 | FileCheck %s --implicit-check-not=C75

// PTX: 0fB2D00F88
// PTX: ex2.approx.ftz.f32
// CHECK: Compiling entry function 'gelu_shift_0_gemm'
// CHECK-NEXT: Function properties for gelu_shift_0_gemm
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @gelu_shift(%x: tensor<?x4096xf32>, %w: tensor<4096x4096xf32>, %b: tensor<4096xf32>, %s: tensor<4096xf32>) -> tensor<?x4096xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x4096xf32>, tensor<4096x4096xf32>, tensor<4096xf32> -> tensor<?x4096xf32>
  %1 = fusion.elementwise %0 columns(%s : tensor<4096xf32>) : tensor<?x4096xf32> {
  ^bb0(%v: f32, %c: f32):
    %y = arith.addf %v, %c : f32
    %half = arith.constant 0.5 : f32
    %rsqrt2 = arith.constant 0.70710678118654752440 : f32
    %one = arith.constant 1.0 : f32
    %t = arith.mulf %y, %rsqrt2 : f32
    %e = math.erf %t : f32
    %p = arith.addf %e, %one : f32
    %q = arith.mulf %y, %half : f32
    %o = arith.mulf %q, %p : f32
    fusion.yield %o : f32
  }
  return %1 : tensor<?x4096xf32>
}
