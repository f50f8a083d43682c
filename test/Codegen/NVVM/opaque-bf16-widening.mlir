// RUN: fusion-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(fusion-opaque-bf16-widening))' | FileCheck %s

// A kernel that issues wgmma: each bf16 -> f32 widening becomes its bits
// in the high half of an i32, scalars and vectors; f16 and f64 widenings
// stay.
// CHECK-LABEL: llvm.func @epilogue(
// CHECK-SAME: %[[H:[^:]*]]: bf16, %[[V:[^:]*]]: vector<2xbf16>, %[[F:[^:]*]]: f16
// CHECK: nvvm.wgmma.mma_async
// CHECK: %[[BITS:.*]] = llvm.bitcast %[[H]] : bf16 to i16
// CHECK: %[[WIDE:.*]] = llvm.zext %[[BITS]] : i16 to i32
// CHECK: %[[SIXTEEN:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK: %[[HIGH:.*]] = llvm.shl %[[WIDE]], %[[SIXTEEN]] : i32
// CHECK: %[[X:.*]] = llvm.bitcast %[[HIGH]] : i32 to f32
// CHECK: %[[VBITS:.*]] = llvm.bitcast %[[V]] : vector<2xbf16> to vector<2xi16>
// CHECK: %[[VWIDE:.*]] = llvm.zext %[[VBITS]] : vector<2xi16> to vector<2xi32>
// CHECK: %[[VSIXTEEN:.*]] = llvm.mlir.constant(dense<16> : vector<2xi32>) : vector<2xi32>
// CHECK: %[[VHIGH:.*]] = llvm.shl %[[VWIDE]], %[[VSIXTEEN]] : vector<2xi32>
// CHECK: %[[Y:.*]] = llvm.bitcast %[[VHIGH]] : vector<2xi32> to vector<2xf32>
// CHECK: %[[Z:.*]] = llvm.fpext %[[F]] : f16 to f32
// CHECK: %[[W:.*]] = llvm.fpext %[[H]] : bf16 to f64
// CHECK: llvm.insertvalue %[[X]]
// CHECK: llvm.insertvalue %[[Y]]
// CHECK: llvm.insertvalue %[[Z]]
// CHECK: llvm.insertvalue %[[W]]
gpu.module @kernels {
  llvm.func @epilogue(%a: i64, %b: i64, %acc: !llvm.struct<(f32, f32, f32, f32)>,
                      %h: bf16, %v: vector<2xbf16>, %f: f16)
      -> !llvm.struct<(f32, vector<2xf32>, f32, f64)> {
    %d = nvvm.wgmma.mma_async %a, %b, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
    %x = llvm.fpext %h : bf16 to f32
    %y = llvm.fpext %v : vector<2xbf16> to vector<2xf32>
    %z = llvm.fpext %f : f16 to f32
    %w = llvm.fpext %h : bf16 to f64
    %0 = llvm.mlir.poison : !llvm.struct<(f32, vector<2xf32>, f32, f64)>
    %1 = llvm.insertvalue %x, %0[0] : !llvm.struct<(f32, vector<2xf32>, f32, f64)>
    %2 = llvm.insertvalue %y, %1[1] : !llvm.struct<(f32, vector<2xf32>, f32, f64)>
    %3 = llvm.insertvalue %z, %2[2] : !llvm.struct<(f32, vector<2xf32>, f32, f64)>
    %4 = llvm.insertvalue %w, %3[3] : !llvm.struct<(f32, vector<2xf32>, f32, f64)>
    llvm.return %4 : !llvm.struct<(f32, vector<2xf32>, f32, f64)>
  }
}

// -----

// No wgmma: LLVM may narrow the arithmetic around the widening (exact, and
// ptxas serializes nothing), so it stays an fpext.
// CHECK-LABEL: llvm.func @elementwise(
// CHECK: llvm.fpext %{{.*}} : bf16 to f32
// CHECK-NOT: llvm.shl
gpu.module @kernels {
  llvm.func @elementwise(%h: bf16) -> f32 {
    %x = llvm.fpext %h : bf16 to f32
    llvm.return %x : f32
  }
}
