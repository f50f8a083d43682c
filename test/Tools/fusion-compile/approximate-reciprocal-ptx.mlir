// An approximate reciprocal (arith.divf of 1.0 with fastmath<afn>) is one
// rcp.approx.f32 an element on the GPU (full range, 1 ulp); sigmoid's,
// 1 / (1 + exp(x)), whose divisor is never subnormal, rcp.approx.ftz.f32
// scaled by 1/4 past 2^126 (0f7E800000; fusion-expand-one-plus-exp); the
// correctly rounded one stays rcp.rn.f32, which ptxas expands with a
// slow-path branch.
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %s --emit=ptx -o - | FileCheck %s
// RUN: fusion-compile %s --emit=ptx --strategy=wgmma --target=sm_90 --precision=tf32 -o - | FileCheck %s

// CHECK-LABEL: .entry approximate_0_
// CHECK-NOT: {{(rcp|div)\.rn\.f32}}
// CHECK: rcp.approx.f32
// CHECK-NOT: {{(rcp|div)\.rn\.f32}}
// CHECK-LABEL: .entry sigmoid_0_
// CHECK-NOT: {{(rcp|div)\.rn\.f32|rcp\.approx\.f32}}
// CHECK: setp.gt.f32 [[LARGE:%p[0-9]+]], [[D:%r[0-9]+]], 0f7E800000;
// CHECK-NEXT: selp.f32 [[S:%r[0-9]+]], 0f3E800000, 0f3F800000, [[LARGE]];
// CHECK-NEXT: mul.rn.f32 [[DS:%r[0-9]+]], [[D]], [[S]];
// CHECK-NEXT: rcp.approx.ftz.f32 [[R:%r[0-9]+]], [[DS]];
// CHECK-NEXT: mul.rn.f32 {{%r[0-9]+}}, [[R]], [[S]];
// CHECK-NOT: {{(rcp|div)\.rn\.f32|rcp\.approx\.f32}}
// CHECK-LABEL: .entry exact_0_
// CHECK-NOT: {{(rcp|div)\.(approx|full)}}
// CHECK: rcp.rn.f32
// CHECK-NOT: {{(rcp|div)\.(approx|full)}}

func.func @approximate(%x: tensor<?x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %y = fusion.linear %x, %w, %b : tensor<?x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<?x16xf32>
  %0 = fusion.elementwise %y : tensor<?x16xf32> {
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    %e = math.exp %v : f32
    %d = arith.addf %e, %v : f32
    %s = arith.divf %one, %d fastmath<afn> : f32
    fusion.yield %s : f32
  }
  return %0 : tensor<?x16xf32>
}

func.func @sigmoid(%x: tensor<?x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %y = fusion.linear %x, %w, %b : tensor<?x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<?x16xf32>
  %0 = fusion.elementwise %y : tensor<?x16xf32> {
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    %e = math.exp %v : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %one, %d fastmath<afn> : f32
    fusion.yield %s : f32
  }
  return %0 : tensor<?x16xf32>
}

func.func @exact(%x: tensor<?x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %y = fusion.linear %x, %w, %b : tensor<?x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<?x16xf32>
  %0 = fusion.elementwise %y : tensor<?x16xf32> {
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    %e = math.exp %v : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %one, %d : f32
    fusion.yield %s : f32
  }
  return %0 : tensor<?x16xf32>
}
