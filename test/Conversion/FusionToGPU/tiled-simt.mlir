// fp32 on the CUDA cores (fp32-math=simt) at small tiles: 32x32 blocks of
// one warp, a 2x16 thread grid, each thread 16 rows x 2 columns of fmas.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=tiled fp32-math=simt tile=32,32 warps=1,1 stages=2" --fusion-lower-to-gpu | FileCheck %s
// The default fp32 mode is 3xTF32 on the tensor cores.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=tiled tile=32,32 warps=1,1 stages=2" --fusion-lower-to-gpu | FileCheck %s --check-prefix=TF32X3
// RUN: not fusion-opt %s --fusion-select-gemm-config="strategy=tiled fp32-math=fast" --fusion-lower-to-gpu 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not fusion-opt %s --fusion-select-gemm-config="strategy=tiled fp32-math=simt tile=16,256 warps=1,16" --fusion-lower-to-gpu 2>&1 | FileCheck %s --check-prefix=GRID

// CHECK: gpu.func @simt_0_gemm(
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[A:.*]] = memref.view %[[SMEM]]{{.*}} to memref<2x32x32xf32, #gpu.address_space<workgroup>>
// CHECK: %[[B:.*]] = memref.view %[[SMEM]]{{.*}} to memref<2x32x32xf32, #gpu.address_space<workgroup>>
// Fragments: a 16-byte K chunk of each of the thread's 16 rows of A and 2
// rows of B, swizzled like the copies.
// CHECK: nvgpu.device_async_wait
// CHECK-NEXT: gpu.barrier
// CHECK: %[[LOW:.*]] = arith.remui %{{.*}}, %c8{{.*}} : index
// CHECK: arith.xori %c0{{.*}}, %[[LOW]] : index
// CHECK: vector.load %[[A]][{{.*}}] {alignment = 16 : i64} : memref<2x32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-15: vector.load %[[A]]
// CHECK-COUNT-2: vector.load %[[B]]
// The pipelined loop: 32 f32 accumulators, 18 fragments carried; per step
// 4 x 32 fmas.
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, !nvgpu.device.async.token, vector<4xf32>,
// CHECK-COUNT-128: math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: nvgpu.mma.sync
// CHECK: scf.yield
// Epilogue: single columns into the staged tile, 16-byte chunks out.
// CHECK: gpu.barrier
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<32x40xf32, #gpu.address_space<workgroup>>, vector<1xf32>
// CHECK: gpu.barrier
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<?x48xf32>, vector<4xf32>

// TF32X3: gpu.func @simt_0_gemm(
// TF32X3-NOT: math.fma
// TF32X3: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}

// UNKNOWN: for the --fp32-math option: Cannot find option named 'fast'!
// GRID: error: 'fusion.fused_linear' op tiling 16x256 with 1x16 warps: the SIMT thread grid (16 threads along N) must divide the block tile
func.func @simt(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>, %b: tensor<48xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) precision fp32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<48x64xf32>, tensor<48xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}
