// The Hopper GEMM kernel (backend 3): host tensor maps passed by value, the
// kernel's warp roles, mbarrier protocol, TMA loads and wgmma ops.
// RUN: fusion-opt %s --split-input-file --fusion-optimize --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s

// Host: a tensor map of x (M rows, the batch) and of w (48 rows) in boxes of
// 128 rows x 64 bf16 (128 bytes), and one of x in boxes of the rows of the
// batch's last block row ((M - 1) % 128 + 1), encoded per call and passed
// by value;
// 128 + 256 threads; 4 stages of (128 + 128) x 128 bytes, the bias columns
// and the 1024-byte alignment shift of dynamic shared memory.
// CHECK-LABEL: llvm.func @wgmma(
// CHECK: %[[XMAP:.*]] = llvm.alloca %{{.*}} x !llvm.array<16 x i64> {alignment = 64 : i64}
// CHECK: fusion_rt.encode_tensor_map %[[XMAP]], <{{.*}}> %arg2 rows %arg1 columns %{{.*}} box(%{{.*}}, {{[0-9]+}}) : i32
// CHECK: %[[X:.*]] = llvm.load %[[XMAP]] : !llvm.ptr -> !llvm.array<16 x i64>
// CHECK: %[[WMAP:.*]] = llvm.alloca %{{.*}} x !llvm.array<16 x i64> {alignment = 64 : i64}
// CHECK: fusion_rt.encode_tensor_map %[[WMAP]], <{{.*}}> %arg3 rows
// CHECK: %[[W:.*]] = llvm.load %[[WMAP]]
// CHECK: %[[XLASTMAP:.*]] = llvm.alloca %{{.*}} x !llvm.array<16 x i64> {alignment = 64 : i64}
// CHECK: %[[C128:.*]] = llvm.mlir.constant(128 : i64) : i64
// CHECK: %[[C1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[BEFORE:.*]] = llvm.sub %arg1, %[[C1]] : i64
// CHECK: %[[REM:.*]] = llvm.urem %[[BEFORE]], %[[C128]] : i64
// CHECK: %[[LAST:.*]] = llvm.add %[[REM]], %{{.*}} : i64
// CHECK: %[[LAST32:.*]] = llvm.trunc %[[LAST]] : i64 to i32
// CHECK: fusion_rt.encode_tensor_map %[[XLASTMAP]], <{{.*}}> %arg2 rows %arg1 columns %{{.*}} box(%[[LAST32]], {{[0-9]+}}) : i32
// CHECK: %[[XLAST:.*]] = llvm.load %[[XLASTMAP]]
// CHECK: fusion_rt.launch @fusion_kernels::@wgmma_0_gemm grid(%{{.*}}, %{{.*}}) block 384 shared 132608 persistent overlap_predecessor stream(%arg0) args(%[[X]], %[[W]], %[[XLAST]], {{.*}} : !llvm.array<16 x i64>, !llvm.array<16 x i64>, !llvm.array<16 x i64>, !llvm.ptr,
//
// The kernels are built for the arch-specific sm_90a (wgmma, setmaxnreg).
// CHECK: gpu.module @fusion_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// CHECK: gpu.func @wgmma_0_gemm(%[[XARG:.*]]: !llvm.ptr, %[[WARG:.*]]: !llvm.ptr, %[[XLASTARG:.*]]: !llvm.ptr, %{{.*}}: memref<48xbf16>, %{{.*}}: memref<?x48xbf16>) kernel attributes {fusion_rt.tensor_map_args = array<i64: 0, 1, 2>, known_block_size = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK: %[[XDESC:.*]] = builtin.unrealized_conversion_cast %[[XARG]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// CHECK: %[[XLASTDESC:.*]] = builtin.unrealized_conversion_cast %[[XLASTARG]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<128x64xbf16
// CHECK: %[[WDESC:.*]] = builtin.unrealized_conversion_cast %[[WARG]]
// The thread's warpgroup comes from its warp's lane 0, so that ptxas
// knows it (and the consumers' stages and descriptors) warp-uniform.
// CHECK: %[[OWN_WARPGROUP:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %{{.*}}, %{{.*}} = gpu.shuffle  idx %[[OWN_WARPGROUP]], %c0_i32, %c32_i32 : i32
//
// The stage buffers start at the first 1024-byte boundary of dynamic
// shared memory.
// CHECK: %[[RAW:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %[[RAW]]
// CHECK: arith.remui %[[ADDRESS]], %c1024
// CHECK: %[[SHIFT:.*]] = arith.remui %{{.*}}, %c1024
// The low word of the ring origin's wgmma descriptor: the start address in
// 16-byte units, and the leading byte offset (bit 16).
// CHECK: %[[ORIGIN:.*]] = arith.addi %[[ADDRESS]], %[[SHIFT]] : index
// CHECK-NEXT: %[[ORIGIN_BITS:.*]] = arith.index_castui %[[ORIGIN]] : index to i32
// CHECK: %[[MASKED:.*]] = arith.andi %[[ORIGIN_BITS]], %c262143_i32 : i32
// CHECK-NEXT: %[[UNITS:.*]] = arith.shrui %[[MASKED]], %c4_i32 : i32
// CHECK-NEXT: %[[ORIGIN_LOW:.*]] = arith.ori %[[UNITS]], %c65536_i32 : i32
//
// A full (1 arrival + TMA bytes) and an empty (256 consumer arrivals)
// barrier per stage, and the epilogue's release of the ring (unused by an
// epilogue that does not stage its tile), set up by thread 0.
// CHECK: %[[BARRIERS:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 9>
// CHECK: nvgpu.mbarrier.init %[[BARRIERS]][%c0{{.*}}], %c1{{.*}}
// CHECK: nvgpu.mbarrier.init %[[BARRIERS]][%{{.*}}], %c256
// CHECK-COUNT-6: nvgpu.mbarrier.init
// CHECK: nvgpu.mbarrier.init %[[BARRIERS]][%c8], %c1
// CHECK: nvgpu.tma.prefetch.descriptor %[[XDESC]]
// CHECK: gpu.barrier
// The set-up overlaps the stream's previous kernel (the launch is
// overlap_predecessor); past it every thread waits for that kernel.
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NOT: nvvm.griddepcontrol
//
// Warpgroup 0, the producer: gives registers away; its first thread walks
// the block's tiles (block b: tiles b, b + grid, ...) and, per K slice of
// each, waits for a stage's release, expects its bytes and issues both TMA
// loads: x's through the last-rows map where the batch ends inside the
// tile (its rows alone: (M - row) x 128 bytes), else the whole tile's. The
// ring's slices are numbered across tiles (iteration * K tiles + k; here
// one K slice a tile), so the next tile's loads overlap this tile's
// epilogue.
// CHECK: scf.if
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: scf.if
// CHECK: %[[FIRST:.*]] = gpu.block_id x
// CHECK: %[[GRID:.*]] = gpu.grid_dim x
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %{{.*}} step %[[GRID]] iter_args(%[[ITERATION:.*]] = %{{.*}}) -> (index)
// CHECK-NOT: %[[BARRIERS]][%c8]
// CHECK: %[[TILE_END:.*]] = arith.addi %[[ROW_BASE:.*]], %c128{{.*}} : index
// CHECK-NEXT: %[[PAST_BATCH:.*]] = arith.cmpi ugt, %[[TILE_END]], %[[ROWS:.*]] : index
// CHECK-NEXT: %[[IN_BATCH:.*]] = arith.cmpi ult, %[[ROW_BASE]], %[[ROWS]] : index
// CHECK-NEXT: %[[LAST_ROWS:.*]] = arith.andi %[[IN_BATCH]], %[[PAST_BATCH]] : i1
// CHECK: %[[LEFT:.*]] = arith.subi %[[ROWS]], %[[ROW_BASE]] : index
// CHECK: %[[LEFT_BYTES:.*]] = arith.muli %[[LEFT]], %c128{{.*}} : index
// CHECK: %[[X_BYTES:.*]] = arith.select %[[LAST_ROWS]], %[[LEFT_BYTES]], %c16384 : index
// CHECK: %[[BYTES:.*]] = arith.addi %[[X_BYTES]], %c16384{{.*}} : index
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.get %[[BARRIERS]]
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BARRIERS]][%[[STAGE:.*]]], %[[BYTES]]
// CHECK: scf.if %[[LAST_ROWS]] {
// CHECK: nvgpu.tma.async.load %[[XLASTDESC]][%{{.*}}, %[[ROW_BASE]]], %[[BARRIERS]][%[[STAGE]]] to %{{.*}} : {{.*}} -> memref<128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: } else {
// CHECK: nvgpu.tma.async.load %[[XDESC]][%{{.*}}, %[[ROW_BASE]]], %[[BARRIERS]][%[[STAGE]]] to %{{.*}} : {{.*}} -> memref<128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: }
// CHECK: nvgpu.tma.async.load %[[WDESC]][%{{.*}}, %{{.*}}], %[[BARRIERS]][%[[STAGE]]]
//
// The consumers: take registers; per tile stage the bias columns, then per
// K slice wait for the stage, issue 4 k16 wgmmas of m64n128 on swizzled
// descriptors, keep one group in flight and release the stage before it;
// the last stage is released once its wgmmas are done. The accumulators
// pass through inline PTX before the wgmma fence and through the last
// wait, so that LLVM keeps their writes (zeros) before the one and their
// reads after the other.
// CHECK: } else {
// Both consumer warpgroups walk the producer's tiles (block b: b, b + grid,
// ...) and meet at named barrier 1, all 256 of them.
// CHECK: nvvm.setmaxregister increase 232
// CHECK: %[[CFIRST:.*]] = gpu.block_id x
// CHECK-NEXT: %[[CGRID:.*]] = gpu.grid_dim x
// CHECK: scf.for %{{.*}} = %[[CFIRST]] to %{{.*}} step %[[CGRID]] iter_args
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c256_i32
// The ring's stage and phase parity go around with the K loop: stage + 1,
// back to 0 at the stage count (4), the parity flipped there.
// The slice and the stage are i32.
// CHECK: scf.for {{.*}} iter_args({{.*}}, %[[STAGE_NOW:.*]] = %{{.*}}, %[[PARITY:.*]] = %{{.*}}) -> (!llvm.struct<(f32, {{.*}}>, i32, i1) : i32
// The wait: a loop of try_waits on the stage's full barrier.
// CHECK-NEXT: %[[STAGE_AT:.*]] = arith.index_castui %[[STAGE_NOW]] : i32 to index
// CHECK-NEXT: %[[FULL_BITS:.*]] = nvgpu.mbarrier.get %[[BARRIERS]][%[[STAGE_AT]]]
// CHECK-NEXT: %[[FULL:.*]] = llvm.inttoptr %[[FULL_BITS]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: %[[PHASE:.*]] = arith.extui %[[PARITY]] : i1 to i32
// CHECK: scf.while
// CHECK-NEXT: %[[DONE:.*]] = nvvm.mbarrier.try_wait %[[FULL]], %[[PHASE]], %{{.*}} : !llvm.ptr<3>, i32, i32 -> i1
// CHECK: %[[PENDING:.*]] = arith.xori %[[DONE]], %true
// CHECK-NEXT: scf.condition(%[[PENDING]])
// The stage's descriptor low words, x's (the consumer's 64 rows) and
// w's, from the origin's: 16 KiB of x a stage, w's 64 KiB after x's.
// CHECK: %[[X_BYTES:.*]] = arith.muli %[[STAGE_AT]], %c16384 : index
// CHECK-NEXT: %[[X_AT:.*]] = arith.addi %[[X_BYTES]], %{{.*}} : index
// CHECK: %[[X_BITS:.*]] = arith.index_castui %[[X_AT]] : index to i32
// CHECK-NEXT: %[[X_UNITS:.*]] = arith.shrui %[[X_BITS]], %c4_i32{{.*}} : i32
// CHECK-NEXT: %[[X_LOW:.*]] = arith.addi %[[ORIGIN_LOW]], %[[X_UNITS]] : i32
// CHECK: %[[W_BYTES:.*]] = arith.muli %[[STAGE_AT]], %c16384{{.*}} : index
// CHECK: %[[W_AT:.*]] = arith.addi %[[W_BYTES]], %c65536 : index
// CHECK: %[[W_BITS:.*]] = arith.index_castui %[[W_AT]] : index to i32
// CHECK-NEXT: %[[W_UNITS:.*]] = arith.shrui %[[W_BITS]], %c4_i32{{.*}} : i32
// CHECK-NEXT: %[[W_LOW:.*]] = arith.addi %[[ORIGIN_LOW]], %[[W_UNITS]] : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "", "{{(=f,)+}}0,1,{{.*}},63"
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// Each k16 step's descriptors: the low words plus 2 (32 bytes) a step,
// the high word constant (stride 1024 bytes, 128-byte swizzle).
// CHECK-NEXT: %[[HIGH:.*]] = arith.constant 4611686293305294848 : i64
// CHECK-NEXT: %[[W0:.*]] = arith.extui %[[W_LOW]] : i32 to i64
// CHECK-NEXT: %[[W_DESC0:.*]] = arith.ori %[[W0]], %[[HIGH]] : i64
// CHECK: %[[X0:.*]] = arith.extui %[[X_LOW]] : i32 to i64
// CHECK-NEXT: %[[X_DESC0:.*]] = arith.ori %[[X0]], %{{.*}} : i64
// CHECK-NEXT: nvvm.wgmma.mma_async %[[X_DESC0]], %[[W_DESC0]], %{{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: %[[W1:.*]] = arith.addi %[[W_LOW]], %c2_i32{{.*}} : i32
// CHECK: %[[X1:.*]] = arith.addi %[[X_LOW]], %c2_i32{{.*}} : i32
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.addi %[[W_LOW]], %c4_i32{{.*}} : i32
// CHECK: arith.addi %[[X_LOW]], %c4_i32{{.*}} : i32
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.addi %[[W_LOW]], %c6_i32{{.*}} : i32
// CHECK: arith.addi %[[X_LOW]], %c6_i32{{.*}} : i32
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvgpu.mbarrier.arrive %[[BARRIERS]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[STAGE_NOW]], %c1
// CHECK: %[[WRAPS:.*]] = arith.cmpi eq, %[[NEXT]], %c4
// CHECK: %[[NEXT_STAGE:.*]] = arith.select %[[WRAPS]], %c0{{.*}}, %[[NEXT]]
// CHECK-NEXT: %[[NEXT_PARITY:.*]] = arith.xori %[[PARITY]], %[[WRAPS]] : i1
// CHECK-NEXT: scf.yield %{{.*}}, %[[NEXT_STAGE]], %[[NEXT_PARITY]]
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "wgmma.wait_group.sync.aligned 0;"
// CHECK-NOT: nvvm.wgmma
// CHECK: nvgpu.mbarrier.arrive %[[BARRIERS]]
//
// The epilogue on the accumulators: bias, leaky_relu; then, per four
// pairs of columns (rows r and r + 8, column blocks c and c + 8), the
// quad's lanes trade packed bf16 pairs with lane ^ 2 and lane ^ 1 so that
// each stores one 16-byte chunk straight from registers, guarded by M and
// N; a consumer barrier before the next tile's bias columns.
// CHECK: llvm.extractvalue
// CHECK: arith.cmpf
// CHECK-NOT: nvvm.barrier id
// CHECK: %[[PAIR:.*]] = arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK: %[[PACKED:.*]] = vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: %[[CHUNK:.*]] = vector.bitcast %[[PACKED]] : vector<4xi32> to vector<8xbf16>
// CHECK: scf.if
// CHECK-NEXT: vector.store %[[CHUNK]], %{{.*}} {alignment = 16 : i64} : memref<?x48xbf16>, vector<8xbf16>
// CHECK-NOT: vector<2xbf16>, vector<8xbf16>
// CHECK: nvvm.barrier id
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: arith.addi %{{.*}}
// CHECK-NEXT: scf.yield
func.func @wgmma(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %b: tensor<48xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.linear %x, %w, %b : tensor<?x64xbf16>, tensor<48x64xbf16>, tensor<48xbf16> -> tensor<?x48xbf16>
  %1 = fusion.leaky_relu %0, negative_slope = 0.1 : tensor<?x48xbf16>
  return %1 : tensor<?x48xbf16>
}

// -----

// 3xTF32: a third mbarrier a stage (64 arrivals), after the epilogue's.
// The producer warpgroup's last two warps (threads 64-127) follow the
// ring: per K slice they wait for the stage's loads, split w (splitTf32:
// the high part, rounded to tf32 and clamped, over the stage, the rounded
// remainder to the stage's remainder buffer), fence them for the async
// proxy and arrive on the stage's split barrier. The consumers wait for the
// stage and its split, load x's A fragments with four ldmatrix.x4 a slice
// and split them in registers alike, which pass through inline
// PTX with the accumulators before the wgmma fence. Each K step multiplies
// with three m64n128k8 wgmmas from registers (inline PTX: scale-d 0 for
// the first of a sum), small terms first. K slices go in pairs, summed
// from zero: slice t + 1 is loaded while slice t multiplies; after slice
// t + 1 is issued, a wait for all but its group (carrying slice t's x
// registers) releases slice t's stage, the next pair's first slice is
// loaded where the tile has it, and a wait for all (the accumulators,
// slice t + 1's x registers) comes before its stage's release and the
// adds into the running sums. No consumer barrier in the main loop.
// K = 64: one pair.
// CHECK-LABEL: gpu.func @fp32_0_gemm
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 13>
// CHECK: nvgpu.mbarrier.init %{{.*}}[%c8], %c1
// CHECK-COUNT-4: nvgpu.mbarrier.init %{{.*}}, %c64
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: %[[SPLITTER:.*]] = arith.cmpi uge, %{{.*}}, %c64
// CHECK: scf.if %[[SPLITTER]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[X:.*]] = vector.load %[[TILE:.*]][%[[AT:.*]]] :
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : vector<4xf32> to vector<4xi32>
// CHECK: %[[UP:.*]] = arith.addi %[[BITS]], %{{.*}} : vector<4xi32>
// CHECK: %[[KEPT:.*]] = arith.andi %[[UP]], %{{.*}} : vector<4xi32>
// CHECK: %[[ROUNDED:.*]] = arith.bitcast %[[KEPT]] : vector<4xi32> to vector<4xf32>
// CHECK: %[[BELOW:.*]] = arith.minnumf %[[ROUNDED]]
// CHECK: %[[HIGH:.*]] = arith.maxnumf %[[BELOW]]
// CHECK: %[[LOW:.*]] = arith.subf %[[X]], %[[HIGH]] : vector<4xf32>
// CHECK-NEXT: vector.store %[[HIGH]], %[[TILE]][%[[AT]]]
// CHECK-NEXT: vector.store %[[LOW]], %[[REM:.*]][%[[AT]]]
// CHECK-COUNT-15: vector.store %{{.*}}, %[[REM]]
// CHECK-NOT: vector.store
// CHECK-NOT: nvgpu.mbarrier.arrive
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvgpu.mbarrier.arrive
// CHECK: nvgpu.tma.async.load
// CHECK: } else {
// CHECK: nvvm.setmaxregister increase 232
// CHECK: nvvm.barrier id
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvvm.mbarrier.try_wait
// CHECK-NOT: vector.store
// CHECK: %[[FRAGMENT:.*]] = nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<128x32xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK: %[[XA:.*]] = vector.extract %[[FRAGMENT]][0, 0]
// The high part rounded to nearest tf32 and clamped to the largest finite
// tf32, the low part the exact remainder: an infinite x's low part is the
// infinity (splitTf32).
// CHECK: %[[LARGEST:.*]] = arith.constant 3.40116213E+38 : f32
// CHECK: %[[LEAST:.*]] = arith.constant -3.40116213E+38 : f32
// CHECK: %[[XBITS:.*]] = arith.bitcast %[[XA]] : f32 to i32
// CHECK: %[[XUP:.*]] = arith.addi %[[XBITS]], %c4096_i32
// CHECK: %[[XKEPT:.*]] = arith.andi %[[XUP]], %c-8192_i32
// CHECK: %[[XROUNDED:.*]] = arith.bitcast %[[XKEPT]] : i32 to f32
// CHECK: %[[BELOW:.*]] = arith.minnumf %[[XROUNDED]], %[[LARGEST]] : f32
// CHECK: %[[XHIGHPART:.*]] = arith.maxnumf %[[BELOW]], %[[LEAST]] : f32
// CHECK: %[[XREM:.*]] = arith.subf %[[XA]], %[[XHIGHPART]] : f32
// CHECK: arith.bitcast %[[XHIGHPART]] : f32 to i32
// CHECK-NEXT: arith.bitcast %[[XREM]] : f32 to i32
// CHECK-COUNT-3: nvgpu.ldmatrix
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: %[[ZERO:.*]] = llvm.mlir.zero
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c2{{.*}} iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], {{.*}}) -> (!llvm.struct<{{.*}}>, !llvm.struct<{{.*}}>, {{(i32, ){31}i32}})
// CHECK-NOT: nvvm.barrier
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "", "{{(=f,){64}(=r,){32}0}},1,
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, 0, 0;\0Awgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1;\0A}", "{{(=f,){64}0}},{{.*}},63,r,r,r,r,l"
// CHECK-COUNT-11: setp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvvm.mbarrier.try_wait
// CHECK-NOT: vector.store
// CHECK-COUNT-4: nvgpu.ldmatrix
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-12: setp.ne.b32 p, 1, 0;\0Awgmma.mma_async
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "wgmma.wait_group.sync.aligned 1;", "{{(=r,){32}0}},
// CHECK: nvgpu.mbarrier.arrive
// CHECK: scf.if %{{.*}} -> ({{(i32, ){31}i32}})
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvvm.mbarrier.try_wait
// CHECK-COUNT-4: nvgpu.ldmatrix
// CHECK: } else {
// CHECK: llvm.mlir.poison : i32
// CHECK: }
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "wgmma.wait_group.sync.aligned 0;", "{{(=f,){64}(=r,){32}0}},
// CHECK: nvgpu.mbarrier.arrive
// CHECK-COUNT-64: arith.addf
// CHECK-NOT: nvvm.barrier
// CHECK: scf.yield
// CHECK-NOT: wgmma.mma_async
// CHECK: gpu.return
func.func @fp32(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.linear %x, %w : tensor<?x64xf32>, tensor<48x64xf32> -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

// 3xTF32 with K = 96, three slices: one pair, then the last slice alone
// (its own wgmmas waited for, no next slice to load).
// CHECK-LABEL: gpu.func @fp32_odd_0_gemm
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c2
// CHECK: scf.yield
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: setp.ne.b32 p, 0, 0;\0Awgmma.mma_async
// CHECK-COUNT-11: setp.ne.b32 p, 1, 0;\0Awgmma.mma_async
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: "wgmma.wait_group.sync.aligned 1;"
// CHECK: scf.if
// CHECK: "wgmma.wait_group.sync.aligned 0;"
// CHECK: nvgpu.mbarrier.arrive
// CHECK-COUNT-64: arith.addf
// CHECK-NOT: wgmma.mma_async
// CHECK: gpu.return
func.func @fp32_odd(%x: tensor<?x96xf32>, %w: tensor<48x96xf32>) -> tensor<?x48xf32> {
  %0 = fusion.linear %x, %w : tensor<?x96xf32>, tensor<48x96xf32> -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

// N = 36 is no multiple of 8: a 16-byte chunk could straddle it, so each
// lane stores its pairs itself (4 bytes, guarded by M and N), no trade.
// CHECK-LABEL: gpu.func @ragged_0_gemm
// CHECK-NOT: gpu.shuffle  xor
// CHECK: vector.store {{.*}} {alignment = 4 : i64} : memref<?x36xbf16>, vector<2xbf16>
// CHECK-NOT: gpu.shuffle  xor
// CHECK-NOT: vector<8xbf16>
// CHECK: gpu.return
func.func @ragged(%x: tensor<?x64xbf16>, %w: tensor<36x64xbf16>) -> tensor<?x36xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x64xbf16>, tensor<36x64xbf16> -> tensor<?x36xbf16>
  return %0 : tensor<?x36xbf16>
}

// -----

// A training batch norm's column moments come from the registers of a
// kernel whose accumulators hold rows of the tile (operands = x_w, written
// here; the selection swaps them, wgmma-swapped-operands.mlir): the lanes
// l, l ^ 4, l ^ 8, l ^ 16 that hold the same columns sum them in a
// transposing butterfly (shuffles at distances 16, 8 and 4, the first of
// each slot pair kept), then one thread a column merges the warps' sums in
// warp order through the moments scratch (8 warps and the means, of the
// tile's 128 columns): the means, then the squared deviations from them.
// The tile is not staged, so the producer never waits for the epilogue and
// the kernel is persistent, its output stored from the registers. Shared
// memory: 4 stages of 128 + 128 rows of 128 bytes (131072), the scale
// column (512), the moments scratch (9 x 128 f32: 4608) and the shift to
// a 1024-byte boundary.
// CHECK-LABEL: llvm.func @bn(
// CHECK: fusion_rt.launch @fusion_kernels::@bn_0_gemm grid(%{{.*}}, %{{.*}}) block 384 shared 137216 persistent overlap_predecessor stream(
// CHECK-LABEL: gpu.func @bn_0_gemm(
// CHECK: %[[BARRIERS:.*]] = nvgpu.mbarrier.create
// CHECK-NOT: nvgpu.mbarrier.get %[[BARRIERS]][%c8
// CHECK: nvgpu.tma.async.load
// CHECK: } else {
// CHECK-NOT: memref<128x136xbf16
// CHECK: vector.store {{.*}} : memref<?x48xbf16>, vector<8xbf16>
// CHECK: %[[SCRATCH:.*]] = memref.view {{.*}} to memref<9x128xf32, #gpu.address_space<workgroup>>
// Only the last block row can hold rows past M: elsewhere the sums take
// every value, unmasked.
// CHECK: %[[WHOLE:.*]] = arith.cmpi ule
// CHECK: scf.if %[[WHOLE]] -> (f32, {{.*}})
// CHECK-NOT: arith.select
// CHECK: } else {
// CHECK: arith.select
// CHECK-COUNT-16: gpu.shuffle  xor %{{.*}}, %c16_i32{{.*}} : f32
// CHECK-COUNT-8: gpu.shuffle  xor %{{.*}}, %c8_i32{{.*}} : f32
// CHECK-COUNT-4: gpu.shuffle  xor %{{.*}}, %c4_i32{{.*}} : f32
// CHECK-COUNT-4: memref.store %{{.*}}, %[[SCRATCH]][%{{.*}}, %{{.*}}] : memref<9x128xf32
// CHECK: nvvm.barrier id
// CHECK: scf.if
// CHECK-COUNT-8: memref.load %[[SCRATCH]][%c{{[0-7]}}{{(_[0-9]+)?}}, %{{.*}}]
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %[[SCRATCH]][%c8{{.*}}, %{{.*}}]
// CHECK: nvvm.barrier id
// CHECK: memref.load %[[SCRATCH]][%c8
// CHECK: scf.if %[[WHOLE]]
// CHECK: arith.subf
// CHECK: math.fma
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32{{.*}} : f32
// CHECK: nvvm.barrier id
// CHECK: memref.store %{{.*}} : memref<?xf32>
// CHECK: memref.store %{{.*}} : memref<?xf32>
// CHECK-NOT: nvgpu.mbarrier.arrive %[[BARRIERS]][%c8
// CHECK: gpu.return
func.func @bn(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %s: tensor<48xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue(%s) {
  ^bb0(%acc: f32, %col: f32):
    %1 = arith.mulf %acc, %col : f32
    fusion.yield %1 : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 1.0e-01>
    {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>}
    : (tensor<?x64xbf16>, tensor<48x64xbf16>, tensor<48xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

// A hand-written cooperative 256x128 tile: each consumer warpgroup takes
// 128 rows (consumer c from row 128c) in two m64n128 row blocks, 8 KiB of
// x apart in each stage, each its own 64 of the thread's 128 accumulators;
// the epilogue's runs cover both blocks (rows 64 apart).
// CHECK-LABEL: gpu.func @two_row_blocks_0_gemm
// CHECK: %[[CONSUMER:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK: scf.for {{.*}} -> (!llvm.struct<(f32{{(, f32){127}[)]}}>, i32, i1)
// CHECK: arith.muli %[[CONSUMER]], %c128{{.*}} : index
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, {{.*}} : !llvm.struct<(f32{{(, f32){63}[)]}}> -> !llvm.struct<(f32{{(, f32){63}[)]}}>
// CHECK: %[[SECOND_BLOCK:.*]] = arith.constant 512 : i32
// CHECK-NEXT: arith.addi %{{.*}}, %[[SECOND_BLOCK]] : i32
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK-COUNT-6: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: llvm.extractvalue %{{.*}}[64] : !llvm.struct<(f32{{(, f32){127}[)]}}>
// CHECK: gpu.return
func.func @two_row_blocks(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 256x128, warps = 8x1, stages = 3, group_m = 8>>} : (tensor<?x64xbf16>, tensor<48x64xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}
