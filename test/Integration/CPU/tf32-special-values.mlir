// A tf32 GEMM's operands are rounded to tf32 as the GPU kernels round them
// (roundToTf32): to nearest with ties away from zero, and a NaN of any
// payload stays a NaN. The rounding's carry used to turn the GPU's
// canonical NaN 0x7FFFFFFF into -0, so that row 0's product was 2 + 0.
// Rows: that NaN, one whose payload is all in the low 13 bits, an infinity,
// and a value halfway between two tf32 values (1 + 2^-11, rounded away
// from zero to 1 + 2^-10 where fp32 keeps it).
// RUN: fusion-opt %s --fusion-lower-to-cpu | %run_cpu | FileCheck %s
// CHECK: [nan,   nan]
// CHECK: [nan,   nan]
// CHECK: [inf,   -inf]
// CHECK: [1.00098,   -1.00098]
// The same at fp32: the halfway value as it is.
// CHECK: [1.00049,   -1.00049]
func.func @main() {
  %x = arith.constant dense<[[0x7FFFFFFF, 2.0], [0x7F800001, 2.0], [0x7F800000, 0.0], [0x3F801000, 0.0]]> : tensor<4x2xf32>
  %w = arith.constant dense<[[1.0, 1.0], [-1.0, 0.0]]> : tensor<2x2xf32>
  %tf32 = fusion.fused_linear %x, %w precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %fp32 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %0 = tensor.cast %tf32 : tensor<4x2xf32> to tensor<*xf32>
  call @printMemrefF32(%0) : (tensor<*xf32>) -> ()
  %last = tensor.extract_slice %fp32[3, 0] [1, 2] [1, 1] : tensor<4x2xf32> to tensor<1x2xf32>
  %1 = tensor.cast %last : tensor<1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%1) : (tensor<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(tensor<*xf32>)
