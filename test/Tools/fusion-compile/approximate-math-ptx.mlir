// The math of the generated kernels by result type: an f32 result keeps
// f32-accurate functions, a bf16 result's erf and exp are approximate
// (fusion-approximate-16-bit-math).
// - gelu's 1 + erf (fusion-expand-one-plus-erf), q in |x| (its
//   coefficients times powers of 1/sqrt 2): with f32 results of degree 9
//   (leading coefficient -7.75e-7 / 32 = -2.42e-8 = 0fB2D00F88), with bf16
//   results of degree 6 (-2.03e-5 / 2^3.5 = -1.80e-6 = 0fB5F109FB).
//   Neither clamps |s| (4.5 = 0f40900000) nor calls libdevice's erff, whose
//   two branches meet at |s| = 1.00296 (0f3F8060FE).
// - silu's exp: with f32 results libdevice's __nv_expf (its range
//   reduction rounds x log2(e) with cvt.sat and fma.rm), with bf16 results
//   __nv_fast_expf's one multiply by log2(e) (0f3FB8AA3B, here -log2(e)
//   with the negation folded) and an ex2 that flushes subnormal results,
//   which 1 + exp absorbs; sigmoid's reciprocal of 1 + exp, never
//   subnormal, rcp.approx.ftz (fusion-expand-one-plus-exp).
// - sin: with f32 results fusion-expand-trigonometry's reduction by
//   multiples of pi/2 (its first part 0fBFC90FDA) up to 105615
//   (0f47CE4780) inline, libdevice's __nv_sinf past it in __fusion_sinf,
//   a function of its own; with bf16 results sin.approx.f32.
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma --precision=tf32 -o - | FileCheck %s --implicit-check-not=0f3F8060FE --implicit-check-not=0f40900000
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=cublas --precision=tf32 -o - | FileCheck %s --implicit-check-not=0f3F8060FE --implicit-check-not=0f40900000
// `--math16=exact` gives bf16 results the f32 results' functions.
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma --precision=tf32 --math16=exact -o - | FileCheck %s --check-prefix=EXACT --implicit-check-not=0fB5F109FB
// RUN: not fusion-compile %s --emit=ptx --target=sm_90 --math16=fast -o - 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: fusion-compile: invalid --math16='fast' (expected approximate or exact)

// EXACT-LABEL: .entry gelu_bf16_
// EXACT-NOT: .entry
// EXACT: 0fB2D00F88
// EXACT-LABEL: .entry silu_bf16_
// EXACT-NOT: .entry
// EXACT: cvt.sat.f32.f32
// EXACT: fma.rm.f32

// CHECK: .func {{.*}}__fusion_sinf(
// CHECK-LABEL: .entry gelu_f32_
// CHECK-NOT: .entry
// CHECK: 0fB2D00F88
// CHECK-NOT: 0fB5F109FB
// CHECK: ex2.approx.ftz.f32
// CHECK-LABEL: .entry gelu_bf16_
// CHECK-NOT: .entry
// CHECK-NOT: 0fB2D00F88
// CHECK: 0fB5F109FB
// CHECK: ex2.approx.ftz.f32
// CHECK-LABEL: .entry silu_f32_
// CHECK-NOT: .entry
// CHECK: cvt.sat.f32.f32
// CHECK: fma.rm.f32
// CHECK: ex2.approx.ftz.f32
// CHECK: rcp.approx.ftz.f32
// CHECK-LABEL: .entry silu_bf16_
// CHECK-NOT: cvt.sat.f32.f32
// CHECK-NOT: fma.rm.f32
// CHECK: mul.rn.f32 {{.*}}, 0f{{3|B}}FB8AA3B;
// CHECK-NEXT: ex2.approx.ftz.f32
// CHECK-NOT: cvt.sat.f32.f32
// CHECK-NOT: fma.rm.f32
// CHECK: rcp.approx.ftz.f32
// CHECK-LABEL: .entry sin_f32_
// CHECK-NOT: sin.approx
// CHECK-DAG: 0f47CE4780
// CHECK-DAG: fma.rn.f32 {{.*}}, 0fBFC90FDA,
// CHECK-DAG: call.uni (retval0), __fusion_sinf,
// CHECK-LABEL: .entry sin_bf16_
// CHECK-NOT: 0f47CE4780
// CHECK: sin.approx.f32
// CHECK-NOT: 0f47CE4780
// EXACT-LABEL: .entry sin_bf16_
// EXACT-NOT: sin.approx
// EXACT: 0f47CE4780
func.func @gelu_f32(%x: tensor<?x256xf32>, %w: tensor<256x256xf32>) -> tensor<?x256xf32> {
  %0 = fusion.linear %x, %w : tensor<?x256xf32>, tensor<256x256xf32> -> tensor<?x256xf32>
  %1 = fusion.elementwise %0 : tensor<?x256xf32> {
  ^bb0(%v: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.70710678118654752440 : f32
    %s = arith.mulf %v, %rsqrt2 : f32
    %e = math.erf %s : f32
    %p = arith.addf %e, %one : f32
    %h = arith.mulf %v, %half : f32
    %g = arith.mulf %h, %p : f32
    fusion.yield %g : f32
  }
  return %1 : tensor<?x256xf32>
}

func.func @gelu_bf16(%x: tensor<?x256xbf16>, %w: tensor<256x256xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x256xbf16>, tensor<256x256xbf16> -> tensor<?x256xbf16>
  %1 = fusion.elementwise %0 : tensor<?x256xbf16> {
  ^bb0(%v: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.70710678118654752440 : f32
    %s = arith.mulf %v, %rsqrt2 : f32
    %e = math.erf %s : f32
    %p = arith.addf %e, %one : f32
    %h = arith.mulf %v, %half : f32
    %g = arith.mulf %h, %p : f32
    fusion.yield %g : f32
  }
  return %1 : tensor<?x256xbf16>
}

func.func @silu_f32(%x: tensor<?x256xf32>, %w: tensor<256x256xf32>) -> tensor<?x256xf32> {
  %0 = fusion.linear %x, %w : tensor<?x256xf32>, tensor<256x256xf32> -> tensor<?x256xf32>
  %1 = fusion.elementwise %0 : tensor<?x256xf32> {
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %v : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %one, %d fastmath<afn> : f32
    %o = arith.mulf %v, %s : f32
    fusion.yield %o : f32
  }
  return %1 : tensor<?x256xf32>
}

func.func @silu_bf16(%x: tensor<?x256xbf16>, %w: tensor<256x256xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x256xbf16>, tensor<256x256xbf16> -> tensor<?x256xbf16>
  %1 = fusion.elementwise %0 : tensor<?x256xbf16> {
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %v : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %one, %d fastmath<afn> : f32
    %o = arith.mulf %v, %s : f32
    fusion.yield %o : f32
  }
  return %1 : tensor<?x256xbf16>
}

func.func @sin_f32(%x: tensor<?x256xf32>, %w: tensor<256x256xf32>) -> tensor<?x256xf32> {
  %0 = fusion.linear %x, %w : tensor<?x256xf32>, tensor<256x256xf32> -> tensor<?x256xf32>
  %1 = fusion.elementwise %0 : tensor<?x256xf32> {
  ^bb0(%v: f32):
    %s = math.sin %v : f32
    fusion.yield %s : f32
  }
  return %1 : tensor<?x256xf32>
}

func.func @sin_bf16(%x: tensor<?x256xbf16>, %w: tensor<256x256xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x256xbf16>, tensor<256x256xbf16> -> tensor<?x256xbf16>
  %1 = fusion.elementwise %0 : tensor<?x256xbf16> {
  ^bb0(%v: f32):
    %s = math.sin %v : f32
    fusion.yield %s : f32
  }
  return %1 : tensor<?x256xbf16>
}
