// split_k = 4: clusters of 4 blocks share each 64x64 tile, block r
// multiplying K slices [4r, 4r + 4) of the 16 (K = 1024 of bf16). The host
// launches 4 blocks a tile (ceil(M / 64) * 4 column tiles * 4), each with
// room for the 3 peers' 16 KiB of sums. Blocks stride over tiles by
// cluster; the peers store their accumulators into the first block's
// shared memory (mapa, then stores through the shared_cluster space) and
// arrive on its mbarrier (release at cluster scope, 3 x 128 arrivals); the
// first waits for them (acquire at cluster scope), adds the 3 slots in
// rank order (8 chunks of 4 a thread each), frees each peer's slot with an
// arrival on the peer's barrier, and runs the epilogue alone. The blocks
// meet at cluster barriers after the barriers' set-up and before they
// exit.
// RUN: fusion-opt %s --fusion-lower-to-gpu | FileCheck %s

// CHECK-LABEL: llvm.func @bf16(
// CHECK: %[[ROW_TILES:.*]] = llvm.udiv %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: %[[SHARES:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK-NEXT: %[[GRID:.*]] = llvm.mul %[[ROW_TILES]], %[[SHARES]] : i64
// CHECK-NEXT: fusion_rt.launch @fusion_kernels::@bf16_0_gemm grid(%[[GRID]], %{{.*}}) block 256 shared 115712 persistent
// CHECK-LABEL: gpu.func @bf16_0_gemm
// CHECK-SAME: nvvm.cluster_dim = array<i32: 4, 1, 1>
// CHECK: %[[RANK32:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK: %[[RANK:.*]] = arith.index_castui %[[RANK32]] : i32 to index
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 11>
// CHECK: nvgpu.mbarrier.init %{{.*}}[%c9], %c384
// CHECK: nvgpu.mbarrier.init %{{.*}}[%c10], %c128
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// The producer: the block's share of K.
// CHECK: %[[BLOCK:.*]] = gpu.block_id x
// CHECK: arith.divui %[[BLOCK]], %c4
// CHECK: %[[SHARE_START:.*]] = arith.muli %[[RANK]], %c256 : index
// CHECK-NEXT: %[[K:.*]] = arith.addi %{{.*}}, %[[SHARE_START]] : index
// CHECK: nvgpu.tma.async.load %{{.*}}[%[[K]], %{{.*}}]
// The consumers: the first block adds the peers' sums.
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[RANK]], %c0{{.*}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK: nvvm.mbarrier.try_wait %{{.*}} {scope = #nvvm.mem_scope<cluster>}
// CHECK-COUNT-24: vector.load %{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK: nvvm.mapa %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %{{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: nvvm.mapa %{{.*}}, %c2_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %{{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: nvvm.mapa %{{.*}}, %c3_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %{{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: vector.store
// The peers: once the first block has taken their previous tile's sums.
// CHECK: scf.if %{{.*}} {
// CHECK: nvvm.mbarrier.try_wait %{{.*}} {scope = #nvvm.mem_scope<cluster>}
// CHECK: %[[SLOT:.*]] = nvvm.mapa %{{.*}}, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<7>
// CHECK: %[[STORED:.*]] = nvvm.mapa %{{.*}}, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[STORED]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.return
module attributes {fusion.target = #fusion.target<sm_90>} {
func.func @bf16(%x: tensor<?x1024xbf16>, %w: tensor<256x1024xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 64x64, warps = 4x1, stages = 4, group_m = 8, split_k = 4>>} : (tensor<?x1024xbf16>, tensor<256x1024xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}
}
