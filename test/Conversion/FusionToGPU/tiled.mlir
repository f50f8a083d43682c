// The tiled GEMM kernel at small tiles (32x32 blocks, one warp, 3 stages).
// RUN: fusion-opt %s --split-input-file --fusion-lower-to-gpu="strategy=tiled tile-m=32 tile-n=32 warps-m=1 warps-n=1 stages=3" | FileCheck %s

// Host: the kernel gets expanded memref descriptors, a grid of
// ceil(M / 32) * ceil(48 / 32) blocks, 32 threads and
// 3 * (32 + 32) * 128 bytes of dynamic shared memory.
// CHECK-LABEL: llvm.func @tiled(
// CHECK-NOT: __fusion_rt_gemm
// CHECK-DAG: %[[THREADS:.*]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-DAG: %[[SHARED:.*]] = llvm.mlir.constant(24576 : i32) : i32
// CHECK: llvm.call @__fusion_rt_launch(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[THREADS]], %[[SHARED]],
//
// CHECK: gpu.func @tiled_0_gemm(%[[X:.*]]: memref<?x64xf32>, %[[W:.*]]: memref<48x64xf32>, %[[B:.*]]: memref<48xf32>, %[[OUT:.*]]: memref<?x48xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>}
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[A:.*]] = memref.view %[[SMEM]][%{{.*}}][] {{.*}} to memref<3x32x32xf32, #gpu.address_space<workgroup>>
// CHECK: %[[BS:.*]] = memref.view %[[SMEM]][%{{.*}}][] {{.*}} to memref<3x32x32xf32, #gpu.address_space<workgroup>>
//
// The swizzle: 16-byte chunk c of row r lands at chunk c ^ (r % 8).
// CHECK: %[[ROW:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK: %[[CHUNK:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// CHECK: %[[LOW:.*]] = arith.remui %[[ROW]], %{{.*}} : index
// CHECK: %[[SWZ:.*]] = arith.xori %[[CHUNK]], %[[LOW]] : index
// CHECK: %[[COL:.*]] = arith.muli %[[SWZ]], %{{.*}} : index
// Predicated copies: out-of-range chunks read 0 elements (zero fill).
// CHECK: %[[N:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: nvgpu.device_async_copy %[[X]][%{{.*}}, %{{.*}}], %[[A]][%{{.*}}, %[[ROW]], %[[COL]]], 4, %[[N]] {bypassL1}
//
// Prologue: stages 0 and 1 in flight, 16 chunks each, one group each.
// CHECK-COUNT-7: nvgpu.device_async_copy %[[X]]
// CHECK-COUNT-8: nvgpu.device_async_copy %[[W]]
// CHECK: nvgpu.device_async_create_group
// CHECK-COUNT-16: nvgpu.device_async_copy
// CHECK: %[[G1:.*]] = nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %[[G1]] {numGroups = 1 : i32}
// CHECK: gpu.barrier
// CHECK-COUNT-2: nvgpu.ldmatrix %[[A]]{{.*}}{numTiles = 4 : i32, transpose = false} : memref<3x32x32xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK-COUNT-2: nvgpu.ldmatrix %[[BS]]
//
// The pipelined loop over K tiles: accumulators, group token and the first
// step's fragments carried; each step loads the next step's fragments and
// issues part of the refill before its mma.sync ops.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK-SAME: -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, !nvgpu.device.async.token, vector<4x1xf32>, vector<4x1xf32>, vector<4x1xf32>, vector<4x1xf32>)
// CHECK: nvgpu.ldmatrix %[[A]]
// CHECK: nvgpu.device_async_copy
// tf32: operands rounded to nearest (ties away) at 10 mantissa bits.
// CHECK: arith.addi %{{.*}}, %cst{{.*}} : vector<4x1xi32>
// CHECK: arith.andi
// CHECK-COUNT-8: nvgpu.mma.sync(%{{.*}}, %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// The last step waits for the next tile and loads its first fragments.
// CHECK: %[[NEXT:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[NEXT]] {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.ldmatrix
// CHECK: nvgpu.mma.sync
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
//
// Epilogue on the registers: alpha, bias, the region, then a store of two
// adjacent columns.
// CHECK: memref.load %[[B]]
// CHECK: vector.extract
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: vector.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}] : memref<?x48xf32>, vector<2xf32>
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @tiled(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>, %b: tensor<48xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) precision tf32 alpha 2.0 epilogue {
  ^bb0(%acc: f32):
    %zero = arith.constant 0.0 : f32
    %1 = arith.maximumf %acc, %zero : f32
    fusion.yield %1 : f32
  } : (tensor<?x64xf32>, tensor<48x64xf32>, tensor<48xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

// bf16 (nvvm.mma.sync m16n8k16 on packed registers: nvgpu has no bf16
// lowering) with a training batch norm: the kernel also writes each block
// row's column moments, merged across the 8 lanes of a column by a fixed
// butterfly, then across warps; the host launches finalize and normalize
// only, with 32-row chunks.
// CHECK-LABEL: llvm.func @bn(
// CHECK-NOT: _stats
// CHECK: gpu.func @bn_0_gemm(%{{.*}}: memref<?x64xbf16>, %{{.*}}: memref<48x64xbf16>, %{{.*}}: memref<?x48xbf16>, %{{.*}}: memref<48xbf16>, %[[MEAN:.*]]: memref<?xf32>, %[[M2:.*]]: memref<?xf32>)
// CHECK: nvgpu.ldmatrix {{.*}} -> vector<4x2xbf16>
// CHECK: scf.for
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK: scf.yield
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<3x1x32xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[MEAN]]
// CHECK: memref.store %{{.*}}, %[[M2]]
// CHECK: gpu.func @bn_0_finalize
// CHECK: gpu.func @bn_0_normalize
func.func @bn(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %s: tensor<48xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue(%s) {
  ^bb0(%acc: f32, %col: f32):
    %1 = arith.mulf %acc, %col : f32
    fusion.yield %1 : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<?x64xbf16>, tensor<48x64xbf16>, tensor<48xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

// K not a multiple of 16 bytes: synchronous element loads, no cp.async.
// CHECK-LABEL: gpu.func @ragged_0_gemm
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: memref.load
// CHECK: vector.store %{{.*}} : memref<3x32x64xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
func.func @ragged(%x: tensor<?x29xf16>, %w: tensor<37x29xf16>) -> tensor<?x37xf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x29xf16>, tensor<37x29xf16>) -> tensor<?x37xf16>
  return %0 : tensor<?x37xf16>
}
