// A division by a constant in an epilogue leaves no div.rn.f32 (ptxas's
// expansion with a slow-path branch an element): a multiply and two
// fma.rn.f32 (fusion-expand-division-by-constant), in the tiled kernel's
// epilogue (sm_80's default), cuBLAS's epilogue kernel and the wgmma
// kernel's; a division by the op's input stays correctly rounded.
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %s --emit=ptx -o - | FileCheck %s
// RUN: fusion-compile %s --emit=ptx --strategy=cublas -o - | FileCheck %s
// RUN: fusion-compile %s --emit=ptx --strategy=wgmma --target=sm_90 --precision=bf16 -o - | FileCheck %s

// CHECK-LABEL: .entry by_constant_0_
// CHECK-NOT: {{(rcp|div)\.(rn|approx|full)\.f32}}
// CHECK: fma.rn.f32
// CHECK-NOT: {{(rcp|div)\.(rn|approx|full)\.f32}}
// CHECK-LABEL: .entry by_input_0_
// CHECK: div.rn.f32

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
