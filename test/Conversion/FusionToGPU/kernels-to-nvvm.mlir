// The kernel pipeline leaves LLVM/NVVM ops only in the gpu.module and does
// not touch the host.
// RUN: fusion-opt %s --fusion-select-gemm-config="strategy=cublas" --fusion-lower-to-gpu --fusion-lower-kernels-to-nvvm | FileCheck %s

// CHECK: llvm.func @epilogue(
// CHECK: gpu.module @fusion_kernels
// CHECK: llvm.func @epilogue_0_epilogue(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64) attributes {gpu.kernel
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: nvvm.read.ptx.sreg.ctaid.x
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-NOT: arith.
// CHECK-NOT: scf.
// CHECK: llvm.return
func.func @epilogue(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> tensor<?x16xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %c = arith.constant 0.5 : f32
    %1 = arith.maximumf %acc, %c : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
