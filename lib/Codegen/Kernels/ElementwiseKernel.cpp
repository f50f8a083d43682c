//===- ElementwiseKernel.cpp - a scalar function over a matrix ------------===//

#include "fusion/Codegen/Kernels/ElementwiseKernel.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fusion;

/// Rows each thread handles where it has column operands, loaded once for
/// them all: a chunk a thread loaded three column vectors of f32 (96 bytes
/// from L1) for each 16 bytes of a bf16 batch norm's output, which bound
/// its normalizing pass. Without column operands a thread takes one row: 8
/// left bf16 `y - s` (a row operand) 3% slower, its blocks a few waves
/// with a tail.
constexpr int64_t kRowsPerThreadWithColumns = 8;

namespace {

/// How the kernel's threads divide a matrix of `shape`: a block is
/// threadsX chunks of a row (as many as a row has, up to the block) by
/// threadsY rows; each thread takes rowsPerThread rows, threadsY apart.
struct ElementwiseTiling {
  ElementwiseTiling(MatrixShape shape, bool hasColumns)
      : rowsPerThread(hasColumns ? kRowsPerThreadWithColumns : 1),
        rowChunks(shape.columns / shape.vectorWidth),
        threadsX(std::min<int64_t>(kBlockSize, llvm::PowerOf2Ceil(rowChunks))),
        threadsY(kBlockSize / threadsX),
        columnBlocks(llvm::divideCeil(rowChunks, threadsX)) {}

  int64_t rowsPerThread, rowChunks, threadsX, threadsY, columnBlocks;
};

/// A thread's place: its chunk of a row, its first row and first column
/// (of the last chunk in bounds where it is past the row).
struct ElementwiseThread {
  Value chunk, firstRow, column;

  static ElementwiseThread of(OpBuilder &builder, Location loc,
                              const ElementwiseTiling &tiling, int64_t width) {
    KernelEmitter e(builder, loc);
    Value thread = e.id(gpu::Dimension::x, /*block=*/false);
    // One grid dimension, the column blocks of a row block consecutive:
    // grid Y's 65535 blocks would cap the batch at 65535 rows a thread's.
    Value block = e.id(gpu::Dimension::x, /*block=*/true);
    Value columnBlock =
        arith::RemUIOp::create(builder, loc, block, e.i64(tiling.columnBlocks));
    Value chunk = e.add(
        e.mul(columnBlock, e.i64(tiling.threadsX)),
        arith::RemUIOp::create(builder, loc, thread, e.i64(tiling.threadsX)));
    // Row blocks go last first: the rows a GEMM wrote last, which a batch
    // norm's normalizing pass and backend 1's epilogues read, are the ones
    // still in L2.
    Value rowBlocks = arith::DivUIOp::create(
        builder, loc, e.gridDim(gpu::Dimension::x), e.i64(tiling.columnBlocks));
    Value rowBlock = arith::SubIOp::create(
        builder, loc, e.add(rowBlocks, e.i64(-1)),
        arith::DivUIOp::create(builder, loc, block,
                               e.i64(tiling.columnBlocks)));
    Value firstRow = e.add(
        e.mul(rowBlock, e.i64(tiling.threadsY * tiling.rowsPerThread)),
        arith::DivUIOp::create(builder, loc, thread, e.i64(tiling.threadsX)));
    // Chunks past the row and rows past M compute on the last ones (in
    // bounds) and store nothing.
    Value column = e.mul(arith::MinSIOp::create(builder, loc, chunk,
                                                e.i64(tiling.rowChunks - 1)),
                         e.i64(width));
    return {chunk, firstRow, column};
  }
};

} // namespace

Kernel mlir::fusion::buildElementwiseKernel(OpBuilder &builder, Location loc,
                                            StringRef name, MatrixShape shape,
                                            ArrayRef<ColumnOperand> columns,
                                            const ScalarFn &fn,
                                            ArrayRef<RowOperandSource> rows,
                                            ArrayRef<ScalarFn> intermediates) {
  OpBuilder::InsertionGuard insertion(builder);
  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
  SmallVector<Type> argTypes{ptr, ptr, builder.getI64Type()};
  size_t operandCount = columns.size() + rows.size();
  argTypes.append(operandCount + intermediates.size(), ptr);
  gpu::GPUFuncOp kernel = createKernel(builder, loc, name, argTypes);
  LaunchContract launch;
  emitPredecessorWait(builder, loc, kernel, launch);
  KernelEmitter e(builder, loc);
  auto args = kernel.getArguments();
  int64_t width = shape.vectorWidth;
  ElementwiseTiling tiling(shape, !columns.empty());
  Value rowCount = args[2];
  ElementwiseThread thread = ElementwiseThread::of(builder, loc, tiling, width);
  Value column = thread.column;
  Value lastRow = arith::SubIOp::create(builder, loc, rowCount, e.i64(1));
  // The `width` columns of a thread are consecutive and start at a multiple
  // of `width`: each column operand is one aligned vector load.
  SmallVector<SmallVector<Value>> columnLanes;
  for (auto [index, operand] : llvm::enumerate(columns))
    columnLanes.push_back(
        e.loadColumnLanes(operand, args[3 + index], column, width));
  SmallVector<Value> rowIndices;
  // Of each row: the output's lanes, then each intermediate's.
  SmallVector<SmallVector<SmallVector<Value>>> results;
  for (int64_t r = 0; r < tiling.rowsPerThread; ++r) {
    Value row = e.add(thread.firstRow, e.i64(r * tiling.threadsY));
    rowIndices.push_back(row);
    Value safeRow = arith::MinSIOp::create(builder, loc, row, lastRow);
    Value element = e.add(e.mul(safeRow, e.i64(shape.columns)), column);
    SmallVector<Value> lanes =
        e.loadLanes(args[0], shape.elementType, element, width);
    SmallVector<SmallVector<Value>> operandLanes(columnLanes);
    for (auto [index, source] : llvm::enumerate(rows))
      operandLanes.push_back(e.loadRowLanes(source,
                                            args[3 + columns.size() + index],
                                            shape.elementType, safeRow, column,
                                            width, shape.columns));
    SmallVector<SmallVector<Value>> rowResults(1 + intermediates.size());
    for (int64_t lane = 0; lane < width; ++lane) {
      SmallVector<Value> operands;
      for (auto &values : operandLanes)
        operands.push_back(values[lane]);
      rowResults[0].push_back(fn(builder, loc, lanes[lane], operands));
      for (auto [i, intermediate] : llvm::enumerate(intermediates))
        rowResults[1 + i].push_back(
            intermediate(builder, loc, lanes[lane], operands));
    }
    results.push_back(std::move(rowResults));
  }
  Value chunkInside = e.lessThan(thread.chunk, e.i64(tiling.rowChunks));
  for (auto [row, rowResults] : llvm::zip(rowIndices, results)) {
    Value inside =
        arith::AndIOp::create(builder, loc, chunkInside,
                              e.lessThan(row, rowCount));
    auto store = scf::IfOp::create(builder, loc, inside,
                                   /*withElseRegion=*/false);
    OpBuilder::InsertionGuard branch(builder);
    builder.setInsertionPointToStart(&store.getThenRegion().front());
    Value element = e.add(e.mul(row, e.i64(shape.columns)), column);
    e.storeLanes(rowResults[0], args[1], shape.elementType, element);
    for (auto [i, lanes] : llvm::enumerate(ArrayRef(rowResults).drop_front()))
      e.storeLanes(lanes, args[3 + operandCount + i], shape.elementType,
                   element);
  }
  gpu::ReturnOp::create(builder, loc);
  launch.gridX = RowExpr::ceilDiv(1, tiling.threadsY * tiling.rowsPerThread,
                                  tiling.columnBlocks);
  launch.blockSize = kBlockSize;
  launch.arguments = {KernelArgument::fromOperand(0),
                      KernelArgument::fromOperand(1),
                      KernelArgument::fromValue(RowExpr::rows())};
  for (unsigned index = 0; index < operandCount + intermediates.size(); ++index)
    launch.arguments.push_back(KernelArgument::fromOperand(2 + index));
  return {kernel, std::move(launch)};
}
