//===- EntryPoints.cpp - the functions a compiled library exports --------===//

#include "fusion/Dialect/Fusion/IR/EntryPoints.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fusion;

/// The running statistic that `result`, an updated one of `op` (a batch
/// norm, alone or in a fused linear's epilogue), is computed from, or null.
template <typename Op>
static Value getRunningStatistic(Op op, OpResult result) {
  ValueRange updated = op.getUpdatedRunningStats();
  if (updated.empty())
    return {};
  if (result == updated.front())
    return op.getRunningMean();
  if (result == updated.back())
    return op.getRunningVar();
  return {};
}

std::optional<unsigned> mlir::fusion::getUpdatedArgument(func::FuncOp func,
                                                         unsigned index) {
  auto result =
      dyn_cast<OpResult>(func.front().getTerminator()->getOperand(index));
  if (!result || !result.hasOneUse())
    return std::nullopt;
  Value running = llvm::TypeSwitch<Operation *, Value>(result.getOwner())
                      .Case<BatchNormOp, FusedLinearOp>([&](auto op) {
                        return getRunningStatistic(op, result);
                      })
                      .Default([](Operation *) { return Value(); });
  auto argument = dyn_cast_or_null<BlockArgument>(running);
  if (!argument || argument.getOwner() != &func.front() ||
      !argument.hasOneUse() || argument.getType() != result.getType())
    return std::nullopt;
  return argument.getArgNumber();
}
