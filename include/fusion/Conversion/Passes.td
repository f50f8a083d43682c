//===- Passes.td - fusion conversion passes ----------------*- tablegen -*-===//

#ifndef FUSION_CONVERSION_PASSES_TD
#define FUSION_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFusionToLinalg : Pass<"fusion-lower-to-linalg"> {
  let summary = "Lower every fusion op to linalg/tensor/arith/math: the CPU "
                "reference, the executable specification of the dialect";
  let description = [{
    Each op becomes `linalg.generic`s on tensors computing exactly the
    semantics the dialect documents, so that with upstream bufferization
    and the LLVM lowering it runs on the CPU through `mlir-runner`
    (`--fusion-lower-to-cpu` is that pipeline). The GPU backends are
    compared against it.

    - GEMMs accumulate in f32; for f32 tensors the operands are first
      rounded to the op's `precision` (tf32: round-to-nearest, ties away,
      to a 10-bit mantissa, as `cvt.rna.tf32.f32`; bf16/f16: to that type).
    - Elementwise ops and the epilogue region are applied per element on
      f32 values; an unfused op on bf16/f16 tensors rounds its result, as
      PyTorch does, a fused op rounds once at the end.
    - Batch norm takes the column mean, then the biased variance as the mean
      of squared deviations (two passes, no cancellation), normalizes with
      `rsqrt(var + eps)`, and updates the running statistics with the
      unbiased variance `M / (M - 1) * var`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // FUSION_CONVERSION_PASSES_TD
