// The tiled GEMM kernel at small tiles (32x32 blocks, one warp, 3 stages).
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=tiled tile=32,32 warps=1,1 stages=3" --fusion-lower-to-gpu | FileCheck %s

// Host: the kernel gets expanded memref descriptors, a grid of
// ceil(M / 32) * ceil(48 / 32) blocks, 32 threads and
// 3 * (32 + 32) * 128 bytes of pipeline plus 32 * 4 bytes of bias in
// dynamic shared memory.
// CHECK-LABEL: llvm.func @tiled(
// CHECK-NOT: fusion_rt.cublaslt_gemm
// CHECK: fusion_rt.launch @fusion_kernels::@tiled_0_gemm grid(%{{.*}}, %{{.*}}) block 32 shared 24704 stream(%{{.*}}) args({{.*}} : !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64) : i32
//
// CHECK: gpu.func @tiled_0_gemm(%[[X:.*]]: memref<?x64xf32>, %[[W:.*]]: memref<48x64xf32>, %[[B:.*]]: memref<48xf32>, %[[OUT:.*]]: memref<?x48xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>}
// CHECK: %[[XF:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1]] : memref<?x64xf32> into memref<?xf32>
// CHECK: %[[WF:.*]] = memref.collapse_shape %[[W]] {{\[\[}}0, 1]] : memref<48x64xf32> into memref<3072xf32>
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[A:.*]] = memref.view %[[SMEM]][%{{.*}}][] {{.*}} to memref<3x32x32xf32, #gpu.address_space<workgroup>>
// CHECK: %[[BS:.*]] = memref.view %[[SMEM]][%{{.*}}][] {{.*}} to memref<3x32x32xf32, #gpu.address_space<workgroup>>
//
// The block's bias columns go to shared memory first (0 past N).
// CHECK: %[[CONSTANTS:.*]] = memref.view %[[SMEM]][%c24576{{.*}}][] {{.*}} to memref<1x32xf32, #gpu.address_space<workgroup>>
// CHECK: %[[BIAS:.*]] = memref.load %[[B]]
// CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %[[BIAS]], %{{.*}} : f32
// CHECK: memref.store %[[SAFE]], %[[CONSTANTS]]
//
// The swizzle: 16-byte chunk c of row r lands at chunk c ^ (r % 8).
// CHECK: %[[CHUNK:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// CHECK: %[[ROW:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK: %[[LOW:.*]] = arith.remui %[[ROW]], %{{.*}} : index
// CHECK: %[[SWZ:.*]] = arith.xori %[[CHUNK]], %[[LOW]] : index
// CHECK: %[[COL:.*]] = arith.muli %[[SWZ]], %{{.*}} : index
// Predicated copies: out-of-range chunks read 0 elements (zero fill); the
// offset of a thread's i-th chunk is its first chunk's plus i * 4 rows.
// CHECK: %[[N:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: nvgpu.device_async_copy %[[XF]][%{{.*}}], %[[A]][%{{.*}}, %[[ROW]], %[[COL]]], 4, %[[N]] {bypassL1}
// CHECK: %[[FIRST:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK: %[[ROW1:.*]] = arith.addi %[[FIRST]], %c4{{.*}} : index
// CHECK: %[[OFFSET1:.*]] = arith.addi %{{.*}}, %c256 : index
// CHECK: nvgpu.device_async_copy %[[XF]][%[[OFFSET1]]], %[[A]][%{{.*}}, %[[ROW1]], %{{.*}}], 4
//
// Prologue: stages 0 and 1 in flight, 16 chunks each, one group each.
// CHECK-COUNT-6: nvgpu.device_async_copy %[[XF]]
// CHECK-COUNT-8: nvgpu.device_async_copy %[[WF]]
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
// tf32: operands rounded to nearest (ties away) at 10 mantissa bits by
// cvt.rna.tf32.f32, which keeps a NaN (adding half a unit to the bits made
// the GPU's NaN 0x7fffffff -0.0).
// CHECK: %[[ELEMENT:.*]] = vector.extract %{{.*}}[0, 0] : f32 from vector<{{[24]}}x1xf32>
// CHECK: %[[TF32:.*]] = nvvm.convert.float.to.tf32 %[[ELEMENT]] {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: %[[ROUNDED:.*]] = arith.bitcast %[[TF32]] : i32 to f32
// CHECK: vector.insert %[[ROUNDED]], %{{.*}} [0, 0] : f32 into vector<{{[24]}}x1xf32>
// CHECK-COUNT-8: nvgpu.mma.sync(%{{.*}}, %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// The third of the 4 steps, once every read of this tile is issued, waits
// for the next tile; the last step loads its first fragments.
// CHECK: %[[NEXT:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[NEXT]] {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-8: nvgpu.mma.sync
// CHECK: nvgpu.ldmatrix
// CHECK-COUNT-8: nvgpu.mma.sync
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
//
// Epilogue: the bias from shared memory; alpha, bias and the region on the
// accumulators; pairs of columns into the output tile in shared memory
// (rows padded by 8 elements); then 16-byte chunks of it out, guarded.
// CHECK: %[[ACC:.*]] = vector.extract %{{.*}}[0, 0] : f32 from vector<2x2xf32>
// CHECK: gpu.barrier
// CHECK: %[[STAGING:.*]] = memref.view %[[SMEM]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x40xf32, #gpu.address_space<workgroup>>
// CHECK: %[[BIAS0:.*]] = memref.load %[[CONSTANTS]]
// CHECK: arith.mulf %[[ACC]]
// CHECK: arith.addf %{{.*}}, %[[BIAS0]]
// CHECK: arith.maximumf
// CHECK: vector.store %{{.*}}, %[[STAGING]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<32x40xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: gpu.barrier
// CHECK: %[[CHUNK:.*]] = vector.load %[[STAGING]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<32x40xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: scf.if
// CHECK-NEXT: vector.store %[[CHUNK]], %[[OUT]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x48xf32>, vector<4xf32>
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
// lowering) with a training batch norm: after the output tile is out, one
// thread a column sums the tile's valid rows in shared memory, twice (mean,
// then squared deviations), and writes the block row's moments; the host
// launches finalize and normalize only, with 32-row chunks.
// CHECK-LABEL: llvm.func @bn(
// CHECK-NOT: _stats
// CHECK: gpu.func @bn_0_gemm(%{{.*}}: memref<?x64xbf16>, %{{.*}}: memref<48x64xbf16>, %[[OUTB:.*]]: memref<?x48xbf16>, %{{.*}}: memref<48xbf16>, %[[MEAN:.*]]: memref<?xf32>, %[[M2:.*]]: memref<?xf32>)
// CHECK: nvgpu.ldmatrix {{.*}} -> vector<4x2xbf16>
// CHECK: scf.for
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK: scf.yield
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: vector.store %{{.*}}, %[[TILE:.*]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<32x40xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: gpu.barrier
// N = 48 is a multiple of the 8-element chunk: whole-chunk stores.
// CHECK: vector.store %{{.*}}, %[[OUTB]]{{.*}} {alignment = 16 : i64} : memref<?x48xbf16>, vector<8xbf16>
// CHECK: %[[ROWS:.*]] = arith.minui
// CHECK: scf.if
// CHECK: %[[SUM:.*]] = scf.for %[[R:.*]] = %{{.*}} to %[[ROWS]]
// CHECK: memref.load %[[TILE]][%[[R]], %{{.*}}]
// CHECK: arith.divf %[[SUM]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[ROWS]]
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[MEAN]]
// CHECK: memref.store %{{.*}}, %[[M2]]
// CHECK-NOT: gpu.shuffle
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

// K not a multiple of 16 bytes: synchronous element loads, no cp.async;
// N = 37 rows of the output are not 16-byte aligned: element stores.
// CHECK-LABEL: gpu.func @ragged_0_gemm
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: memref.load
// CHECK: vector.store %{{.*}} : memref<3x32x64xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: %[[CHUNK:.*]] = vector.load {{.*}} : memref<32x40xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: scf.if
// CHECK-NEXT: %[[E:.*]] = vector.extract %[[CHUNK]][0] : f16 from vector<8xf16>
// CHECK-NEXT: memref.store %[[E]], %{{.*}} : memref<?x37xf16>
// CHECK-NOT: vector.store {{.*}} memref<?x37xf16>
func.func @ragged(%x: tensor<?x29xf16>, %w: tensor<37x29xf16>) -> tensor<?x37xf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x29xf16>, tensor<37x29xf16>) -> tensor<?x37xf16>
  return %0 : tensor<?x37xf16>
}

// -----

// f32 tensors in bf16 precision: f32 tiles in shared memory, the two k8
// halves of a k16 step loaded in the tf32 layout, each pair of elements
// rounded to a bf16 pair (k t and t + 4 of a half into slots 2t, 2t + 1,
// in A and B alike), one m16n8k16 bf16 mma.sync per tile; output f32.
// CHECK-LABEL: gpu.func @f32_in_bf16_0_gemm
// CHECK: %[[A0:.*]] = nvgpu.ldmatrix %{{.*}} : memref<3x32x32xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK: %[[X:.*]] = vector.extract %[[A0]][0, 0]
// CHECK: %[[Y:.*]] = vector.extract %[[A0]][2, 0]
// CHECK: %[[PAIR:.*]] = vector.from_elements %[[X]], %[[Y]] : vector<2xf32>
// CHECK: arith.truncf %[[PAIR]] : vector<2xf32> to vector<2xbf16>
// CHECK: vector.insert %{{.*}} [3] : vector<2xbf16> into vector<4x2xbf16>
// CHECK: scf.for
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-NOT: tf32Enabled
// CHECK: scf.yield
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<?x48xf32>, vector<4xf32>
func.func @f32_in_bf16(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w precision bf16 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

// An fp32 GEMM takes three tf32 products (3xTF32): each fragment's high
// part is x rounded to nearest tf32 and clamped to the largest finite
// tf32, the low part the exact remainder, so an infinite x has a finite
// high part and an infinite low part (never inf * 0 with a partner exact
// in tf32).
// CHECK-LABEL: gpu.func @f32_split_0_gemm
// CHECK: %[[LARGEST:.*]] = arith.constant dense<3.40116213E+38> : vector<2x1xf32>
// CHECK-NEXT: %[[LEAST:.*]] = arith.constant dense<-3.40116213E+38> : vector<2x1xf32>
// CHECK-NEXT: %[[BITS:.*]] = arith.bitcast %[[X:.*]] : vector<2x1xf32> to vector<2x1xi32>
// CHECK: %[[HALF_ULP:.*]] = arith.constant dense<4096> : vector<2x1xi32>
// CHECK: %[[CARRIED:.*]] = arith.addi %[[BITS]], %[[HALF_ULP]] : vector<2x1xi32>
// CHECK: %[[KEPT:.*]] = arith.andi %[[CARRIED]], %{{.*}} : vector<2x1xi32>
// CHECK: %[[ROUNDED:.*]] = arith.bitcast %[[KEPT]] : vector<2x1xi32> to vector<2x1xf32>
// CHECK-NEXT: %[[BELOW:.*]] = arith.minnumf %[[ROUNDED]], %[[LARGEST]] : vector<2x1xf32>
// CHECK-NEXT: %[[CLAMPED:.*]] = arith.maxnumf %[[BELOW]], %[[LEAST]] : vector<2x1xf32>
// CHECK-NEXT: arith.subf %[[X]], %[[CLAMPED]] : vector<2x1xf32>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
func.func @f32_split(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}
