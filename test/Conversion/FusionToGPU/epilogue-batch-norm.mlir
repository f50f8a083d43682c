// A training batch norm finished by the wgmma kernel for batches that one
// block row of tiles holds (fusion.epilogue_batch_norm): the host launches
// that kernel when the batch is at most max_rows, and the general kernel,
// the finalize kernel and the normalizing pass otherwise.
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=wgmma target=sm_90 schedule=pingpong" --fusion-lower-to-gpu | FileCheck %s --check-prefix=PINGPONG

// Host: batch <= 128 launches the normalizing kernel with the batch norm's
// weight, bias, running statistics and their updates, and the column of
// the op after the norm; its output is that op's result. Larger batches
// take the three kernels.
// CHECK-LABEL: llvm.func @train(
// CHECK: %[[FITS:.*]] = llvm.icmp "ule" %arg1, %{{.*}} : i64
// CHECK: llvm.cond_br %[[FITS]], ^{{.*}}, ^{{.*}}
// CHECK-NOT: _finalize
// CHECK: fusion_rt.launch @fusion_kernels::@train_0_gemm_batch_norm grid(%{{.*}}, %{{.*}}) block 384 shared {{[0-9]+}} persistent
// CHECK: fusion_rt.launch @fusion_kernels::@train_0_gemm grid
// CHECK: fusion_rt.launch @fusion_kernels::@train_0_finalize
// CHECK: fusion_rt.launch @fusion_kernels::@train_0_normalize

// The kernel: the column moments from the registers (the butterfly and the
// warps' sums through the scratch, twice), then per column the inverse
// standard deviation times the weight, the running statistics' update
// (momentum 0.2) stored narrowed, the coefficients (center, scale, shift)
// into the scratch rows the column's warp sums are done with, and
// after a barrier each value normalized, the op after the norm applied
// (its column from shared memory) and the output stored; no moments are
// written to memory.
// CHECK-LABEL: gpu.func @train_0_gemm_batch_norm(
// CHECK-SAME: %{{.*}}: memref<48xbf16>, %{{.*}}: memref<?x48xbf16>, %[[WEIGHT:[^:]*]]: memref<48xbf16>, %[[BIAS:[^:]*]]: memref<48xbf16>, %[[RMEAN:[^:]*]]: memref<48xbf16>, %[[RVAR:[^:]*]]: memref<48xbf16>, %[[NMEAN:[^:]*]]: memref<48xbf16>, %[[NVAR:[^:]*]]: memref<48xbf16>, %[[SHIFT:[^:]*]]: memref<48xbf16>)
// CHECK: gpu.shuffle  xor
// CHECK: nvvm.barrier id
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %{{.*}}[%c8{{.*}}] : memref<9x128xf32
// CHECK: math.fma
// CHECK: memref.load %[[WEIGHT]]
// CHECK: memref.load %[[BIAS]]
// CHECK: math.rsqrt
// CHECK: memref.store %{{.*}}, %{{.*}}[%c0{{(_[0-9]+)?}}, %{{.*}}] : memref<9x128xf32
// CHECK: memref.store %{{.*}}, %{{.*}}[%c1{{(_[0-9]+)?}}, %{{.*}}] : memref<9x128xf32
// CHECK: memref.store %{{.*}}, %{{.*}}[%c2{{(_[0-9]+)?}}, %{{.*}}] : memref<9x128xf32
// CHECK: memref.load %[[RMEAN]]
// CHECK: arith.constant 8.000000e-01 : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.store %{{.*}}, %[[NMEAN]]
// CHECK: memref.load %[[RVAR]]
// CHECK: memref.store %{{.*}}, %[[NVAR]]
// CHECK: nvvm.barrier id
// CHECK: memref.load %{{.*}}[%c0{{(_[0-9]+)?}}, %{{.*}}] : memref<9x128xf32
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: vector.store {{.*}} : memref<?x48xbf16>, vector<8xbf16>
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @train_0_gemm(
// CHECK-NOT: math.rsqrt
// The ping-pong kernel: each consumer warpgroup's tile (128x128 for its
// 4 warps) with its own scratch of 5 rows and 128 threads a barrier.
// PINGPONG-LABEL: gpu.func @train_0_gemm_batch_norm(
// PINGPONG: memref<5x128xf32
// PINGPONG: math.rsqrt
// PINGPONG: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// PINGPONG: arith.maximumf
// PINGPONG: gpu.return
// CHECK: gpu.return
func.func @train(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %b: tensor<48xbf16>,
                 %gamma: tensor<48xbf16>, %beta: tensor<48xbf16>,
                 %rm: tensor<48xbf16>, %rv: tensor<48xbf16>, %floor: tensor<48xbf16>)
    -> (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>) {
  %0 = fusion.linear %x, %w, %b : tensor<?x64xbf16>, tensor<48x64xbf16>, tensor<48xbf16> -> tensor<?x48xbf16>
  %y, %m, %v = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.2>
      weight(%gamma) bias(%beta) running_stats(%rm, %rv)
      : (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>, tensor<48xbf16>, tensor<48xbf16>)
      -> (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>)
  %1 = fusion.elementwise %y columns(%floor : tensor<48xbf16>) : tensor<?x48xbf16> {
  ^bb0(%a: f32, %c: f32):
    %r = arith.maximumf %a, %c : f32
    fusion.yield %r : f32
  }
  return %1, %m, %v : tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>
}

// -----

// Without running statistics, weight or bias: the kernel takes the output
// alone; the coefficients are the inverse standard deviation and 0.
// CHECK-LABEL: gpu.func @plain_0_gemm_batch_norm(
// CHECK-SAME: %{{.*}}: memref<?x48xf32>)
// CHECK: math.rsqrt
// CHECK-NOT: memref.load %arg
// CHECK: gpu.return
func.func @plain(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.linear %x, %w : tensor<?x64xf32>, tensor<48x64xf32> -> tensor<?x48xf32>
  %y = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      : (tensor<?x48xf32>) -> tensor<?x48xf32>
  return %y : tensor<?x48xf32>
}

// -----

// Without the attribute (an inference batch norm here), no such kernel.
// CHECK-LABEL: llvm.func @inference(
// CHECK-NOT: gemm_batch_norm
// CHECK: llvm.return
func.func @inference(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>,
                     %rm: tensor<48xbf16>, %rv: tensor<48xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x64xbf16>, tensor<48x64xbf16> -> tensor<?x48xbf16>
  %y = fusion.batch_norm %0, <inference, epsilon = 1.0e-05, momentum = 0.1>
      running_stats(%rm, %rv)
      : (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>) -> tensor<?x48xbf16>
  return %y : tensor<?x48xbf16>
}

// -----

// The op after the norm reads the updated running mean, which the kernel
// writes after it stages that op's columns: the three kernels for every
// batch.
// CHECK-LABEL: llvm.func @reads_update(
// CHECK-NOT: gemm_batch_norm
// CHECK: fusion_rt.launch @fusion_kernels::@reads_update_0_finalize
// CHECK: llvm.return
func.func @reads_update(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>,
                        %rm: tensor<48xbf16>, %rv: tensor<48xbf16>)
    -> (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>) {
  %0 = fusion.linear %x, %w : tensor<?x64xbf16>, tensor<48x64xbf16> -> tensor<?x48xbf16>
  %y, %m, %v = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      running_stats(%rm, %rv)
      : (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>)
      -> (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>)
  %1 = fusion.elementwise %y columns(%m : tensor<48xbf16>) : tensor<?x48xbf16> {
  ^bb0(%a: f32, %c: f32):
    %r = arith.subf %a, %c : f32
    fusion.yield %r : f32
  }
  return %1, %m, %v : tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>
}

// -----

// A static batch of one block row: only the finishing kernel.
// CHECK-LABEL: llvm.func @static_batch(
// CHECK-NOT: llvm.icmp "ule"
// CHECK: fusion_rt.launch @fusion_kernels::@static_batch_0_gemm_batch_norm
// CHECK-NOT: fusion_rt.launch
// CHECK: llvm.return
// CHECK-NOT: gpu.func @static_batch_0_finalize
func.func @static_batch(%x: tensor<64x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<64x48xbf16> {
  %0 = fusion.linear %x, %w : tensor<64x64xbf16>, tensor<48x64xbf16> -> tensor<64x48xbf16>
  %y = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      : (tensor<64x48xbf16>) -> tensor<64x48xbf16>
  return %y : tensor<64x48xbf16>
}

// -----

// 4096 columns: batches of at most 64 rows, which one 64-row block row
// holds, take the finishing kernel of the 64x64 batch config (one consumer
// warpgroup), 65-128 rows the 128-row one, larger batches the three
// kernels.
// CHECK-LABEL: llvm.func @small_batches(
// CHECK: %[[FITS:.*]] = llvm.icmp "ule" %arg1, %{{.*}} : i64
// CHECK-NEXT: llvm.cond_br %[[FITS]]
// CHECK: %[[HALF:.*]] = llvm.icmp "ule" %arg1, %{{.*}} : i64
// CHECK-NEXT: llvm.cond_br %[[HALF]]
// CHECK: fusion_rt.launch @fusion_kernels::@small_batches_0_gemm_batch_norm_rows_le_64 grid({{.*}}) block 256
// CHECK: fusion_rt.launch @fusion_kernels::@small_batches_0_gemm_batch_norm grid({{.*}}) block 384
// CHECK: fusion_rt.launch @fusion_kernels::@small_batches_0_finalize
// CHECK: fusion_rt.launch @fusion_kernels::@small_batches_0_gemm_rows_le_256
// CHECK: gpu.func @small_batches_0_gemm_batch_norm_rows_le_64(
// CHECK: gpu.func @small_batches_0_gemm_batch_norm(
func.func @small_batches(%x: tensor<?x64xbf16>, %w: tensor<4096x64xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x64xbf16>, tensor<4096x64xbf16> -> tensor<?x4096xbf16>
  %y = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      : (tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}
