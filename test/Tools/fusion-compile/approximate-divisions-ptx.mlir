// The divisions of kernels whose results are bf16 (approximate,
// fusion-approximate-16-bit-math and fusion-expand-divisions): a quotient
// by a value of each element is div.full.f32 (2 ulps over the whole range,
// no slow-path branch), a reciprocal rcp.approx.f32, a division by a
// constant one product with its reciprocal (-1/0.7 = 0fBFB6DB6E); divisions
// by a row statistic stay correctly rounded, from one reciprocal a row
// (of 1024 rows: the wgmma kernels for small batches, whose threads hold
// a row's element or two, take div.full.f32). In the tiled kernel's
// epilogue, cuBLAS's epilogue kernel and the wgmma kernel's. `--math16=exact` keeps them all correctly rounded.
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %s --emit=ptx --strategy=tiled -o - | FileCheck %s
// RUN: fusion-compile %s --emit=ptx --strategy=cublas -o - | FileCheck %s
// RUN: fusion-compile %s --emit=ptx --strategy=wgmma --target=sm_90 -o - | FileCheck %s
// RUN: fusion-compile %s --emit=ptx --strategy=wgmma --target=sm_90 --math16=exact -o - | FileCheck %s --check-prefix=EXACT

// CHECK-LABEL: .entry by_element_0_
// CHECK-NOT: {{(rcp|div)\.(rn|approx)\.f32}}
// CHECK: div.full.f32
// CHECK-NOT: {{(rcp|div)\.(rn|approx)\.f32}}
// CHECK-LABEL: .entry reciprocal_0_
// CHECK-NOT: {{div\.[a-z]+\.f32|rcp\.rn}}
// CHECK: rcp.approx{{(\.ftz)?}}.f32
// CHECK-NOT: {{div\.[a-z]+\.f32|rcp\.rn}}
// CHECK-LABEL: .entry by_constant_0_
// CHECK-NOT: {{div\.[a-z]+\.f32|rcp\.[a-z]+\.f32|fma\.rn\.f32}}
// CHECK: mul.rn.f32 {{.*}}0fBFB6DB6E
// CHECK-NOT: {{div\.[a-z]+\.f32|rcp\.[a-z]+\.f32|fma\.rn\.f32}}
// CHECK-LABEL: .entry by_row_statistic_0_
// CHECK-NOT: {{div\.[a-z]+\.f32}}
// CHECK: rcp.rn.f32
// CHECK-NOT: {{div\.[a-z]+\.f32}}
// CHECK: ret;

// EXACT-LABEL: .entry by_element_0_
// EXACT: div.rn.f32
// EXACT-LABEL: .entry reciprocal_0_
// EXACT: rcp.rn.f32
// EXACT-LABEL: .entry by_constant_0_
// EXACT: fma.rn.f32

func.func @by_element(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>, %b: tensor<256xbf16>) -> tensor<?x256xbf16> {
  %y = fusion.linear %x, %w, %b : tensor<?x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16> -> tensor<?x256xbf16>
  %0 = fusion.elementwise %y : tensor<?x256xbf16> {
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    %a = math.absf %v : f32
    %d = arith.addf %a, %one : f32
    %q = arith.divf %v, %d : f32
    fusion.yield %q : f32
  }
  return %0 : tensor<?x256xbf16>
}

func.func @reciprocal(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>, %b: tensor<256xbf16>) -> tensor<?x256xbf16> {
  %y = fusion.linear %x, %w, %b : tensor<?x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16> -> tensor<?x256xbf16>
  %0 = fusion.elementwise %y : tensor<?x256xbf16> {
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    %q = arith.divf %one, %v : f32
    fusion.yield %q : f32
  }
  return %0 : tensor<?x256xbf16>
}

func.func @by_constant(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>, %b: tensor<256xbf16>) -> tensor<?x256xbf16> {
  %y = fusion.linear %x, %w, %b : tensor<?x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16> -> tensor<?x256xbf16>
  %0 = fusion.elementwise %y : tensor<?x256xbf16> {
  ^bb0(%v: f32):
    %c = arith.constant -0.7 : f32
    %q = arith.divf %v, %c : f32
    fusion.yield %q : f32
  }
  return %0 : tensor<?x256xbf16>
}

func.func @by_row_statistic(%x: tensor<1024x64xbf16>, %w: tensor<256x64xbf16>, %b: tensor<256xbf16>, %s: tensor<1024x1xbf16>) -> tensor<1024x256xbf16> {
  %y = fusion.linear %x, %w, %b : tensor<1024x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16> -> tensor<1024x256xbf16>
  %0 = fusion.elementwise %y rows(%s : tensor<1024x1xbf16>) : tensor<1024x256xbf16> {
  ^bb0(%v: f32, %r: f32):
    %q = arith.divf %v, %r : f32
    fusion.yield %q : f32
  }
  return %0 : tensor<1024x256xbf16>
}
