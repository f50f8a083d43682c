//===- BatchNormLowering.cpp - the host code of batch norms ---------------===//

#include "HostLowering.h"

#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::host;

Value BatchNormLowering::statisticsChunkRows(Value rows, int64_t columns,
                                             int64_t vectorWidth) {
  // About 256 blocks of statistics (two per SM of an H100, each thread with
  // 8 rows of loads in flight), at least 64 rows each: few chunks keep the
  // partial statistics, and the finalize kernel's merges, small.
  int64_t columnBlocks = (columns / vectorWidth + kBlockSize - 1) / kBlockSize;
  return max(c64(64), ceilDiv(mul(rows, c64(columnBlocks)), 256));
}

void BatchNormLowering::planBatchNorm(Operation *op) {
  Value result = op->getResult(0);
  Value rows = rowsOf(result);
  int64_t columns = tensorType(result).getDimSize(1);
  // A generated GEMM kernel writes the moments of each block row; the
  // statistics kernel those of its chunks.
  auto fused = dyn_cast<FusedLinearOp>(op);
  GemmConfigAttr config = fused ? getConfig(fused) : GemmConfigAttr();
  BatchNormScratch s;
  s.rowsPerChunk =
      config && config.isGenerated()
          ? c64(config.getBlockM())
          : statisticsChunkRows(rows, columns, shapeOf(result).vectorWidth);
  s.chunks = ceilDiv(rows, s.rowsPerChunk);
  Value partialBytes = mul(mul(s.chunks, c64(columns)), c64(4));
  Value columnBytes = c64(columns * 4);
  s.mean = reserve(partialBytes);
  s.m2 = reserve(partialBytes);
  s.center = reserve(columnBytes);
  s.scale = reserve(columnBytes);
  s.shift = reserve(columnBytes);
  scratch[op] = s;
}

void BatchNormLowering::emitBatchNorm(
    Operation *op, Buffer input, Buffer output, MatrixShape shape,
    ValueRange columns, const ScalarFn &fn, const BatchNormValues &bn,
    ElementwiseOpInterface after, const ExtraOutputs &extra, bool statistics) {
  const BatchNormScratch &s = scratch.at(op);
  Type f32 = b.getF32Type();
  SmallVector<ColumnOperand> columnOperands = columnOperandsOf(columns);
  SmallVector<Value> columnBuffers = bufferPtrs(columns);
  BatchNormConfigAttr config = bn.config;
  if (config.isTraining() && statistics) {
    Kernel stats = buildKernel([&] {
      return buildColumnStatsKernel(b, loc, kernelName(op, "stats"), shape,
                                    columnOperands, fn);
    });
    SmallVector<Value> operands{input.ptr, s.rowsPerChunk, s.mean, s.m2};
    operands.append(columnBuffers);
    launch(stats, input.rows, operands);
  }

  BatchNormOperands present = bn.present(shape.elementType);
  Kernel finalize = buildKernel([&] {
    return buildBatchNormFinalizeKernel(b, loc, kernelName(op, "finalize"),
                                        shape.columns, config, present);
  });
  SmallVector<Value> operands;
  if (config.isTraining())
    operands = {s.mean, s.m2, s.rowsPerChunk};
  else
    operands = {nullPtr(), nullPtr(), c64(0)};
  appendBatchNormOperands(operands, bn);
  operands.append({s.center, s.scale, s.shift});
  launch(finalize, input.rows, operands);

  // The user's columns, the batch norm's center, scale and shift, then the
  // op's after it.
  SmallVector<ColumnOperand> normalizeColumns(columnOperands);
  normalizeColumns.append(3, ColumnOperand{f32});
  unsigned userColumns = columnOperands.size();
  ValueRange afterColumns = after ? after.getColumnOperands() : ValueRange();
  normalizeColumns.append(columnOperandsOf(afterColumns));
  // The extra outputs' functions read the user's columns alone.
  SmallVector<ScalarFn> extraFns =
      llvm::map_to_vector(extra.fns, [&](const ScalarFn &extraFn) -> ScalarFn {
        return [extraFn, userColumns](OpBuilder &nb, Location nl, Value x,
                                      ValueRange cols) {
          return extraFn(nb, nl, x, cols.take_front(userColumns));
        };
      });
  Kernel normalize = buildKernel([&] {
    return buildElementwiseKernel(
        b, loc, kernelName(op, "normalize"), shape, normalizeColumns,
        [&](OpBuilder &nb, Location nl, Value x, ValueRange cols) -> Value {
          Value value = fn(nb, nl, x, cols.take_front(userColumns));
          Value normalized = applyBatchNormCoefficients(
              nb, nl, value,
              {cols[userColumns], cols[userColumns + 1],
               cols[userColumns + 2]});
          if (!after)
            return normalized;
          return after.buildScalar(nb, nl, normalized,
                                   cols.drop_front(userColumns + 3),
                                   ValueRange());
        },
        /*rows=*/{}, extraFns);
  });
  SmallVector<Value> normalizeOperands{
      input.ptr, after ? buffers.lookup(after->getResult(0)).ptr : output.ptr};
  normalizeOperands.append(columnBuffers);
  normalizeOperands.append({s.center, s.scale, s.shift});
  normalizeOperands.append(bufferPtrs(afterColumns));
  normalizeOperands.append(extra.ptrs);
  launch(normalize, input.rows, normalizeOperands);
}

void BatchNormLowering::appendBatchNormOperands(
    SmallVectorImpl<Value> &operands, const BatchNormValues &bn) {
  for (Value parameter : {bn.weight, bn.bias, bn.runningMean, bn.runningVar})
    if (parameter)
      operands.push_back(buffers.lookup(parameter).ptr);
  operands.append(bufferPtrs(bn.updatedRunningStats));
  operands.append(bufferPtrs(bn.batchStats));
}
