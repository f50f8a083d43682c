// The CPU reference is PyTorch: each unfused entry point of the integration
// tests, lowered by --fusion-lower-to-cpu, agrees with PyTorch computing the
// same model in float64 on the same inputs (bias, broadcasting, leaky slope,
// batch-norm biased/unbiased variance and momentum included).
// REQUIRES: torch
//
// DEFINE: %{file} =
// DEFINE: %{entry} =
// DEFINE: %{shapes} =
// DEFINE: %{rtol} = 1e-4
// DEFINE: %{dtype} = f32
// DEFINE: %{check} = fusion-opt %S/%{file} --fusion-generate-test-harness="entry=%{entry} rows=37" --fusion-lower-to-cpu | %run_cpu > %t.%{entry}.fusion && %torch_reference %{entry} --rows 37 --dtype %{dtype} %{shapes} > %t.%{entry}.torch && %compare %t.%{entry}.torch %t.%{entry}.fusion --rtol %{rtol} | FileCheck %s
//
// CHECK-NOT: FAIL
// CHECK: result 0: {{.*}}: ok
// CHECK: PASS
//
// REDEFINE: %{file} = linear-leaky-relu.mlir
// REDEFINE: %{entry} = workload_a
// REDEFINE: %{shapes} = ?x96 80x96 80
// RUN: %{check}
// REDEFINE: %{entry} = workload_a_ragged
// REDEFINE: %{shapes} = ?x50 29x50 29
// RUN: %{check}
// REDEFINE: %{entry} = negative_multiplier
// RUN: %{check}
// REDEFINE: %{entry} = relu
// RUN: %{check}
// REDEFINE: %{entry} = slope_1_5
// RUN: %{check}
// REDEFINE: %{entry} = per_column_scale
// REDEFINE: %{shapes} = ?x50 29x50 29 29
// RUN: %{check}
// REDEFINE: %{entry} = no_bias
// REDEFINE: %{shapes} = ?x50 29x50
// RUN: %{check}
// REDEFINE: %{entry} = two_chains
// REDEFINE: %{shapes} = ?x50 64x50 64 29x64 29
// RUN: %{check}
//
// REDEFINE: %{file} = linear-scale-batch-norm.mlir
// REDEFINE: %{entry} = workload_b
// REDEFINE: %{shapes} = ?x96 80x96 80 80 80 80 80 80
// RUN: %{check}
// REDEFINE: %{entry} = workload_b_ragged
// REDEFINE: %{shapes} = ?x50 29x50 29 29 29 29 29 29
// RUN: %{check}
// REDEFINE: %{entry} = inference
// RUN: %{check}
// REDEFINE: %{entry} = no_affine
// REDEFINE: %{shapes} = ?x50 29x50 29 29 29 29
// RUN: %{check}
// REDEFINE: %{entry} = no_running_stats
// RUN: %{check}
// REDEFINE: %{entry} = no_bias_negative_scale
// REDEFINE: %{shapes} = ?x50 29x50 29 29
// RUN: %{check}
// REDEFINE: %{entry} = mlp_then_batch_norm
// REDEFINE: %{shapes} = ?x50 40x50 40 29x40 29 29 29
// RUN: %{check}
//
// bf16: PyTorch's float64 on the same bf16 inputs against the reference's
// per-op bf16 rounding.
// REDEFINE: %{file} = linear-leaky-relu.mlir
// REDEFINE: %{entry} = workload_a_bf16
// REDEFINE: %{shapes} = ?x50 29x50 29
// REDEFINE: %{dtype} = bf16
// REDEFINE: %{rtol} = 2e-2
// RUN: %{check}
