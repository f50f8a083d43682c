//===- ReductionKernel.cpp - row reductions of a matrix -------------------===//

#include "ReductionKernel.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fusion;

Kernel mlir::fusion::buildRowReductionKernel(OpBuilder &builder, Location loc,
                                             StringRef name,
                                             const RowReduction &r) {
  OpBuilder::InsertionGuard insertion(builder);
  const MatrixShape &shape = r.shape;
  int64_t groupSize = shape.columns / r.groups;
  int64_t width =
      groupSize % shape.vectorWidth == 0 ? shape.vectorWidth : int64_t(1);
  int64_t threads = threadsPerReduction(groupSize / width);
  int64_t groupsPerBlock = kBlockSize / threads;

  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
  size_t operandCount = r.columnTypes.size() + r.rowGroups.size();
  SmallVector<Type> argTypes{ptr, ptr, builder.getI64Type()};
  argTypes.append(operandCount, ptr);
  gpu::GPUFuncOp kernel = createKernel(builder, loc, name, argTypes);
  Value scratch = addReductionScratch(builder, loc, kernel, threads);
  KernelEmitter e(builder, loc);
  auto args = kernel.getArguments();
  auto divide = [&](Value l, int64_t d) -> Value {
    return arith::DivUIOp::create(builder, loc, l, e.i64(d));
  };
  auto remainder = [&](Value l, int64_t d) -> Value {
    return arith::RemUIOp::create(builder, loc, l, e.i64(d));
  };
  Value thread = e.id(gpu::Dimension::x, false);
  Value group = e.add(e.mul(e.id(gpu::Dimension::x, true), e.i64(groupsPerBlock)),
                      divide(thread, threads));
  Value lane = remainder(thread, threads);
  // Uniform across each warp, and across the block when a block reduces one
  // group (the grid has exactly one block per group): the shuffles and the
  // barrier below see every thread they wait for.
  emitGuarded(builder, loc, e.lessThan(group, args[2]), [&] {
    Value row = divide(group, r.groups);
    Value firstColumn = e.mul(remainder(group, r.groups), e.i64(groupSize));
    Value firstElement = e.mul(group, e.i64(groupSize));
    auto toIndex = [&](Value v) -> Value {
      return arith::IndexCastOp::create(builder, loc, builder.getIndexType(),
                                        v);
    };
    // Thread `lane` reduces the chunks of `width` columns lane,
    // lane + threads, ... in order.
    auto loop = scf::ForOp::create(
        builder, loc, toIndex(lane),
        arith::ConstantIndexOp::create(builder, loc, groupSize / width),
        arith::ConstantIndexOp::create(builder, loc, threads),
        ValueRange{e.f32(getReductionIdentity(r.kind))},
        [&](OpBuilder &nb, Location nl, Value chunk, ValueRange state) {
          KernelEmitter le(nb, nl);
          Value offset = le.mul(
              arith::IndexCastOp::create(nb, nl, nb.getI64Type(), chunk),
              le.i64(width));
          SmallVector<Value> lanes = le.loadLanes(
              args[0], shape.elementType, le.add(firstElement, offset), width);
          Value column = le.add(firstColumn, offset);
          SmallVector<SmallVector<Value>> operandLanes;
          for (auto [index, type] : llvm::enumerate(r.columnTypes))
            operandLanes.push_back(
                le.loadLanes(args[3 + index], type, column, width));
          for (auto [index, groups] : llvm::enumerate(r.rowGroups))
            operandLanes.push_back(le.loadRowLanes(
                args[3 + r.columnTypes.size() + index], shape.elementType,
                row, column, width, groups, shape.columns));
          Value acc = state.front();
          for (int64_t l = 0; l < width; ++l) {
            SmallVector<Value> operands;
            for (auto &values : operandLanes)
              operands.push_back(values[l]);
            acc = buildReductionCombine(nb, nl, r.kind, acc,
                                        r.fn(nb, nl, lanes[l], operands));
          }
          scf::YieldOp::create(nb, nl, acc);
        });
    Value total = reduceAcrossThreads(builder, loc, r.kind, loop.getResult(0),
                                      lane, threads, scratch);
    Value isLeader = arith::CmpIOp::create(
        builder, loc, arith::CmpIPredicate::eq, lane, e.i64(0));
    auto leader = scf::IfOp::create(builder, loc, isLeader, false);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&leader.getThenRegion().front());
    e.store(e.narrow(total, shape.elementType), args[1], shape.elementType,
            group, elementBytes(shape.elementType));
  });

  LaunchContract launch;
  launch.gridX = RowExpr::ceilDiv(r.groups, groupsPerBlock);
  launch.blockSize = kBlockSize;
  launch.arguments = {KernelArgument::fromOperand(0),
                      KernelArgument::fromOperand(1),
                      KernelArgument::fromValue(RowExpr::ceilDiv(r.groups, 1))};
  for (unsigned index = 0; index < operandCount; ++index)
    launch.arguments.push_back(KernelArgument::fromOperand(2 + index));
  return {kernel, std::move(launch)};
}
