// The kernels' PTX: sm_80 (or the chosen target), 16-byte vector memory
// operations, warp-shuffle merges of the batch-norm statistics.
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %S/../../../examples/linear_leaky_relu.mlir --strategy=cublas --emit=ptx -o - | FileCheck %s --check-prefix=A
// RUN: fusion-compile %S/../../../examples/linear_scale_batch_norm.mlir --strategy=cublas --emit=ptx -o - | FileCheck %s --check-prefix=B
// RUN: fusion-compile %S/../../../examples/linear_leaky_relu.mlir --strategy=cublas --emit=ptx --target=sm_90 -o - | FileCheck %s --check-prefix=SM90

// A: .target sm_80
// A: .entry linear_leaky_relu_0_epilogue(
// A: ld.global.v4.b32
// A: setp.gt.f32
// A: selp.f32
// A: st.global.v4.b32

// B: .entry linear_scale_batch_norm_0_stats(
// B: ld.global.v4.b32
// B: ld.global.v4.b32
// B: ld.global.v4.b32
// B: ld.global.v4.b32
// B: .entry linear_scale_batch_norm_0_finalize(
// B: shfl.sync.bfly.b32
// B: rsqrt.approx.f32
// B: .entry linear_scale_batch_norm_0_normalize(
// B: st.global.v4.b32

// SM90: .target sm_90

