// Reductions of whole rows, or of groups of contiguous columns, and the ops
// that read them become row programs: one kernel (the fewest lanes that
// give each a 16-byte chunk for a short row or group, up to a warp; a block
// per long one) computing, row (group) by row, each reduction (each
// thread's columns in a fixed order, then a butterfly and the warp totals
// in warp order: the same bits on every run), the scalar functions of the
// results and the elementwise ops reading them. Row operands are loaded as
// one value per group, or as vectors for a whole matrix.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config --fusion-lower-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config --fusion-lower-to-gpu --fusion-lower-kernels-to-nvvm | FileCheck %s --check-prefix=NVVM

// Softmax over 40 columns, with its maximum returned too: one launch over
// ceil(M / 16) blocks of 16 rows (10 chunks: 16 lanes a row, each keeping
// its chunk in registers for the three steps; lanes 10-15 load chunk 9 and
// leave it out), the input and 2 pointers (the output and
// the maximum; the sum stays in registers).
// CHECK-LABEL: llvm.func @softmax(
// CHECK: fusion_rt.launch @fusion_kernels::@softmax_0_rows grid(%{{.*}}, %{{.*}}) block 256 shared 0 stream(%{{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr, i64, !llvm.ptr, !llvm.ptr) : i32
// CHECK-NOT: fusion_rt.launch
// CHECK: gpu.func @softmax_0_rows(%[[IN:.*]]: !llvm.ptr, %[[M:.*]]: i64, %[[MAXOUT:.*]]: !llvm.ptr, %[[OUT:.*]]: !llvm.ptr) kernel
// CHECK-NOT: workgroup
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %{{.*}}, %c10_i64 : i64
// CHECK: arith.select %[[VALID]], %{{.*}}, %c9_i64 : i64
// CHECK: %[[CHUNK:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-NOT: scf.for
// CHECK-COUNT-4: arith.maximumf
// CHECK: arith.select %[[VALID]], %{{.*}}, %{{.*}} : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: llvm.getelementptr %[[MAXOUT]]
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK: vector.extract %[[CHUNK]][0]
// CHECK-COUNT-4: math.exp
// CHECK: arith.select %[[VALID]]
// CHECK: gpu.shuffle  xor
// CHECK: vector.extract %[[CHUNK]][0]
// CHECK-COUNT-4: math.exp
// CHECK: %[[STORES:.*]] = arith.andi %{{.*}}, %[[VALID]] : i1
// CHECK: scf.if %[[STORES]]
// CHECK: llvm.getelementptr %[[OUT]]
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
// NVVM-LABEL: llvm.func @softmax_0_rows(
// NVVM: nvvm.shfl.sync bfly
func.func @softmax(%x: tensor<?x40xf32>) -> (tensor<?x40xf32>, tensor<?x1xf32>) {
  %max = fusion.reduce max %x : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %sum = fusion.reduce sum %x rows(%max : tensor<?x1xf32>)
      : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %m: f32):
    %0 = arith.subf %v, %m : f32
    %1 = math.exp %0 : f32
    fusion.yield %1 : f32
  }
  %y = fusion.elementwise %x rows(%max, %sum : tensor<?x1xf32>, tensor<?x1xf32>)
      : tensor<?x40xf32> {
  ^bb0(%v: f32, %m: f32, %s: f32):
    %0 = arith.subf %v, %m : f32
    %1 = math.exp %0 : f32
    %2 = arith.divf %1, %s : f32
    fusion.yield %2 : f32
  }
  return %y, %max : tensor<?x40xf32>, tensor<?x1xf32>
}

// -----

// A mean of rows of 8192 bf16 columns: a block of 256 threads per row,
// 16-byte loads, eight warp totals through shared memory after a barrier;
// the division by 8192 a scalar step of the same program.
// CHECK-LABEL: llvm.func @long_rows(
// CHECK: gpu.func @long_rows_0_rows(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr) workgroup(%[[PARTIALS:.*]] : memref<8xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
// CHECK-COUNT-8: arith.addf
// CHECK: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %[[PARTIALS]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[PARTIALS]]
// CHECK: gpu.barrier
// CHECK: arith.divf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// NVVM-LABEL: llvm.func @long_rows_0_rows(
// NVVM: nvvm.barrier
func.func @long_rows(%x: tensor<?x8192xbf16>) -> tensor<?x1xbf16> {
  %sum = fusion.reduce sum %x : tensor<?x8192xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %mean = fusion.elementwise %sum : tensor<?x1xbf16> {
  ^bb0(%v: f32):
    %n = arith.constant 8192.0 : f32
    %0 = arith.divf %v, %n : f32
    fusion.yield %0 : f32
  }
  return %mean : tensor<?x1xbf16>
}

// -----

// A program over 4 groups of 8 columns: the program's rows are the groups,
// row m's group g at row 4m + g, as an [M, 32] matrix is an [M * 4, 8] one;
// two lanes a group, one chunk each, then one shuffle.
// Its row values are [M, 4]; a scalar step reads a [4] column vector at g
// and an [M, 2] matrix at (m, g / 2); the elementwise step reads the [32]
// columns from 8g and a residual matrix as the input. Two steps read the
// input: each lane loads its chunk once and keeps it in registers.
// CHECK-LABEL: llvm.func @groups(
// CHECK: fusion_rt.launch @fusion_kernels::@groups_0_rows
// CHECK-NOT: fusion_rt.launch
// CHECK: gpu.func @groups_0_rows(%[[IN:.*]]: !llvm.ptr, %{{.*}}: i64, %[[GC:.*]]: !llvm.ptr, %[[H:.*]]: !llvm.ptr, %[[SCALED:.*]]: !llvm.ptr, %[[C:.*]]: !llvm.ptr, %[[R:.*]]: !llvm.ptr, %[[OUT:.*]]: !llvm.ptr) kernel
// CHECK: arith.remui
// CHECK: %[[MROW:.*]] = arith.divui %[[PROW:[0-9]+]], %{{.*}} : i64
// CHECK: %[[GROUP:.*]] = arith.remui %[[PROW]], %{{.*}} : i64
// CHECK: %[[CHUNK:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-NOT: scf.for
// CHECK: vector.extract %[[CHUNK]][0]
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.getelementptr %[[GC]][%[[GROUP]]]
// CHECK: %[[HALF:.*]] = arith.divui %[[GROUP]], %{{.*}} : i64
// CHECK: %[[HROW:.*]] = arith.muli %[[MROW]], %{{.*}} : i64
// CHECK: %[[HI:.*]] = arith.addi %[[HROW]], %[[HALF]] : i64
// CHECK: llvm.getelementptr %[[H]][%[[HI]]]
// CHECK: llvm.getelementptr %[[SCALED]][%[[PROW]]]
// CHECK-NOT: llvm.getelementptr %[[IN]]
// CHECK: vector.extract %[[CHUNK]][0]
// CHECK-NOT: llvm.getelementptr %[[IN]]
// CHECK: %[[ROWSTART:.*]] = arith.muli %[[PROW]], %{{.*}} : i64
// CHECK: %[[FIRST:.*]] = arith.addi %[[ROWSTART]], %{{.*}} : i64
// CHECK: %[[GCOL:.*]] = arith.muli %[[GROUP]], %{{.*}} : i64
// CHECK: %[[COL:.*]] = arith.addi %[[GCOL]], %{{.*}} : i64
// CHECK: llvm.getelementptr %[[C]][%[[COL]]]
// CHECK: %[[RROW:.*]] = arith.muli %[[MROW]], %{{.*}} : i64
// CHECK: %[[RI:.*]] = arith.addi %[[RROW]], %[[COL]] : i64
// CHECK: llvm.getelementptr %[[R]][%[[RI]]]
// CHECK: llvm.getelementptr %[[OUT]][%[[FIRST]]]
func.func @groups(%x: tensor<?x32xf32>, %r: tensor<?x32xf32>,
                  %c: tensor<32xf32>, %gc: tensor<4xf32>, %h: tensor<?x2xf32>)
    -> (tensor<?x32xf32>, tensor<?x4xf32>) {
  %sums = fusion.reduce sum %x : tensor<?x32xf32> -> tensor<?x4xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %scaled = fusion.elementwise %sums columns(%gc : tensor<4xf32>)
      rows(%h : tensor<?x2xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %col: f32, %hv: f32):
    %0 = arith.mulf %v, %col : f32
    %1 = arith.addf %0, %hv : f32
    fusion.yield %1 : f32
  }
  %y = fusion.elementwise %x columns(%c : tensor<32xf32>)
      rows(%r, %scaled : tensor<?x32xf32>, tensor<?x4xf32>) : tensor<?x32xf32> {
  ^bb0(%v: f32, %col: f32, %res: f32, %s: f32):
    %0 = arith.subf %v, %s : f32
    %1 = arith.addf %0, %res : f32
    %2 = arith.mulf %1, %col : f32
    fusion.yield %2 : f32
  }
  return %y, %scaled : tensor<?x32xf32>, tensor<?x4xf32>
}

// -----

// Groups of 6 columns (no multiple of 4): the program loads scalars, of the
// input and of the residual matrix alike.
// CHECK-LABEL: llvm.func @groups_of_six(
// CHECK: gpu.func @groups_of_six_0_rows(
// CHECK-NOT: vector<4xf32>
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NOT: vector<4xf32>
// CHECK: gpu.return
func.func @groups_of_six(%x: tensor<?x24xf32>, %r: tensor<?x24xf32>)
    -> tensor<?x24xf32> {
  %sums = fusion.reduce sum %x : tensor<?x24xf32> -> tensor<?x4xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %y = fusion.elementwise %x rows(%r, %sums : tensor<?x24xf32>, tensor<?x4xf32>)
      : tensor<?x24xf32> {
  ^bb0(%v: f32, %res: f32, %s: f32):
    %0 = arith.subf %v, %s : f32
    %1 = arith.addf %0, %res : f32
    fusion.yield %1 : f32
  }
  return %y : tensor<?x24xf32>
}

// -----

// A layer norm of 2048 bf16 columns: 256 chunks, a warp a row, 8 chunks (64
// elements) a lane, each loaded once and kept in registers for the three
// steps that read the row (no loop over the row, one load of each chunk).
// CHECK-LABEL: llvm.func @wide_layer_norm(
// CHECK: gpu.func @wide_layer_norm_0_rows(%[[IN:.*]]: !llvm.ptr, %{{.*}}: i64, %[[OUT:.*]]: !llvm.ptr) kernel
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
// CHECK-NOT: scf.for
// CHECK-NOT: llvm.load %{{.*}} : !llvm.ptr -> vector<8xbf16>
// CHECK: math.rsqrt
// CHECK: llvm.getelementptr %[[OUT]]
// CHECK: gpu.return
func.func @wide_layer_norm(%x: tensor<?x2048xbf16>) -> tensor<?x2048xbf16> {
  %sum = fusion.reduce sum %x : tensor<?x2048xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %squares = fusion.reduce sum %x rows(%sum : tensor<?x1xbf16>)
      : tensor<?x2048xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32, %s: f32):
    %n = arith.constant 2048.0 : f32
    %0 = arith.divf %s, %n : f32
    %1 = arith.subf %v, %0 : f32
    %2 = arith.mulf %1, %1 : f32
    fusion.yield %2 : f32
  }
  %y = fusion.elementwise %x rows(%sum, %squares : tensor<?x1xbf16>, tensor<?x1xbf16>)
      : tensor<?x2048xbf16> {
  ^bb0(%v: f32, %s: f32, %q: f32):
    %n = arith.constant 2048.0 : f32
    %eps = arith.constant 1.0e-05 : f32
    %0 = arith.divf %s, %n : f32
    %1 = arith.subf %v, %0 : f32
    %2 = arith.divf %q, %n : f32
    %3 = arith.addf %2, %eps : f32
    %4 = math.rsqrt %3 : f32
    %5 = arith.mulf %1, %4 : f32
    fusion.yield %5 : f32
  }
  return %y : tensor<?x2048xbf16>
}

// -----

// 4096 bf16 columns: 512 chunks, a block a row (a warp's 16 chunks, 128
// elements, a lane would be more than a thread keeps), 2 chunks a thread,
// loaded once and kept for both steps; the block reduces through shared
// memory.
// CHECK-LABEL: llvm.func @wider_layer_norm(
// CHECK: fusion_rt.launch @fusion_kernels::@wider_layer_norm_0_rows grid(%{{.*}}, %{{.*}}) block 256
// CHECK: gpu.func @wider_layer_norm_0_rows(
// CHECK-COUNT-2: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
// CHECK-NOT: scf.for
// CHECK-NOT: llvm.load %{{.*}} : !llvm.ptr -> vector<8xbf16>
// CHECK: gpu.barrier
// CHECK: gpu.return
func.func @wider_layer_norm(%x: tensor<?x4096xbf16>) -> tensor<?x1xbf16> {
  %sum = fusion.reduce sum %x : tensor<?x4096xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %squares = fusion.reduce sum %x rows(%sum : tensor<?x1xbf16>)
      : tensor<?x4096xbf16> -> tensor<?x1xbf16> {
  ^bb0(%v: f32, %s: f32):
    %n = arith.constant 4096.0 : f32
    %0 = arith.divf %s, %n : f32
    %1 = arith.subf %v, %0 : f32
    %2 = arith.mulf %1, %1 : f32
    fusion.yield %2 : f32
  }
  return %squares : tensor<?x1xbf16>
}

// -----

// Rows of 3000 f32 columns: 750 chunks, a warp a row, 24 chunks a lane, more
// than a thread keeps: each step loops over the row and loads it again.
// CHECK-LABEL: llvm.func @uncached_rows(
// CHECK: gpu.func @uncached_rows_0_rows(
// CHECK: scf.for
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: scf.for
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
func.func @uncached_rows(%x: tensor<?x3000xf32>) -> tensor<?x3000xf32> {
  %sum = fusion.reduce sum %x : tensor<?x3000xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %y = fusion.elementwise %x rows(%sum : tensor<?x1xf32>) : tensor<?x3000xf32> {
  ^bb0(%v: f32, %s: f32):
    %n = arith.constant 3000.0 : f32
    %0 = arith.divf %s, %n : f32
    %1 = arith.subf %v, %0 : f32
    fusion.yield %1 : f32
  }
  return %y : tensor<?x3000xf32>
}

// -----

// A min reduction: the same row program as max, from +inf, each chunk's
// elements and the butterfly combined with arith.minimumf.
// CHECK-LABEL: llvm.func @row_min(
// CHECK: fusion_rt.launch @fusion_kernels::@row_min_0_rows
// CHECK: gpu.func @row_min_0_rows(
// CHECK: arith.constant 0x7F800000 : f32
// CHECK-COUNT-4: arith.minimumf
// CHECK: gpu.shuffle  xor
// CHECK-NEXT: arith.minimumf
// CHECK-NOT: arith.maximumf
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
func.func @row_min(%x: tensor<?x40xf32>) -> tensor<?x1xf32> {
  %0 = fusion.reduce min %x : tensor<?x40xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    fusion.yield %n : f32
  }
  return %0 : tensor<?x1xf32>
}
