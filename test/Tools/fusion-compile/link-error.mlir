// A library that cannot be written is an error with exit code 1, not a
// dump of the module (its kernel binaries embedded) after the diagnostic.
// REQUIRES: cuda-toolkit
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.missing/a.so 2>&1 | FileCheck %s
// RUN: not fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t.missing/a.so --target=sm_80,sm_90 2>&1 | FileCheck %s

// CHECK: error: linking failed (1)
// CHECK-NOT: see current operation
// CHECK-NOT: llvm.func
