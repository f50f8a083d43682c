// Every op of the fused_linear epilogue allow-list, on f32 (i1 for the
// conditions): the verifier accepts them, and the CPU reference lowers them
// all (libm for the functions; tools/fusion-compile/epilogue-ops-ptx.mlir
// checks the GPU backends).
// RUN: fusion-opt %s | FileCheck %s
// RUN: fusion-opt %s --fusion-lower-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: fusion-opt %s --fusion-generate-test-harness="entry=all rows=3" --fusion-lower-to-cpu | %run_cpu | FileCheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @all
// CHECK: arith.divf %{{.*}}, %{{.*}} fastmath<afn> : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} fastmath<afn> : f32
// CHECK: math.tanh
// CHECK: math.roundeven
// CHECK: arith.remf
// CHECK: math.copysign
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: fusion.special "lgamma"
// CHECK: fusion.yield

// CPU-NOT: math.
// CPU-NOT: arith.
// CPU: llvm.func @all(
// CPU-NOT: math.
// CPU-NOT: arith.

// EXEC: sizes = [3, 4]
func.func @all(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %s: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w epilogue(%s) {
  ^bb0(%a: f32, %c: f32):
    %k = arith.constant 0.5 : f32
    %t = arith.constant true
    %0 = arith.addf %a, %c : f32
    %1 = arith.subf %0, %k : f32
    %2 = arith.mulf %1, %c : f32
    %one = arith.constant 1.0 : f32
    %d = arith.divf %2, %c : f32
    %da = arith.divf %d, %a fastmath<afn> : f32
    %3 = arith.divf %one, %da fastmath<afn> : f32
    %4 = arith.negf %3 : f32
    %5 = arith.maximumf %4, %a : f32
    %6 = arith.minimumf %5, %c : f32
    %7 = arith.maxnumf %6, %a : f32
    %8 = arith.minnumf %7, %c : f32
    %p = arith.cmpf ogt, %8, %k : f32
    %q = arith.cmpf olt, %a, %k : f32
    %pq = arith.andi %p, %q : i1
    %po = arith.ori %pq, %q : i1
    %px = arith.xori %po, %t : i1
    %9 = arith.select %px, %8, %a : f32
    %10 = math.absf %9 : f32
    %11 = math.ceil %10 : f32
    %12 = math.floor %11 : f32
    %13 = arith.addf %12, %a : f32
    %14 = math.erf %13 : f32
    %15 = math.exp %14 : f32
    %16 = math.exp2 %15 : f32
    %17 = math.expm1 %16 : f32
    %18 = math.fma %17, %a, %c : f32
    %19 = math.log %18 : f32
    %20 = math.log1p %19 : f32
    %21 = math.log2 %20 : f32
    %22 = math.powf %21, %k : f32
    %23 = math.rsqrt %22 : f32
    %24 = math.sqrt %23 : f32
    %25 = math.tanh %24 : f32
    // The trigonometric and hyperbolic functions, erfc, log10 and the
    // roundings to integers.
    %26 = math.sin %25 : f32
    %27 = math.cos %26 : f32
    %28 = math.tan %27 : f32
    %29 = math.asin %28 : f32
    %30 = math.acos %29 : f32
    %31 = math.atan %30 : f32
    %32 = math.atan2 %31, %a : f32
    %33 = math.sinh %32 : f32
    %34 = math.cosh %33 : f32
    %35 = math.asinh %34 : f32
    %36 = math.acosh %35 : f32
    %37 = math.atanh %36 : f32
    %38 = math.erfc %37 : f32
    %39 = math.log10 %38 : f32
    %40 = math.trunc %39 : f32
    %41 = math.roundeven %40 : f32
    // C's fmod and copysign.
    %42 = arith.remf %41, %c : f32
    %43 = math.copysign %42, %c : f32
    %44 = arith.addf %43, %c : f32
    // Roundings to 16 bits and back (a 16-bit model's value as eager
    // stores it).
    %b16 = arith.truncf %44 : f32 to bf16
    %r16 = arith.extf %b16 : bf16 to f32
    %h16 = arith.truncf %r16 : f32 to f16
    %r = arith.extf %h16 : f16 to f32
    // A special function: its formula, or libdevice's function on GPUs.
    %45 = fusion.special "lgamma"(%r) libdevice "__nv_lgammaf" : (f32) -> f32 {
    ^bb0(%arg: f32):
      %log = math.log %arg : f32
      fusion.yield %log : f32
    }
    fusion.yield %45 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
