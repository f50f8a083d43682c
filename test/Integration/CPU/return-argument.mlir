// An entry point that returns its argument (a bufferization.clone after
// bufferization) lowers completely and runs under mlir-runner: the copy is
// the input (printMemrefF32 prints 6 significant digits, hence the 1e-6).
// (Reproducer: shared/reliability/cpu-lowering-leaves-clone.mlir.)
// REQUIRES: torch
//
// RUN: fusion-opt %s --fusion-generate-test-harness="entry=f rows=5" --fusion-lower-to-cpu | FileCheck %s
// CHECK-NOT: bufferization.
// CHECK: llvm.func @f(
// CHECK-NOT: bufferization.
//
// RUN: fusion-opt %s --fusion-generate-test-harness="entry=f rows=5" --fusion-lower-to-cpu | %run_cpu > %t.fusion
// RUN: %torch_reference identity --rows 5 ?x4 > %t.torch
// RUN: %compare %t.torch %t.fusion --rtol 1e-6 | FileCheck %s --check-prefix=CMP
// CMP: result 0: 20 values, {{.*}}: ok
// CMP: PASS
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}
