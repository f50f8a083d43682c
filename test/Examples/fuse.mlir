// The fusion pipeline leaves exactly one fused_linear per chain of the
// example models, and nothing else of the chain.
// RUN: fusion-opt %S/../../examples/linear_leaky_relu.mlir --fusion-optimize | FileCheck %s --check-prefix=A
// RUN: fusion-opt %S/../../examples/linear_scale_batch_norm.mlir --fusion-optimize=f32-precision=tf32 | FileCheck %s --check-prefix=B

// A-LABEL: func.func @linear_leaky_relu
// A-COUNT-1: fusion.fused_linear %{{.*}}, %{{.*}} bias(%{{.*}}) epilogue {
// A: arith.select
// A: } : (tensor<?x8192xf32>, tensor<8192x8192xf32>, tensor<8192xf32>) -> tensor<?x8192xf32>
// A-NOT: fusion.{{(linear|mul_scalar|mul|leaky_relu|batch_norm|fused_linear) }}
// A: return

// B-LABEL: func.func @linear_scale_batch_norm
// B-COUNT-1: fusion.fused_linear %{{.*}}, %{{.*}} bias(%{{.*}}) precision tf32 epilogue(%{{.*}}) {
// B: } batch_norm <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> bn_weight(%{{.*}}) bn_bias(%{{.*}}) running_stats(%{{.*}}, %{{.*}})
// B-NOT: fusion.{{(linear|mul_scalar|mul|leaky_relu|batch_norm|fused_linear) }}
// B: return
