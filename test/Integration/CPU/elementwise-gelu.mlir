// fusion.elementwise on the CPU reference: GELU through math.erf and its
// tanh approximation through math.tanh (libm's erff and tanhf), on values
// whose results are known: gelu(+-1) = 0.841345 / -0.158655, the tanh form
// 0.841192 / -0.158808, and +-10 saturate to 10 and -0.
// RUN: fusion-opt %s --fusion-lower-to-cpu | %run_cpu | FileCheck %s
// CHECK: [-0,   -0.15865{{[0-9]*}},   0,   0.84134{{[0-9]*}},   10]
// CHECK: [-0,   -0.1588{{[0-9]*}},   0,   0.84119{{[0-9]*}},   10]
func.func @main() {
  %x = arith.constant dense<[[-10.0, -1.0, 0.0, 1.0, 10.0]]> : tensor<1x5xf32>
  %erf = fusion.elementwise %x : tensor<1x5xf32> {
  ^bb0(%v: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.707106769 : f32
    %a = arith.mulf %v, %rsqrt2 : f32
    %e = math.erf %a : f32
    %p = arith.addf %e, %one : f32
    %h = arith.mulf %v, %half : f32
    %g = arith.mulf %h, %p : f32
    fusion.yield %g : f32
  }
  %tanh = fusion.elementwise %x : tensor<1x5xf32> {
  ^bb0(%v: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k = arith.constant 0.797884583 : f32
    %cubic = arith.constant 0.044715 : f32
    %v2 = arith.mulf %v, %v : f32
    %v3 = arith.mulf %v2, %v : f32
    %c3 = arith.mulf %v3, %cubic : f32
    %inner = arith.addf %v, %c3 : f32
    %scaled = arith.mulf %inner, %k : f32
    %t = math.tanh %scaled : f32
    %p = arith.addf %t, %one : f32
    %h = arith.mulf %v, %half : f32
    %g = arith.mulf %h, %p : f32
    fusion.yield %g : f32
  }
  %0 = tensor.cast %erf : tensor<1x5xf32> to tensor<*xf32>
  call @printMemrefF32(%0) : (tensor<*xf32>) -> ()
  %1 = tensor.cast %tanh : tensor<1x5xf32> to tensor<*xf32>
  call @printMemrefF32(%1) : (tensor<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(tensor<*xf32>)
