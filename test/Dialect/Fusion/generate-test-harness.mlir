// RUN: fusion-opt %s --fusion-generate-test-harness="entry=model rows=5 seed=7" | FileCheck %s
// RUN: not fusion-opt %s --fusion-generate-test-harness="entry=missing" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not fusion-opt %s --fusion-generate-test-harness="entry=model rows=1" 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not fusion-opt %s --fusion-generate-test-harness="entry=scalar_arg" 2>&1 | FileCheck %s --check-prefix=SCALAR
// RUN: not fusion-opt %s --fusion-generate-test-harness="entry=declaration" 2>&1 | FileCheck %s --check-prefix=EXTERNAL
// MISSING: error: fusion-generate-test-harness: no function 'missing' to call
// ROWS: error: fusion-generate-test-harness: rows must be > 1
// SCALAR: error: fusion-generate-test-harness: cannot pass 'f32'; only float tensors
// EXTERNAL: error: fusion-generate-test-harness: 'declaration' has no body to run

// CHECK: func.func private @printMemrefF32(memref<*xf32>)
// CHECK-LABEL: func.func @main()
// The input: a [5, 8] tensor (dynamic rows set to 5), uniform in [-1, 1).
// CHECK: %[[X:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<5x8xbf16>)
// CHECK: arith.uitofp
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[XC:.*]] = tensor.cast %[[X]] : tensor<5x8xbf16> to tensor<?x8xbf16>
// The running mean is drawn from [-1, 1), the running variance from
// [0.5, 1.5).
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4xbf16>)
// CHECK-NOT: arith.constant 5.000000e-01 : f32
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4xbf16>)
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: %[[R:.*]]:3 = call @model(%[[XC]], %{{.*}}, %{{.*}}, %{{.*}})
// Results are widened to f32 and printed.
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: bufferization.to_buffer
// CHECK: call @printMemrefF32
// CHECK: call @printMemrefF32
// CHECK: call @printMemrefF32
// CHECK: return
func.func @model(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>, %rm: tensor<4xbf16>, %rv: tensor<4xbf16>)
    -> (tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>) {
  %0 = fusion.linear %x, %w : tensor<?x8xbf16>, tensor<4x8xbf16> -> tensor<?x4xbf16>
  %y:3 = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
      : (tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> (tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>)
  return %y#0, %y#1, %y#2 : tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>
}

func.func @scalar_arg(%s: f32) {
  return
}

func.func private @declaration(%x: tensor<?x8xf32>) -> tensor<?x8xf32>
