// A grouped GEMM (q, k and v of one input): the weight and the bias are
// concats of parts, which the GEMMs read in place. The wgmma kernel takes
// a TMA map a part (each of its own rows) and selects each tile's by its
// first column, with the column's place in the part; the bias's parts
// are memrefs, each column's element loaded from the part holding it.
// cuBLASLt multiplies each part into its columns of the output (rows N
// apart). A concat that no GEMM reads in place is refused.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics --fusion-lower-to-gpu | FileCheck %s

// CHECK-LABEL: llvm.func @grouped(
// CHECK: fusion_rt.encode_tensor_map %{{.*}}, <bf16> %arg2 rows %arg1
// CHECK: fusion_rt.encode_tensor_map %{{.*}}, <bf16> %arg3 rows %{{.*}} columns
// CHECK: fusion_rt.encode_tensor_map %{{.*}}, <bf16> %arg4 rows %{{.*}} columns
// CHECK: fusion_rt.encode_tensor_map %{{.*}}, <bf16> %arg5 rows %{{.*}} columns
// CHECK: fusion_rt.launch @fusion_kernels::@grouped_{{.*}} args(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg6, %arg6, {{.*}}, %arg9, %arg9, {{.*}}, %arg7, %arg7, {{.*}}, %arg8, %arg8,
// CHECK: gpu.func @grouped_{{.*}}_gemm(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: !llvm.ptr, %arg4: !llvm.ptr, %arg5: memref<256xbf16>, %arg6: memref<?x512xbf16>, %arg7: memref<128xbf16>, %arg8: memref<128xbf16>) kernel attributes {fusion_rt.tensor_map_args = array<i64: 0, 1, 2, 3, 4>
// CHECK: nvgpu.tma.prefetch.descriptor
// CHECK: nvgpu.tma.prefetch.descriptor
// CHECK: nvgpu.tma.prefetch.descriptor
// CHECK: nvgpu.tma.prefetch.descriptor
// CHECK: %[[FROM1:.*]] = arith.cmpi uge, %[[COLUMN:.*]], %c256 : index
// CHECK-NEXT: %[[MAP1:.*]] = llvm.select %[[FROM1]], %arg3, %arg1 : i1, !llvm.ptr
// CHECK-NEXT: %[[FIRST1:.*]] = arith.select %[[FROM1]], %c256, %{{.*}} : index
// CHECK: %[[FROM2:.*]] = arith.cmpi uge, %[[COLUMN]], %c384 : index
// CHECK-NEXT: %[[MAP2:.*]] = llvm.select %[[FROM2]], %arg4, %[[MAP1]] : i1, !llvm.ptr
// CHECK-NEXT: %[[FIRST2:.*]] = arith.select %[[FROM2]], %c384, %[[FIRST1]] : index
// CHECK-NEXT: %[[MAP:.*]] = builtin.unrealized_conversion_cast %[[MAP2]] : !llvm.ptr to !nvgpu.tensormap.descriptor
// CHECK-NEXT: %[[LOCAL:.*]] = arith.subi %[[COLUMN]], %[[FIRST2]] : index
// CHECK: nvgpu.tma.async.load %[[MAP]][%{{.*}}, %[[LOCAL]]]
// CHECK: memref.load %arg5[%{{.*}}] : memref<256xbf16>
// CHECK: memref.load %arg7[%{{.*}}] : memref<128xbf16>
// CHECK: memref.load %arg8[%{{.*}}] : memref<128xbf16>
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @grouped(%x: tensor<?x256xbf16>, %a: tensor<256x256xbf16>, %b: tensor<128x256xbf16>, %c: tensor<128x256xbf16>, %ba: tensor<256xbf16>, %bb: tensor<128xbf16>, %bc: tensor<128xbf16>) -> tensor<?x512xbf16> {
    %w = fusion.concat %a, %b, %c dim 0 : (tensor<256x256xbf16>, tensor<128x256xbf16>, tensor<128x256xbf16>) -> tensor<512x256xbf16>
    %bias = fusion.concat %ba, %bb, %bc dim 0 : (tensor<256xbf16>, tensor<128xbf16>, tensor<128xbf16>) -> tensor<512xbf16>
    %0 = fusion.fused_linear %x, %w bias(%bias) epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>} : (tensor<?x256xbf16>, tensor<512x256xbf16>, tensor<512xbf16>) -> tensor<?x512xbf16>
    return %0 : tensor<?x512xbf16>
  }
}

// -----

// cuBLASLt: a GEMM a part, each of its bias part into its columns.
// CHECK-LABEL: llvm.func @grouped_cublas(
// CHECK: fusion_rt.cublaslt_gemm <bf16> in <bf16>, %{{.*}}, %arg2, %arg3, %arg5, %arg7, rows %arg1, n 256, k 64, alpha 1.000000e+00 out_stride 384 : i32
// CHECK: %[[AT:.*]] = llvm.getelementptr %arg7[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: fusion_rt.cublaslt_gemm <bf16> in <bf16>, %{{.*}}, %arg2, %arg4, %arg6, %[[AT]], rows %arg1, n 128, k 64, alpha 1.000000e+00 out_stride 384 : i32
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @grouped_cublas(%x: tensor<?x64xbf16>, %a: tensor<256x64xbf16>, %b: tensor<128x64xbf16>, %ba: tensor<256xbf16>, %bb: tensor<128xbf16>) -> tensor<?x384xbf16> {
    %w = fusion.concat %a, %b dim 0 : (tensor<256x64xbf16>, tensor<128x64xbf16>) -> tensor<384x64xbf16>
    %bias = fusion.concat %ba, %bb dim 0 : (tensor<256xbf16>, tensor<128xbf16>) -> tensor<384xbf16>
    %0 = fusion.fused_linear %x, %w bias(%bias) epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>>} : (tensor<?x64xbf16>, tensor<384x64xbf16>, tensor<384xbf16>) -> tensor<?x384xbf16>
    return %0 : tensor<?x384xbf16>
  }
}

// -----

module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @returned(%a: tensor<256x64xbf16>, %b: tensor<128x64xbf16>) -> tensor<384x64xbf16> {
    // expected-error @+1 {{'fusion.concat' op is compiled by the GPU backends only as the weight of a fused_linear joined along N (not of a dual GEMM), or as its bias joined of parts of the weight's widths: the GEMM reads the parts in place}}
    %w = fusion.concat %a, %b dim 0 : (tensor<256x64xbf16>, tensor<128x64xbf16>) -> tensor<384x64xbf16>
    return %w : tensor<384x64xbf16>
  }
}

// -----

// A bias of other parts than the weight's.
module attributes {fusion.target = #fusion.target<sm_90>} {
  func.func @bias_parts(%x: tensor<?x64xbf16>, %a: tensor<256x64xbf16>, %b: tensor<128x64xbf16>, %ba: tensor<128xbf16>, %bb: tensor<256xbf16>) -> tensor<?x384xbf16> {
    %w = fusion.concat %a, %b dim 0 : (tensor<256x64xbf16>, tensor<128x64xbf16>) -> tensor<384x64xbf16>
    // expected-error @+1 {{'fusion.concat' op is compiled by the GPU backends only as}}
    %bias = fusion.concat %ba, %bb dim 0 : (tensor<128xbf16>, tensor<256xbf16>) -> tensor<384xbf16>
    %0 = fusion.fused_linear %x, %w bias(%bias) epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } {fusion.lowering = #fusion.lowering<gemm = <cublaslt>>} : (tensor<?x64xbf16>, tensor<384x64xbf16>, tensor<384xbf16>) -> tensor<?x384xbf16>
    return %0 : tensor<?x384xbf16>
  }
}
