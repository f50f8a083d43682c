// The PTX of kernels whose blocks share a tile's K slices (split_k: fp32's
// batches of 1 to 64 rows by 4096 columns, 64 tiles of 64 columns, 2 blocks
// a tile): a compile-time cluster of 2, each peer's sums stored into the
// first block's shared memory (st.shared::cluster) and released at cluster
// scope, the first block's wait acquiring at cluster scope. None spills
// (ptxas), 3xTF32's register parts included.
// REQUIRES: cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma --precision=fp32 -o %t/fp32.ptx
// RUN: FileCheck %s --input-file=%t/fp32.ptx
// RUN: %ptxas -arch=sm_90a -v %t/fp32.ptx -o %t/fp32.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK-LABEL: .entry f32_0_gemm_rows_le_16(
// CHECK: .reqnctapercluster 2, 1, 1
// CHECK-DAG: fence.mbarrier_init.release.cluster;
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32
// CHECK-DAG: mbarrier.try_wait.parity.acquire.cluster.shared.b64
// CHECK-DAG: mapa.shared::cluster.u64
// CHECK-DAG: st.shared::cluster.v4.b32
// CHECK-DAG: mbarrier.arrive.release.cluster.shared::cluster.b64
// CHECK-DAG: barrier.cluster.arrive;
// CHECK-DAG: barrier.cluster.wait;
// CHECK-LABEL: .entry f32_0_gemm_rows_le_64(
// CHECK: .reqnctapercluster 2, 1, 1
// CHECK: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK-LABEL: .entry f32_0_gemm_rows_le_128(
// CHECK-NOT: reqnctapercluster
// CHECK: .entry

// PTXAS: Compiling entry function 'f32_0_gemm_rows_le_64'
// PTXAS-NEXT: Function properties for f32_0_gemm_rows_le_64
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'f32_0_gemm_rows_le_32'
// PTXAS-NEXT: Function properties for f32_0_gemm_rows_le_32
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'f32_0_gemm_rows_le_16'
// PTXAS-NEXT: Function properties for f32_0_gemm_rows_le_16
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @f32(%x: tensor<?x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<?x4096xf32> {
  %0 = fusion.linear %x, %w : tensor<?x4096xf32>, tensor<4096x4096xf32> -> tensor<?x4096xf32>
  return %0 : tensor<?x4096xf32>
}
