// fusion-compile refuses, with a located diagnostic and exit code 1, what it
// cannot build a library from, on both targets, before lowering
// (fusion-verify-entry-points). The inputs are the reproducers of
// shared/reliability; the positive case is cpu.mlir / compile.mlir.
//
// RUN: not fusion-compile %S/Inputs/cpu-nontensor-arg.mlir --target=cpu --emit=mlir -o %t.mlir 2>&1 | FileCheck %s --check-prefix=SCALAR
// RUN: not fusion-compile %S/Inputs/cpu-nontensor-arg.mlir --target=cpu -o %t.so 2>&1 | FileCheck %s --check-prefix=SCALAR
// RUN: not fusion-compile %S/Inputs/cpu-nontensor-arg.mlir --emit=mlir -o %t.mlir 2>&1 | FileCheck %s --check-prefix=SCALAR
// SCALAR: cpu-nontensor-arg.mlir:1:1: error: 'func.func' op entry point argument #0 has type 'f32'; entry points take and return ranked tensors
//
// RUN: not fusion-compile %S/Inputs/cpu-unranked-arg.mlir --target=cpu --emit=mlir -o %t.mlir 2>&1 | FileCheck %s --check-prefix=UNRANKED
// UNRANKED: cpu-unranked-arg.mlir:1:1: error: 'func.func' op entry point argument #0 has type 'tensor<*xf32>'; entry points take and return ranked tensors
// UNRANKED: cpu-unranked-arg.mlir:1:1: error: 'func.func' op entry point result #0 has type 'tensor<*xf32>'
//
// Not "float32" in the signature file: refused.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: not fusion-compile %S/Inputs/f64-signature-says-float32.mlir --target=cpu -o %t.dir/f.so 2>&1 | FileCheck %s --check-prefix=F64
// RUN: not fusion-compile %S/Inputs/f64-signature-says-float32.mlir --emit=mlir -o %t.dir/f.mlir 2>&1 | FileCheck %s --check-prefix=F64
// RUN: not ls %t.dir/f.json %t.dir/f.h %t.dir/f.so
// F64: f64-signature-says-float32.mlir:1:1: error: 'func.func' op entry point argument #0 has type 'tensor<4xf64>'; entry-point tensors must have an f32, bf16 or f16 element type
//
// RUN: not fusion-compile %S/Inputs/huge-splat-constant.mlir --target=cpu -o %t.so 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: huge-splat-constant.mlir:2:8: error: 'arith.constant' op has a constant of type 'tensor<2147483648xf32>' (8589934592 bytes) that is too large to materialize (the limit is 1073741824 bytes)
//
// The test-harness test's module has a scalar-argument function.
// RUN: not fusion-compile %S/../../Dialect/Fusion/generate-test-harness.mlir --target=cpu --emit=mlir -o %t.mlir 2>&1 | FileCheck %s --check-prefix=HARNESS
// HARNESS: generate-test-harness.mlir:{{[0-9]+}}:1: error: 'func.func' op entry point argument #0 has type 'f32'; entry points take and return ranked tensors
// HARNESS-NOT: error
