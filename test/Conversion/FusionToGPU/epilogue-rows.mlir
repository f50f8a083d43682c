// Row operands of a fused epilogue (a residual matrix, a statistic per row):
// the generated kernels read them in their epilogue, per accumulator run of
// two columns (clamped into the matrix for a ragged last tile): the
// residual's two elements with one 8-byte load, the statistic's one element
// once; with cuBLAS, the epilogue kernel reads them beside the GEMM's
// output.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=tiled" --fusion-lower-to-gpu | FileCheck %s --check-prefix=TILED
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=cublas" --fusion-lower-to-gpu | FileCheck %s --check-prefix=CUBLAS
// The wgmma kernel loads a residual here only where it does not come
// through the ring (wgmma-residual-ring.mlir): the ping-pong schedule.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90 schedule=pingpong" --fusion-lower-to-gpu | FileCheck %s --check-prefix=WGMMA

// TILED-LABEL: llvm.func @residual(
// TILED: fusion_rt.launch @fusion_kernels::@residual_0_gemm
// TILED-NOT: fusion_rt.launch
// TILED: llvm.func @residual_bf16(
// TILED: gpu.func @residual_0_gemm(%{{.*}}: memref<?x64xf32>, %{{.*}}: memref<96x64xf32>, %{{.*}}: memref<?x96xf32>, %[[RES:.*]]: memref<?x96xf32>, %[[STAT:.*]]: memref<?x1xf32>)
// TILED: arith.minui
// TILED: vector.load %[[RES]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<?x96xf32>, vector<2xf32>
// TILED-NOT: %[[RES]]
// TILED: memref.load %[[STAT]]
// TILED-NOT: %[[STAT]]
// TILED: vector.load %[[RES]]
// TILED: arith.addf
// TILED: arith.subf
// CUBLAS-LABEL: llvm.func @residual(
// CUBLAS: fusion_rt.cublaslt_gemm
// CUBLAS: fusion_rt.launch @fusion_kernels::@residual_0_epilogue
// CUBLAS: gpu.func @residual_0_epilogue(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel
// CUBLAS-COUNT-2: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CUBLAS: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// The wgmma kernel stores each batch of 4 accumulator runs (8 values)
// before it computes the next, so that the results of a whole tile never
// wait in registers together, and loads the row operands a batch ahead:
// the loads of batches 0 and 1 come before the stores of batch 0.
// WGMMA: gpu.func @residual_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[OUT:.*]]: memref<?x96xf32>, %[[RES:.*]]: memref<?x96xf32>, %[[STAT:.*]]: memref<?x1xf32>)
// WGMMA-COUNT-8: vector.load %[[RES]]
// WGMMA-NOT: %[[RES]]
// WGMMA-COUNT-4: vector.store {{.*}}, %[[OUT]]
// WGMMA-NOT: vector.store {{.*}}, %[[OUT]]
// WGMMA-COUNT-4: vector.load %[[RES]]
// WGMMA-NOT: %[[RES]]
// WGMMA-COUNT-4: vector.store {{.*}}, %[[OUT]]
func.func @residual(%x: tensor<?x64xf32>, %w: tensor<96x64xf32>,
                    %r: tensor<?x96xf32>, %s: tensor<?x1xf32>) -> tensor<?x96xf32> {
  %y = fusion.fused_linear %x, %w epilogue rows(%r, %s) {
  ^bb0(%acc: f32, %res: f32, %stat: f32):
    %0 = arith.addf %acc, %res : f32
    %1 = arith.subf %0, %stat : f32
    fusion.yield %1 : f32
  } : (tensor<?x64xf32>, tensor<96x64xf32>, tensor<?x96xf32>, tensor<?x1xf32>) -> tensor<?x96xf32>
  return %y : tensor<?x96xf32>
}

// A 16-bit output's batch of 4 runs is a quad, which the lanes trade
// (shuffles) into one 16-byte store each; the next batch's loads come first
// again.
// WGMMA: gpu.func @residual_bf16_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[OUT16:.*]]: memref<?x96xbf16>, %[[RES16:.*]]: memref<?x96xbf16>)
// WGMMA-COUNT-8: vector.load %[[RES16]]{{.*}} vector<2xbf16>
// WGMMA-NOT: %[[RES16]]
// WGMMA-COUNT-4: gpu.shuffle xor
// WGMMA: vector.store {{.*}}, %[[OUT16]]{{.*}} vector<8xbf16>
// WGMMA-NOT: vector.store
// WGMMA-COUNT-4: vector.load %[[RES16]]
// WGMMA-NOT: vector.store
// WGMMA-COUNT-4: gpu.shuffle xor
// WGMMA: vector.store {{.*}}, %[[OUT16]]{{.*}} vector<8xbf16>
func.func @residual_bf16(%x: tensor<?x64xbf16>, %w: tensor<96x64xbf16>,
                         %r: tensor<?x96xbf16>) -> tensor<?x96xbf16> {
  %y = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32, %res: f32):
    %0 = arith.addf %acc, %res : f32
    fusion.yield %0 : f32
  } : (tensor<?x64xbf16>, tensor<96x64xbf16>, tensor<?x96xbf16>) -> tensor<?x96xbf16>
  return %y : tensor<?x96xbf16>
}

// A residual that is x itself (N = K) is x's rows of the K slices of the
// tile's columns, which the wgmma kernel's ring holds: each of those
// slices, unrolled between the loops over the slices before and after
// them, reads its quads' pairs with ldmatrix from x's stage while its
// wgmmas run, and the residual is never loaded from memory. In f32 (the
// kernel takes 16-bit pairs only) it is loaded.
// WGMMA: gpu.func @input_residual_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x128xbf16>, %[[RESIN:.*]]: memref<?x128xbf16>)
// WGMMA-NOT: %[[RESIN]]
// WGMMA: scf.for
// WGMMA: nvvm.wgmma.mma_async
// WGMMA: scf.yield
// WGMMA: nvvm.wgmma.mma_async
// WGMMA-COUNT-4: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<128x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// WGMMA: scf.for
// WGMMA-NOT: %[[RESIN]]
// WGMMA: gpu.return
// WGMMA: gpu.func @input_residual_f32_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x128xf32>, %[[RESF:.*]]: memref<?x128xf32>)
// WGMMA: vector.load %[[RESF]]
func.func @input_residual(%x: tensor<?x128xbf16>, %w: tensor<128x128xbf16>) -> tensor<?x128xbf16> {
  %y = fusion.fused_linear %x, %w epilogue rows(%x) {
  ^bb0(%acc: f32, %res: f32):
    %0 = arith.addf %acc, %res : f32
    fusion.yield %0 : f32
  } : (tensor<?x128xbf16>, tensor<128x128xbf16>, tensor<?x128xbf16>) -> tensor<?x128xbf16>
  return %y : tensor<?x128xbf16>
}
func.func @input_residual_f32(%x: tensor<?x128xf32>, %w: tensor<128x128xf32>) -> tensor<?x128xf32> {
  %y = fusion.fused_linear %x, %w epilogue rows(%x) {
  ^bb0(%acc: f32, %res: f32):
    %0 = arith.addf %acc, %res : f32
    fusion.yield %0 : f32
  } : (tensor<?x128xf32>, tensor<128x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
  return %y : tensor<?x128xf32>
}

// Rows of an odd width are not 8-byte aligned: the residual is read an
// element at a time.
// WGMMA: gpu.func @residual_odd_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[OUTODD:.*]]: memref<?x95xf32>, %[[RESODD:.*]]: memref<?x95xf32>)
// WGMMA-NOT: vector.load %[[RESODD]]
// WGMMA-COUNT-16: memref.load %[[RESODD]]
// WGMMA-NOT: vector.load %[[RESODD]]
// WGMMA: gpu.return
func.func @residual_odd(%x: tensor<?x64xf32>, %w: tensor<95x64xf32>,
                        %r: tensor<?x95xf32>) -> tensor<?x95xf32> {
  %y = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32, %res: f32):
    %0 = arith.addf %acc, %res : f32
    fusion.yield %0 : f32
  } : (tensor<?x64xf32>, tensor<95x64xf32>, tensor<?x95xf32>) -> tensor<?x95xf32>
  return %y : tensor<?x95xf32>
}
