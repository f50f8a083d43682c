// K = 6 (f32 rows not 16-byte aligned): the tiled kernel copies with element
// loads and commits no cp.async groups; its IR re-parses (an empty
// nvgpu.device_async_create_group printed IR no parser accepts:
// shared/reliability/tiled-roundtrip-k6.mlir).
// RUN: fusion-opt %s --fusion-optimize --fusion-select-gemm-config=strategy=tiled --fusion-lower-to-gpu | fusion-opt | FileCheck %s
// CHECK: gpu.func @{{.*}}_gemm(
// CHECK-NOT: nvgpu.device_async
// CHECK: nvgpu.mma.sync
func.func @f(%x: tensor<?x6xf32>, %w: tensor<16x6xf32>) -> tensor<?x16xf32> {
  %0 = fusion.linear %x, %w : tensor<?x6xf32>, tensor<16x6xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
