// The example models parse, verify and round-trip.
// RUN: fusion-opt %S/../../examples/linear_leaky_relu.mlir | fusion-opt | FileCheck %s --check-prefix=A
// RUN: fusion-opt %S/../../examples/linear_scale_batch_norm.mlir | fusion-opt | FileCheck %s --check-prefix=B

// A-LABEL: func.func @linear_leaky_relu
// A: fusion.linear
// A: fusion.mul_scalar %{{.*}}, 2.000000e+00
// A: fusion.leaky_relu %{{.*}}, negative_slope = 1.000000e-01

// B-LABEL: func.func @linear_scale_batch_norm
// B: fusion.linear
// B: fusion.mul
// B: fusion.batch_norm %{{.*}}, <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> weight
