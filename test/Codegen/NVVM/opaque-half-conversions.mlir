// RUN: fusion-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(fusion-opaque-half-conversions))' | FileCheck %s

// A kernel that issues wgmma: each bf16 -> f32 widening becomes its bits
// in the high half of an i32, scalars and vectors; f16's PTX's cvt.f32.f16;
// a widening to f64 stays; each f32 -> f16 rounding first adds -0.0 in
// inline PTX, lane by lane; a rounding to bf16 stays.
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
// CHECK: %[[FBITS:.*]] = llvm.bitcast %[[F]] : f16 to i16
// CHECK: %[[Z:.*]] = llvm.inline_asm "cvt.f32.f16 $0, $1;", "=f,h" %[[FBITS]] : (i16) -> f32
// CHECK: %[[W:.*]] = llvm.fpext %[[H]] : bf16 to f64
// CHECK: %[[SHIFTED:.*]] = llvm.inline_asm "add.rn.f32 $0, $1, 0f80000000;", "=f,f" %[[X]] : (f32) -> f32
// CHECK: llvm.fptrunc %[[SHIFTED]] : f32 to f16
// CHECK: %[[LANE0:.*]] = llvm.extractelement %[[Y]]
// CHECK: llvm.inline_asm "add.rn.f32 $0, $1, 0f80000000;", "=f,f" %[[LANE0]]
// CHECK: llvm.extractelement %[[Y]]
// CHECK: llvm.inline_asm "add.rn.f32
// CHECK: llvm.fptrunc %{{.*}} : vector<2xf32> to vector<2xf16>
// CHECK: llvm.fptrunc %[[X]] : f32 to bf16
// CHECK: llvm.insertvalue %[[X]]
// CHECK: llvm.insertvalue %[[Y]]
// CHECK: llvm.insertvalue %[[Z]]
// CHECK: llvm.insertvalue %[[W]]
gpu.module @kernels {
  llvm.func @epilogue(%a: i64, %b: i64, %acc: !llvm.struct<(f32, f32, f32, f32)>,
                      %h: bf16, %v: vector<2xbf16>, %f: f16)
      -> !llvm.struct<(f32, vector<2xf32>, f32, f64, f16, vector<2xf16>, bf16)> {
    %d = nvvm.wgmma.mma_async %a, %b, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
    %x = llvm.fpext %h : bf16 to f32
    %y = llvm.fpext %v : vector<2xbf16> to vector<2xf32>
    %z = llvm.fpext %f : f16 to f32
    %w = llvm.fpext %h : bf16 to f64
    %r = llvm.fptrunc %x : f32 to f16
    %q = llvm.fptrunc %y : vector<2xf32> to vector<2xf16>
    %t = llvm.fptrunc %x : f32 to bf16
    %0 = llvm.mlir.poison : !llvm.struct<(f32, vector<2xf32>, f32, f64, f16, vector<2xf16>, bf16)>
    %1 = llvm.insertvalue %x, %0[0] : !llvm.struct<(f32, vector<2xf32>, f32, f64, f16, vector<2xf16>, bf16)>
    %2 = llvm.insertvalue %y, %1[1] : !llvm.struct<(f32, vector<2xf32>, f32, f64, f16, vector<2xf16>, bf16)>
    %3 = llvm.insertvalue %z, %2[2] : !llvm.struct<(f32, vector<2xf32>, f32, f64, f16, vector<2xf16>, bf16)>
    %4 = llvm.insertvalue %w, %3[3] : !llvm.struct<(f32, vector<2xf32>, f32, f64, f16, vector<2xf16>, bf16)>
    %5 = llvm.insertvalue %r, %4[4] : !llvm.struct<(f32, vector<2xf32>, f32, f64, f16, vector<2xf16>, bf16)>
    %6 = llvm.insertvalue %q, %5[5] : !llvm.struct<(f32, vector<2xf32>, f32, f64, f16, vector<2xf16>, bf16)>
    %7 = llvm.insertvalue %t, %6[6] : !llvm.struct<(f32, vector<2xf32>, f32, f64, f16, vector<2xf16>, bf16)>
    llvm.return %7 : !llvm.struct<(f32, vector<2xf32>, f32, f64, f16, vector<2xf16>, bf16)>
  }
}

// -----

// No wgmma: LLVM may narrow the arithmetic around the widenings (exact,
// and ptxas serializes nothing), so they stay fpexts, and the rounding
// stays as it is.
// CHECK-LABEL: llvm.func @elementwise(
// CHECK: llvm.fpext %{{.*}} : bf16 to f32
// CHECK: llvm.fpext %{{.*}} : f16 to f32
// CHECK-NOT: llvm.shl
// CHECK-NOT: llvm.inline_asm
gpu.module @kernels {
  llvm.func @elementwise(%h: bf16, %f: f16) -> f16 {
    %x = llvm.fpext %h : bf16 to f32
    %y = llvm.fpext %f : f16 to f32
    %s = llvm.fadd %x, %y : f32
    %r = llvm.fptrunc %s : f32 to f16
    llvm.return %r : f16
  }
}
