// Every op of the fused_linear epilogue allow-list lowers on the GPU, in the
// tiled kernel's epilogue and in cuBLAS's epilogue kernel: the comparisons
// that keep or drop NaNs (maximumf/minimumf against maxnumf/minnumf), the
// sign ops, ceil, the exponentials, rsqrt, the correctly rounded division
// and the approximate quotient, trunc, roundeven and copysign each leave
// their instruction (erf, log, tanh, the inverse trigonometric and the
// hyperbolic functions are libdevice's; floor of a ceil folds away). fmod
// calls libdevice's, out of line, only for quotients past 2^20
// (fusion-expand-remainders): its fast path divides approximately; sin,
// cos and tan only for arguments past 105615, reduced inline below
// (fusion-expand-trigonometry); powf always (fusion-outline-powers), and
// special functions (fusion-outline-special-functions).
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %S/../../Dialect/Fusion/epilogue-ops.mlir --emit=ptx -o - | FileCheck %s
// RUN: fusion-compile %S/../../Dialect/Fusion/epilogue-ops.mlir --emit=ptx --strategy=tiled -o - | FileCheck %s
// RUN: fusion-compile %S/../../Dialect/Fusion/epilogue-ops.mlir --emit=ptx --strategy=cublas -o - | FileCheck %s
// CHECK-DAG: .func {{.*}}__fusion_powf(
// CHECK-DAG: .func {{.*}}__fusion_sinf(
// CHECK-DAG: .func {{.*}}__fusion_cosf(
// CHECK-DAG: .func {{.*}}__fusion_tanf(
// CHECK: .func {{.*}}__fusion_fmodf(
// CHECK: div.approx.f32
// CHECK: .func {{.*}}__fusion_special_lgamma(
// CHECK: .visible .entry
// CHECK-DAG: max.NaN.f32
// CHECK-DAG: min.NaN.f32
// CHECK-DAG: max.f32
// CHECK-DAG: min.f32
// CHECK-DAG: abs.f32
// CHECK-DAG: cvt.rn.bf16.f32
// CHECK-DAG: cvt.rn.f16.f32
// CHECK-DAG: neg.f32
// CHECK-DAG: cvt.rpi.f32.f32
// CHECK-DAG: ex2.approx
// CHECK-DAG: rsqrt.approx.f32
// CHECK-DAG: div.rn.f32
// CHECK-DAG: div.full.f32
// CHECK-DAG: cvt.rzi.f32.f32
// CHECK-DAG: cvt.rni.f32.f32
// CHECK-DAG: copysign.f32
// CHECK-DAG: call.uni (retval0), __fusion_fmodf
// CHECK-DAG: call.uni (retval0), __fusion_special_lgamma
// CHECK-DAG: call.uni (retval0), __fusion_powf
// CHECK-DAG: call.uni (retval0), __fusion_sinf
// CHECK-DAG: call.uni (retval0), __fusion_cosf
// CHECK-DAG: call.uni (retval0), __fusion_tanf
// CHECK-DAG: fma.rn.f32 {{.*}}, 0fBFC90FDA,
