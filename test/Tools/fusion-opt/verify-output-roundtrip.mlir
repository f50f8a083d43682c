// fusion-opt --verify-output-roundtrip (which the lit suite adds to every
// fusion-opt run): the output parses back and prints the same, and its
// generic form and bytecode round-trip; each split chunk on its own.
// RUN: fusion-opt %s -split-input-file --verify-output-roundtrip --fusion-lower-to-linalg | FileCheck %s
// RUN: fusion-opt %s -split-input-file --verify-output-roundtrip --output-split-marker=//-MARK- --fusion-lower-to-linalg | FileCheck %s --check-prefix=MARKER
// RUN: not fusion-opt %S/Inputs/async-group.mlir --verify-output-roundtrip 2>&1 | FileCheck %s --check-prefix=BAD
// The output is written all the same.
// RUN: not fusion-opt %S/Inputs/async-group.mlir --verify-output-roundtrip 2>/dev/null | FileCheck %s --check-prefix=OUTPUT

// Upstream's custom printer of an nvgpu.device_async_create_group without
// tokens leaves nothing between the op name and the next line, which the
// parser then reads as a token operand (Inputs/async-group.mlir).
// BAD: <fusion-opt output>:4:{{[0-9]+}}: error: expected operation name in quotes
// BAD: error: --verify-output-roundtrip: the output does not parse back
// OUTPUT: nvgpu.device_async_create_group
// OUTPUT-NEXT: arith.constant

// Two chunks, each with its own #map aliases, are checked separately.
// CHECK: #map = affine_map
// CHECK: func.func @first
// CHECK: #map = affine_map
// CHECK: func.func @second
// MARKER: func.func @first
// MARKER: //-MARK-
// MARKER: func.func @second
func.func @first(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, 2.0 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @second(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.leaky_relu %x, negative_slope = 0.1 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
