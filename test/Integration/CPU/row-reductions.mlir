// fusion.reduce and row operands on the CPU reference, on values whose
// results are known: softmax([1, 2, 3, 4]) = [0.0320586, 0.0871443,
// 0.236883, 0.643914]; per-row max and min, NaN propagating; sums of groups
// of two columns; a whole-matrix row operand (a residual).
// RUN: fusion-opt %s --fusion-optimize --fusion-lower-to-cpu | %run_cpu | FileCheck %s
// CHECK: [0.032058{{[0-9]*}},   0.087144{{[0-9]*}},   0.23688{{[0-9]*}},   0.64391{{[0-9]*}}]
// CHECK-NEXT: [0.25,   0.25,   0.25,   0.25]
// CHECK: [4,   1]
// CHECK-NEXT: [nan,   nan]
// CHECK: [3,   7]
// CHECK-NEXT: [-4,   -4]
// CHECK: [2,   4,   6,   8]
// CHECK-NEXT: [-4,   -4,   -4,   -4]
func.func @main() {
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [-2.0, -2.0, -2.0, -2.0]]> : tensor<2x4xf32>
  %nan = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [-2.0, 0x7FC00000, -2.0, -2.0]]> : tensor<2x4xf32>
  %max = fusion.reduce max %x : tensor<2x4xf32> -> tensor<2x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %sum = fusion.reduce sum %x rows(%max : tensor<2x1xf32>) : tensor<2x4xf32> -> tensor<2x1xf32> {
  ^bb0(%v: f32, %m: f32):
    %0 = arith.subf %v, %m : f32
    %1 = math.exp %0 : f32
    fusion.yield %1 : f32
  }
  %softmax = fusion.elementwise %x rows(%max, %sum : tensor<2x1xf32>, tensor<2x1xf32>) : tensor<2x4xf32> {
  ^bb0(%v: f32, %m: f32, %s: f32):
    %0 = arith.subf %v, %m : f32
    %1 = math.exp %0 : f32
    %2 = arith.divf %1, %s : f32
    fusion.yield %2 : f32
  }
  %extremes = fusion.reduce max %nan : tensor<2x4xf32> -> tensor<2x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %lows = fusion.reduce min %nan : tensor<2x4xf32> -> tensor<2x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %pairs = fusion.reduce sum %x : tensor<2x4xf32> -> tensor<2x2xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %doubled = fusion.elementwise %x rows(%x : tensor<2x4xf32>) : tensor<2x4xf32> {
  ^bb0(%v: f32, %r: f32):
    %0 = arith.addf %v, %r : f32
    fusion.yield %0 : f32
  }
  %0 = tensor.cast %softmax : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%0) : (tensor<*xf32>) -> ()
  %both = tensor.concat dim(1) %extremes, %lows : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  %1 = tensor.cast %both : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%1) : (tensor<*xf32>) -> ()
  %2 = tensor.cast %pairs : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%2) : (tensor<*xf32>) -> ()
  %3 = tensor.cast %doubled : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%3) : (tensor<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(tensor<*xf32>)
