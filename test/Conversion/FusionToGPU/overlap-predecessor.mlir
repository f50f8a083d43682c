// Programmatic dependent launch: on sm_90 every generated kernel waits for
// the stream's previous kernel (griddepcontrol.wait) before it touches
// global memory, and its launch is `overlap_predecessor`, so that the
// runtime may start it while the previous kernel finishes. None signals
// its dependents early (launch_dependents). sm_80 has no griddepcontrol:
// nothing changes.
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=cublas target=sm_90" --fusion-lower-to-gpu | FileCheck %s --check-prefix=SM90
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=cublas target=sm_80" --fusion-lower-to-gpu | FileCheck %s --check-prefix=SM80
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=tiled target=sm_90" --fusion-lower-to-gpu | FileCheck %s --check-prefix=TILED

// A training batch norm after cuBLAS's GEMM: its statistics, finalize and
// normalize kernels each wait first.
// SM90-LABEL: llvm.func @batch_norm(
// SM90: fusion_rt.cublaslt_gemm <bf16> in <bf16>
// SM90: fusion_rt.launch @fusion_kernels::@batch_norm_0_stats grid({{.*}}) block 256 shared 0 overlap_predecessor stream(
// SM90: fusion_rt.launch @fusion_kernels::@batch_norm_0_finalize grid({{.*}}) block 256 shared 0 overlap_predecessor stream(
// SM90: fusion_rt.launch @fusion_kernels::@batch_norm_0_normalize grid({{.*}}) block 256 shared 0 overlap_predecessor stream(
// SM90: gpu.func @batch_norm_0_stats(
// SM90-NEXT: nvvm.griddepcontrol wait
// SM90: gpu.func @batch_norm_0_finalize(
// SM90-NEXT: nvvm.griddepcontrol wait
// SM90: gpu.func @batch_norm_0_normalize(
// SM90-NEXT: nvvm.griddepcontrol wait
// SM90-NOT: launch_dependents
//
// SM80-LABEL: llvm.func @batch_norm(
// SM80-NOT: overlap_predecessor
// SM80-NOT: griddepcontrol
//
// The tiled kernel on sm_90 waits first too.
// TILED-LABEL: llvm.func @batch_norm(
// TILED: fusion_rt.launch @fusion_kernels::@batch_norm_0_gemm_batch_norm grid({{.*}}) block {{[0-9]+}} shared {{[0-9]+}} overlap_predecessor stream(
// TILED: gpu.func @batch_norm_0_gemm_batch_norm(
// TILED-NEXT: nvvm.griddepcontrol wait
func.func @batch_norm(%x: tensor<?x8xbf16>, %w: tensor<16x8xbf16>, %rm: tensor<16xbf16>, %rv: tensor<16xbf16>)
    -> (tensor<?x16xbf16>, tensor<16xbf16>, tensor<16xbf16>) {
  %y:3 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
    : (tensor<?x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> (tensor<?x16xbf16>, tensor<16xbf16>, tensor<16xbf16>)
  return %y#0, %y#1, %y#2 : tensor<?x16xbf16>, tensor<16xbf16>, tensor<16xbf16>
}

// -----

// A row program (row sums of the GEMM's output) after cuBLAS's GEMM.
// SM90-LABEL: llvm.func @row_sums(
// SM90: fusion_rt.launch @fusion_kernels::@row_sums_{{[0-9]+}}_rows grid({{.*}}) block {{[0-9]+}} shared {{[0-9]+}} overlap_predecessor stream(
// SM90: gpu.func @row_sums_{{[0-9]+}}_rows(
// SM90-NEXT: nvvm.griddepcontrol wait
// SM80-LABEL: llvm.func @row_sums(
// SM80-NOT: overlap_predecessor
// SM80-NOT: griddepcontrol
func.func @row_sums(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> tensor<?x1xf32> {
  %y = fusion.linear %x, %w : tensor<?x8xf32>, tensor<16x8xf32> -> tensor<?x16xf32>
  %sum = fusion.reduce sum %y : tensor<?x16xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %sum : tensor<?x1xf32>
}
