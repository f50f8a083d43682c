// fusion.relu is torch.relu on the special values (relu(-inf) = 0, NaN
// stays NaN), which leaky_relu with slope 0 is not (-inf * 0 = NaN, as
// F.leaky_relu(x, 0.0) gives): the importer's ReLU used to be the latter
// (shared/reliability/python_probe.py call_neg_inf_relu).
// RUN: fusion-opt %s --fusion-lower-to-cpu | %run_cpu | FileCheck %s
// CHECK: [0,   0,   0,   2.5,   inf,   nan]
// CHECK: [{{-?}}nan,   -0,   0,   2.5,   inf,   nan]
func.func @main() {
  %x = arith.constant dense<[[0xFF800000, -1.5, 0.0, 2.5, 0x7F800000, 0x7FC00000]]> : tensor<1x6xf32>
  %relu = fusion.relu %x : tensor<1x6xf32>
  %zero = fusion.leaky_relu %x, negative_slope = 0.0 : tensor<1x6xf32>
  %0 = tensor.cast %relu : tensor<1x6xf32> to tensor<*xf32>
  call @printMemrefF32(%0) : (tensor<*xf32>) -> ()
  %1 = tensor.cast %zero : tensor<1x6xf32> to tensor<*xf32>
  call @printMemrefF32(%1) : (tensor<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(tensor<*xf32>)
