//===- BatchNormKernels.h - column statistics and their finalization -*- C++ -*-===//
//
// The kernels of a training batch norm's statistics: per-chunk column
// moments of a matrix in memory, and the finalize kernel that merges them
// (or, in inference, reads the running statistics) into the per-column
// center, scale and shift the normalizing elementwise kernel applies.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_KERNELS_BATCHNORMKERNELS_H
#define FUSION_CODEGEN_KERNELS_BATCHNORMKERNELS_H

#include "fusion/Codegen/Kernels/KernelSupport.h"

namespace mlir::fusion {

/// Per column and chunk of `rowsPerChunk` rows, the Welford mean and sum of
/// squared deviations of fn(in, col[n]), stored at [n * chunks + chunk] of
/// `mean`/`m2` (f32), chunks = ceil(M / rowsPerChunk).
/// Launch operands: (ptr in, i64 rowsPerChunk, ptr mean, ptr m2, ptr
/// column...).
Kernel buildColumnStatsKernel(OpBuilder &builder, Location loc, StringRef name,
                              MatrixShape shape,
                              ArrayRef<ColumnOperand> columns,
                              const ScalarFn &fn);

/// Which optional operands the kernels that finish a batch norm take.
struct BatchNormOperands {
  bool weight = false, bias = false, runningStats = false;
  Type statType; ///< element type of weight, bias and running stats
  /// Element type of the batch mean and inverse standard deviation the
  /// kernel writes (training); null where it writes none.
  Type batchStatType;
};

/// What a column's batch statistics (training) or running ones (inference)
/// make of it: y = (x - center) * scale + shift, with center the mean,
/// scale = weight * invStd (invStd = 1 / sqrt(variance + epsilon)) and
/// shift the bias. Centering first keeps the precision when |mean| is large
/// against the spread.
struct BatchNormCoefficients {
  Value center, scale, shift;
};
/// `weight` and `bias` (f32) may be null.
BatchNormCoefficients buildBatchNormCoefficients(OpBuilder &builder,
                                                 Location loc, Value mean,
                                                 Value invStd, Value weight,
                                                 Value bias);
/// (x - center) * scale + shift.
Value applyBatchNormCoefficients(OpBuilder &builder, Location loc, Value x,
                                 const BatchNormCoefficients &coefficients);

/// A running statistic after a training step (f32):
/// (1 - momentum) * running + momentum * batch.
Value buildRunningStatisticUpdate(OpBuilder &builder, Location loc,
                                  BatchNormConfigAttr config, Value running,
                                  Value batch);
/// The unbiased variance the running variance takes, of a biased one over
/// `rows` (f32) rows: variance * rows / (rows - 1).
Value buildUnbiasedVariance(OpBuilder &builder, Location loc, Value variance,
                            Value rows);

/// A quarter warp per column merges the chunks' moments (Chan: each lane a
/// strided subset in order, then a fixed butterfly, so the result is the
/// same bits run to run), writes the updated running statistics (training with
/// running statistics), the batch mean and inverse standard deviation
/// (where `operands` asks for them), and the f32 per-column `center`,
/// `scale` and `shift` that normalize: y = (x - center) * scale + shift. In
/// inference mode the running statistics give center and scale.
/// Launch operands: (ptr mean, ptr m2, i64 rowsPerChunk, [ptr weight], [ptr
/// bias], [ptr runningMean, ptr runningVar], [ptr newMean, ptr newVar],
/// [ptr batchMean, ptr batchInvStd], ptr center, ptr scale, ptr shift); in
/// inference `mean`, `m2` and `rowsPerChunk` are unused.
Kernel buildBatchNormFinalizeKernel(OpBuilder &builder, Location loc,
                                    StringRef name, int64_t columns,
                                    BatchNormConfigAttr config,
                                    BatchNormOperands operands);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_KERNELS_BATCHNORMKERNELS_H
