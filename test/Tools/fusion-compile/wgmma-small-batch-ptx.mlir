// Small batches' wgmma kernels: up to 64 rows, 64-row tiles of one consumer
// warpgroup (a block of 256 threads, m64n64k16 wgmmas, the f32 output's
// tf32 m64n64k8 and 3xTF32's three products of each); above them the
// 128-row tiles of two (384 threads). Neither spills (ptxas), 3xTF32's
// second accumulator set included.
// REQUIRES: cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma -o %t/bf16.ptx
// RUN: FileCheck %s --check-prefix=BF16 --input-file=%t/bf16.ptx
// RUN: %ptxas -arch=sm_90a -v %t/bf16.ptx -o %t/bf16.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS-BF16
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma --precision=fp32 -o %t/fp32.ptx
// RUN: FileCheck %s --check-prefix=FP32 --input-file=%t/fp32.ptx
// RUN: %ptxas -arch=sm_90a -v %t/fp32.ptx -o %t/fp32.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS-FP32

// BF16-LABEL: .entry bf16_0_gemm_rows_le_64(
// BF16: .maxntid 256, 1, 1
// BF16-NOT: .entry
// BF16: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// BF16-LABEL: .entry bf16_0_gemm_rows_le_128(
// BF16: .maxntid 384, 1, 1
// FP32-LABEL: .entry f32_0_gemm_rows_le_64(
// FP32: .maxntid 256, 1, 1
// FP32-NOT: .entry
// FP32-COUNT-3: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// FP32-LABEL: .entry f32_0_gemm_rows_le_128(
// FP32: .maxntid 384, 1, 1

// PTXAS-BF16: Compiling entry function 'bf16_0_gemm_rows_le_64'
// PTXAS-BF16-NEXT: Function properties for bf16_0_gemm_rows_le_64
// PTXAS-BF16-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-FP32: Compiling entry function 'f32_0_gemm_rows_le_64'
// PTXAS-FP32-NEXT: Function properties for f32_0_gemm_rows_le_64
// PTXAS-FP32-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @bf16(%x: tensor<?x4096xbf16>, %w: tensor<8192x4096xbf16>) -> tensor<?x8192xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x4096xbf16>, tensor<8192x4096xbf16> -> tensor<?x8192xbf16>
  return %0 : tensor<?x8192xbf16>
}

func.func @f32(%x: tensor<?x4096xf32>, %w: tensor<8192x4096xf32>) -> tensor<?x8192xf32> {
  %0 = fusion.linear %x, %w : tensor<?x4096xf32>, tensor<8192x4096xf32> -> tensor<?x8192xf32>
  return %0 : tensor<?x8192xf32>
}
