// A weight joined of parts along N (a grouped GEMM: q, k and v of one
// input): the wgmma kernel reads the parts in place where its tiles each lie
// within one part, so the selection narrows the tiles to the widest that
// do (256, 128, then 64 columns); parts that no 64-column tile fits take
// cuBLASLt (a GEMM a part); the tiled kernels read none, so
// strategy=tiled's config is refused. With nothing fused in 16 bits (a
// plain grouped GEMM), `auto` gives cuBLASLt's GEMMs the batches past
// 1024 rows and one wgmma kernel the smaller ones; 3xTF32 takes the wgmma
// kernel at every batch.
// RUN: fusion-opt %s --split-input-file --fusion-select-gemm-config="target=sm_90" | FileCheck %s --check-prefix=AUTO
// RUN: fusion-opt %s --split-input-file --verify-diagnostics --fusion-select-gemm-config="strategy=tiled"

// Llama's q, k and v with grouped-query attention (2048, 512 and 512
// columns), nothing fused: 256-column tiles up to 1024 rows.
// AUTO-LABEL: func.func @gqa
// AUTO: fusion.lowering = #fusion.lowering<gemm = <cublaslt>, batches = [
// AUTO-SAME: #fusion.batch_gemm_config<max_rows = 1024, #fusion.gemm_config<wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>>]>
func.func @gqa(%x: tensor<?x2048xbf16>, %q: tensor<2048x2048xbf16>, %k: tensor<512x2048xbf16>, %v: tensor<512x2048xbf16>) -> tensor<?x3072xbf16> {
  %w = fusion.concat %q, %k, %v dim 0 : (tensor<2048x2048xbf16>, tensor<512x2048xbf16>, tensor<512x2048xbf16>) -> tensor<3072x2048xbf16>
  // expected-error @+1 {{'fusion.fused_linear' op a generated GEMM (mma_sync) cannot read this weight in parts (a concat): only the wgmma kernel (a TMA map a part) and cuBLASLt (a GEMM a part) read one}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x2048xbf16>, tensor<3072x2048xbf16>) -> tensor<?x3072xbf16>
  return %0 : tensor<?x3072xbf16>
}

// -----

// Parts of 384 and 128 columns with an epilogue (not plain): the wgmma
// kernel at every batch, 128-column tiles.
// AUTO-LABEL: func.func @narrower
// AUTO: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x128,
func.func @narrower(%x: tensor<?x256xbf16>, %a: tensor<384x256xbf16>, %b: tensor<128x256xbf16>) -> tensor<?x512xbf16> {
  %w = fusion.concat %a, %b dim 0 : (tensor<384x256xbf16>, tensor<128x256xbf16>) -> tensor<512x256xbf16>
  // expected-error @+1 {{cannot read this weight in parts}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %acc, %zero : f32
    fusion.yield %r : f32
  } : (tensor<?x256xbf16>, tensor<512x256xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// -----

// 3xTF32: the wgmma kernel at every batch (twice cuBLAS's SGEMM).
// AUTO-LABEL: func.func @fp32
// AUTO: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = tf32x3, tile = 128x128,
func.func @fp32(%x: tensor<?x256xf32>, %a: tensor<256x256xf32>, %b: tensor<128x256xf32>) -> tensor<?x384xf32> {
  %w = fusion.concat %a, %b dim 0 : (tensor<256x256xf32>, tensor<128x256xf32>) -> tensor<384x256xf32>
  // expected-error @+1 {{cannot read this weight in parts}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x256xf32>, tensor<384x256xf32>) -> tensor<?x384xf32>
  return %0 : tensor<?x384xf32>
}

// -----

// A first part of 96 columns: no wgmma tile fits, cuBLASLt takes it.
// AUTO-LABEL: func.func @ragged_parts
// AUTO: fusion.lowering = #fusion.lowering<gemm = <cublaslt>>
func.func @ragged_parts(%x: tensor<?x256xbf16>, %a: tensor<96x256xbf16>, %b: tensor<160x256xbf16>) -> tensor<?x256xbf16> {
  %w = fusion.concat %a, %b dim 0 : (tensor<96x256xbf16>, tensor<160x256xbf16>) -> tensor<256x256xbf16>
  // expected-error @+1 {{cannot read this weight in parts}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x256xbf16>, tensor<256x256xbf16>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

// A concat along K is no grouped GEMM's weight: the negative case.
// AUTO-LABEL: func.func @joined_along_k
// AUTO: fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16, tile = 128x256,
func.func @joined_along_k(%x: tensor<?x512xbf16>, %a: tensor<512x256xbf16>, %b: tensor<512x256xbf16>) -> tensor<?x512xbf16> {
  %w = fusion.concat %a, %b dim 1 : (tensor<512x256xbf16>, tensor<512x256xbf16>) -> tensor<512x512xbf16>
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x512xbf16>, tensor<512x512xbf16>) -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}
