// The Hopper kernel in clusters of 2 blocks: the blocks of a cluster take
// tiles of adjacent block rows and the same block column, each loads half
// of w's tile and TMA multicasts it to both; a stage's release reaches the
// empty barriers of both blocks.
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=wgmma target=sm_90 cluster=2" --fusion-lower-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s --check-prefix=ALONE
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=wgmma target=sm_90 schedule=pingpong cluster=2" --fusion-lower-to-gpu | FileCheck %s --check-prefix=PINGPONG

// w's tensor map boxes are half the tile's 128 rows; the grid is two
// blocks per tile of two block rows: 2 ceil(M / 256) blocks.
// CHECK-LABEL: llvm.func @clustered(
// CHECK: fusion_rt.encode_tensor_map
// CHECK: %[[W_ROWS:.*]] = llvm.mlir.constant(64 : i32) : i32
// CHECK-NEXT: fusion_rt.encode_tensor_map %{{.*}}, <{{.*}}> %{{.*}} rows %{{.*}} columns %{{.*}} box(%[[W_ROWS]], 64) : i32
// CHECK: %[[PAIR_ROWS:.*]] = llvm.mlir.constant(256 : i64) : i64
// CHECK-NEXT: %[[ROUND:.*]] = llvm.mlir.constant(255 : i64) : i64
// CHECK-NEXT: %[[SUM:.*]] = llvm.add %{{.*}}, %[[ROUND]] : i64
// CHECK-NEXT: %[[PAIRS:.*]] = llvm.udiv %[[SUM]], %[[PAIR_ROWS]] : i64
// CHECK-NEXT: %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: %[[GRID:.*]] = llvm.mul %[[PAIRS]], %[[TWO]] : i64
// CHECK-NEXT: fusion_rt.launch @fusion_kernels::@clustered_0_gemm grid(%[[GRID]], %{{.*}}) block 384 shared 132608 persistent
//
// CHECK: gpu.func @clustered_0_gemm({{.*}} nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK: %[[RANK32:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK-NEXT: %[[RANK:.*]] = arith.index_castui %[[RANK32]] : i32 to index
//
// Empty barriers count 8 consumer warps in each of the 2 blocks; the
// barriers are initialized for the cluster before anyone multicasts.
// CHECK: %[[RELEASES:.*]] = arith.constant 16 : index
// CHECK-NEXT: nvgpu.mbarrier.init %{{.*}}[%{{.*}}], %[[RELEASES]]
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
//
// The producer walks the cluster's tiles; its tile is in block row
// 2 (cluster tile row) + rank; it loads rows 64 rank on of w's tile
// into both blocks.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: %[[PBLOCK:.*]] = gpu.block_id x
// CHECK-NEXT: %[[PGRID:.*]] = gpu.grid_dim x
// CHECK: %[[PFIRST:.*]] = arith.divui %[[PBLOCK]], %c2
// CHECK: %[[PSTEP:.*]] = arith.divui %[[PGRID]], %c2
// CHECK: scf.for %{{.*}} = %[[PFIRST]] to %{{.*}} step %[[PSTEP]]
// CHECK: %[[PAIR_M:.*]] = arith.addi
// CHECK: %[[FIRST_M:.*]] = arith.muli %[[PAIR_M]], %c2
// CHECK-NEXT: %[[TILE_M:.*]] = arith.addi %[[FIRST_M]], %[[RANK]] : index
// CHECK: nvgpu.tma.async.load {{.*}} to %{{.*}} : <tensor = memref<128x64xbf16
// CHECK: %[[SHARE:.*]] = arith.muli %[[RANK]], %c64
// CHECK-NEXT: %[[W_ROW:.*]] = arith.addi %{{.*}}, %[[SHARE]] : index
// CHECK: nvgpu.tma.async.load %{{.*}}[%{{.*}}, %[[W_ROW]]], %{{.*}} to %{{.*}} multicast_mask = %c3_i16 : <tensor = memref<64x64xbf16
//
// Each consumer warp's first lane releases a stage to both blocks.
// CHECK: nvvm.setmaxregister increase 232
// CHECK: "wgmma.wait_group.sync.aligned 0;"
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK: %[[FIRST_LANE:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK-NEXT: scf.if %[[FIRST_LANE]] {
// CHECK: %[[BITS:.*]] = nvgpu.mbarrier.get
// CHECK-NEXT: %[[LOCAL:.*]] = llvm.inttoptr %[[BITS]] : i32 to !llvm.ptr<3>
// CHECK: %[[OWN:.*]] = nvvm.mapa %[[LOCAL]], %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[OWN]] : !llvm.ptr<7>
// CHECK: %[[PEER:.*]] = nvvm.mapa %[[LOCAL]], %c1_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[PEER]] : !llvm.ptr<7>
//
// A tile past the last block row (an odd count of them) is not stored;
// no block leaves before its peer is done with its barriers.
// CHECK: %[[IN_M:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK-NEXT: scf.if %[[IN_M]] {
// CHECK: vector.store
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.return
//
// Unclustered (the default): no cluster, w loaded whole, no multicast.
// ALONE-LABEL: llvm.func @clustered(
// ALONE-NOT: nvvm.cluster_dim
// ALONE-NOT: multicast_mask
// ALONE-NOT: nvvm.mapa
// ALONE-NOT: nvvm.cluster.arrive
// ALONE: gpu.return
// The ping-pong schedule in clusters: a stage's release
// counts one consumer warpgroup's 4 warps in each block, the turn barrier
// stays the block's own (its warpgroup's 128 threads).
// PINGPONG-LABEL: llvm.func @clustered(
// PINGPONG: gpu.func @clustered_0_gemm({{.*}} nvvm.cluster_dim = array<i32: 2, 1, 1>
// PINGPONG: %[[RELEASES:.*]] = arith.constant 8 : index
// PINGPONG-NEXT: nvgpu.mbarrier.init %{{.*}}[%{{.*}}], %[[RELEASES]]
// PINGPONG: %[[TURN:.*]] = arith.constant 13 : index
// PINGPONG-NEXT: %[[TURN_COUNT:.*]] = arith.constant 128 : index
// PINGPONG-NEXT: nvgpu.mbarrier.init %{{.*}}[%[[TURN]]], %[[TURN_COUNT]]
// PINGPONG: nvgpu.tma.async.load {{.*}} : <tensor = memref<128x64xbf16
// PINGPONG: nvgpu.tma.async.load {{.*}} multicast_mask = %c3_i16 : <tensor = memref<64x64xbf16
// PINGPONG: nvvm.mbarrier.arrive {{.*}} : !llvm.ptr<7>
func.func @clustered(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %b: tensor<48xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.linear %x, %w, %b : tensor<?x64xbf16>, tensor<48x64xbf16>, tensor<48xbf16> -> tensor<?x48xbf16>
  %1 = fusion.leaky_relu %0, negative_slope = 0.1 : tensor<?x48xbf16>
  return %1 : tensor<?x48xbf16>
}

// -----

// 3xTF32: the splitters' barriers stay the block's own (its two warps'
// 64 arrivals); the stages' releases reach both blocks.
// CHECK-LABEL: llvm.func @split
// CHECK: gpu.func @split_0_gemm({{.*}} nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK: %[[RELEASES:.*]] = arith.constant 16 : index
// CHECK-NEXT: nvgpu.mbarrier.init %{{.*}}[%{{.*}}], %[[RELEASES]]
// CHECK: %[[SPLITTERS:.*]] = arith.constant 64 : index
// CHECK-NEXT: nvgpu.mbarrier.init %{{.*}}[%{{.*}}], %[[SPLITTERS]]
// CHECK: nvgpu.tma.async.load {{.*}} multicast_mask = %c3_i16 : <tensor = memref<64x32xf32
// CHECK: nvgpu.ldmatrix
// CHECK: nvvm.mapa
// CHECK: nvvm.mbarrier.arrive {{.*}} : !llvm.ptr<7>
func.func @split(%x: tensor<?x128xf32>, %w: tensor<64x128xf32>) -> tensor<?x64xf32> {
  %0 = fusion.linear %x, %w : tensor<?x128xf32>, tensor<64x128xf32> -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}
