// Every op of the fused_linear epilogue allow-list lowers on the GPU, in the
// tiled kernel's epilogue and in cuBLAS's epilogue kernel: the comparisons
// that keep or drop NaNs (maximumf/minimumf against maxnumf/minnumf), the
// sign ops, ceil, the exponentials, rsqrt, the correctly rounded division
// and the approximate quotient, trunc, roundeven and copysign each leave
// their instruction (erf, log, tanh, powf, fmod and the trigonometric and
// hyperbolic functions are libdevice's: fmod's fast path divides
// approximately; floor of a ceil folds away).
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %S/../../Dialect/Fusion/epilogue-ops.mlir --emit=ptx -o - | FileCheck %s
// RUN: fusion-compile %S/../../Dialect/Fusion/epilogue-ops.mlir --emit=ptx --strategy=tiled -o - | FileCheck %s
// RUN: fusion-compile %S/../../Dialect/Fusion/epilogue-ops.mlir --emit=ptx --strategy=cublas -o - | FileCheck %s
// CHECK: .visible .entry
// CHECK-DAG: max.NaN.f32
// CHECK-DAG: min.NaN.f32
// CHECK-DAG: max.f32
// CHECK-DAG: min.f32
// CHECK-DAG: abs.f32
// CHECK-DAG: neg.f32
// CHECK-DAG: cvt.rpi.f32.f32
// CHECK-DAG: ex2.approx
// CHECK-DAG: rsqrt.approx.f32
// CHECK-DAG: div.rn.f32
// CHECK-DAG: div.full.f32
// CHECK-DAG: cvt.rzi.f32.f32
// CHECK-DAG: cvt.rni.f32.f32
// CHECK-DAG: copysign.f32
// CHECK-DAG: div.approx.f32
