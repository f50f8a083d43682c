// The math functions of fused_linear epilogues run on the CPU reference
// (through libm, see fusion-lower-to-cpu) and agree with PyTorch: GELU
// (math.erf), its tanh approximation (math.tanh), softplus (math.exp,
// math.log1p) and ELU (math.expm1).
// REQUIRES: torch
//
// DEFINE: %{entry} =
// DEFINE: %{check} = fusion-opt %s --fusion-generate-test-harness="entry=%{entry} rows=37" --fusion-lower-to-cpu | %run_cpu > %t.%{entry}.fusion && %torch_reference %{entry} --rows 37 ?x8 4x8 4 > %t.%{entry}.torch && %compare %t.%{entry}.torch %t.%{entry}.fusion --rtol 1e-5 | FileCheck %s --check-prefix=CMP
//
// CMP-NOT: FAIL
// CMP: result 0: {{.*}}: ok
// CMP: PASS
//
// Nothing of the math dialect is left, and the functions without an LLVM
// intrinsic are libm calls.
// RUN: fusion-opt %s --fusion-lower-to-cpu | FileCheck %s
// CHECK-NOT: math.
// CHECK-DAG: llvm.func @erff(f32) -> f32
// CHECK-DAG: llvm.func @tanhf(f32) -> f32
// CHECK-DAG: llvm.func @log1pf(f32) -> f32
// CHECK-DAG: llvm.func @expm1f(f32) -> f32
// CHECK-NOT: math.
//
// REDEFINE: %{entry} = gelu_erf
// RUN: %{check}
// REDEFINE: %{entry} = gelu_tanh
// RUN: %{check}
// REDEFINE: %{entry} = softplus
// RUN: %{check}
// REDEFINE: %{entry} = elu
// RUN: %{check}

func.func @gelu_erf(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) epilogue {
  ^bb0(%acc: f32):
    %rsqrt2 = arith.constant 0.707106769 : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %s = arith.mulf %acc, %rsqrt2 : f32
    %e = math.erf %s : f32
    %t = arith.addf %e, %one : f32
    %h = arith.mulf %acc, %half : f32
    %r = arith.mulf %h, %t : f32
    fusion.yield %r : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
func.func @gelu_tanh(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) epilogue {
  ^bb0(%acc: f32):
    %k = arith.constant 0.797884583 : f32
    %c = arith.constant 0.044715 : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %x2 = arith.mulf %acc, %acc : f32
    %x3 = arith.mulf %x2, %acc : f32
    %cx3 = arith.mulf %x3, %c : f32
    %inner = arith.addf %acc, %cx3 : f32
    %arg = arith.mulf %inner, %k : f32
    %th = math.tanh %arg : f32
    %t = arith.addf %th, %one : f32
    %h = arith.mulf %acc, %half : f32
    %r = arith.mulf %h, %t : f32
    fusion.yield %r : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// log1p(exp(x)) (PyTorch's softplus is linear above x = 20; these are below).
func.func @softplus(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) epilogue {
  ^bb0(%acc: f32):
    %e = math.exp %acc : f32
    %r = math.log1p %e : f32
    fusion.yield %r : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// x > 0 ? x : expm1(x)
func.func @elu(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) epilogue {
  ^bb0(%acc: f32):
    %zero = arith.constant 0.0 : f32
    %m = math.expm1 %acc : f32
    %p = arith.cmpf ogt, %acc, %zero : f32
    %r = arith.select %p, %acc, %m : f32
    fusion.yield %r : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
