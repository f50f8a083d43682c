// The tiled kernel (sm_80) finishes a training batch norm for batches of
// one block row too: from its staged tile, one thread a column sums its
// valid rows twice (mean, then squared deviations), keeps the center,
// scale and shift in a [3, blockN] scratch past the column constants and
// updates the running statistics; after a barrier each 16-byte chunk of
// the staged tile is normalized, goes through the op after the norm
// (a maximum with a column, staged with the bias among the column
// constants) and is stored.
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=tiled target=sm_80" --fusion-lower-to-gpu | FileCheck %s

// 3xTF32 blocks of 128x128, 4 stages (131072 bytes), the bias and the
// after op's column (1024) and the scratch (1536).
// CHECK-LABEL: llvm.func @tiled(
// CHECK: llvm.icmp "ule" %arg1, %{{.*}} : i64
// CHECK-NOT: _finalize
// CHECK: fusion_rt.launch @fusion_kernels::@tiled_0_gemm_batch_norm grid(%{{.*}}, %{{.*}}) block 256 shared 133632 stream(
// CHECK: fusion_rt.launch @fusion_kernels::@tiled_0_gemm grid(%{{.*}}, %{{.*}}) block 256 shared 131584 stream(
// CHECK: fusion_rt.launch @fusion_kernels::@tiled_0_finalize
// CHECK: fusion_rt.launch @fusion_kernels::@tiled_0_normalize
// CHECK-LABEL: gpu.func @tiled_0_gemm_batch_norm(
// CHECK-SAME: %{{.*}}: memref<48xf32>, %{{.*}}: memref<?x48xf32>, %[[WEIGHT:[^:]*]]: memref<48xf32>, %[[RMEAN:[^:]*]]: memref<48xf32>, %[[RVAR:[^:]*]]: memref<48xf32>, %[[NMEAN:[^:]*]]: memref<48xf32>, %[[NVAR:[^:]*]]: memref<48xf32>, %{{.*}}: memref<48xf32>)
// CHECK: vector.store {{.*}} : memref<128x136xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: gpu.barrier
// CHECK: %[[SCRATCH:.*]] = memref.view {{.*}} to memref<3x128xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: memref.load %[[WEIGHT]]
// CHECK: math.rsqrt
// CHECK: memref.store %{{.*}}, %[[SCRATCH]][%c0
// CHECK: memref.store %{{.*}}, %[[SCRATCH]][%c1
// CHECK: memref.store %{{.*}}, %[[SCRATCH]][%c2
// CHECK: memref.load %[[RMEAN]]
// CHECK: memref.store %{{.*}}, %[[NMEAN]]
// CHECK: memref.load %[[RVAR]]
// CHECK: memref.store %{{.*}}, %[[NVAR]]
// CHECK: gpu.barrier
// CHECK: vector.load {{.*}} : memref<128x136xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: memref.load %[[SCRATCH]]
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: memref.load %{{.*}}[%c1{{(_[0-9]+)?}}, %{{.*}}] : memref<2x128xf32, #gpu.address_space<workgroup>>
// CHECK: arith.maximumf
// CHECK: vector.store {{.*}} : memref<?x48xf32>, vector<4xf32>
// CHECK: gpu.return
func.func @tiled(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>, %b: tensor<48xf32>,
                 %gamma: tensor<48xf32>, %rm: tensor<48xf32>, %rv: tensor<48xf32>,
                 %floor: tensor<48xf32>)
    -> (tensor<?x48xf32>, tensor<48xf32>, tensor<48xf32>) {
  %0 = fusion.linear %x, %w, %b : tensor<?x64xf32>, tensor<48x64xf32>, tensor<48xf32> -> tensor<?x48xf32>
  %y, %m, %v = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      weight(%gamma) running_stats(%rm, %rv)
      : (tensor<?x48xf32>, tensor<48xf32>, tensor<48xf32>, tensor<48xf32>)
      -> (tensor<?x48xf32>, tensor<48xf32>, tensor<48xf32>)
  %1 = fusion.elementwise %y columns(%floor : tensor<48xf32>) : tensor<?x48xf32> {
  ^bb0(%a: f32, %c: f32):
    %r = arith.maximumf %a, %c : f32
    fusion.yield %r : f32
  }
  return %1, %m, %v : tensor<?x48xf32>, tensor<48xf32>, tensor<48xf32>
}

// -----

// Sixteen epilogue columns leave the 128x256 tiles' 3 stages on sm_80
// exactly the room of the coefficients' scratch (the selection gives the
// attribute), and the column of the op after the norm overflows it: the
// lowering keeps the three kernels for every batch.
// CHECK-LABEL: llvm.func @crowded(
// CHECK-NOT: gemm_batch_norm
// CHECK: fusion_rt.launch @fusion_kernels::@crowded_0_finalize
// CHECK: llvm.return
func.func @crowded(%x: tensor<?x64xbf16>, %w: tensor<16384x64xbf16>, %c0: tensor<16384xbf16>, %c1: tensor<16384xbf16>, %c2: tensor<16384xbf16>, %c3: tensor<16384xbf16>, %c4: tensor<16384xbf16>, %c5: tensor<16384xbf16>, %c6: tensor<16384xbf16>, %c7: tensor<16384xbf16>, %c8: tensor<16384xbf16>, %c9: tensor<16384xbf16>, %c10: tensor<16384xbf16>, %c11: tensor<16384xbf16>, %c12: tensor<16384xbf16>, %c13: tensor<16384xbf16>, %c14: tensor<16384xbf16>, %c15: tensor<16384xbf16>,
                   %floor: tensor<16384xbf16>) -> tensor<?x16384xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue(%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11, %c12, %c13, %c14, %c15) {
  ^bb0(%acc: f32, %v0: f32, %v1: f32, %v2: f32, %v3: f32, %v4: f32, %v5: f32, %v6: f32, %v7: f32, %v8: f32, %v9: f32, %v10: f32, %v11: f32, %v12: f32, %v13: f32, %v14: f32, %v15: f32):
    %s0 = arith.addf %acc, %v0 : f32
    %s1 = arith.addf %s0, %v1 : f32
    %s2 = arith.addf %s1, %v2 : f32
    %s3 = arith.addf %s2, %v3 : f32
    %s4 = arith.addf %s3, %v4 : f32
    %s5 = arith.addf %s4, %v5 : f32
    %s6 = arith.addf %s5, %v6 : f32
    %s7 = arith.addf %s6, %v7 : f32
    %s8 = arith.addf %s7, %v8 : f32
    %s9 = arith.addf %s8, %v9 : f32
    %s10 = arith.addf %s9, %v10 : f32
    %s11 = arith.addf %s10, %v11 : f32
    %s12 = arith.addf %s11, %v12 : f32
    %s13 = arith.addf %s12, %v13 : f32
    %s14 = arith.addf %s13, %v14 : f32
    %s15 = arith.addf %s14, %v15 : f32
    fusion.yield %s15 : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    : (tensor<?x64xbf16>, tensor<16384x64xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>, tensor<16384xbf16>) -> tensor<?x16384xbf16>
  %1 = fusion.elementwise %0 columns(%floor : tensor<16384xbf16>) : tensor<?x16384xbf16> {
  ^bb0(%a: f32, %c: f32):
    %r = arith.maximumf %a, %c : f32
    fusion.yield %r : f32
  }
  return %1 : tensor<?x16384xbf16>
}
