// A dual GEMM (dual_weight) on the CPU: the reference lowering's second GEMM
// feeds the epilogue's last argument; held to PyTorch's float64
// tanh(x wg^T) * (x wu^T + bu) (printMemrefF32 prints 6 significant digits,
// hence 1e-5).
// REQUIRES: torch
//
// RUN: fusion-opt %s --fusion-generate-test-harness="entry=gated_tanh rows=5" --fusion-lower-to-cpu | %run_cpu > %t.fusion
// RUN: %torch_reference gated_tanh --rows 5 ?x8 3x8 3x8 3 > %t.torch
// RUN: %compare %t.torch %t.fusion --rtol 1e-5 | FileCheck %s
// CHECK: result 0: 15 values, {{.*}}: ok
// CHECK: PASS
func.func @gated_tanh(%x: tensor<?x8xf32>, %wg: tensor<3x8xf32>, %wu: tensor<3x8xf32>, %bu: tensor<3xf32>) -> tensor<?x3xf32> {
  %0 = fusion.fused_linear %x, %wg dual_weight(%wu) epilogue(%bu) {
  ^bb0(%acc: f32, %b: f32, %dual: f32):
    %u = arith.addf %dual, %b : f32
    %t = math.tanh %acc : f32
    %p = arith.mulf %t, %u : f32
    fusion.yield %p : f32
  } : (tensor<?x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
