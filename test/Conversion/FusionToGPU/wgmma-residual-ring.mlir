// A residual matrix other than x comes into the wgmma kernel's ring by
// TMA: after each tile's K slices the producer loads blockN / tileK more
// slices, the residual's rows of the tile 128 bytes of columns at a time,
// where x's rows of a K slice go, and the consumers read them in the
// accumulators' layout (16-bit pairs with ldmatrix, f32 pairs with 8-byte
// loads) as the epilogue reaches their runs, releasing each stage, instead
// of loading the residual from global memory.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=wgmma target=sm_90 schedule=pingpong" --fusion-lower-to-gpu | FileCheck %s --check-prefix=PINGPONG

// The host makes a fourth tensor map (after x's two and w's), of r ([M, 128],
// 128 x 64 boxes).
// CHECK-LABEL: llvm.func @residual_ring(
// CHECK: fusion_rt.encode_tensor_map %{{.*}}, <{{.*}}> %arg4 rows %arg1 columns
// CHECK: fusion_rt.launch @fusion_kernels::@residual_ring_0_gemm
//
// CHECK-LABEL: gpu.func @residual_ring_0_gemm(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[RMAP:.*]]: !llvm.ptr, %[[OUT:.*]]: memref<?x128xbf16>, %[[RES:.*]]: memref<?x128xbf16>)
// CHECK-SAME: fusion_rt.tensor_map_args = array<i64: 0, 1, 2, 3>
// CHECK: %[[RDESC:.*]] = builtin.unrealized_conversion_cast %[[RMAP]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: nvgpu.tma.prefetch.descriptor %[[RDESC]]
//
// The producer: the tile's K slices (x's and w's 32 KiB each), then the
// residual's two slices of 16 KiB, each into a released stage.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %{{.*}} :
// CHECK: nvgpu.tma.async.load
// CHECK: nvgpu.tma.async.load
// CHECK: scf.yield
// CHECK-COUNT-2: nvgpu.tma.async.load %[[RDESC]]
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: nvvm.setmaxregister increase 232
//
// The consumers: after the last wgmmas and the last K slice's release,
// per residual slice a wait for its stage, four ldmatrix of its quads, a
// proxy fence (the stage's next TMA write must not overtake the reads) and
// the stage's release; the epilogue loads nothing of r.
// CHECK: "wgmma.wait_group.sync.aligned 0;"
// CHECK: nvgpu.mbarrier.arrive
// CHECK: nvvm.mbarrier.try_wait
// CHECK-COUNT-4: nvgpu.ldmatrix {{.*}} : memref<128x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK-NOT: nvgpu.mbarrier.arrive
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// CHECK: nvgpu.mbarrier.arrive
// CHECK: nvvm.mbarrier.try_wait
// CHECK-COUNT-4: nvgpu.ldmatrix
// CHECK: nvgpu.mbarrier.arrive
// CHECK-NOT: nvgpu.ldmatrix
// CHECK-NOT: %[[RES]]
// CHECK: vector.store {{.*}}, %[[OUT]]
// CHECK-NOT: %[[RES]]
// CHECK: gpu.return
//
// The ping-pong schedule's consumers take the ring's slices in turns, so
// it loads the residual in its epilogue.
// PINGPONG-LABEL: gpu.func @residual_ring_0_gemm(
// PINGPONG-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x128xbf16>, %[[RES:.*]]: memref<?x128xbf16>)
// PINGPONG-SAME: fusion_rt.tensor_map_args = array<i64: 0, 1, 2>
// PINGPONG: vector.load %[[RES]]
func.func @residual_ring(%x: tensor<?x1024xbf16>, %w: tensor<128x1024xbf16>,
                         %r: tensor<?x128xbf16>) -> tensor<?x128xbf16> {
  %y = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32, %res: f32):
    %0 = arith.addf %acc, %res : f32
    fusion.yield %0 : f32
  } : (tensor<?x1024xbf16>, tensor<128x1024xbf16>, tensor<?x128xbf16>) -> tensor<?x128xbf16>
  return %y : tensor<?x128xbf16>
}

// -----

// An f32 residual in tf32 (K = 2048: 64 K slices, 8 residual slices of 32
// columns): each lane reads its pairs with 8-byte loads from the swizzled
// stage, one slice at a time as the epilogue reaches its runs, and
// releases each stage once read; the epilogue loads nothing of r.
// CHECK-LABEL: gpu.func @residual_tf32_0_gemm(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[RMAP:.*]]: !llvm.ptr, %[[OUT:.*]]: memref<?x256xf32>, %[[RES:.*]]: memref<?x256xf32>)
// CHECK-SAME: fusion_rt.tensor_map_args = array<i64: 0, 1, 2, 3>
// CHECK: %[[RDESC:.*]] = builtin.unrealized_conversion_cast %[[RMAP]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<128x32xf32, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: nvvm.setmaxregister decrease 40
// CHECK-COUNT-8: nvgpu.tma.async.load %[[RDESC]]
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: nvvm.setmaxregister increase 232
// CHECK: "wgmma.wait_group.sync.aligned 0;"
// CHECK: nvvm.mbarrier.try_wait
// CHECK-COUNT-8: vector.load %{{.*}} {alignment = 8 : i64} : memref<128x32xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NOT: nvgpu.mbarrier.arrive
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// CHECK-NOT: vector.load
// CHECK: nvgpu.mbarrier.arrive
// CHECK: vector.store {{.*}}, %[[OUT]]
// CHECK: nvvm.mbarrier.try_wait
// CHECK-COUNT-8: vector.load %{{.*}} : memref<128x32xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NOT: %[[RES]]
// CHECK: gpu.return
func.func @residual_tf32(%x: tensor<?x2048xf32>, %w: tensor<256x2048xf32>,
                         %r: tensor<?x256xf32>) -> tensor<?x256xf32> {
  %y = fusion.fused_linear %x, %w precision tf32 epilogue rows(%r) {
  ^bb0(%acc: f32, %res: f32):
    %0 = arith.addf %acc, %res : f32
    fusion.yield %0 : f32
  } : (tensor<?x2048xf32>, tensor<256x2048xf32>, tensor<?x256xf32>) -> tensor<?x256xf32>
  return %y : tensor<?x256xf32>
}

// -----

// 3xTF32 (K = 1024: 32 K slices, 4 residual slices of a 128-column tile):
// the producer's splitters split no residual slice but complete its
// stage's split barrier phase after its load, and the consumers wait for
// that phase too, so that each stage's split phases count its uses.
// CHECK-LABEL: gpu.func @residual_fp32_0_gemm(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[RMAP:.*]]: !llvm.ptr, %[[OUT:.*]]: memref<?x128xf32>, %[[RES:.*]]: memref<?x128xf32>)
// CHECK-SAME: fusion_rt.tensor_map_args = array<i64: 0, 1, 2, 3>
// CHECK: nvvm.setmaxregister decrease 40
//
// The splitters: each K slice split, then per residual slice a wait for
// its load and an arrival.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait
// CHECK: arith.subf {{.*}} : vector<4xf32>
// CHECK: nvgpu.mbarrier.arrive %
// CHECK-NEXT: }
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvgpu.mbarrier.arrive %
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvgpu.mbarrier.arrive %
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvgpu.mbarrier.arrive %
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvgpu.mbarrier.arrive %
// CHECK: nvvm.setmaxregister increase 232
// CHECK: "wgmma.wait_group.sync.aligned 0;"
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvvm.mbarrier.try_wait
// CHECK-COUNT-8: vector.load %{{.*}} : memref<128x32xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NOT: vector.load
// CHECK: nvgpu.mbarrier.arrive
// CHECK-NOT: %[[RES]]
// CHECK: gpu.return
func.func @residual_fp32(%x: tensor<?x1024xf32>, %w: tensor<128x1024xf32>,
                         %r: tensor<?x128xf32>) -> tensor<?x128xf32> {
  %y = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32, %res: f32):
    %0 = arith.addf %acc, %res : f32
    fusion.yield %0 : f32
  } : (tensor<?x1024xf32>, tensor<128x1024xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
  return %y : tensor<?x128xf32>
}

// -----

// Rows that are no 16-byte multiple (100 bf16) cannot be a tensor map's:
// the residual is loaded.
// CHECK-LABEL: gpu.func @residual_unaligned_0_gemm(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x100xbf16>, %[[RES:.*]]: memref<?x100xbf16>)
// CHECK-SAME: fusion_rt.tensor_map_args = array<i64: 0, 1, 2>
// CHECK: vector.load %[[RES]]
func.func @residual_unaligned(%x: tensor<?x1024xbf16>, %w: tensor<100x1024xbf16>,
                              %r: tensor<?x100xbf16>) -> tensor<?x100xbf16> {
  %y = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32, %res: f32):
    %0 = arith.addf %acc, %res : f32
    fusion.yield %0 : f32
  } : (tensor<?x1024xbf16>, tensor<100x1024xbf16>, tensor<?x100xbf16>) -> tensor<?x100xbf16>
  return %y : tensor<?x100xbf16>
}

// -----

// x as the residual (N = K = 2056) where the K slices of the tile's
// columns do not cover the last 256-column tile: x comes through the ring
// by TMA too.
// CHECK-LABEL: gpu.func @input_residual_0_gemm(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x2056xbf16>, %[[RES:.*]]: memref<?x2056xbf16>)
// CHECK-SAME: fusion_rt.tensor_map_args = array<i64: 0, 1, 2, 3>
// CHECK-NOT: %[[RES]]
// CHECK: gpu.return
func.func @input_residual(%x: tensor<?x2056xbf16>, %w: tensor<2056x2056xbf16>) -> tensor<?x2056xbf16> {
  %y = fusion.fused_linear %x, %w epilogue rows(%x) {
  ^bb0(%acc: f32, %res: f32):
    %0 = arith.addf %acc, %res : f32
    fusion.yield %0 : f32
  } : (tensor<?x2056xbf16>, tensor<2056x2056xbf16>, tensor<?x2056xbf16>) -> tensor<?x2056xbf16>
  return %y : tensor<?x2056xbf16>
}

// -----

// A short K (one K slice against two residual slices) takes the ring too:
// the epilogue releases the residual's stages as it goes, so the next
// tile's first K slices wait little for them.
// CHECK-LABEL: gpu.func @residual_short_k_0_gemm(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x128xbf16>, %[[RES:.*]]: memref<?x128xbf16>)
// CHECK-SAME: fusion_rt.tensor_map_args = array<i64: 0, 1, 2, 3>
// CHECK-NOT: %[[RES]]
// CHECK: gpu.return
func.func @residual_short_k(%x: tensor<?x64xbf16>, %w: tensor<128x64xbf16>,
                            %r: tensor<?x128xbf16>) -> tensor<?x128xbf16> {
  %y = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32, %res: f32):
    %0 = arith.addf %acc, %res : f32
    fusion.yield %0 : f32
  } : (tensor<?x64xbf16>, tensor<128x64xbf16>, tensor<?x128xbf16>) -> tensor<?x128xbf16>
  return %y : tensor<?x128xbf16>
}
