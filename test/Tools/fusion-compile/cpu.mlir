// The CPU target: each entry point takes its inputs and outputs as memrefs
// (destination-passing), the tensor body inlined and lowered through the CPU
// reference; no GPU code.
// RUN: fusion-compile %s --target=cpu --emit=mlir -o - | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t && fusion-compile %s --target=cpu -o %t/m.so
// RUN: FileCheck %s --check-prefix=JSON < %t/m.json
// RUN: not fusion-compile %s --target=cpu --emit=ptx -o %t/m.ptx 2>&1 | FileCheck %s --check-prefix=PTX

// The memref descriptors of x [?, 8], w [4, 8] and the output [?, 4].
// CHECK: llvm.func @model(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64,
// CHECK-NOT: llvm.func @model__tensors
// CHECK-NOT: gpu.
// CHECK-NOT: __fusion_rt

// JSON: "target": "cpu"

// PTX: error: --emit=ptx needs a GPU target
func.func @model(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.leaky_relu %0, negative_slope = 0.1 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}
