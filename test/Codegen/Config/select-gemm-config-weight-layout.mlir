// A weight stored [in_features, out_features] (weight_layout in_out): the
// generated kernels read [out_features, in_features] weights only, so the
// strategies that choose (auto, wgmma) take cuBLASLt for it, and a
// generated config, chosen by strategy=tiled or written by hand, is refused.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config | FileCheck %s --check-prefix=AUTO
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="strategy=wgmma target=sm_90" | FileCheck %s --check-prefix=WGMMA
// RUN: fusion-opt %s --split-input-file --verify-diagnostics --fusion-select-gemm-config="strategy=tiled"

// AUTO-LABEL: func.func @fp32_in_out
// AUTO: fusion.lowering = #fusion.lowering<gemm = <cublaslt>
// WGMMA-LABEL: func.func @fp32_in_out
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <cublaslt>
func.func @fp32_in_out(%x: tensor<?x64xf32>, %w: tensor<64x48xf32>) -> tensor<?x48xf32> {
  // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (mma_sync) reads a weight stored [out_features, in_features]; this one is stored in_out ([in_features, out_features]): cuBLASLt computes it}}
  %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<64x48xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

// The same op with nn.Linear's layout takes the generated kernels (the
// negative case of the rule).
// AUTO-LABEL: func.func @fp32_out_in
// AUTO: fusion.lowering = #fusion.lowering<gemm = <mma_sync
// WGMMA-LABEL: func.func @fp32_out_in
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <wgmma
func.func @fp32_out_in(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

// WGMMA-LABEL: func.func @bf16_in_out
// WGMMA: fusion.lowering = #fusion.lowering<gemm = <cublaslt>
func.func @bf16_in_out(%x: tensor<?x64xbf16>, %w: tensor<64x48xbf16>) -> tensor<?x48xbf16> {
  // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (mma_sync) reads a weight stored [out_features, in_features]}}
  %0 = fusion.fused_linear %x, %w weight_layout in_out epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x64xbf16>, tensor<64x48xbf16>) -> tensor<?x48xbf16>
  return %0 : tensor<?x48xbf16>
}
