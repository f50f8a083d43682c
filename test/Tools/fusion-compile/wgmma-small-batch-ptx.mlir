// Small batches' wgmma kernels: up to 16 and 32 rows, tiles of 16 and 32
// rows by 64 of w's with swapped operands (256 threads, m64n16k16 and
// m64n32k16 wgmmas of w's rows by x's; tf32's k8; 3xTF32's three products
// of each, w's parts from registers); up to 64
// rows, 64-row tiles of one consumer warpgroup (a block of 256 threads,
// m64n64k16 wgmmas, the f32 output's tf32 m64n64k8 and 3xTF32's three
// products of each); above them the 128-row tiles of two (384 threads).
// None spills (ptxas), 3xTF32's second accumulator set included. A
// consumer warpgroup that multiplies alone keeps two stages of wgmmas in
// flight (wait_group 2 in the main loop), two cooperative ones one.
// REQUIRES: cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma -o %t/bf16.ptx
// RUN: FileCheck %s --check-prefix=BF16 --input-file=%t/bf16.ptx
// RUN: %ptxas -arch=sm_90a -v %t/bf16.ptx -o %t/bf16.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS-BF16
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma --precision=tf32 -o %t/tf32.ptx
// RUN: FileCheck %s --check-prefix=TF32 --input-file=%t/tf32.ptx
// RUN: %ptxas -arch=sm_90a -v %t/tf32.ptx -o %t/tf32.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS-TF32
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma --precision=fp32 -o %t/fp32.ptx
// RUN: FileCheck %s --check-prefix=FP32 --input-file=%t/fp32.ptx
// RUN: %ptxas -arch=sm_90a -v %t/fp32.ptx -o %t/fp32.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS-FP32

// BF16-LABEL: .entry bf16_0_gemm_rows_le_16(
// BF16: .maxntid 256, 1, 1
// BF16-NOT: .entry
// BF16: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// BF16: wgmma.wait_group.sync.aligned 2;
// BF16-LABEL: .entry bf16_0_gemm_rows_le_32(
// BF16: .maxntid 256, 1, 1
// BF16-NOT: .entry
// BF16: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// BF16-LABEL: .entry bf16_0_gemm_rows_le_64(
// BF16: .maxntid 256, 1, 1
// BF16-NOT: .entry
// BF16: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// BF16-LABEL: .entry bf16_0_gemm_rows_le_128(
// BF16: .maxntid 384, 1, 1
// BF16-NOT: wgmma.wait_group.sync.aligned 2;
// BF16: wgmma.wait_group.sync.aligned 1;
// TF32-LABEL: .entry f32_0_gemm_rows_le_16(
// TF32: .maxntid 256, 1, 1
// TF32-NOT: .entry
// TF32: wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32
// TF32-LABEL: .entry f32_0_gemm_rows_le_32(
// TF32-NOT: .entry
// TF32: wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// FP32-LABEL: .entry f32_0_gemm_rows_le_16(
// FP32: .maxntid 256, 1, 1
// FP32-NOT: .entry
// FP32-COUNT-3: wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd
// FP32-LABEL: .entry f32_0_gemm_rows_le_32(
// FP32-NOT: .entry
// FP32-COUNT-3: wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// FP32-LABEL: .entry f32_0_gemm_rows_le_64(
// FP32: .maxntid 256, 1, 1
// FP32-NOT: .entry
// FP32-COUNT-3: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// FP32-LABEL: .entry f32_0_gemm_rows_le_128(
// FP32: .maxntid 384, 1, 1

// ptxas compiles the entries last first.
// PTXAS-BF16: Compiling entry function 'bf16_0_gemm_rows_le_64'
// PTXAS-BF16-NEXT: Function properties for bf16_0_gemm_rows_le_64
// PTXAS-BF16-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-BF16: Compiling entry function 'bf16_0_gemm_rows_le_32'
// PTXAS-BF16-NEXT: Function properties for bf16_0_gemm_rows_le_32
// PTXAS-BF16-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-BF16: Compiling entry function 'bf16_0_gemm_rows_le_16'
// PTXAS-BF16-NEXT: Function properties for bf16_0_gemm_rows_le_16
// PTXAS-BF16-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-TF32: Compiling entry function 'f32_0_gemm_rows_le_32'
// PTXAS-TF32-NEXT: Function properties for f32_0_gemm_rows_le_32
// PTXAS-TF32-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-TF32: Compiling entry function 'f32_0_gemm_rows_le_16'
// PTXAS-TF32-NEXT: Function properties for f32_0_gemm_rows_le_16
// PTXAS-TF32-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-FP32: Compiling entry function 'f32_0_gemm_rows_le_64'
// PTXAS-FP32-NEXT: Function properties for f32_0_gemm_rows_le_64
// PTXAS-FP32-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-FP32: Compiling entry function 'f32_0_gemm_rows_le_32'
// PTXAS-FP32-NEXT: Function properties for f32_0_gemm_rows_le_32
// PTXAS-FP32-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-FP32: Compiling entry function 'f32_0_gemm_rows_le_16'
// PTXAS-FP32-NEXT: Function properties for f32_0_gemm_rows_le_16
// PTXAS-FP32-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @bf16(%x: tensor<?x4096xbf16>, %w: tensor<8192x4096xbf16>) -> tensor<?x8192xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x4096xbf16>, tensor<8192x4096xbf16> -> tensor<?x8192xbf16>
  return %0 : tensor<?x8192xbf16>
}

func.func @f32(%x: tensor<?x4096xf32>, %w: tensor<8192x4096xf32>) -> tensor<?x8192xf32> {
  %0 = fusion.linear %x, %w : tensor<?x4096xf32>, tensor<8192x4096xf32> -> tensor<?x8192xf32>
  return %0 : tensor<?x8192xf32>
}
