//===- ElementwiseKernel.cpp - a scalar function over a matrix ------------===//

#include "ElementwiseKernel.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fusion;

Kernel mlir::fusion::buildElementwiseKernel(OpBuilder &builder, Location loc,
                                            StringRef name, MatrixShape shape,
                                            TypeRange columnTypes,
                                            const ScalarFn &fn,
                                            ArrayRef<int64_t> rowGroups) {
  OpBuilder::InsertionGuard insertion(builder);
  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
  SmallVector<Type> argTypes{ptr, ptr, builder.getI64Type()};
  argTypes.append(columnTypes.size() + rowGroups.size(), ptr);
  gpu::GPUFuncOp kernel = createKernel(builder, loc, name, argTypes);
  KernelEmitter e(builder, loc);
  auto args = kernel.getArguments();
  Value group = e.globalThreadX();
  emitGuarded(builder, loc, e.lessThan(group, args[2]), [&] {
    int64_t width = shape.vectorWidth;
    Value first = e.mul(group, e.i64(width));
    Value column =
        arith::RemUIOp::create(builder, loc, first, e.i64(shape.columns));
    SmallVector<Value> lanes =
        e.loadLanes(args[0], shape.elementType, first, width);
    // The `width` columns of a thread are consecutive and start at a multiple
    // of `width`: each column operand is one aligned vector load.
    SmallVector<SmallVector<Value>> operandLanes;
    for (auto [index, type] : llvm::enumerate(columnTypes))
      operandLanes.push_back(e.loadLanes(args[3 + index], type, column, width));
    Value row =
        arith::DivUIOp::create(builder, loc, first, e.i64(shape.columns));
    for (auto [index, groups] : llvm::enumerate(rowGroups))
      operandLanes.push_back(e.loadRowLanes(
          args[3 + columnTypes.size() + index], shape.elementType, row, column,
          width, groups, shape.columns));
    for (int64_t lane = 0; lane < width; ++lane) {
      SmallVector<Value> operands;
      for (auto &values : operandLanes)
        operands.push_back(values[lane]);
      lanes[lane] = fn(builder, loc, lanes[lane], operands);
    }
    e.storeLanes(lanes, args[1], shape.elementType, first);
  });
  // One thread per group of `width` elements of the M x N matrix.
  int64_t width = shape.vectorWidth;
  LaunchContract launch;
  launch.gridX = RowExpr::ceilDiv(shape.columns, width * kBlockSize);
  launch.blockSize = kBlockSize;
  launch.arguments = {KernelArgument::fromOperand(0),
                      KernelArgument::fromOperand(1),
                      KernelArgument::fromValue(
                          RowExpr::ceilDiv(shape.columns, width))};
  for (unsigned index = 0; index < columnTypes.size() + rowGroups.size();
       ++index)
    launch.arguments.push_back(KernelArgument::fromOperand(2 + index));
  return {kernel, std::move(launch)};
}
