// Invalid IR is reported at its location and fusion-opt exits with 1, no crash.
// RUN: not fusion-opt %s 2>&1 | FileCheck %s
// RUN: fusion-opt %s; test $? -eq 1

// CHECK: diagnostics.mlir:[[# @LINE + 3]]:8: error: 'fusion.linear' op weight in_features 512 does not match input K 1024
// CHECK-NOT: Stack dump
func.func @bad(%x: tensor<?x1024xf32>, %w: tensor<256x512xf32>) -> tensor<?x256xf32> {
  %0 = fusion.linear %x, %w : tensor<?x1024xf32>, tensor<256x512xf32> -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}
