// A division by a constant in an epilogue leaves no div.rn.f32 (ptxas's
// expansion with a slow-path branch an element): a multiply and two
// fma.rn.f32 (fusion-expand-divisions), in the tiled kernel's
// epilogue (sm_80's default), cuBLAS's epilogue kernel and the wgmma
// kernel's; a division by the op's input stays correctly rounded. A
// softmax's row program divides each element by the row's sum from one
// correctly rounded reciprocal (rcp.rn.f32) a row, and so does an
// epilogue dividing by a row statistic ([M, 1]), which the GEMM kernels
// load once a row of the thread's tile; the swapped small-batch wgmma
// kernels, whose threads hold a row's element or two, keep div.rn.f32.
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %s --emit=ptx -o - | FileCheck %s
// RUN: fusion-compile %s --emit=ptx --strategy=cublas -o - | FileCheck %s
// RUN: fusion-compile %s --emit=ptx --strategy=wgmma --target=sm_90 --precision=bf16 -o - | FileCheck %s
// RUN: fusion-compile %s --emit=ptx --strategy=cublas -o - | FileCheck %s --check-prefix=ROWS
// RUN: fusion-compile %s --emit=ptx --strategy=wgmma --target=sm_90 --precision=tf32 -o - | FileCheck %s --check-prefix=WGMMA

// CHECK-LABEL: .entry by_constant_0_
// CHECK-NOT: {{(rcp|div)\.(rn|approx|full)\.f32}}
// CHECK: fma.rn.f32
// CHECK-NOT: {{(rcp|div)\.(rn|approx|full)\.f32}}
// CHECK-LABEL: .entry by_input_0_
// CHECK: div.rn.f32
// CHECK-LABEL: .entry by_row_statistic_0_
// CHECK-NOT: div.rn.f32
// CHECK: rcp.rn.f32
// CHECK-NOT: div.rn.f32
// CHECK: ret;
// WGMMA-LABEL: .entry by_row_statistic_0_gemm_rows_le_16(
// WGMMA: div.rn.f32
// WGMMA-LABEL: .entry by_row_statistic_0_gemm(
// WGMMA-NOT: div.rn.f32
// WGMMA: rcp.rn.f32
// WGMMA-NOT: div.rn.f32
// WGMMA: fma.rn.f32
// WGMMA-NOT: div.rn.f32
// WGMMA: ret;
// ROWS-LABEL: .entry softmax_1_rows(
// ROWS-NOT: div.rn.f32
// ROWS: rcp.rn.f32
// ROWS-NOT: {{(rcp|div)\.(rn|approx|full)\.f32}}
// ROWS: fma.rn.f32
// ROWS-NOT: {{(rcp|div)\.(rn|approx|full)\.f32}}
// ROWS: ret;

func.func @by_constant(%x: tensor<?x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %y = fusion.linear %x, %w, %b : tensor<?x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<?x16xf32>
  %0 = fusion.elementwise %y : tensor<?x16xf32> {
  ^bb0(%v: f32):
    %c = arith.constant -0.7 : f32
    %q = arith.divf %v, %c : f32
    fusion.yield %q : f32
  }
  return %0 : tensor<?x16xf32>
}

func.func @by_input(%x: tensor<?x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %y = fusion.linear %x, %w, %b : tensor<?x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<?x16xf32>
  %0 = fusion.elementwise %y : tensor<?x16xf32> {
  ^bb0(%v: f32):
    %c = arith.constant -0.7 : f32
    %q = arith.divf %c, %v : f32
    fusion.yield %q : f32
  }
  return %0 : tensor<?x16xf32>
}

func.func @by_row_statistic(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>, %b: tensor<256xf32>, %s: tensor<?x1xf32>) -> tensor<?x256xf32> {
  %y = fusion.linear %x, %w, %b : tensor<?x64xf32>, tensor<256x64xf32>, tensor<256xf32> -> tensor<?x256xf32>
  %0 = fusion.elementwise %y rows(%s : tensor<?x1xf32>) : tensor<?x256xf32> {
  ^bb0(%v: f32, %r: f32):
    %q = arith.divf %v, %r : f32
    fusion.yield %q : f32
  }
  return %0 : tensor<?x256xf32>
}

func.func @softmax(%x: tensor<?x16xf32>, %w: tensor<64x16xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %y = fusion.linear %x, %w, %b : tensor<?x16xf32>, tensor<64x16xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %m = fusion.reduce max %y : tensor<?x64xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %s = fusion.reduce sum %y rows(%m : tensor<?x1xf32>) : tensor<?x64xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %a: f32):
    %0 = arith.subf %v, %a : f32
    %1 = math.exp %0 : f32
    fusion.yield %1 : f32
  }
  %o = fusion.elementwise %y rows(%m, %s : tensor<?x1xf32>, tensor<?x1xf32>) : tensor<?x64xf32> {
  ^bb0(%v: f32, %a: f32, %t: f32):
    %0 = arith.subf %v, %a : f32
    %1 = math.exp %0 : f32
    %2 = arith.divf %1, %t : f32
    fusion.yield %2 : f32
  }
  return %o : tensor<?x64xf32>
}
