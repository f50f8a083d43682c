// The Hopper kernel with the ping-pong schedule: two consumer warpgroups
// take the block's tiles in turn, each a whole tile: 128x128 tiles, whose
// two 64-row blocks each warpgroup multiplies with its own m64n128 wgmmas.
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=wgmma target=sm_90 schedule=pingpong" --fusion-lower-to-gpu | FileCheck %s

// 128 + 2 x 128 threads; 6 stages of (128 + 128) x 128 bytes, then a bias
// row (128 f32) for each consumer and the alignment shift.
// CHECK-LABEL: llvm.func @pingpong(
// CHECK: fusion_rt.launch @fusion_kernels::@pingpong_0_gemm grid(%{{.*}}, %{{.*}}) block 384 shared 198656 persistent
// CHECK: gpu.func @pingpong_0_gemm(
//
// Empty barriers count one warpgroup's 128 arrivals; the last mbarrier
// (after the epilogue's) is the consumers' turn, 128 arrivals a phase.
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 14>
// CHECK: nvgpu.mbarrier.init %{{.*}}[%c0{{.*}}], %c1
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: arith.constant 6 : index
// CHECK-NEXT: arith.addi
// CHECK-NEXT: arith.constant 128 : index
// CHECK-NEXT: nvgpu.mbarrier.init
// CHECK: nvgpu.mbarrier.init %{{.*}}[%c12], %c1
// CHECK-NEXT: %[[TURN:.*]] = arith.constant 13 : index
// CHECK-NEXT: %[[TURN_COUNT:.*]] = arith.constant 128 : index
// CHECK-NEXT: nvgpu.mbarrier.init %[[BARRIERS:.*]][%[[TURN]]], %[[TURN_COUNT]]
//
// The producer walks every tile of the block in order, x in 128-row boxes.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: %[[PFIRST:.*]] = gpu.block_id x
// CHECK-NEXT: %[[PGRID:.*]] = gpu.grid_dim x
// CHECK: scf.for %{{.*}} = %[[PFIRST]] to %{{.*}} step %[[PGRID]] iter_args
// CHECK: nvgpu.tma.async.load {{.*}} to %{{.*}} : <tensor = memref<128x64xbf16
//
// Consumer c (warpgroup c + 1) takes iterations c, c + 2, ...: tiles
// block + (c + 2 i) x grid; its column constants lie 512 bytes (one bias
// row) past the other's; its barrier is named barrier 1 + c, of 128
// threads.
// CHECK: nvvm.setmaxregister increase 232
// CHECK: %[[STRIDE:.*]] = arith.constant 512 : index
// CHECK: %[[SHIFT:.*]] = arith.muli %[[CONSUMER:.*]], %[[STRIDE]]
// CHECK: memref.view %{{.*}}[%[[SHIFT]]]
// CHECK: %[[CFIRST:.*]] = gpu.block_id x
// CHECK-NEXT: %[[CGRID:.*]] = gpu.grid_dim x
// CHECK-NEXT: %[[OFFSET:.*]] = arith.muli %[[CONSUMER]], %[[CGRID]]
// CHECK-NEXT: %[[START:.*]] = arith.addi %[[CFIRST]], %[[OFFSET]]
// CHECK-NEXT: arith.constant 2 : index
// CHECK-NEXT: %[[STEP:.*]] = arith.muli %[[CGRID]]
// CHECK-NEXT: scf.for %{{.*}} = %[[START]] to %{{.*}} step %[[STEP]] iter_args(%{{.*}} = %[[CONSUMER]])
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[C:.*]] = arith.index_castui %[[CONSUMER]] : index to i32
// CHECK-NEXT: %[[NAMED:.*]] = arith.addi %[[ONE]], %[[C]] : i32
// CHECK-NEXT: %[[THREADS:.*]] = arith.constant 128 : i32
// CHECK-NEXT: nvvm.barrier id = %[[NAMED]] number_of_threads = %[[THREADS]]
//
// Past the block's first tile, the main loop waits for the previous
// tile's turn (phase iteration - 1) before its first slice, and ends its
// own turn once every slice has been waited for, before its last wgmmas
// are done. Each K step multiplies both row blocks: x's rows 64-127 are
// 8 KiB (64 rows of 128 bytes) past rows 0-63, and each wgmma takes 64 of
// the thread's 128 accumulators.
// CHECK: scf.if
// CHECK: nvgpu.mbarrier.get %[[BARRIERS]][%{{.*}}]
// CHECK: nvvm.mbarrier.try_wait
// CHECK: scf.condition
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: scf.for {{.*}} -> (!llvm.struct<(f32{{(, f32){127}[)]}}>, i32, i1)
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, {{.*}} : !llvm.struct<(f32{{(, f32){63}[)]}}> -> !llvm.struct<(f32{{(, f32){63}[)]}}>
// CHECK: %[[SECOND_BLOCK:.*]] = arith.constant 512 : i32
// CHECK-NEXT: arith.addi %{{.*}}, %[[SECOND_BLOCK]] : i32
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK-COUNT-6: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// Two stages of wgmmas stay in flight: the stage two slices back is
// released (from slice 2 on), two back from the ring's start wrapping to
// its end (stage + 6 - 2).
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 2
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[LATE:.*]] = arith.cmpi uge, %{{.*}}, %[[TWO]] : i32
// CHECK-NEXT: scf.if %[[LATE]] {
// CHECK: %[[WRAPPED:.*]] = arith.addi %{{.*}}, %c4{{.*}} : i32
// CHECK: nvgpu.mbarrier.arrive
// CHECK: scf.yield
// CHECK: %[[TURN2:.*]] = arith.constant 13 : index
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[BARRIERS]][%[[TURN2]]]
// CHECK: "wgmma.wait_group.sync.aligned 0;"
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
func.func @pingpong(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %b: tensor<48xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.linear %x, %w, %b : tensor<?x64xbf16>, tensor<48x64xbf16>, tensor<48xbf16> -> tensor<?x48xbf16>
  %1 = fusion.leaky_relu %0, negative_slope = 0.1 : tensor<?x48xbf16>
  return %1 : tensor<?x48xbf16>
}

// -----

// 3xTF32: the turn barrier follows the split barriers (3 x 5 stages + the
// epilogue's), and the turn is waited for before the first slice's split.
// CHECK-LABEL: llvm.func @split
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 17>
// CHECK: %[[TURN:.*]] = arith.constant 16 : index
// CHECK-NEXT: %[[COUNT:.*]] = arith.constant 128 : index
// CHECK-NEXT: nvgpu.mbarrier.init %[[BARRIERS:.*]][%[[TURN]]], %[[COUNT]]
// CHECK: nvvm.setmaxregister increase 232
// CHECK: scf.if
// CHECK: nvgpu.mbarrier.get %[[BARRIERS]][%{{.*}}]
// CHECK: nvvm.mbarrier.try_wait
// CHECK: scf.condition
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvgpu.ldmatrix
// CHECK: nvgpu.mbarrier.arrive %[[BARRIERS]][%c16{{(_[0-9]+)?}}]
func.func @split(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.linear %x, %w : tensor<?x64xf32>, tensor<48x64xf32> -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}
