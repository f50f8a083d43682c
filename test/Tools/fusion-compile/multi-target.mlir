// One library for several GPUs: each entry point is compiled once per
// target (renamed NAME__TARGET, internal), and the exported NAME asks the
// runtime which variant runs on the stream's device.
// REQUIRES: cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t/a.so --target=sm_80,sm_90 --precision=bf16
// RUN: llvm-nm %t/a.so | FileCheck %s --check-prefix=SYMBOLS
// RUN: FileCheck %s --check-prefix=JSON < %t/a.json
// A target list names each GPU once, and only a library holds several.
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t/b.so --target=sm_90,sm_90 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t/b.so --target=sm_80,cpu 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t/b.ptx --emit=ptx --target=sm_80,sm_90 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not fusion-compile %s -o %t/c.so --target=sm_80,sm_90 2>&1 | FileCheck %s --check-prefix=MODULE

// SYMBOLS-DAG: T __fusion_rt_select_variant
// SYMBOLS-DAG: T linear_leaky_relu{{$}}
// SYMBOLS-DAG: T linear_leaky_relu_packed{{$}}
// SYMBOLS-DAG: t __fusion_body_linear_leaky_relu__sm_80
// SYMBOLS-DAG: t __fusion_body_linear_leaky_relu__sm_90

// JSON: "target": "sm_80,sm_90"

// TWICE: fusion-compile: invalid --target='sm_90,sm_90' (expected cpu, or one or more different supported GPUs separated by commas: sm_80, sm_86, sm_89, sm_90)
// CPU: fusion-compile: invalid --target='sm_80,cpu'
// EMIT: error: --emit=mlir and --emit=ptx take one --target

// MODULE: multi-target.mlir:[[# @LINE + 1]]:1: error: the module targets sm_90, --target says sm_80,sm_90
module attributes {fusion.target = #fusion.target<sm_90>} {
func.func @f(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %0 = fusion.linear %x, %w : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
}
