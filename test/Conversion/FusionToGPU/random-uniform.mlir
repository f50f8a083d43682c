// A fusion.random_uniform draw is never stored: each kernel that reads it
// as a row operand takes its [2] f32 seed in its place and computes the
// elements it reads (Philox4x32-10: ten rounds of two 32 x 32 -> 64-bit
// products) from their index, m * N + n: one block of four words for each
// aligned run of four consecutive elements. The draw launches nothing.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=tiled" --fusion-lower-to-gpu | FileCheck %s --check-prefixes=CHECK,TILED
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=cublas" --fusion-lower-to-gpu | FileCheck %s --check-prefixes=CHECK,CUBLAS
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s --check-prefixes=CHECK,WGMMA

// Dropout in a GEMM's epilogue: the generated GEMMs take the seed as a
// memref<2xf32> and draw in their epilogue; with cuBLAS, the epilogue
// kernel draws beside the GEMM's output.
// CHECK-LABEL: llvm.func @dropout_epilogue(
// TILED: fusion_rt.launch @fusion_kernels::@dropout_epilogue_1_gemm
// CUBLAS: fusion_rt.cublaslt_gemm
// CUBLAS: fusion_rt.launch @fusion_kernels::@dropout_epilogue_1_epilogue {{.*}} args(%{{.*}}, %{{.*}}, %{{.*}}, %arg2 : !llvm.ptr, !llvm.ptr, i64, !llvm.ptr)
// WGMMA: fusion_rt.launch @fusion_kernels::@dropout_epilogue_1_gemm
// CHECK-NOT: fusion_rt.launch {{.*}}random
// TILED: gpu.func @dropout_epilogue_1_gemm(%{{.*}}: memref<?x64xf32>, %{{.*}}: memref<96x64xf32>, %{{.*}}: memref<?x96xf32>, %[[SEED:.*]]: memref<2xf32>)
// TILED: memref.load %[[SEED]][%{{.*}}] : memref<2xf32>
// TILED-COUNT-20: arith.mului_extended
// CUBLAS: gpu.func @dropout_epilogue_1_epilogue(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %[[SEED:.*]]: !llvm.ptr)
// CUBLAS: llvm.getelementptr %[[SEED]]
// CUBLAS-COUNT-20: arith.mului_extended
// WGMMA: gpu.func @dropout_epilogue_1_gemm{{.*}}(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x96xf32>, %[[SEED:.*]]: memref<2xf32>)
// WGMMA: memref.load %[[SEED]][%{{.*}}] : memref<2xf32>
// WGMMA-COUNT-20: arith.mului_extended
// CHECK: arith.shrui
// CHECK: arith.uitofp
// CHECK: arith.cmpf ogt
func.func @dropout_epilogue(%seed: tensor<2xf32>, %x: tensor<?x64xf32>,
                            %w: tensor<96x64xf32>) -> tensor<?x96xf32> {
  %u = fusion.random_uniform seed(%seed : tensor<2xf32>) rows_of(%x : tensor<?x64xf32>) stream 0 : tensor<?x96xf32>
  %y = fusion.fused_linear %x, %w epilogue rows(%u) {
  ^bb0(%acc: f32, %d: f32):
    %p = arith.constant 0.5 : f32
    %z = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %keep = arith.cmpf ogt, %d, %p : f32
    %s = arith.mulf %acc, %two : f32
    %r = arith.select %keep, %s, %z : f32
    fusion.yield %r : f32
  } : (tensor<?x64xf32>, tensor<96x64xf32>, tensor<?x96xf32>) -> tensor<?x96xf32>
  return %y : tensor<?x96xf32>
}

// -----

// Dropout of an input: an elementwise kernel whose row operand is the
// seed, read as two f32 whose bits are the key; a thread's eight bf16
// lanes are two Philox blocks of four words (40 products, not 160).
// CHECK-LABEL: llvm.func @dropout_input(
// CHECK: fusion_rt.launch @fusion_kernels::@dropout_input_1_elementwise {{.*}} args(%{{.*}}, %{{.*}}, %{{.*}}, %arg2 : !llvm.ptr, !llvm.ptr, i64, !llvm.ptr)
// CHECK-NOT: fusion_rt.launch
// CHECK: gpu.func @dropout_input_1_elementwise(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %[[SEED:.*]]: !llvm.ptr)
// CHECK-DAG: llvm.getelementptr %[[SEED]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-DAG: arith.bitcast %{{.*}} : f32 to i32
// CHECK-COUNT-40: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK: gpu.return
func.func @dropout_input(%seed: tensor<2xf32>, %x: tensor<?x8xbf16>) -> tensor<?x8xbf16> {
  %u = fusion.random_uniform seed(%seed : tensor<2xf32>) rows_of(%x : tensor<?x8xbf16>) stream 1 : tensor<?x8xbf16>
  %y = fusion.elementwise %x rows(%u : tensor<?x8xbf16>) : tensor<?x8xbf16> {
  ^bb0(%v: f32, %d: f32):
    %p = arith.constant 0.25 : f32
    %z = arith.constant 0.0 : f32
    %keep = arith.cmpf ogt, %d, %p : f32
    %r = arith.select %keep, %v, %z : f32
    fusion.yield %r : f32
  }
  return %y : tensor<?x8xbf16>
}

// -----

// Dropout after a softmax: the draw is a row operand of the row program's
// last step, which takes the seed as an operand; one kernel in all.
// CHECK-LABEL: llvm.func @softmax_dropout(
// CHECK: fusion_rt.launch @fusion_kernels::@softmax_dropout_0_rows {{.*}} args(%{{.*}}, %{{.*}}, %arg2, %{{.*}} : !llvm.ptr, i64, !llvm.ptr, !llvm.ptr)
// CHECK-NOT: fusion_rt.launch
// CHECK: gpu.func @softmax_dropout_0_rows(
// CHECK: gpu.shuffle xor
// CHECK: arith.mului_extended
func.func @softmax_dropout(%seed: tensor<2xf32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %max = fusion.reduce max %x : tensor<?x64xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %sum = fusion.reduce sum %x rows(%max : tensor<?x1xf32>)
      : tensor<?x64xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %m: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    fusion.yield %e : f32
  }
  %u = fusion.random_uniform seed(%seed : tensor<2xf32>) rows_of(%x : tensor<?x64xf32>) stream 0 : tensor<?x64xf32>
  %y = fusion.elementwise %x rows(%max, %sum, %u : tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x64xf32>) : tensor<?x64xf32> {
  ^bb0(%v: f32, %m: f32, %s: f32, %d: f32):
    %a = arith.subf %v, %m : f32
    %e = math.exp %a : f32
    %q = arith.divf %e, %s : f32
    %p = arith.constant 0.5 : f32
    %z = arith.constant 0.0 : f32
    %keep = arith.cmpf ogt, %d, %p : f32
    %r = arith.select %keep, %q, %z : f32
    fusion.yield %r : f32
  }
  return %y : tensor<?x64xf32>
}
