//===- RowProgramOps.cpp - the fusion ops one row program runs ------------===//

#include "RowProgramOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

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

/// `reduce` as a reduction of the GEMM's tiles, if it is one.
static std::optional<TileReducedStep>
asTileReduction(ReduceOp reduce, const RowProgramOps &program) {
  if (!reduce.getColumnOperands().empty())
    return std::nullopt;
  TileReducedStep step;
  step.op = reduce;
  if (reduce.getRowOperands().empty()) {
    step.reduction.kind = GemmRowReduction::Kind::Combine;
    step.reduction.combiner = reduce.getKind();
    step.reduction.fn = [reduce](OpBuilder &b, Location, Value x, ValueRange) {
      return ReduceOp(reduce).buildMap(b, x, ValueRange(), ValueRange());
    };
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
  arith::SubFOp difference;
  if (auto exp = dyn_cast_or_null<math::ExpOp>(outer)) {
    difference = exp.getOperand().getDefiningOp<arith::SubFOp>();
    step.reduction.kind = GemmRowReduction::Kind::ShiftedExpSum;
  } else if (auto square = dyn_cast_or_null<arith::MulFOp>(outer);
             square && square.getLhs() == square.getRhs()) {
    difference = square.getLhs().getDefiningOp<arith::SubFOp>();
    step.reduction.kind = GemmRowReduction::Kind::ShiftedSquareSum;
  }
  if (!difference || !outer->hasOneUse() ||
      llvm::any_of(difference->getUsers(),
                   [&](Operation *user) { return user != outer; }))
    return std::nullopt;
  BlockArgument x = map.getArgument(0), r = map.getArgument(1);
  DenseSet<Value> fromX{x}, fromR{r};
  for (Operation &op : map.without_terminator())
    for (Value operand : op.getOperands()) {
      if (fromX.contains(operand))
        fromX.insert(op.getResults().begin(), op.getResults().end());
      if (fromR.contains(operand))
        fromR.insert(op.getResults().begin(), op.getResults().end());
    }
  Value exponent = difference.getLhs(), subtrahend = difference.getRhs();
  if (fromR.contains(exponent) || fromX.contains(subtrahend))
    return std::nullopt;
  step.shiftStep = program.steps.lookup(shift.getDefiningOp());
  // The map's ops that `value` may need: those not reading `skipped`,
  // bound to `argument`, at the builder's insertion point.
  Operation *shifted = difference;
  auto slice = [reduce, shifted, outer](Value value, unsigned argument,
                                        const DenseSet<Value> &skipped) {
    return [=](OpBuilder &b, Location, Value bound, ValueRange) {
      Block &block = ReduceOp(reduce).getMapBlock();
      IRMapping mapping;
      mapping.map(block.getArgument(argument), bound);
      for (Operation &op : block.without_terminator())
        if (&op != shifted && &op != outer &&
            !llvm::any_of(op.getResults(),
                          [&](Value v) { return skipped.contains(v); }))
          b.clone(op, mapping);
      return mapping.lookupOrDefault(value);
    };
  };
  step.reduction.fn = slice(exponent, 0, fromR);
  step.shift = slice(subtrahend, 1, fromX);
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
      std::optional<TileReducedStep> step = asTileReduction(reduce, program);
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

RowStep mlir::fusion::mergeTileReductionStep(const TileReducedStep &step,
                                             ArrayRef<unsigned> partials,
                                             int64_t columnTiles) {
  RowStep merge;
  merge.kind = RowStep::Kind::Reduce;
  const GemmRowReduction &reduction = step.reduction;
  Type f32 = Float32Type::get(ReduceOp(step.op).getContext());
  auto partialOperand = [&](unsigned index) {
    return RowOperand{RowOperand::Kind::Rows, partials[index], f32,
                      columnTiles};
  };
  RowOperand shift{RowOperand::Kind::StepValue, step.shiftStep, Type()};
  switch (reduction.kind) {
  case GemmRowReduction::Kind::Combine:
    merge.source = partials[0];
    merge.reduction = reduction.combiner;
    merge.fn = [](OpBuilder &, Location, Value x, ValueRange) { return x; };
    break;
  case GemmRowReduction::Kind::ShiftedExpSum:
    // Each tile's sum of exp(a - t) counts exp(t - s(r)) times.
    merge.source = partials[1];
    merge.reduction = ReductionKind::sum;
    merge.operands = {partialOperand(0), shift};
    merge.fn = [shiftFn = step.shift](OpBuilder &b, Location loc, Value sum,
                                      ValueRange operands) -> Value {
      Value subtrahend = shiftFn(b, loc, operands[1], ValueRange());
      return arith::MulFOp::create(
          b, loc, sum,
          math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, operands[0], subtrahend)));
    };
    break;
  case GemmRowReduction::Kind::ShiftedSquareSum:
    // Each tile's squares about its mean u, plus its count * (u - s(r))^2.
    merge.source = partials[1];
    merge.reduction = ReductionKind::sum;
    merge.operands = {partialOperand(0), partialOperand(2), shift};
    merge.fn = [shiftFn = step.shift](OpBuilder &b, Location loc, Value squares,
                                      ValueRange operands) -> Value {
      Value d = arith::SubFOp::create(
          b, loc, operands[0], shiftFn(b, loc, operands[2], ValueRange()));
      Value spread = arith::MulFOp::create(b, loc, operands[1],
                                           arith::MulFOp::create(b, loc, d, d));
      return arith::AddFOp::create(b, loc, squares, spread);
    };
    break;
  }
  return merge;
}
