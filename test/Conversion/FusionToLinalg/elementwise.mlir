// fusion.elementwise lowers through ElementwiseOpInterface like the named
// elementwise ops: one linalg.generic over the matrix and its column
// operands whose body is the op's body, then to LLVM with libm calls.
// RUN: fusion-opt %s --fusion-lower-to-linalg | FileCheck %s
// RUN: fusion-opt %s --fusion-lower-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: fusion-opt %s --fusion-generate-test-harness="entry=gelu rows=3" --fusion-lower-to-cpu | %run_cpu | FileCheck %s --check-prefix=EXEC

// CHECK-DAG: #[[MN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[N:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xbf16>, %[[S:.*]]: tensor<4xbf16>)
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[MN]], #[[N]], #[[MN]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[S]] : tensor<?x4xbf16>, tensor<4xbf16>) outs(%{{.*}} : tensor<?x4xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: bf16, %[[C:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: %[[VF:.*]] = arith.extf %[[V]] : bf16 to f32
// CHECK-NEXT: %[[CF:.*]] = arith.extf %[[C]] : bf16 to f32
// CHECK: math.erf
// CHECK: math.tanh
// CHECK: %[[R:.*]] = arith.mulf %{{.*}}, %[[CF]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: fusion.

// CPU-NOT: fusion.
// CPU-NOT: math.
// CPU-DAG: llvm.func @erff(f32) -> f32
// CPU-DAG: llvm.func @tanhf(f32) -> f32
// CPU-NOT: math.

// EXEC: sizes = [3, 4]
func.func @gelu(%x: tensor<?x4xbf16>, %s: tensor<4xbf16>) -> tensor<?x4xbf16> {
  %0 = fusion.elementwise %x columns(%s : tensor<4xbf16>) : tensor<?x4xbf16> {
  ^bb0(%v: f32, %c: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.707106769 : f32
    %a = arith.mulf %v, %rsqrt2 : f32
    %e = math.erf %a : f32
    %t = math.tanh %e : f32
    %p = arith.addf %t, %one : f32
    %h = arith.mulf %v, %half : f32
    %g = arith.mulf %h, %p : f32
    %r = arith.mulf %g, %c : f32
    fusion.yield %r : f32
  }
  return %0 : tensor<?x4xbf16>
}
