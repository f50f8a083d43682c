// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=cublas" --fusion-lower-to-gpu | FileCheck %s

// The host function: the C ABI (stream, batch, inputs, outputs) -> status,
// argument checks, the GEMM into the output, the epilogue kernel in place.
// CHECK-LABEL: llvm.func @epilogue(
// CHECK-SAME: %[[STREAM:[a-z0-9]+]]: !llvm.ptr, %[[BATCH:[a-z0-9]+]]: i64, %[[X:[a-z0-9]+]]: !llvm.ptr, %[[W:[a-z0-9]+]]: !llvm.ptr, %[[B:[a-z0-9]+]]: !llvm.ptr, %[[S:[a-z0-9]+]]: !llvm.ptr, %[[OUT:[a-z0-9]+]]: !llvm.ptr) -> i32
// CHECK: fusion_rt.check_size "batch" %[[BATCH]] at_least 1 : i32
// CHECK: llvm.cond_br %{{.*}}, ^[[FAIL:bb[0-9]+]](%{{.*}} : i32), ^
// CHECK: ^[[FAIL]](%[[CODE:.*]]: i32):
// CHECK: fusion_rt.free %{{.*}} stream(%[[STREAM]])
// CHECK: llvm.return %[[CODE]] : i32
// CHECK-COUNT-5: fusion_rt.check_buffer "{{(in|out)put #[0-9]}}" %{{.*}} bytes %{{.*}} stream(%[[STREAM]])
// CHECK: fusion_rt.alloc %{{.*}} into %{{.*}} stream(%[[STREAM]])
// The GEMM and the launch, each checked: their contracts are in IR.
// CHECK: %[[GEMM:.*]] = fusion_rt.cublaslt_gemm <f32> in <tf32>, %[[STREAM]], %[[X]], %[[W]], %[[B]], %[[OUT]], rows %[[BATCH]], n 16, k 8, alpha 1.000000e+00 : i32
// CHECK: llvm.icmp "ne" %[[GEMM]]
// CHECK: %[[ROW_BLOCKS:.*]] = llvm.udiv %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: %[[LAUNCH:.*]] = fusion_rt.launch @fusion_kernels::@epilogue_0_epilogue grid(%[[ROW_BLOCKS]], %{{.*}}) block 256 shared 0 stream(%[[STREAM]]) args(%[[OUT]], %[[OUT]], %{{.*}}, %[[S]] : !llvm.ptr, !llvm.ptr, i64, !llvm.ptr) : i32
// CHECK: llvm.icmp "ne" %[[LAUNCH]]
// CHECK: llvm.store %{{.*}}, %[[SLOT:.*]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: fusion_rt.free %{{.*}} stream(%[[STREAM]])
// CHECK: llvm.return %{{.*}} : i32
//
// The kernel: a block of 4 chunks of a row (all 16 columns) by 64 rows, a
// thread one 16-byte chunk of 8 rows 64 apart (512 rows a block: one
// column block, grid.x is ceil(M / 512)); the column operand loaded once
// as one vector, then each row's chunk, the epilogue region inlined, all
// before any store; rows past M load the last row and store nothing.
// Block x takes column block x mod 1 of row block grid.x / 1 - 1 - x / 1:
// the rows the GEMM wrote last, still in L2, go first.
// CHECK: gpu.module @fusion_kernels [#nvvm.target<O = 3, chip = "sm_80">]
// CHECK: gpu.func @epilogue_0_epilogue(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[ROWS:.*]]: i64, %[[COLUMN:.*]]: !llvm.ptr) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK-NOT: gpu.block_id  y
// CHECK: %[[BLOCK_X:.*]] = gpu.block_id  x
// CHECK-NEXT: %[[BLOCK:.*]] = arith.index_cast %[[BLOCK_X]] : index to i64
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT: arith.remui %[[BLOCK]], %[[ONE]] : i64
// CHECK: %[[GRID_X:.*]] = gpu.grid_dim  x
// CHECK-NEXT: %[[GRID:.*]] = arith.index_cast %[[GRID_X]] : index to i64
// CHECK-NEXT: %[[ROW_BLOCKS:.*]] = arith.divui %[[GRID]], %{{.*}} : i64
// CHECK: %[[FROM_FIRST:.*]] = arith.divui %[[BLOCK]], %{{.*}} : i64
// CHECK: %[[LAST_BLOCK:.*]] = arith.addi %[[ROW_BLOCKS]], %c-1_i64 : i64
// CHECK-NEXT: %[[ROW_BLOCK:.*]] = arith.subi %[[LAST_BLOCK]], %[[FROM_FIRST]] : i64
// CHECK: arith.muli %[[ROW_BLOCK]], %c512_i64 : i64
// CHECK: %[[LAST:.*]] = arith.subi %[[ROWS]], %{{.*}} : i64
// CHECK: llvm.getelementptr %[[COLUMN]]
// CHECK-NEXT: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-NOT: llvm.getelementptr %[[COLUMN]]
// CHECK: arith.minsi %{{.*}}, %[[LAST]] : i64
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-COUNT-4: arith.select
// CHECK-NOT: llvm.store
// CHECK: arith.addi %{{.*}}, %c448_i64 : i64
// CHECK-NOT: llvm.getelementptr %[[COLUMN]]
// CHECK-NOT: llvm.store
// CHECK: scf.if
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
// CHECK-COUNT-7: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
// CHECK: llvm.mlir.global external constant @__fusion_kernels_image()
func.func @epilogue(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %s: tensor<16xf32>) -> tensor<?x16xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) precision tf32 epilogue(%s) {
  ^bb0(%acc: f32, %col: f32):
    %1 = arith.mulf %acc, %col : f32
    %zero = arith.constant 0.0 : f32
    %slope = arith.constant 0.1 : f32
    %neg = arith.mulf %1, %slope : f32
    %pos = arith.cmpf ogt, %1, %zero : f32
    %2 = arith.select %pos, %1, %neg : f32
    fusion.yield %2 : f32
  } : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// 8192 columns: 2048 chunks a row, 8 column blocks of 256 threads, each
// thread 8 rows 1 apart (8 rows a block); one grid dimension of
// 8 * ceil(M / 8) blocks (grid Y's 65535 would cap the batch), the column
// block x mod 8 of row block grid.x / 8 - 1 - x / 8.
// CHECK-LABEL: llvm.func @wide_epilogue(
// CHECK-SAME: %[[STREAM:[a-z0-9]+]]: !llvm.ptr, %[[BATCH:[a-z0-9]+]]: i64
// CHECK: %[[SEVEN:.*]] = llvm.mlir.constant(7 : i64) : i64
// CHECK-NEXT: %[[ROUNDED:.*]] = llvm.add %[[BATCH]], %[[SEVEN]] : i64
// CHECK-NEXT: %[[ROW_BLOCKS:.*]] = llvm.udiv %[[ROUNDED]], %{{.*}} : i64
// CHECK-NEXT: %[[EIGHT:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-NEXT: %[[BLOCKS:.*]] = llvm.mul %[[ROW_BLOCKS]], %[[EIGHT]] : i64
// CHECK-NEXT: fusion_rt.launch @fusion_kernels::@wide_epilogue_0_epilogue grid(%[[BLOCKS]], %{{.*}}) block 256
// CHECK: gpu.func @wide_epilogue_0_epilogue(
// CHECK: %[[BLOCK_X:.*]] = gpu.block_id  x
// CHECK-NEXT: %[[BLOCK:.*]] = arith.index_cast %[[BLOCK_X]] : index to i64
// CHECK-NEXT: %[[COLUMN_BLOCKS:.*]] = arith.constant 8 : i64
// CHECK-NEXT: %[[COLUMN_BLOCK:.*]] = arith.remui %[[BLOCK]], %[[COLUMN_BLOCKS]] : i64
// CHECK: arith.muli %[[COLUMN_BLOCK]], %{{.*}} : i64
// CHECK: %[[GRID:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK-NEXT: %[[ROW_BLOCKS_K:.*]] = arith.divui %[[GRID]], %{{.*}} : i64
// CHECK: %[[FROM_FIRST:.*]] = arith.divui %[[BLOCK]], %{{.*}} : i64
// CHECK: %[[LAST_BLOCK:.*]] = arith.addi %[[ROW_BLOCKS_K]], %c-1_i64 : i64
// CHECK-NEXT: %[[ROW_BLOCK:.*]] = arith.subi %[[LAST_BLOCK]], %[[FROM_FIRST]] : i64
// CHECK: %[[ROWS_A_BLOCK:.*]] = arith.constant 8 : i64
// CHECK-NEXT: arith.muli %[[ROW_BLOCK]], %[[ROWS_A_BLOCK]] : i64
func.func @wide_epilogue(%x: tensor<?x8xf32>, %w: tensor<8192x8xf32>, %b: tensor<8192xf32>, %s: tensor<8192xf32>) -> tensor<?x8192xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) precision tf32 epilogue(%s) {
  ^bb0(%acc: f32, %col: f32):
    %1 = arith.mulf %acc, %col : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<8192x8xf32>, tensor<8192xf32>, tensor<8192xf32>) -> tensor<?x8192xf32>
  return %0 : tensor<?x8192xf32>
}

// -----

// An identity epilogue is the GEMM alone; static shapes need no batch.
// CHECK-LABEL: llvm.func @gemm_only(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// CHECK-NOT: fusion_rt.check_size
// CHECK: fusion_rt.cublaslt_gemm
// CHECK-NOT: fusion_rt.launch
// CHECK: llvm.return
func.func @gemm_only(%x: tensor<4x8xbf16>, %w: tensor<16x8xbf16>) -> tensor<4x16xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<4x8xbf16>, tensor<16x8xbf16>) -> tensor<4x16xbf16>
  return %0 : tensor<4x16xbf16>
}

// -----

// A weight stored [in_features, out_features]: cuBLASLt reads it as it is
// (its layout on the runtime op; N and K from the layout).
// CHECK-LABEL: llvm.func @gemm_in_out(
// CHECK: fusion_rt.cublaslt_gemm <bf16> in <bf16> weight_layout <in_out>, %{{.*}}, rows %{{.*}}, n 16, k 8, alpha 1.000000e+00 : i32
// CHECK-NOT: fusion_rt.launch
// CHECK: llvm.return
func.func @gemm_in_out(%x: tensor<4x8xbf16>, %w: tensor<8x16xbf16>) -> tensor<4x16xbf16> {
  %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  return %0 : tensor<4x16xbf16>
}

// -----

// Training batch norm: statistics, finalize, normalize kernels; batch >= 2.
// CHECK-LABEL: llvm.func @batch_norm(
// CHECK: fusion_rt.check_size "batch" %{{.*}} at_least 2 : i32
// CHECK: fusion_rt.cublaslt_gemm <bf16> in <bf16>
// CHECK: fusion_rt.launch @fusion_kernels::@batch_norm_0_stats
// CHECK: fusion_rt.launch @fusion_kernels::@batch_norm_0_finalize
// CHECK: fusion_rt.launch @fusion_kernels::@batch_norm_0_normalize
// Welford's mean (and Chan's merge in the finalize kernel) is the sum's
// where an infinity or NaN reaches it, as PyTorch's mean of the column:
// its update would make inf - inf = NaN of it.
// CHECK: gpu.func @batch_norm_0_stats(
// CHECK: scf.for
// CHECK: arith.divf
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[ABS_MEAN:.*]] = math.absf %[[MEAN:.*]] : f32
// CHECK: %[[MEAN_FINITE:.*]] = arith.cmpf olt, %[[ABS_MEAN]], %[[INF]] : f32
// CHECK: %[[ABS_X:.*]] = math.absf %[[X:.*]] : f32
// CHECK: %[[X_FINITE:.*]] = arith.cmpf olt, %[[ABS_X]], %[[INF]] : f32
// CHECK: %[[FINITE:.*]] = arith.andi %[[MEAN_FINITE]], %[[X_FINITE]] : i1
// CHECK: %[[SUM:.*]] = arith.addf %[[MEAN]], %[[X]] : f32
// CHECK: arith.select %[[FINITE]], %{{.*}}, %[[SUM]] : f32
// The finalize kernel: a quarter warp a column (8 lanes; the groups past
// the last column take the last one's chunks and store nothing), whose
// lanes merge chunks l, l + 8, ..., four loaded before they are merged
// (those past the last chunk load the lane's first and are not merged);
// each butterfly level (distances 4 to 1) runs only where the partner
// lanes hold chunks (distance < chunks, the fifth argument).
// CHECK: gpu.func @batch_norm_0_finalize(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %[[CHUNKS:.*]]: i64,
// CHECK: %[[GROUP:.*]] = arith.divui %{{.*}}, %c8_i64 : i64
// CHECK: %[[IN_RANGE:.*]] = arith.cmpi slt, %[[GROUP]], %c16_i64 : i64
// CHECK: arith.select %[[IN_RANGE]], %[[GROUP]], %c15_i64 : i64
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
// CHECK-COUNT-8: llvm.load
// Chan's merge adds no cross term where either set is empty (the lane's
// total before its first chunk, a partner lane without chunks): the empty
// set's mean is a placeholder, delta^2 of a mean past 1.8e19 overflows, and
// inf * 0 was NaN (GPU fuzzer seed 242).
// CHECK: arith.cmpf ogt
// CHECK: %[[BOTH:.*]] = arith.cmpf ogt, %[[SHARE:.*]], %[[ZERO:.*]] : f32
// CHECK-NEXT: %[[SQUARE:.*]] = arith.mulf %[[DELTA:.*]], %[[DELTA]] : f32
// CHECK-NEXT: %[[CROSS:.*]] = arith.mulf %[[SQUARE]], %[[SHARE]] : f32
// CHECK-NEXT: arith.select %[[BOTH]], %[[CROSS]], %[[ZERO]] : f32
// CHECK-COUNT-4: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: %c16_i32
// CHECK: %[[HOLD4:.*]] = arith.cmpi slt, %c4_i64{{.*}}, %[[CHUNKS]] : i64
// CHECK-NEXT: scf.if %[[HOLD4]] -> (f32, f32, f32) {
// CHECK-COUNT-3: gpu.shuffle xor {{.*}}, %c4_i32
// CHECK: } else {
// CHECK: %[[HOLD2:.*]] = arith.cmpi slt, %c2_i64{{.*}}, %[[CHUNKS]] : i64
// CHECK: %[[HOLD1:.*]] = arith.cmpi slt, %c1_i64{{.*}}, %[[CHUNKS]] : i64
// CHECK-NEXT: scf.if %[[HOLD1]] -> (f32, f32, f32) {
// CHECK-COUNT-3: gpu.shuffle xor {{.*}}, %c1_i32
// CHECK: arith.andi %[[IN_RANGE]]
// CHECK: math.rsqrt
// CHECK: gpu.func @batch_norm_0_normalize(
// The bf16 matrix moves in vectors of 8.
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
func.func @batch_norm(%x: tensor<?x8xbf16>, %w: tensor<16x8xbf16>, %rm: tensor<16xbf16>, %rv: tensor<16xbf16>)
    -> (tensor<?x16xbf16>, tensor<16xbf16>, tensor<16xbf16>) {
  %y:3 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
    : (tensor<?x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> (tensor<?x16xbf16>, tensor<16xbf16>, tensor<16xbf16>)
  return %y#0, %y#1, %y#2 : tensor<?x16xbf16>, tensor<16xbf16>, tensor<16xbf16>
}

// -----

// A ragged row (N = 5) moves one element per thread, of one row (no
// column operands to reuse): blocks of 8 elements of a row by 32 rows; the
// intermediate of a chain lives in the workspace; an argument returned as
// is gets copied.
// CHECK-LABEL: llvm.func @chain(
// CHECK: fusion_rt.alloc
// CHECK: %[[TMP:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: fusion_rt.cublaslt_gemm {{.*}}, %[[TMP]], rows
// CHECK: fusion_rt.launch @fusion_kernels::@chain_1_elementwise
// CHECK: fusion_rt.copy
// CHECK: gpu.func @chain_1_elementwise(
// CHECK: arith.muli %{{.*}}, %c32_i64 : i64
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NOT: llvm.load
// CHECK: scf.if
// CHECK: llvm.store
// CHECK-NOT: llvm.store
// CHECK: gpu.return
func.func @chain(%x: tensor<?x8xf32>, %w: tensor<5x8xf32>) -> (tensor<?x5xf32>, tensor<?x8xf32>) {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<5x8xf32>) -> tensor<?x5xf32>
  %1 = fusion.leaky_relu %0, negative_slope = 0.2 : tensor<?x5xf32>
  return %1, %x : tensor<?x5xf32>, tensor<?x8xf32>
}

// -----

// Ops that compute the same share one kernel, launched twice; an op whose
// epilogue differs (another slope) gets its own.
// CHECK-LABEL: llvm.func @shared_kernels(
// CHECK: fusion_rt.launch @fusion_kernels::@shared_kernels_0_epilogue
// CHECK: fusion_rt.launch @fusion_kernels::@shared_kernels_2_epilogue
// CHECK: gpu.func @shared_kernels_0_epilogue(
// CHECK-NOT: gpu.func @shared_kernels_1_epilogue(
// CHECK: gpu.func @shared_kernels_2_epilogue(
// CHECK-NOT: gpu.func @shared_kernels_1_epilogue(
func.func @shared_kernels(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>, %v: tensor<16x8xf32>)
    -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %slope = arith.constant 0.1 : f32
    %zero = arith.constant 0.0 : f32
    %scaled = arith.mulf %acc, %slope : f32
    %positive = arith.cmpf ogt, %acc, %zero : f32
    %y = arith.select %positive, %acc, %scaled : f32
    fusion.yield %y : f32
  } : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %1 = fusion.fused_linear %x, %v epilogue {
  ^bb0(%acc: f32):
    %slope = arith.constant 0.1 : f32
    %zero = arith.constant 0.0 : f32
    %scaled = arith.mulf %acc, %slope : f32
    %positive = arith.cmpf ogt, %acc, %zero : f32
    %y = arith.select %positive, %acc, %scaled : f32
    fusion.yield %y : f32
  } : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %2 = fusion.fused_linear %x, %v epilogue {
  ^bb0(%acc: f32):
    %slope = arith.constant 0.2 : f32
    %zero = arith.constant 0.0 : f32
    %scaled = arith.mulf %acc, %slope : f32
    %positive = arith.cmpf ogt, %acc, %zero : f32
    %y = arith.select %positive, %acc, %scaled : f32
    fusion.yield %y : f32
  } : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %0, %1, %2 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
}
