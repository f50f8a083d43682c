// The wgmma kernel of a weight stored [in_features, out_features]
// (`weight_layout in_out`, GPT-2's Conv1D): w's tensor map is [K, N] in
// boxes of a K slice's 64 rows by 64 columns of N (128 bytes), the producer
// loads a block's share of the tile box by box (8 KiB apart in the stage),
// and the wgmmas read it N-major: the descriptor's leading byte offset
// steps from box to box (8192 bytes: 512 units of 16 bytes), a K step is 16
// rows (2048 bytes) down, and the layout says transposed (imm-trans).
// RUN: fusion-opt %s --split-input-file --fusion-lower-to-gpu | FileCheck %s

// Cooperative 128x256 tiles in clusters of 2: each block loads its 128
// columns of the tile as two boxes, multicast to both blocks.
// CHECK-LABEL: llvm.func @clustered(
// CHECK: fusion_rt.encode_tensor_map %{{.*}}, <bf16> %arg2 rows %arg1
// CHECK: %[[K:.*]] = llvm.mlir.constant(256 : i64) : i64
// CHECK-NEXT: %[[N:.*]] = llvm.mlir.constant(200 : i64) : i64
// CHECK-NEXT: %[[BOXROWS:.*]] = llvm.mlir.constant(64 : i32) : i32
// CHECK-NEXT: fusion_rt.encode_tensor_map %{{.*}}, <bf16> %arg3 rows %[[K]] columns %[[N]] box(%[[BOXROWS]], 64) : i32
// CHECK: gpu.func @clustered_0_gemm(
// CHECK: %[[WMAP:.*]] = builtin.unrealized_conversion_cast %arg1 : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<64x64xbf16
// CHECK: %[[BOX0:.*]] = memref.view %{{.*}}[%[[OFFSET:.*]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: nvgpu.tma.async.load %[[WMAP]][%[[COLUMN:.*]], %[[KCOORD:.*]]], %{{.*}} to %[[BOX0]] multicast_mask = %c3_i16
// CHECK: %[[COLUMN1:.*]] = arith.addi %[[COLUMN]], %c64{{.*}} : index
// CHECK: %[[OFFSET1:.*]] = arith.addi %[[OFFSET]], %c8192 : index
// CHECK-NEXT: %[[BOX1:.*]] = memref.view %{{.*}}[%[[OFFSET1]]][]
// CHECK-NEXT: nvgpu.tma.async.load %[[WMAP]][%[[COLUMN1]], %[[KCOORD]]], %{{.*}} to %[[BOX1]] multicast_mask = %c3_i16
// CHECK-NOT: nvgpu.tma.async.load %[[WMAP]]
// The consumers: w's descriptor with leading byte offset 512 (the origin's
// 1, plus 511 << 16), B transposed, each K step 128 units (2048 bytes) on.
// CHECK: %[[WLOW:.*]] = arith.addi %{{.*}}, %c33488896_i32 : i32
// CHECK: %[[W0:.*]] = arith.extui %[[WLOW]] : i32 to i64
// CHECK-NEXT: %[[WDESC0:.*]] = arith.ori %[[W0]], %{{.*}} : i64
// CHECK: nvvm.wgmma.mma_async %{{.*}}, %[[WDESC0]], %{{.*}}, <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: %[[WLOW1:.*]] = arith.addi %[[WLOW]], %c128_i32 : i32
// CHECK: %[[W1:.*]] = arith.extui %[[WLOW1]] : i32 to i64
// CHECK-NEXT: %[[WDESC1:.*]] = arith.ori %[[W1]], %{{.*}} : i64
// CHECK: nvvm.wgmma.mma_async %{{.*}}, %[[WDESC1]], %{{.*}}, <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @clustered(%x: tensor<?x256xbf16>, %w: tensor<256x200xbf16>) -> tensor<?x200xbf16> {
    %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, cluster = 2>>} : (tensor<?x256xbf16>, tensor<256x200xbf16>) -> tensor<?x200xbf16>
    return %0 : tensor<?x200xbf16>
  }
}

// -----

// Swapped operands (small batches): w's tile is the wgmmas' A, read
// transposed; x's (B) stays K-major. One box of 64 columns a stage.
// CHECK-LABEL: gpu.func @swapped_0_gemm(
// CHECK: %[[WMAP:.*]] = builtin.unrealized_conversion_cast %arg1 : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<64x64xbf16
// CHECK: nvgpu.tma.async.load %[[WMAP]]
// CHECK-NOT: nvgpu.tma.async.load %[[WMAP]]
// CHECK: %[[WLOW:.*]] = arith.addi %{{.*}}, %c33488896_i32 : i32
// CHECK: %[[W0:.*]] = arith.extui %[[WLOW]] : i32 to i64
// CHECK-NEXT: %[[WDESC0:.*]] = arith.ori %[[W0]], %{{.*}} : i64
// CHECK: nvvm.wgmma.mma_async %[[WDESC0]], %{{.*}}, %{{.*}}, <m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @swapped(%x: tensor<?x256xbf16>, %w: tensor<256x200xbf16>) -> tensor<?x200xbf16> {
    %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x>>} : (tensor<?x256xbf16>, tensor<256x200xbf16>) -> tensor<?x200xbf16>
    return %0 : tensor<?x200xbf16>
  }
}

// -----

// The default layout keeps K-major boxes of the tile's rows, leading byte
// offset 1 and untransposed wgmmas (the negative case).
// CHECK-LABEL: gpu.func @out_in_0_gemm(
// CHECK: builtin.unrealized_conversion_cast %arg1 : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<256x64xbf16
// CHECK-NOT: c33488896_i32
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @out_in(%x: tensor<?x256xbf16>, %w: tensor<200x256xbf16>) -> tensor<?x200xbf16> {
    %0 = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x256xbf16>, tensor<200x256xbf16>) -> tensor<?x200xbf16>
    return %0 : tensor<?x200xbf16>
  }
}

// -----

// 3xTF32 (tf32 wgmma reads K-major only): TMA loads f32 boxes of 32 K rows
// by 32 columns (128 bytes), and the producer's 64 splitters transpose each
// 4 KiB box in place as they split it: 16 element loads each, a named
// barrier of the 64 (id 3), then four 16-byte stores of high parts over the
// box and four of remainders into the remainder buffer, per box (4 boxes of
// the 128 columns). The wgmmas then read w K-major: no leading byte offset
// of boxes.
// CHECK-LABEL: gpu.func @split_0_gemm(
// CHECK: builtin.unrealized_conversion_cast %arg1 : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<32x32xf32
// CHECK-COUNT-16: memref.load %{{.*}} : memref<4096xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: vector.store
// CHECK: nvvm.barrier id = %c3_i32 number_of_threads = %c64_i32
// CHECK-COUNT-8: vector.store
// CHECK-COUNT-16: memref.load
// CHECK-NOT: vector.store
// CHECK: nvvm.barrier id = %c3_i32{{.*}} number_of_threads = %c64_i32
// CHECK-COUNT-2: nvvm.barrier id = %c3_i32
// CHECK-NOT: nvvm.barrier id = %c3_i32
// CHECK-NOT: c33488896_i32
// CHECK: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @split(%x: tensor<?x256xf32>, %w: tensor<256x200xf32>) -> tensor<?x200xf32> {
    %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x256xf32>, tensor<256x200xf32>) -> tensor<?x200xf32>
    return %0 : tensor<?x200xf32>
  }
}
