// Reductions of whole rows of a generated GEMM's output, when only their
// row program reads it: the GEMM kernel reduces the rows of its staged tile
// (two threads a row here, each every other 16-byte chunk, then a
// butterfly) into [M, ceil(N / blockN)] f32 partial matrices, and writes
// the output only if the program's elementwise steps read it; the row
// program merges the partials in tile order and runs its other steps.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=tiled tile=32,32 warps=2,1 stages=3" --fusion-lower-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=wgmma target=sm_90" --fusion-lower-to-gpu | FileCheck %s --check-prefix=WGMMA

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
// WGMMA: gpu.func @logsumexp_0_gemm(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: memref<?x1xf32>, %{{.*}}: memref<?x1xf32>, %{{.*}}: memref<?x1xf32>) kernel
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
