// 3xTF32 with swapped operands (small batches: tiles of 16 batch rows by 64
// of w's, one consumer warpgroup): the operands change places. The
// producer's splitters (threads 64-127) split x's stage (16 rows: 512 f32,
// two 16-byte chunks a splitter): the high parts over the stage, the
// remainders to the stage's remainder buffer past the ring (4 stages of 16 + 64 rows of 128 bytes),
// and the consumers load w's 64 rows of the stage (after x's 4 x 2 KiB)
// with ldmatrix and split them in registers. Each K step multiplies with
// three m64n16k8 wgmmas of w's parts by x's (N = the tile's 16 rows).
// RUN: fusion-opt %s --fusion-lower-to-gpu | FileCheck %s

// CHECK-LABEL: llvm.func @fp32(
// 4 stages of 10 KiB, 4 remainder buffers of 2 KiB, the 1 KiB alignment.
// CHECK: fusion_rt.launch @fusion_kernels::@fp32_0_gemm grid({{.*}}) block 256 shared 50176 persistent
// CHECK-LABEL: gpu.func @fp32_0_gemm
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 13>
// CHECK-COUNT-4: nvgpu.mbarrier.init %{{.*}}, %c64
// CHECK: %[[SPLITTER:.*]] = arith.cmpi uge, %{{.*}}, %c64
// CHECK: scf.if %[[SPLITTER]]
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[STAGE:.*]] = arith.remui %{{.*}}, %c4{{.*}} : index
// CHECK: %[[X_OFFSET:.*]] = arith.muli %[[STAGE]], %c2048 : index
// CHECK: %[[X:.*]] = memref.view %{{.*}}[%[[X_OFFSET]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<512xf32, #gpu.address_space<workgroup>>
// CHECK: %[[REM_STAGE:.*]] = arith.muli %[[STAGE]], %c2048{{.*}} : index
// CHECK: %[[REM_OFFSET:.*]] = arith.addi %[[REM_STAGE]], %c40960 : index
// CHECK: %[[REM:.*]] = memref.view %{{.*}}[%[[REM_OFFSET]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<512xf32, #gpu.address_space<workgroup>>
// Each chunk's high part (splitTf32: rounded to tf32, clamped to the
// largest finite tf32) over the tile, its exact remainder to the
// remainder buffer.
// CHECK: %[[CHUNK:.*]] = vector.load %[[X]][%[[AT:.*]]]
// CHECK: %[[HIGH:.*]] = arith.maxnumf
// CHECK: %[[LOW:.*]] = arith.subf %[[CHUNK]], %[[HIGH]]
// CHECK-NEXT: vector.store %[[HIGH]], %[[X]][%[[AT]]]
// CHECK-NEXT: vector.store %[[LOW]], %[[REM]][%[[AT]]]
// CHECK: vector.store %{{.*}}, %[[X]]
// CHECK: vector.store %{{.*}}, %[[REM]]
// CHECK-NOT: vector.store
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvgpu.mbarrier.arrive
// CHECK: nvgpu.tma.async.load {{.*}} -> memref<16x32xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.tma.async.load {{.*}} -> memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK: } else {
// CHECK: %[[W_STAGE:.*]] = arith.muli %{{.*}}, %c8192 : index
// CHECK: %[[W_OFFSET:.*]] = arith.addi %[[W_STAGE]], %c8192{{.*}} : index
// CHECK: %[[W:.*]] = memref.view %{{.*}}[%[[W_OFFSET]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: nvgpu.ldmatrix %[[W]]
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: setp.ne.b32 p, 0, 0;\0Awgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {$0, $1, $2, $3, $4, $5, $6, $7}, {$16, $17, $18, $19}, $20, p, 1, 1;
// CHECK-COUNT-11: setp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: gpu.return
module attributes {fusion.target = #fusion.target<sm_90>} {
func.func @fp32(%x: tensor<?x64xf32>, %w: tensor<128x64xf32>) -> tensor<?x128xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 4, group_m = 8, operands = w_x>>} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  return %0 : tensor<?x128xf32>
}
}
