// ptxas keeps the Hopper kernels' wgmmas asynchronous: no "Potential
// Performance Loss" (C7514: an accumulator read while its group may be in
// flight; C7519/C7520: a warpgroup.arrive ptxas had to inject, in a
// divergent path) and no injected arrive, in every multiply (bf16, tf32,
// 3xTF32), with an epilogue from the registers and with a training batch
// norm's column moments taken from them, and with reductions from the
// tiles whose 16-bit intermediates LLVM would compute in 16-bit
// arithmetic, and whose f16 roundings ptxas would fuse into the
// accumulators' reads (fusion-opaque-half-conversions: the arithmetic
// stays f32, none in the PTX).
// REQUIRES: cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma --precision=fp32 -o %t/fp32.ptx
// RUN: %ptxas -arch=sm_90a -v %t/fp32.ptx -o %t/fp32.cubin 2>&1 | FileCheck %s --implicit-check-not=C75
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma --precision=tf32 -o %t/tf32.ptx
// RUN: %ptxas -arch=sm_90a -v %t/tf32.ptx -o %t/tf32.cubin 2>&1 | FileCheck %s --implicit-check-not=C75

// CHECK-DAG: Compiling entry function 'linear_f32_0_gemm'
// CHECK-DAG: Compiling entry function 'batch_norm_f32_0_gemm'
// CHECK-DAG: Compiling entry function 'linear_bf16_0_gemm'
// CHECK-DAG: Compiling entry function 'batch_norm_bf16_0_gemm'
// CHECK-DAG: Compiling entry function 'sum_of_halves_bf16_0_gemm'
// CHECK-DAG: Compiling entry function 'row_max_bf16_0_gemm'
// CHECK-DAG: Compiling entry function 'sum_of_halves_f16_0_gemm'
// CHECK-DAG: Compiling entry function 'row_max_f16_0_gemm'
// RUN: FileCheck %s --check-prefix=PTX < %t/tf32.ptx
// PTX-NOT: {{(mul|add|sub|fma|max|min)(\.rn|\.NaN)?\.(bf16|f16) }}
// PTX: .entry sum_of_halves_bf16_0_gemm(
// PTX-NOT: {{(mul|add|sub|fma|max|min)(\.rn|\.NaN)?\.(bf16|f16) }}
func.func @linear_f32(%x: tensor<?x1000xf32>, %w: tensor<520x1000xf32>) -> tensor<?x520xf32> {
  %0 = fusion.linear %x, %w : tensor<?x1000xf32>, tensor<520x1000xf32> -> tensor<?x520xf32>
  %1 = fusion.leaky_relu %0, negative_slope = -0.1 : tensor<?x520xf32>
  return %1 : tensor<?x520xf32>
}

func.func @batch_norm_f32(%x: tensor<?x1000xf32>, %w: tensor<520x1000xf32>,
    %mean: tensor<520xf32>, %var: tensor<520xf32>)
    -> (tensor<?x520xf32>, tensor<520xf32>, tensor<520xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x1000xf32>, tensor<520x1000xf32> -> tensor<?x520xf32>
  %y, %m, %v = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      running_stats(%mean, %var)
      : (tensor<?x520xf32>, tensor<520xf32>, tensor<520xf32>)
      -> (tensor<?x520xf32>, tensor<520xf32>, tensor<520xf32>)
  return %y, %m, %v : tensor<?x520xf32>, tensor<520xf32>, tensor<520xf32>
}

func.func @linear_bf16(%x: tensor<?x1000xbf16>, %w: tensor<520x1000xbf16>) -> tensor<?x520xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x1000xbf16>, tensor<520x1000xbf16> -> tensor<?x520xbf16>
  %1 = fusion.leaky_relu %0, negative_slope = -0.1 : tensor<?x520xbf16>
  return %1 : tensor<?x520xbf16>
}

func.func @batch_norm_bf16(%x: tensor<?x1000xbf16>, %w: tensor<520x1000xbf16>,
    %mean: tensor<520xbf16>, %var: tensor<520xbf16>)
    -> (tensor<?x520xbf16>, tensor<520xbf16>, tensor<520xbf16>) {
  %0 = fusion.linear %x, %w : tensor<?x1000xbf16>, tensor<520x1000xbf16> -> tensor<?x520xbf16>
  %y, %m, %v = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      running_stats(%mean, %var)
      : (tensor<?x520xbf16>, tensor<520xbf16>, tensor<520xbf16>)
      -> (tensor<?x520xbf16>, tensor<520xbf16>, tensor<520xbf16>)
  return %y, %m, %v : tensor<?x520xbf16>, tensor<520xbf16>, tensor<520xbf16>
}

// KernelBench 14's sum of halves: PyTorch rounds the linear's output and
// its half to bf16 before summing them.
func.func @sum_of_halves_bf16(%x: tensor<?x1000xbf16>, %w: tensor<520x1000xbf16>) -> tensor<?x1xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x1000xbf16>, tensor<520x1000xbf16> -> tensor<?x520xbf16>
  %1 = fusion.reduce sum %0 : tensor<?x520xbf16> -> tensor<?x1xbf16> {
  ^bb0(%in: f32):
    %two = arith.constant 2.000000e+00 : f32
    %half = arith.divf %in, %two : f32
    %rounded = arith.truncf %half : f32 to bf16
    %back = arith.extf %rounded : bf16 to f32
    fusion.yield %back : f32
  }
  return %1 : tensor<?x1xbf16>
}

func.func @row_max_bf16(%x: tensor<?x1000xbf16>, %w: tensor<520x1000xbf16>) -> tensor<?x1xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x1000xbf16>, tensor<520x1000xbf16> -> tensor<?x520xbf16>
  %1 = fusion.reduce max %0 : tensor<?x520xbf16> -> tensor<?x1xbf16> {
  ^bb0(%in: f32):
    fusion.yield %in : f32
  }
  return %1 : tensor<?x1xbf16>
}

func.func @sum_of_halves_f16(%x: tensor<?x1000xf16>, %w: tensor<520x1000xf16>) -> tensor<?x1xf16> {
  %0 = fusion.linear %x, %w : tensor<?x1000xf16>, tensor<520x1000xf16> -> tensor<?x520xf16>
  %1 = fusion.reduce sum %0 : tensor<?x520xf16> -> tensor<?x1xf16> {
  ^bb0(%in: f32):
    %two = arith.constant 2.000000e+00 : f32
    %half = arith.divf %in, %two : f32
    %rounded = arith.truncf %half : f32 to f16
    %back = arith.extf %rounded : f16 to f32
    fusion.yield %back : f32
  }
  return %1 : tensor<?x1xf16>
}

func.func @row_max_f16(%x: tensor<?x1000xf16>, %w: tensor<520x1000xf16>) -> tensor<?x1xf16> {
  %0 = fusion.linear %x, %w : tensor<?x1000xf16>, tensor<520x1000xf16> -> tensor<?x520xf16>
  %1 = fusion.reduce max %0 : tensor<?x520xf16> -> tensor<?x1xf16> {
  ^bb0(%in: f32):
    fusion.yield %in : f32
  }
  return %1 : tensor<?x1xf16>
}
