//===- EpilogueKernels.h - generated elementwise and BN kernels -*- C++ -*-===//
//
// Builders of the kernels that apply a fused op's epilogue and batch-norm
// stage to a GEMM output in memory. Each kernel is a gpu.func of arith,
// math, scf, gpu and llvm (memory) ops; launch geometry is given with each.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_EPILOGUEKERNELS_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_EPILOGUEKERNELS_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::fusion {

/// An f32 scalar function of an element and one element per column vector.
using ScalarFn = std::function<Value(OpBuilder &, Location, Value, ValueRange)>;

/// Threads per block of every generated kernel, and per warp.
constexpr int64_t kBlockSize = 256;
constexpr int32_t kWarpSize = 32;

/// Bytes of one element of a float type.
inline int64_t elementBytes(Type elementType) {
  return elementType.getIntOrFloatBitWidth() / 8;
}

/// `value` (a float or a vector of floats) extended to f32, or truncated
/// from f32 to `elementType`; unchanged when already of that type.
Value widenToF32(OpBuilder &builder, Location loc, Value value);
Value narrowTo(OpBuilder &builder, Location loc, Value value, Type elementType);

/// Elements each thread of an elementwise kernel handles: 16 bytes when the
/// row length allows it, else 1.
int64_t getVectorWidth(Type elementType, int64_t columns);

/// The shape of the matrices a kernel works on.
struct MatrixShape {
  Type elementType;
  int64_t columns;
  int64_t vectorWidth;
};

/// `@name(ptr in, ptr out, i64 groups, ptr column...)`: out = fn(in, col[n])
/// per element; `groups` = M * N / vectorWidth, one per thread, in blocks of
/// kBlockSize. `in` may equal `out`. Columns have `columnTypes` elements.
gpu::GPUFuncOp buildElementwiseKernel(OpBuilder &builder, Location loc,
                                      StringRef name, MatrixShape shape,
                                      TypeRange columnTypes,
                                      const ScalarFn &fn);

/// `@name(ptr in, i64 rows, i64 rowsPerChunk, ptr mean, ptr m2, ptr
/// column...)`: per column and chunk of rows, the Welford mean and sum of
/// squared deviations of fn(in, col[n]), stored at [n * chunks + chunk] of
/// `mean`/`m2` (f32). Grid: (ceil(N / vectorWidth / kBlockSize), chunks).
gpu::GPUFuncOp buildColumnStatsKernel(OpBuilder &builder, Location loc,
                                      StringRef name, MatrixShape shape,
                                      TypeRange columnTypes,
                                      const ScalarFn &fn);

/// Which optional operands a batch-norm finalize kernel takes.
struct BatchNormOperands {
  bool weight = false, bias = false, runningStats = false;
  Type statType; ///< element type of weight, bias and running stats
};

/// `@name(ptr mean, ptr m2, i64 rows, i64 rowsPerChunk, i64 chunks, [ptr
/// weight], [ptr bias], [ptr runningMean, ptr runningVar], [ptr newMean, ptr
/// newVar], ptr center, ptr scale, ptr shift)`, the new running statistics
/// in training mode only. One warp per column merges the chunks' statistics
/// (Chan: each lane a strided subset in order, then a fixed butterfly, so the
/// result is the same bits run to run), writes the updated running
/// statistics, and the f32 per-column `center`, `scale` and `shift` that
/// normalize: y = (x - center) * scale + shift.
/// In inference mode `mean`, `m2`, `rows`, `rowsPerChunk` and `chunks` are
/// unused and the running statistics give center and scale.
/// Grid: ceil(N * kWarpSize / kBlockSize).
gpu::GPUFuncOp buildBatchNormFinalizeKernel(OpBuilder &builder, Location loc,
                                            StringRef name, int64_t columns,
                                            BatchNormConfigAttr config,
                                            BatchNormOperands operands);

} // namespace mlir::fusion

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_EPILOGUEKERNELS_H
