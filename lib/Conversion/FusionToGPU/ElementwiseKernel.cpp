//===- ElementwiseKernel.cpp - a scalar function over a matrix ------------===//

#include "ElementwiseKernel.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fusion;

Kernel mlir::fusion::buildElementwiseKernel(OpBuilder &builder, Location loc,
                                            StringRef name, MatrixShape shape,
                                            TypeRange columnTypes,
                                            const ScalarFn &fn) {
  OpBuilder::InsertionGuard insertion(builder);
  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
  SmallVector<Type> argTypes{ptr, ptr, builder.getI64Type()};
  argTypes.append(columnTypes.size(), ptr);
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
    SmallVector<SmallVector<Value>> columnLanes;
    for (auto [index, type] : llvm::enumerate(columnTypes))
      columnLanes.push_back(e.loadLanes(args[3 + index], type, column, width));
    for (int64_t lane = 0; lane < width; ++lane) {
      SmallVector<Value> columns;
      for (auto &values : columnLanes)
        columns.push_back(values[lane]);
      lanes[lane] = fn(builder, loc, lanes[lane], columns);
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
  for (unsigned index = 0; index < columnTypes.size(); ++index)
    launch.arguments.push_back(KernelArgument::fromOperand(2 + index));
  return {kernel, std::move(launch)};
}
