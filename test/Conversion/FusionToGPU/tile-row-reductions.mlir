// Reductions of whole rows (or of groups of columns) of a generated GEMM's
// output, when only their row program reads it: the GEMM kernel reduces the
// rows of its staged tile (two threads a row here, each every other 16-byte
// chunk, then a butterfly; the wgmma kernel from its registers, each quad of
// lanes holding whole rows), or each group-wide span of them, into
// [M, ceil(N / span)] f32 partial matrices, and writes the output only if
// the program's elementwise steps read it; the row program merges the
// partials in column order and runs its other steps.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=tiled tile=32,32 warps=2,1 stages=3" --fusion-lower-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s --check-prefix=WGMMA
// fusion-select-gemm-config decides it (#fusion.tile_reductions, with the
// columns of each partial) where the output's readers are such a program.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=tiled tile=32,32 warps=2,1 stages=3" | FileCheck %s --check-prefix=DECIDE
// cuBLASLt GEMMs write their output for the row program to read.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=cublas" | FileCheck %s --check-prefix=CUBLAS
// CUBLAS-NOT: fusion.tile_reductions
// CUBLAS: gemm = <cublaslt>
// CUBLAS-NOT: fusion.tile_reductions

// logsumexp(-0.5 y) over 72 columns (3 tiles of 32, the last ragged), as
// the importer writes it: the maximum is a plain partial, the sum of
// exp(-0.5 y - s(max)) (s: 0 where the maximum is infinite) a shifted one
// (each tile's own maximum t of -0.5 y, 0 where infinite, and sum of
// exp(-0.5 y - t)); the merge rescales each tile's sum by exp(t - s(max)).
// CHECK-LABEL: llvm.func @logsumexp(
// CHECK: fusion_rt.launch @fusion_kernels::@logsumexp_0_gemm
// CHECK: fusion_rt.launch @fusion_kernels::@logsumexp_1_rows
// CHECK-NOT: fusion_rt.launch
// CHECK: gpu.func @logsumexp_0_gemm(%{{.*}}: memref<?x64xf32>, %{{.*}}: memref<72x64xf32>, %[[TOP:.*]]: memref<?x3xf32>, %[[TILEMAX:.*]]: memref<?x3xf32>, %[[TILESUM:.*]]: memref<?x3xf32>) kernel
// CHECK-NOT: vector.store {{.*}} memref<?x72xf32>
// CHECK: %[[STAGING:.*]] = memref.view {{.*}} to memref<32x40xf32, #gpu.address_space<workgroup>>
// First sweep: both maxima, each thread's 4 chunks (every other one of the
// row's 8) loaded in turn, columns past 72 counted as -inf.
// CHECK: scf.for
// CHECK: vector.load %[[STAGING]]{{.*}} vector<4xf32>
// CHECK: arith.mulf
// CHECK: arith.cmpi ult
// CHECK: arith.select
// CHECK: arith.maximumf
// CHECK-COUNT-3: vector.load %[[STAGING]]
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: arith.maximumf
// CHECK: gpu.shuffle  xor
// CHECK: %[[TILETOP:.*]] = arith.maximumf
// CHECK: %[[ABS:.*]] = math.absf %[[TILETOP]]
// CHECK: %[[INF:.*]] = arith.cmpf oeq, %[[ABS]]
// CHECK: %[[SHIFT:.*]] = arith.select %[[INF]], %{{.*}}, %[[TILETOP]]
// Second sweep: the sum of exp(-0.5 y - shift), as 2^(d log2(e)).
// CHECK: vector.load %[[STAGING]]
// CHECK: %[[D:.*]] = arith.subf %{{.*}}, %[[SHIFT]]
// CHECK: %[[SCALED:.*]] = arith.mulf %[[D]], %cst{{.*}} : f32
// CHECK: math.exp2 %[[SCALED]]
// CHECK: arith.addf
// CHECK: gpu.shuffle  xor
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[TOP]]
// CHECK: memref.store %[[SHIFT]], %[[TILEMAX]]
// CHECK: memref.store %{{.*}}, %[[TILESUM]]
// CHECK: gpu.func @logsumexp_1_rows(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %[[TOPS:.*]]: !llvm.ptr, %[[MAXES:.*]]: !llvm.ptr, %[[SUMS:.*]]: !llvm.ptr, %[[OUT:.*]]: !llvm.ptr) kernel
// CHECK: llvm.getelementptr %[[TOPS]]
// CHECK: arith.maximumf
// CHECK: llvm.getelementptr %[[SUMS]]
// CHECK: llvm.getelementptr %[[MAXES]]
// CHECK: math.absf
// CHECK: arith.select
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: scf.yield
// CHECK: math.log
// CHECK: llvm.getelementptr %[[OUT]]
// WGMMA-LABEL: llvm.func @logsumexp(
// The wgmma kernel takes the reductions from its accumulators (each quad of
// lanes holds whole rows of the tile), so it stages nothing and its blocks
// stride over the tiles.
// WGMMA: fusion_rt.launch @fusion_kernels::@logsumexp_0_gemm grid(%{{.*}}, %{{.*}}) block 384 shared {{[0-9]+}} persistent overlap_predecessor stream(
// WGMMA: gpu.func @logsumexp_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[WTOP:.*]]: memref<?x1xf32>, %[[WTILEMAX:.*]]: memref<?x1xf32>, %[[WTILESUM:.*]]: memref<?x1xf32>) kernel
// WGMMA-NOT: memref<128x136xf32
// First sweep (both maxima), over the thread's elements of its first row
// (its pairs of columns 2 (l % 4), +1 of each 8-column block), those past
// N = 72 counted as -inf; then across the quad (lanes l ^ 2, l ^ 1).
// WGMMA: "wgmma.wait_group.sync.aligned 0;"
// WGMMA: arith.mulf
// WGMMA: arith.cmpi ult
// WGMMA: arith.select
// WGMMA: arith.maximumf
// WGMMA: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}}, %c32_i32{{.*}} : f32
// WGMMA: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// WGMMA: gpu.shuffle  xor
// WGMMA: gpu.shuffle  xor
// WGMMA-NEXT: %[[WTILETOP:.*]] = arith.maximumf
// WGMMA: %[[WABS:.*]] = math.absf %[[WTILETOP]]
// WGMMA: %[[WINF:.*]] = arith.cmpf oeq, %[[WABS]]
// WGMMA: %[[WSHIFT:.*]] = arith.select %[[WINF]], %{{.*}}, %[[WTILETOP]]
// WGMMA: %[[WD:.*]] = arith.subf %{{.*}}, %[[WSHIFT]]
// WGMMA: math.exp2
// WGMMA: gpu.shuffle  xor
// WGMMA: gpu.shuffle  xor
// The quad's first lane stores the row's partials, then the same for the
// row 8 below.
// WGMMA: scf.if
// WGMMA: memref.store %{{.*}}, %[[WTOP]]
// WGMMA: memref.store %[[WSHIFT]], %[[WTILEMAX]]
// WGMMA: memref.store %{{.*}}, %[[WTILESUM]]
// WGMMA: math.exp2
// WGMMA: scf.if
// WGMMA: memref.store %{{.*}}, %[[WTOP]]
// WGMMA-NOT: nvgpu.mbarrier.arrive
// WGMMA: nvvm.barrier id
// WGMMA-NOT: nvgpu.mbarrier.arrive
// WGMMA: scf.yield
// DECIDE-LABEL: func.func @logsumexp(
// DECIDE: tile_reductions = <span = 32>
func.func @logsumexp(%x: tensor<?x64xf32>, %w: tensor<72x64xf32>) -> tensor<?x1xf32> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<72x64xf32>) -> tensor<?x72xf32>
  %max = fusion.reduce max %y : tensor<?x72xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    %half = arith.constant -5.0e-01 : f32
    %0 = arith.mulf %v, %half : f32
    fusion.yield %0 : f32
  }
  %sum = fusion.reduce sum %y rows(%max : tensor<?x1xf32>)
      : tensor<?x72xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %m: f32):
    %half = arith.constant -5.0e-01 : f32
    %0 = arith.mulf %v, %half : f32
    %inf = arith.constant 0x7F800000 : f32
    %zero = arith.constant 0.0 : f32
    %1 = math.absf %m : f32
    %2 = arith.cmpf oeq, %1, %inf : f32
    %3 = arith.select %2, %zero, %m : f32
    %4 = arith.subf %0, %3 : f32
    %5 = math.exp %4 : f32
    fusion.yield %5 : f32
  }
  %lse = fusion.elementwise %sum rows(%max : tensor<?x1xf32>) : tensor<?x1xf32> {
  ^bb0(%s: f32, %m: f32):
    %inf = arith.constant 0x7F800000 : f32
    %zero = arith.constant 0.0 : f32
    %0 = math.log %s : f32
    %1 = math.absf %m : f32
    %2 = arith.cmpf oeq, %1, %inf : f32
    %3 = arith.select %2, %zero, %m : f32
    %4 = arith.addf %0, %3 : f32
    fusion.yield %4 : f32
  }
  return %lse : tensor<?x1xf32>
}

// -----

// A mean of gelu(y) in bf16: the map (the square here) is applied to the
// staged bf16 values, the sum merged, then divided in the same program.
// CHECK-LABEL: llvm.func @mean_of_squares(
// CHECK: gpu.func @mean_of_squares_0_gemm(%{{.*}}: memref<?x64xbf16>, %{{.*}}: memref<40x64xbf16>, %{{.*}}: memref<40xbf16>, %[[PARTIAL:.*]]: memref<?x2xf32>) kernel
// CHECK: vector.load %{{.*}} : memref<32x40xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[PARTIAL]]
// CHECK: gpu.func @mean_of_squares_1_rows(
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// DECIDE-LABEL: func.func @mean_of_squares(
// DECIDE: tile_reductions = <span = 32>
func.func @mean_of_squares(%x: tensor<?x64xbf16>, %w: tensor<40x64xbf16>,
                           %b: tensor<40xbf16>) -> tensor<?x1xbf16> {
  %y = fusion.fused_linear %x, %w bias(%b) epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<40x64xbf16>, tensor<40xbf16>) -> tensor<?x40xbf16>
  %sum = fusion.reduce sum %y : tensor<?x40xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32):
    %0 = arith.mulf %v, %v : f32
    fusion.yield %0 : f32
  }
  %mean = fusion.elementwise %sum : tensor<?x1xbf16> {
  ^bb0(%s: f32):
    %n = arith.constant 40.0 : f32
    %0 = arith.divf %s, %n : f32
    fusion.yield %0 : f32
  }
  return %mean : tensor<?x1xbf16>
}

// -----

// Softmax reads the output after its reductions: the GEMM writes it and the
// partials of both reductions; the row program merges the partials and
// reads the output once, to normalize it.
// CHECK-LABEL: llvm.func @softmax(
// CHECK: gpu.func @softmax_0_gemm(%{{.*}}: memref<?x64xf32>, %{{.*}}: memref<40x64xf32>, %[[OUT:.*]]: memref<?x40xf32>, %{{.*}}: memref<?x2xf32>, %{{.*}}: memref<?x2xf32>, %{{.*}}: memref<?x2xf32>) kernel
// CHECK: vector.store %{{.*}}, %[[OUT]]
// CHECK: gpu.func @softmax_1_rows(%[[IN:.*]]: !llvm.ptr, %{{.*}}: i64, %[[MAXES:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[P:.*]]: !llvm.ptr) kernel
// CHECK: llvm.getelementptr %[[MAXES]]
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: scf.for
// CHECK: llvm.getelementptr %[[IN]]
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: arith.divf
// CHECK: llvm.getelementptr %[[P]]
// DECIDE-LABEL: func.func @softmax(
// DECIDE: tile_reductions = <span = 32>
func.func @softmax(%x: tensor<?x64xf32>, %w: tensor<40x64xf32>) -> tensor<?x40xf32> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<40x64xf32>) -> tensor<?x40xf32>
  %max = fusion.reduce max %y : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %sum = fusion.reduce sum %y rows(%max : tensor<?x1xf32>)
      : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %m: f32):
    %0 = arith.subf %v, %m : f32
    %1 = math.exp %0 : f32
    fusion.yield %1 : f32
  }
  %p = fusion.elementwise %y rows(%max, %sum : tensor<?x1xf32>, tensor<?x1xf32>)
      : tensor<?x40xf32> {
  ^bb0(%v: f32, %m: f32, %s: f32):
    %0 = arith.subf %v, %m : f32
    %1 = math.exp %0 : f32
    %2 = arith.divf %1, %s : f32
    fusion.yield %2 : f32
  }
  return %p : tensor<?x40xf32>
}

// -----

// Not reduced per tile: the output is returned too; a reduction with a
// column operand; a sum whose map reads a row value other than as
// exp(a - s) or (a - s)^2.
// CHECK-LABEL: llvm.func @returned(
// CHECK: gpu.func @returned_0_gemm(%{{.*}}: memref<?x64xf32>, %{{.*}}: memref<40x64xf32>, %{{.*}}: memref<?x40xf32>) kernel
// DECIDE-LABEL: func.func @returned(
// DECIDE-NOT: fusion.tile_reductions
func.func @returned(%x: tensor<?x64xf32>, %w: tensor<40x64xf32>) -> (tensor<?x40xf32>, tensor<?x1xf32>) {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<40x64xf32>) -> tensor<?x40xf32>
  %max = fusion.reduce max %y : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %y, %max : tensor<?x40xf32>, tensor<?x1xf32>
}

// -----

// CHECK-LABEL: llvm.func @column_operand(
// CHECK: gpu.func @column_operand_0_gemm(%{{.*}}: memref<?x64xf32>, %{{.*}}: memref<40x64xf32>, %{{.*}}: memref<?x40xf32>) kernel
// DECIDE-LABEL: func.func @column_operand(
// DECIDE-NOT: fusion.tile_reductions
func.func @column_operand(%x: tensor<?x64xf32>, %w: tensor<40x64xf32>, %c: tensor<40xf32>) -> tensor<?x1xf32> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<40x64xf32>) -> tensor<?x40xf32>
  %s = fusion.reduce sum %y columns(%c : tensor<40xf32>) : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %col: f32):
    %0 = arith.mulf %v, %col : f32
    fusion.yield %0 : f32
  }
  return %s : tensor<?x1xf32>
}

// -----

// CHECK-LABEL: llvm.func @absolute_deviation(
// CHECK: gpu.func @absolute_deviation_0_gemm(%{{.*}}: memref<?x64xf32>, %{{.*}}: memref<40x64xf32>, %{{.*}}: memref<?x40xf32>) kernel
// DECIDE-LABEL: func.func @absolute_deviation(
// DECIDE-NOT: fusion.tile_reductions
func.func @absolute_deviation(%x: tensor<?x64xf32>, %w: tensor<40x64xf32>) -> tensor<?x1xf32> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<40x64xf32>) -> tensor<?x40xf32>
  %sum = fusion.reduce sum %y : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %deviation = fusion.reduce sum %y rows(%sum : tensor<?x1xf32>) : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %s: f32):
    %0 = arith.subf %v, %s : f32
    %1 = math.absf %0 : f32
    fusion.yield %1 : f32
  }
  return %deviation : tensor<?x1xf32>
}

// -----

// An unbiased variance as the importer writes it: the sum, then the sum of
// (y - sum / 40)^2: per tile its mean u, its squares about u and its count
// c (40 - 32 = 8 columns in the second tile); the merge adds squares +
// c * (u - sum / 40)^2.
// CHECK-LABEL: llvm.func @variance(
// CHECK: gpu.func @variance_0_gemm(%{{.*}}: memref<?x64xf32>, %{{.*}}: memref<40x64xf32>, %[[SUMS:.*]]: memref<?x2xf32>, %[[MEANS:.*]]: memref<?x2xf32>, %[[SQUARES:.*]]: memref<?x2xf32>, %[[COUNTS:.*]]: memref<?x2xf32>) kernel
// CHECK: %[[VALID:.*]] = arith.minui
// CHECK: %[[COUNT:.*]] = arith.uitofp %{{.*}} : i32 to f32
// CHECK: scf.for
// CHECK: vector.load
// CHECK: gpu.shuffle  xor
// CHECK: gpu.shuffle  xor
// CHECK: %[[MEAN:.*]] = arith.divf %{{.*}}, %[[COUNT]] : f32
// CHECK: vector.load
// CHECK: %[[D:.*]] = arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK: arith.mulf %[[D]], %[[D]] : f32
// CHECK: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %[[SUMS]]
// CHECK: memref.store %[[MEAN]], %[[MEANS]]
// CHECK: memref.store %{{.*}}, %[[SQUARES]]
// CHECK: memref.store %[[COUNT]], %[[COUNTS]]
// CHECK: gpu.func @variance_1_rows(
// CHECK: scf.for
// CHECK: arith.divf
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: scf.yield
// DECIDE-LABEL: func.func @variance(
// DECIDE: tile_reductions = <span = 32>
func.func @variance(%x: tensor<?x64xf32>, %w: tensor<40x64xf32>) -> tensor<?x1xf32> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<40x64xf32>) -> tensor<?x40xf32>
  %sum = fusion.reduce sum %y : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %squares = fusion.reduce sum %y rows(%sum : tensor<?x1xf32>) : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %s: f32):
    %n = arith.constant 4.0e+01 : f32
    %0 = arith.divf %s, %n : f32
    %1 = arith.subf %v, %0 : f32
    %2 = arith.mulf %1, %1 : f32
    fusion.yield %2 : f32
  }
  %var = fusion.elementwise %squares : tensor<?x1xf32> {
  ^bb0(%v: f32):
    %n = arith.constant 3.9e+01 : f32
    %0 = arith.divf %v, %n : f32
    fusion.yield %0 : f32
  }
  return %var : tensor<?x1xf32>
}

// -----

// A group norm of 8 groups of 8 columns, as the importer writes it: groups
// narrower than the 32-column tile make spans of one group, four a tile
// row, each thread of the 64 taking both chunks of two spans. Partials
// [M, 8]: the sums, and the means, squares about them and counts (8). The
// program's rows are the groups, two lanes each (8 columns, 2 chunks):
// each merges its one span's partials (means read as a whole [M, 8]
// matrix), then normalizes its 8 columns, reading the output once.
// CHECK-LABEL: llvm.func @group_norm(
// CHECK: fusion_rt.launch @fusion_kernels::@group_norm_0_gemm
// CHECK: fusion_rt.launch @fusion_kernels::@group_norm_1_rows
// CHECK-NOT: fusion_rt.launch
// CHECK: gpu.func @group_norm_0_gemm(%{{.*}}: memref<?x64xf32>, %{{.*}}: memref<64x64xf32>, %[[OUT:.*]]: memref<?x64xf32>, %[[SUMS:.*]]: memref<?x8xf32>, %[[MEANS:.*]]: memref<?x8xf32>, %[[SQUARES:.*]]: memref<?x8xf32>, %[[COUNTS:.*]]: memref<?x8xf32>) kernel
// CHECK: vector.store %{{.*}}, %[[OUT]]
// CHECK: %[[COUNT:.*]] = arith.uitofp %{{.*}} : i32 to f32
// CHECK: scf.for %{{.*}} = %{{.*}} to %c128{{.*}} step %c64
// CHECK: %[[ROW:.*]] = arith.divui %[[UNIT:.*]], %c4{{.*}} : index
// CHECK: %[[SPAN:.*]] = arith.remui %[[UNIT]], %c4{{.*}} : index
// CHECK: %[[SPANCOLUMN:.*]] = arith.muli %[[SPAN]], %c8{{.*}} : index
// CHECK: %[[SPANSTART:.*]] = arith.addi %{{.*}}, %[[SPANCOLUMN]] : index
// CHECK: arith.cmpi ult, %[[SPANSTART]], %c64{{.*}} : index
// CHECK: %[[CHUNK:.*]] = arith.addi %[[SPANCOLUMN]], %{{.*}} : index
// CHECK: vector.load %{{.*}}[%[[ROW]], %[[CHUNK]]]
// CHECK: vector.load
// CHECK: %[[MEAN:.*]] = arith.divf %{{.*}}, %[[COUNT]] : f32
// CHECK: %[[COLUMN:.*]] = arith.addi %{{.*}}, %[[SPAN]] : index
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[SUMS]][%{{.*}}, %[[COLUMN]]]
// CHECK: memref.store %[[MEAN]], %[[MEANS]][%{{.*}}, %[[COLUMN]]]
// CHECK: memref.store %{{.*}}, %[[SQUARES]][%{{.*}}, %[[COLUMN]]]
// CHECK: memref.store %[[COUNT]], %[[COUNTS]][%{{.*}}, %[[COLUMN]]]
// CHECK: gpu.func @group_norm_1_rows(%[[IN:.*]]: !llvm.ptr, %{{.*}}: i64, %[[PSUMS:.*]]: !llvm.ptr, %[[PMEANS:.*]]: !llvm.ptr, %[[PSQUARES:.*]]: !llvm.ptr, %[[PCOUNTS:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[NORMED:.*]]: !llvm.ptr) kernel
// CHECK: %[[MROW:.*]] = arith.divui %[[PROW:[0-9]+]], %c8{{.*}} : i64
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1 step %c2
// CHECK: llvm.getelementptr %[[PSUMS]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1{{.*}} step %c2{{.*}}
// CHECK: llvm.getelementptr %[[PSQUARES]]
// CHECK: %[[MEANROW:.*]] = arith.muli %[[MROW]], %c8{{.*}} : i64
// CHECK: %[[MEANINDEX:.*]] = arith.addi %[[MEANROW]], %{{.*}} : i64
// CHECK: llvm.getelementptr %[[PMEANS]][%[[MEANINDEX]]]
// CHECK: llvm.getelementptr %[[PCOUNTS]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2{{.*}} step %c2{{.*}}
// CHECK: llvm.getelementptr %[[IN]]
// CHECK: math.rsqrt
// CHECK: llvm.getelementptr %[[NORMED]]
// WGMMA-LABEL: llvm.func @group_norm(
// Groups of 8 columns: a span per 8-column block, one pair of each lane's
// elements a span, the quad's lanes combined; the output stored from the
// registers too.
// WGMMA: gpu.func @group_norm_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[GOUT:.*]]: memref<?x64xf32>, %{{.*}}: memref<?x8xf32>, %{{.*}}: memref<?x8xf32>, %{{.*}}: memref<?x8xf32>, %{{.*}}: memref<?x8xf32>) kernel
// WGMMA-NOT: memref<128x136xf32
// WGMMA: vector.store %{{.*}}, %[[GOUT]]
// WGMMA: gpu.shuffle  xor %{{.*}}, %c2_i32
// DECIDE-LABEL: func.func @group_norm(
// DECIDE: tile_reductions = <span = 8>
func.func @group_norm(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>,
                      %gamma: tensor<64xf32>, %beta: tensor<64xf32>)
    -> tensor<?x64xf32> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %sum = fusion.reduce sum %y : tensor<?x64xf32> -> tensor<?x8xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %squares = fusion.reduce sum %y rows(%sum : tensor<?x8xf32>)
      : tensor<?x64xf32> -> tensor<?x8xf32> {
  ^bb0(%v: f32, %s: f32):
    %n = arith.constant 8.0 : f32
    %0 = arith.divf %s, %n : f32
    %1 = arith.subf %v, %0 : f32
    %2 = arith.mulf %1, %1 : f32
    fusion.yield %2 : f32
  }
  %out = fusion.elementwise %y columns(%gamma, %beta : tensor<64xf32>, tensor<64xf32>)
      rows(%sum, %squares : tensor<?x8xf32>, tensor<?x8xf32>) : tensor<?x64xf32> {
  ^bb0(%v: f32, %g: f32, %b: f32, %s: f32, %q: f32):
    %n = arith.constant 8.0 : f32
    %0 = arith.divf %s, %n : f32
    %1 = arith.subf %v, %0 : f32
    %2 = arith.divf %q, %n : f32
    %eps = arith.constant 1.0e-05 : f32
    %3 = arith.addf %2, %eps : f32
    %4 = math.rsqrt %3 : f32
    %5 = arith.mulf %1, %4 : f32
    %6 = arith.mulf %5, %g : f32
    %7 = arith.addf %6, %b : f32
    fusion.yield %7 : f32
  }
  return %out : tensor<?x64xf32>
}

// -----

// Sums of 2 groups of 64 columns: groups of whole 32-column tiles make
// spans of a tile, two a group, and the output is never written; on sm_90
// the wgmma tile is wider than a group, so spans of one group.
// CHECK-LABEL: llvm.func @group_sums(
// CHECK: gpu.func @group_sums_0_gemm(%{{.*}}: memref<?x64xf32>, %{{.*}}: memref<128x64xf32>, %{{.*}}: memref<?x4xf32>) kernel
// CHECK: gpu.func @group_sums_1_rows(
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2{{.*}} step %c2
// WGMMA-LABEL: llvm.func @group_sums(
// WGMMA: gpu.func @group_sums_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x2xf32>) kernel
// DECIDE-LABEL: func.func @group_sums(
// DECIDE: tile_reductions = <span = 32>
func.func @group_sums(%x: tensor<?x64xf32>, %w: tensor<128x64xf32>)
    -> tensor<?x2xf32> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  %sum = fusion.reduce sum %y : tensor<?x128xf32> -> tensor<?x2xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %sum : tensor<?x2xf32>
}

// -----

// Not reduced per tile: groups of 48 columns straddle the tiles (of 32, or
// of the wgmma config's width); the GEMM writes its output.
// CHECK-LABEL: llvm.func @straddling_groups(
// CHECK: gpu.func @straddling_groups_0_gemm(%{{.*}}: memref<?x64xf32>, %{{.*}}: memref<96x64xf32>, %{{.*}}: memref<?x96xf32>) kernel
// WGMMA-LABEL: llvm.func @straddling_groups(
// WGMMA: gpu.func @straddling_groups_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x96xf32>) kernel
// DECIDE-LABEL: func.func @straddling_groups(
// DECIDE-NOT: fusion.tile_reductions
func.func @straddling_groups(%x: tensor<?x64xf32>, %w: tensor<96x64xf32>)
    -> tensor<?x2xf32> {
  %y = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  %max = fusion.reduce max %y : tensor<?x96xf32> -> tensor<?x2xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return %max : tensor<?x2xf32>
}
