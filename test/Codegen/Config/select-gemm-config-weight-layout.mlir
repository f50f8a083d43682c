// A weight stored [in_features, out_features] (weight_layout in_out): the
// wgmma kernel reads a 16-bit one N-major and 3xTF32's splitters transpose
// an f32 one, so the strategies that choose (auto, wgmma) take it for bf16,
// f16 and fp32 (whose small batches get no swapped tiles: those split w in
// registers); tf32 (K-major only) and rows of N not 16-byte multiples take
// cuBLASLt; the tiled kernels read none, so strategy=tiled's config is
// refused.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="target=sm_90" | FileCheck %s --check-prefix=AUTO
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=wgmma target=sm_90" | FileCheck %s --check-prefix=WGMMA
// RUN: fusion-opt %s --split-input-file --verify-diagnostics --fusion-select-gemm-config="strategy=tiled"

// AUTO-LABEL: func.func @fp32_in_out
// AUTO: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 128x128, {{.*}}batches = [#fusion.batch_gemm_config<max_rows = {{[0-9]+}}, #fusion.gemm_config<wgmma, mma = tf32x3, tile = 64x64,
// AUTO-NOT: w_x
// WGMMA-LABEL: func.func @fp32_in_out
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3
func.func @fp32_in_out(%x: tensor<?x256xf32>, %w: tensor<256x200xf32>) -> tensor<?x200xf32> {
  // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (mma_sync) cannot read this weight stored in_out ([in_features, out_features]): only the wgmma kernel reads one}}
  %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x256xf32>, tensor<256x200xf32>) -> tensor<?x200xf32>
  return %0 : tensor<?x200xf32>
}

// -----

// The same op with nn.Linear's layout also takes swapped tiles for its
// small batches (the negative case of the rule).
// AUTO-LABEL: func.func @fp32_out_in
// AUTO: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, {{.*}}operands = w_x
// WGMMA-LABEL: func.func @fp32_out_in
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <wgmma
func.func @fp32_out_in(%x: tensor<?x256xf32>, %w: tensor<200x256xf32>) -> tensor<?x200xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x256xf32>, tensor<200x256xf32>) -> tensor<?x200xf32>
  return %0 : tensor<?x200xf32>
}

// -----

// AUTO-LABEL: func.func @tf32_in_out
// AUTO: fusion.lowering = #fusion.lowering<gemm = <cublaslt>
// WGMMA-LABEL: func.func @tf32_in_out
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <cublaslt>
func.func @tf32_in_out(%x: tensor<?x64xf32>, %w: tensor<64x48xf32>) -> tensor<?x48xf32> {
  // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (mma_sync) cannot read this weight stored in_out}}
  %0 = fusion.fused_linear %x, %w weight_layout in_out precision tf32 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<64x48xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

// 16 bits: the wgmma kernel.
// AUTO-LABEL: func.func @bf16_in_out
// AUTO: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16
// WGMMA-LABEL: func.func @bf16_in_out
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16
func.func @bf16_in_out(%x: tensor<?x64xbf16>, %w: tensor<64x48xbf16>) -> tensor<?x48xbf16> {
  // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (mma_sync) cannot read this weight stored in_out}}
  %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<64x48xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}

// -----

// AUTO-LABEL: func.func @f16_in_out
// AUTO: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = f16
// WGMMA-LABEL: func.func @f16_in_out
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = f16
func.func @f16_in_out(%x: tensor<?x64xf16>, %w: tensor<64x48xf16>) -> tensor<?x48xf16> {
  // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (mma_sync) cannot read this weight stored in_out}}
  %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf16>, tensor<64x48xf16>) -> tensor<?x48xf16>
  return %0 : tensor<?x48xf16>
}

// -----

// Rows of N = 44 bf16 (88 bytes) are no TMA stride: cuBLASLt.
// AUTO-LABEL: func.func @bf16_in_out_unaligned_n
// AUTO: fusion.lowering = #fusion.lowering<gemm = <cublaslt>
// WGMMA-LABEL: func.func @bf16_in_out_unaligned_n
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <cublaslt>
func.func @bf16_in_out_unaligned_n(%x: tensor<?x64xbf16>, %w: tensor<64x44xbf16>) -> tensor<?x44xbf16> {
  // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (mma_sync) cannot read this weight stored in_out}}
  %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<64x44xbf16>) -> tensor<?x44xbf16>
  return %0 : tensor<?x44xbf16>
}
