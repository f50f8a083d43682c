//===- TileReductions.cpp - reductions a GEMM takes from its tiles --------===//

#include "fusion/Codegen/Config/TileReductions.h"

#include "fusion/Codegen/Config/GemmKernelRules.h"
#include "fusion/Dialect/Fusion/IR/FusionRandomOps.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::fusion;

RowProgramOps mlir::fusion::collectRowProgram(ReduceOp first,
                                              Block::iterator end) {
  RowProgramOps program;
  program.input = first.getInput();
  // Row operands must be row values of the program or come from before it.
  auto operandsAvailable = [&](ValueRange rows) {
    return llvm::all_of(rows, [&](Value v) {
      Operation *def = v.getDefiningOp();
      return !def || !program.steps.count(def) || program.isRowValue(v);
    });
  };
  Block::iterator next = first->getIterator();
  for (; next != end; ++next) {
    Operation *op = &*next;
    if (isa<RandomUniformOp>(op))
      continue; // Computed where its readers read it.
    bool joins = false;
    if (auto reduce = dyn_cast<ReduceOp>(op))
      joins = reduce.getInput() == program.input &&
              reduce.getGroups() == first.getGroups() &&
              operandsAvailable(reduce.getRowOperands());
    else if (auto elementwise = dyn_cast<ElementwiseOpInterface>(op))
      joins = (elementwise.getMatrixInput() == program.input ||
               program.isRowValue(elementwise.getMatrixInput())) &&
              operandsAvailable(elementwise.getRowOperands());
    if (!joins)
      break;
    program.steps.insert({op, program.steps.size()});
    if (isa<ReduceOp>(op) ||
        program.isRowValue(cast<ElementwiseOpInterface>(op).getMatrixInput()))
      program.rowValues.insert(op->getResult(0));
  }
  program.end = next;
  return program;
}

unsigned mlir::fusion::getPartialCount(TileReductionKind kind) {
  switch (kind) {
  case TileReductionKind::Combine:
    return 1;
  case TileReductionKind::ShiftedExpSum:
    return 2;
  case TileReductionKind::ShiftedSquareSum:
    return 3;
  }
  llvm_unreachable("unknown tile reduction");
}

/// `reduce` as a reduction of the GEMM's tiles, if it is one.
static std::optional<TileReduction>
asTileReduction(ReduceOp reduce, const RowProgramOps &program) {
  if (!reduce.getColumnOperands().empty())
    return std::nullopt;
  TileReduction step;
  step.op = reduce;
  if (reduce.getRowOperands().empty()) {
    step.kind = TileReductionKind::Combine;
    return step;
  }
  // A sum of exp(a(x) - s(r)) or of (a(x) - s(r))^2: the yield is
  // exp(a - s) or (a - s) * (a - s), a independent of the row value r and
  // s of the element x.
  Block &map = reduce.getMapBlock();
  Value shift = reduce.getRowOperands().front();
  if (reduce.getKind() != ReductionKind::sum ||
      reduce.getRowOperands().size() != 1 || !program.isRowValue(shift))
    return std::nullopt;
  Operation *outer = reduce.getMapYield().getValue().getDefiningOp();
  if (auto exp = dyn_cast_or_null<math::ExpOp>(outer)) {
    step.difference = exp.getOperand().getDefiningOp<arith::SubFOp>();
    step.kind = TileReductionKind::ShiftedExpSum;
  } else if (auto square = dyn_cast_or_null<arith::MulFOp>(outer);
             square && square.getLhs() == square.getRhs()) {
    step.difference = square.getLhs().getDefiningOp<arith::SubFOp>();
    step.kind = TileReductionKind::ShiftedSquareSum;
  }
  if (!step.difference || !outer->hasOneUse() ||
      llvm::any_of(step.difference->getUsers(),
                   [&](Operation *user) { return user != outer; }))
    return std::nullopt;
  step.shifted = outer;
  step.fromElement = {map.getArgument(0)};
  step.fromRowValue = {map.getArgument(1)};
  for (Operation &op : map.without_terminator())
    for (Value operand : op.getOperands())
      for (DenseSet<Value> *from : {&step.fromElement, &step.fromRowValue})
        if (from->contains(operand))
          from->insert(op.getResults().begin(), op.getResults().end());
  if (step.fromRowValue.contains(step.difference.getLhs()) ||
      step.fromElement.contains(step.difference.getRhs()))
    return std::nullopt;
  step.shiftStep = program.steps.lookup(shift.getDefiningOp());
  return step;
}

std::optional<TileReductionPlan>
mlir::fusion::planTileReductions(const RowProgramOps &program) {
  Value input = program.input;
  TileReductionPlan plan;
  for (Operation *user : input.getUsers())
    if (!program.steps.count(user))
      return std::nullopt;
  for (auto [op, index] : program.steps) {
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      if (llvm::is_contained(reduce.getRowOperands(), input))
        return std::nullopt;
      std::optional<TileReduction> step = asTileReduction(reduce, program);
      if (!step)
        return std::nullopt;
      plan.reductions.push_back(std::move(*step));
      continue;
    }
    auto elementwise = cast<ElementwiseOpInterface>(op);
    if (llvm::is_contained(elementwise.getRowOperands(), input))
      return std::nullopt;
    plan.readsMatrix |= elementwise.getMatrixInput() == input;
  }
  return plan;
}

std::optional<GemmTileReductions>
mlir::fusion::findGemmTileReductions(FusedLinearOp op, int64_t blockN,
                                     std::optional<int64_t> span) {
  Value result = op.getResult();
  if (op.getBatchNormAttr() || result.use_empty())
    return std::nullopt;
  // The row program would start at the first reader.
  Operation *first = *result.getUsers().begin();
  for (Operation *user : result.getUsers()) {
    if (user->getBlock() != op->getBlock())
      return std::nullopt;
    if (user->isBeforeInBlock(first))
      first = user;
  }
  auto reduce = dyn_cast<ReduceOp>(first);
  if (!reduce || reduce.getInput() != result)
    return std::nullopt;
  auto type = cast<RankedTensorType>(result.getType());
  span = getRowReductionSpan(blockN, type.getElementType(), type.getDimSize(1),
                             reduce.getGroups(), span);
  if (!span)
    return std::nullopt;
  RowProgramOps program =
      collectRowProgram(reduce, op->getBlock()->without_terminator().end());
  std::optional<TileReductionPlan> plan = planTileReductions(program);
  if (!plan)
    return std::nullopt;
  return GemmTileReductions{std::move(program), std::move(*plan), *span};
}
