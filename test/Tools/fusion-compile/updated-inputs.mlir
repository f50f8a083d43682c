// A GPU library's signature names the input each output may be written
// into (getUpdatedArgument): a training batch norm's updated running
// statistics, when nothing else reads the running statistic and nothing
// else uses the update. fusion::run_updating writes them in place.
// REQUIRES: cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: fusion-compile %s --target=sm_90 -o %t/gpu.so
// RUN: FileCheck %s < %t/gpu.h
// RUN: FileCheck %s --check-prefix=JSON < %t/gpu.json
// CPU libraries take their buffers as restrict: no output updates an input.
// RUN: fusion-compile %s --target=cpu -o %t/cpu.so
// RUN: FileCheck %s --check-prefix=CPU < %t/cpu.json

// CHECK: int32_t train(void *stream, int64_t batch, {{.*}} void *output0 /* bf16[batch][48] */, void *output1 /* bf16[48], may be input5 */, void *output2 /* bf16[48], may be input6 */)
// JSON: "name": "train"
// JSON: "index": 1
// JSON-NEXT: "shape": [
// JSON-NEXT: 48
// JSON-NEXT: ],
// JSON-NEXT: "updates_input": 5
// CPU-NOT: updates_input
func.func @train(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %b: tensor<48xbf16>,
                 %gamma: tensor<48xbf16>, %beta: tensor<48xbf16>,
                 %rm: tensor<48xbf16>, %rv: tensor<48xbf16>)
    -> (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>) {
  %0 = fusion.linear %x, %w, %b : tensor<?x64xbf16>, tensor<48x64xbf16>, tensor<48xbf16> -> tensor<?x48xbf16>
  %y, %m, %v = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      weight(%gamma) bias(%beta) running_stats(%rm, %rv)
      : (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>, tensor<48xbf16>, tensor<48xbf16>)
      -> (tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>)
  return %y, %m, %v : tensor<?x48xbf16>, tensor<48xbf16>, tensor<48xbf16>
}

// The running mean is also added to the output: written in place, the add
// could read the update. The variance may still be.
// CHECK: int32_t mean_read_twice({{.*}} void *output1 /* f32[32] */, void *output2 /* f32[32], may be input3 */)
func.func @mean_read_twice(%x: tensor<?x16xf32>, %w: tensor<32x16xf32>,
                           %rm: tensor<32xf32>, %rv: tensor<32xf32>)
    -> (tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x16xf32>, tensor<32x16xf32> -> tensor<?x32xf32>
  %y, %m, %v = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      running_stats(%rm, %rv)
      : (tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>)
  %1 = fusion.elementwise %y columns(%rm : tensor<32xf32>) : tensor<?x32xf32> {
  ^bb0(%a: f32, %c: f32):
    %r = arith.addf %a, %c : f32
    fusion.yield %r : f32
  }
  return %1, %m, %v : tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>
}

// The updated mean is returned twice: two outputs cannot both be the
// input's buffer.
// CHECK: int32_t update_returned_twice({{.*}} void *output1 /* f32[32] */, void *output2 /* f32[32] */, void *output3 /* f32[32], may be input3 */)
func.func @update_returned_twice(%x: tensor<?x16xf32>, %w: tensor<32x16xf32>,
                                 %rm: tensor<32xf32>, %rv: tensor<32xf32>)
    -> (tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x16xf32>, tensor<32x16xf32> -> tensor<?x32xf32>
  %y, %m, %v = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      running_stats(%rm, %rv)
      : (tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>)
  return %y, %m, %m, %v : tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
}

// One buffer as both running statistics: neither update may be written
// into it.
// CHECK: int32_t one_buffer_for_both({{.*}} void *output1 /* f32[32] */, void *output2 /* f32[32] */)
func.func @one_buffer_for_both(%x: tensor<?x16xf32>, %w: tensor<32x16xf32>,
                               %stats: tensor<32xf32>)
    -> (tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x16xf32>, tensor<32x16xf32> -> tensor<?x32xf32>
  %y, %m, %v = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      running_stats(%stats, %stats)
      : (tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>)
  return %y, %m, %v : tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>
}

// An output that is an input's value, not a batch norm's update.
// CHECK: int32_t passthrough({{.*}} void *output0 /* f32[batch][32] */, void *output1 /* f32[32] */)
func.func @passthrough(%x: tensor<?x16xf32>, %w: tensor<32x16xf32>,
                       %v: tensor<32xf32>) -> (tensor<?x32xf32>, tensor<32xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x16xf32>, tensor<32x16xf32> -> tensor<?x32xf32>
  return %0, %v : tensor<?x32xf32>, tensor<32xf32>
}
