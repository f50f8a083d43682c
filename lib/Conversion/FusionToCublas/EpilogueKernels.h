//===- EpilogueKernels.h - generated elementwise and BN kernels -*- C++ -*-===//
//
// Builders of the kernels that apply a fused op's epilogue and batch-norm
// stage to a GEMM output in memory. Each kernel is a gpu.func of arith,
// math, scf, gpu and llvm (memory) ops; launch geometry is given with each.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOCUBLAS_EPILOGUEKERNELS_H
#define FUSION_LIB_CONVERSION_FUSIONTOCUBLAS_EPILOGUEKERNELS_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::fusion {

/// An f32 scalar function of an element and one element per column vector.
using ScalarFn =
    std::function<Value(OpBuilder &, Location, Value, ValueRange)>;

/// Threads per block of every generated kernel.
constexpr int64_t kBlockSize = 256;

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

/// Which optional operands a batch-norm kernel takes.
struct BatchNormOperands {
  bool weight = false, bias = false, runningStats = false;
  Type statType; ///< element type of weight, bias and running stats
};

/// `@name(ptr in, ptr out, i64 rows, [ptr weight], [ptr bias], [ptr
/// runningMean, ptr runningVar], [ptr newMean, ptr newVar], ptr column...)`:
/// out = batch_norm(fn(in, col[n])), the new running statistics in training
/// mode only. A persistent kernel: block b handles the column strips (of
/// vectorWidth columns) b, b + gridDim.x, ...; per strip, in training mode,
/// each thread runs Welford over rows tid, tid + kBlockSize, ...
/// (kRowsInFlight loads at a time), a fixed shared-memory tree merges the
/// threads (Chan), so the result is the same bits run to run; thread 0
/// updates the running statistics; then the block normalizes the strip,
/// whose second read hits L2 as long as gridDim.x strips fit there. Launch
/// with as many blocks as the GPU has SMs.
gpu::GPUFuncOp buildBatchNormKernel(OpBuilder &builder, Location loc,
                                    StringRef name, MatrixShape shape,
                                    TypeRange columnTypes, const ScalarFn &fn,
                                    BatchNormConfigAttr config,
                                    BatchNormOperands operands);

} // namespace mlir::fusion

#endif // FUSION_LIB_CONVERSION_FUSIONTOCUBLAS_EPILOGUEKERNELS_H
