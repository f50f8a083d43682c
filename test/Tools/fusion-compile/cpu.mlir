// The CPU target: each entry point takes its inputs and outputs as memrefs
// (destination-passing), the tensor body inlined and lowered through the CPU
// reference; no GPU code.
// RUN: fusion-compile %s --target=cpu --emit=mlir -o - | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t && fusion-compile %s --target=cpu -o %t/m.so
// RUN: FileCheck %s --check-prefix=JSON < %t/m.json
// RUN: not fusion-compile %s --target=cpu --emit=ptx -o %t/m.ptx 2>&1 | FileCheck %s --check-prefix=PTX
// The header declares the ABI the library exports (memref descriptors, not
// the GPU libraries' stream and raw pointers): a C program built against it
// calls the library and gets the right numbers.
// RUN: FileCheck %s --check-prefix=HEADER < %t/m.h
// RUN: cc -std=c99 -Wall -Werror -I%t %S/Inputs/cpu-header-driver.c %t/m.so -Wl,-rpath,%t -lm -o %t/driver
// RUN: %t/driver | FileCheck %s --check-prefix=DRIVER

// The memref descriptors of x [?, 8], w [4, 8] and the output [?, 4].
// CHECK: llvm.func @model(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64,
// CHECK-NOT: llvm.func @model__tensors
// CHECK-NOT: gpu.
// Its packed form (fusion_runtime.h): each buffer's dense row-major
// descriptor from the table, the batch its first size, strides from the
// sizes.
// CHECK-LABEL: llvm.func @model_packed(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %[[BATCH:[a-z0-9]+]]: i64, %[[TABLE:[a-z0-9]+]]: !llvm.ptr, %{{.*}}: i32) -> i32
// CHECK: %[[XS:.*]] = llvm.getelementptr %[[TABLE]][0]
// CHECK-NEXT: %[[X:.*]] = llvm.load %[[XS]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[OS:.*]] = llvm.getelementptr %[[TABLE]][2]
// CHECK-NEXT: %[[O:.*]] = llvm.load %[[OS]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @model(%[[X]], %[[X]], %{{.*}}, %[[BATCH]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[O]], %[[O]], %{{.*}}, %[[BATCH]],
// CHECK: llvm.return %{{.*}} : i32
// CHECK-NOT: __fusion_rt

// JSON: "target": "cpu"

// PTX: error: --emit=ptx needs a GPU target

// HEADER-NOT: stream
// HEADER: void model(const float *input0_allocated /* f32[batch][8] */, const float *input0_aligned, int64_t input0_offset, int64_t input0_size0, int64_t input0_size1, int64_t input0_stride0, int64_t input0_stride1, const float *input1_allocated /* f32[4][8] */, {{.*}}, float *output0_allocated /* f32[batch][4] */, float *output0_aligned, int64_t output0_offset, int64_t output0_size0, int64_t output0_size1, int64_t output0_stride0, int64_t output0_stride1);
// DRIVER: 0 of 12 outputs differ; {{[1-9][0-9]*}} negative
func.func @model(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.leaky_relu %0, negative_slope = 0.1 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}
