// An op with batch GEMM configs: one kernel per config, and host code that
// launches the first whose max_rows the call's batch fits (unsigned
// compares of the batch argument), the op's config's kernel above them; all
// join before the workspace is freed.
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s --check-prefix=WGMMA
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=tiled target=sm_80" --fusion-lower-to-gpu | FileCheck %s --check-prefix=TILED

// WGMMA-LABEL: llvm.func @f(
// WGMMA: fusion_rt.alloc
// WGMMA: %[[WORKSPACE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// WGMMA-NEXT: %[[R16:.*]] = llvm.mlir.constant(16 : i64) : i64
// WGMMA-NEXT: %[[FITS16:.*]] = llvm.icmp "ule" %arg1, %[[R16]] : i64
// WGMMA-NEXT: llvm.cond_br %[[FITS16]], ^[[TO16:bb[0-9]+]], ^[[ABOVE16:bb[0-9]+]]
// WGMMA: ^[[DONE:bb[0-9]+]]:  // 6 preds
// WGMMA-NEXT: llvm.mlir.zero
// WGMMA: fusion_rt.free %[[WORKSPACE]] stream(%arg0)
// WGMMA: ^[[ABOVE16]]:
// WGMMA-NEXT: %[[R32:.*]] = llvm.mlir.constant(32 : i64) : i64
// WGMMA-NEXT: %[[FITS32:.*]] = llvm.icmp "ule" %arg1, %[[R32]] : i64
// WGMMA-NEXT: llvm.cond_br %[[FITS32]], ^[[TO32:bb[0-9]+]], ^[[ABOVE32:bb[0-9]+]]
// WGMMA: fusion_rt.launch @fusion_kernels::@f_0_gemm_rows_le_16 grid({{.*}}) block 256 shared 164864 persistent
// WGMMA: llvm.br ^[[DONE]]
// WGMMA: ^[[ABOVE32]]:
// WGMMA-NEXT: %[[R64:.*]] = llvm.mlir.constant(64 : i64) : i64
// WGMMA-NEXT: %[[FITS64:.*]] = llvm.icmp "ule" %arg1, %[[R64]] : i64
// WGMMA-NEXT: llvm.cond_br %[[FITS64]], ^[[TO64:bb[0-9]+]], ^[[ABOVE64:bb[0-9]+]]
// WGMMA: fusion_rt.launch @fusion_kernels::@f_0_gemm_rows_le_32 grid({{.*}}) block 256 shared 197632 persistent
// WGMMA: llvm.br ^[[DONE]]
// WGMMA: ^[[ABOVE64]]:
// WGMMA-NEXT: %[[R128:.*]] = llvm.mlir.constant(128 : i64) : i64
// WGMMA-NEXT: %[[FITS128:.*]] = llvm.icmp "ule" %arg1, %[[R128]] : i64
// WGMMA-NEXT: llvm.cond_br %[[FITS128]], ^[[TO128:bb[0-9]+]], ^[[ABOVE128:bb[0-9]+]]
// WGMMA: fusion_rt.launch @fusion_kernels::@f_0_gemm_rows_le_64 grid({{.*}}) block 256 shared 197632 persistent
// WGMMA: llvm.br ^[[DONE]]
// WGMMA: ^[[ABOVE128]]:
// WGMMA-NEXT: %[[R256:.*]] = llvm.mlir.constant(256 : i64) : i64
// WGMMA-NEXT: %[[FITS256:.*]] = llvm.icmp "ule" %arg1, %[[R256]] : i64
// WGMMA-NEXT: llvm.cond_br %[[FITS256]], ^[[TO256:bb[0-9]+]], ^[[ABOVE256:bb[0-9]+]]
// WGMMA: fusion_rt.launch @fusion_kernels::@f_0_gemm_rows_le_128 grid({{.*}}) block 384 shared 197632 persistent
// WGMMA: llvm.br ^[[DONE]]
// WGMMA: fusion_rt.launch @fusion_kernels::@f_0_gemm_rows_le_256 grid({{.*}}) block 384 shared 230400 persistent
// WGMMA: llvm.br ^[[DONE]]
// WGMMA: fusion_rt.launch @fusion_kernels::@f_0_gemm grid({{.*}}) block 384 shared 197632 persistent
// WGMMA: llvm.br ^[[DONE]]
//
// The kernels: up to 16 and 32 rows tiles of 16 and 32 rows by 64 of w's
// with swapped operands (one consumer warpgroup: m64n16 and m64n32
// wgmmas of w's rows by x's), 16 stages; up to 64 rows 64x64 tiles of one
// consumer warpgroup (m64n64 wgmmas in a block of 256 threads), then
// m64n64, m64n128 and m64n256 wgmmas of two.
// WGMMA: gpu.func @f_0_gemm_rows_le_16(
// WGMMA-SAME: known_block_size = array<i32: 256, 1, 1>
// WGMMA-NOT: gpu.func
// WGMMA: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 16>
// WGMMA: gpu.func @f_0_gemm_rows_le_32(
// WGMMA-SAME: known_block_size = array<i32: 256, 1, 1>
// WGMMA-NOT: gpu.func
// WGMMA: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>
// WGMMA: gpu.func @f_0_gemm_rows_le_64(
// WGMMA-SAME: known_block_size = array<i32: 256, 1, 1>
// WGMMA-NOT: gpu.func
// WGMMA: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// WGMMA: gpu.func @f_0_gemm_rows_le_128(
// WGMMA-SAME: known_block_size = array<i32: 384, 1, 1>
// WGMMA-NOT: gpu.func
// WGMMA: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// WGMMA: gpu.func @f_0_gemm_rows_le_256(
// WGMMA-NOT: gpu.func
// WGMMA: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// WGMMA: gpu.func @f_0_gemm(
// WGMMA-NOT: gpu.func
// WGMMA: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>

// The tiled kernel on sm_80: 128x128 blocks of 4 warps up to 128 rows,
// 128x256 of 8 warps above.
// TILED-LABEL: llvm.func @f(
// TILED: fusion_rt.alloc
// TILED: %[[WORKSPACE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// TILED-NEXT: %[[R128:.*]] = llvm.mlir.constant(128 : i64) : i64
// TILED-NEXT: %[[FITS128:.*]] = llvm.icmp "ule" %arg1, %[[R128]] : i64
// TILED-NEXT: llvm.cond_br %[[FITS128]], ^{{bb[0-9]+}}, ^{{bb[0-9]+}}
// TILED-NOT: llvm.icmp "ule"
// TILED: fusion_rt.launch @fusion_kernels::@f_0_gemm_rows_le_128 grid({{.*}}) block 128
// TILED: fusion_rt.launch @fusion_kernels::@f_0_gemm grid({{.*}}) block 256
// TILED: gpu.func @f_0_gemm_rows_le_128(
// TILED: gpu.func @f_0_gemm(
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<8192x64xbf16>) -> tensor<?x8192xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x64xbf16>, tensor<8192x64xbf16> -> tensor<?x8192xbf16>
  return %0 : tensor<?x8192xbf16>
}

// -----

// Without batch configs (an output wide enough to fill the GPU), one
// kernel and no compare.
// WGMMA-LABEL: llvm.func @wide(
// WGMMA-NOT: llvm.icmp "ule"
// WGMMA: fusion_rt.launch @fusion_kernels::@wide_0_gemm
// WGMMA-NOT: gemm_rows_le
// TILED-LABEL: llvm.func @wide(
// TILED-NOT: llvm.icmp "ule"
// TILED: fusion_rt.launch @fusion_kernels::@wide_0_gemm
// TILED-NOT: gemm_rows_le
func.func @wide(%x: tensor<?x64xbf16>, %w: tensor<32768x64xbf16>) -> tensor<?x32768xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x64xbf16>, tensor<32768x64xbf16> -> tensor<?x32768xbf16>
  return %0 : tensor<?x32768xbf16>
}

// -----

// 4096 columns: batches up to 128 rows take 64x64 tiles of one consumer
// warpgroup (a block of 256 threads, m64n64 wgmmas), 12 stages of 16 KiB
// (those up to 16 and 32 rows the swapped tiles, as at 8192).
// WGMMA-LABEL: llvm.func @rows64(
// WGMMA: fusion_rt.launch @fusion_kernels::@rows64_0_gemm_rows_le_128 grid({{.*}}) block 256 shared 197632 persistent
// WGMMA: fusion_rt.launch @fusion_kernels::@rows64_0_gemm_rows_le_256 grid({{.*}}) block 384
// WGMMA: fusion_rt.launch @fusion_kernels::@rows64_0_gemm_rows_le_512 grid({{.*}}) block 384
// WGMMA: fusion_rt.launch @fusion_kernels::@rows64_0_gemm grid({{.*}}) block 384
// WGMMA: gpu.func @rows64_0_gemm_rows_le_128(
// WGMMA-SAME: known_block_size = array<i32: 256, 1, 1>
// WGMMA-NOT: gpu.func
// WGMMA: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// WGMMA: gpu.func @rows64_0_gemm_rows_le_256(
// The tiled kernel keeps its 128x128 blocks of 4 warps (sm_80's 108 SMs:
// up to 384 rows).
// TILED-LABEL: llvm.func @rows64(
// TILED: fusion_rt.launch @fusion_kernels::@rows64_0_gemm_rows_le_384 grid({{.*}}) block 128
// TILED: fusion_rt.launch @fusion_kernels::@rows64_0_gemm grid({{.*}}) block 256
// TILED-NOT: fusion_rt.launch
func.func @rows64(%x: tensor<?x64xbf16>, %w: tensor<4096x64xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x64xbf16>, tensor<4096x64xbf16> -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}
