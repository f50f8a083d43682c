// shared/reliability/mul-scalar-composition.mlir: x * 1e38 * 1e38 * 1e-38 *
// 1e-38 was folded to x; PyTorch (and the unfused CPU reference) give inf
// for |x| >= 1. No multiplier composes: the four products, in order, become
// one elementwise body (f32 products, as the unfused ops compute them), and
// the fused program computes inf too.
// RUN: fusion-opt %s --fusion-optimize | FileCheck %s
// RUN: fusion-opt %s --fusion-generate-test-harness="entry=f rows=2" --fusion-optimize --fusion-lower-to-cpu | %run_cpu | FileCheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @f
// CHECK: fusion.elementwise
// CHECK-DAG: %[[SMALL:.*]] = arith.constant 9.99999{{[0-9]*}}E-39 : f32
// CHECK-DAG: %[[BIG:.*]] = arith.constant 9.99999{{[0-9]*}}E+37 : f32
// CHECK: %[[A:.*]] = arith.mulf %{{.*}}, %[[BIG]] : f32
// CHECK-NEXT: %[[B:.*]] = arith.mulf %[[A]], %[[BIG]] : f32
// CHECK-NEXT: %[[C:.*]] = arith.mulf %[[B]], %[[SMALL]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[C]], %[[SMALL]] : f32
// CHECK-NEXT: fusion.yield %[[D]] : f32
// CHECK-NOT: fusion.mul_scalar

// The harness's inputs lie in [-1, 1) and none is below 1e-37 in magnitude:
// every result is +-inf.
// EXEC: sizes = [2, 4]
// EXEC-NEXT: {{^\[\[-?inf, +-?inf, +-?inf, +-?inf\], *$}}
// EXEC-NEXT: {{^ \[-?inf, +-?inf, +-?inf, +-?inf\]\]$}}
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, 1.0e38 : tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 1.0e38 : tensor<?x4xf32>
  %2 = fusion.mul_scalar %1, 1.0e-38 : tensor<?x4xf32>
  %3 = fusion.mul_scalar %2, 1.0e-38 : tensor<?x4xf32>
  return %3 : tensor<?x4xf32>
}
