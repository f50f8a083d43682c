// Row operands of a fused epilogue (a residual matrix, a statistic per row):
// the tiled kernel reads them in its epilogue, at each output's row and
// column (clamped into the matrix for a ragged last tile); with cuBLAS, the
// epilogue kernel reads them beside the GEMM's output.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=tiled" --fusion-lower-to-gpu | FileCheck %s --check-prefix=TILED
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=cublas" --fusion-lower-to-gpu | FileCheck %s --check-prefix=CUBLAS
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s --check-prefix=WGMMA

// TILED-LABEL: llvm.func @residual(
// TILED: fusion_rt.launch @fusion_kernels::@residual_0_gemm
// TILED-NOT: fusion_rt.launch
// TILED: gpu.func @residual_0_gemm(%{{.*}}: memref<?x64xf32>, %{{.*}}: memref<96x64xf32>, %{{.*}}: memref<?x96xf32>, %[[RES:.*]]: memref<?x96xf32>, %[[STAT:.*]]: memref<?x1xf32>)
// TILED: arith.minui
// TILED: memref.load %[[RES]]
// TILED: memref.load %[[STAT]]
// TILED: arith.addf
// TILED: arith.subf
// CUBLAS-LABEL: llvm.func @residual(
// CUBLAS: fusion_rt.cublaslt_gemm
// CUBLAS: fusion_rt.launch @fusion_kernels::@residual_0_epilogue
// CUBLAS: gpu.func @residual_0_epilogue(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel
// CUBLAS-COUNT-2: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CUBLAS: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// The wgmma kernel (f32 output) stores each batch of 4 accumulator runs (8
// values) before it loads the next batch's row operands, so that the loads
// and results of a whole tile never wait in registers together.
// WGMMA: gpu.func @residual_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[OUT:.*]]: memref<?x96xf32>, %[[RES:.*]]: memref<?x96xf32>, %[[STAT:.*]]: memref<?x1xf32>)
// WGMMA-COUNT-8: memref.load %[[RES]]
// WGMMA-NOT: memref.load %[[RES]]
// WGMMA-COUNT-4: vector.store {{.*}}, %[[OUT]]
// WGMMA-NOT: vector.store {{.*}}, %[[OUT]]
// WGMMA: memref.load %[[RES]]
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
