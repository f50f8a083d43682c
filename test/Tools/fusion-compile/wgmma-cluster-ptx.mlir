// The PTX of clustered Hopper kernels: a compile-time cluster of 2 blocks,
// the mbarriers initialized for the cluster before any block multicasts,
// w's half tiles multicast to both blocks, each stage released to both
// blocks' mbarriers (with the default release at CTA scope: one at cluster
// scope fences the thread's global stores too, and made the kernels 2-2.7x
// slower on the H100, docs/benchmarks.md run 21), and a cluster barrier
// before the blocks exit. ptxas
// keeps the wgmmas asynchronous there too (no C75xx warning), in both
// schedules and in bf16 and 3xTF32. (A batch of 4096 rows: a dynamic one
// would also have the small batches' unclustered kernels, whose blocks
// sharing a tile's K slices release their sums at cluster scope.)
// REQUIRES: cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma --cluster=2 -o %t/cooperative.ptx
// RUN: FileCheck %s --implicit-check-not=release.cluster.shared < %t/cooperative.ptx
// RUN: %ptxas -arch=sm_90a -v %t/cooperative.ptx -o %t/cooperative.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --implicit-check-not=C75
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma --schedule=pingpong --cluster=2 -o %t/pingpong.ptx
// RUN: FileCheck %s --implicit-check-not=release.cluster.shared < %t/pingpong.ptx
// RUN: %ptxas -arch=sm_90a -v %t/pingpong.ptx -o %t/pingpong.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --implicit-check-not=C75

// CHECK: .entry linear_bf16_0_gemm(
// CHECK: .reqnctapercluster 2, 1, 1
// CHECK-DAG: fence.mbarrier_init.release.cluster;
// CHECK-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
// CHECK-DAG: mapa.shared::cluster.u64
// CHECK-DAG: mbarrier.arrive.shared::cluster.b64
// CHECK-DAG: barrier.cluster.arrive;
// CHECK-DAG: barrier.cluster.wait;
// CHECK: .entry linear_f32_0_gemm(
// CHECK: .reqnctapercluster 2, 1, 1

// PTXAS-DAG: Compiling entry function 'linear_bf16_0_gemm'
// PTXAS-DAG: Compiling entry function 'linear_f32_0_gemm'
func.func @linear_bf16(%x: tensor<4096x1000xbf16>, %w: tensor<520x1000xbf16>) -> tensor<4096x520xbf16> {
  %0 = fusion.linear %x, %w : tensor<4096x1000xbf16>, tensor<520x1000xbf16> -> tensor<4096x520xbf16>
  %1 = fusion.leaky_relu %0, negative_slope = -0.1 : tensor<4096x520xbf16>
  return %1 : tensor<4096x520xbf16>
}

func.func @linear_f32(%x: tensor<4096x1000xf32>, %w: tensor<520x1000xf32>) -> tensor<4096x520xf32> {
  %0 = fusion.linear %x, %w : tensor<4096x1000xf32>, tensor<520x1000xf32> -> tensor<4096x520xf32>
  %1 = fusion.leaky_relu %0, negative_slope = -0.1 : tensor<4096x520xf32>
  return %1 : tensor<4096x520xf32>
}
