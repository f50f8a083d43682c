//===- TileReductionSteps.cpp - tile reductions as kernel steps ----------===//

#include "fusion/Codegen/Kernels/TileReductionSteps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::fusion;

TileReducedStep mlir::fusion::lowerTileReduction(const TileReduction &form) {
  TileReducedStep step;
  ReduceOp reduce = form.op;
  step.op = reduce;
  step.reduction.kind = form.kind;
  step.reduction.combiner = reduce.getKind();
  if (form.kind == TileReductionKind::Combine) {
    step.reduction.fn = [reduce](OpBuilder &b, Location, Value x, ValueRange) {
      return ReduceOp(reduce).buildMap(b, x, ValueRange(), ValueRange());
    };
    return step;
  }
  // The map's ops that `value` may need: those not reading `skipped`,
  // bound to `argument`, at the builder's insertion point.
  Operation *difference = form.difference, *shifted = form.shifted;
  auto slice = [reduce, difference, shifted](Value value, unsigned argument,
                                             const DenseSet<Value> &skipped) {
    return [=](OpBuilder &b, Location, Value bound, ValueRange) {
      Block &block = ReduceOp(reduce).getMapBlock();
      IRMapping mapping;
      mapping.map(block.getArgument(argument), bound);
      for (Operation &op : block.without_terminator())
        if (&op != difference && &op != shifted &&
            !llvm::any_of(op.getResults(),
                          [&](Value v) { return skipped.contains(v); }))
          b.clone(op, mapping);
      return mapping.lookupOrDefault(value);
    };
  };
  arith::SubFOp subtraction = form.difference;
  step.reduction.fn = slice(subtraction.getLhs(), 0, form.fromRowValue);
  step.shift = slice(subtraction.getRhs(), 1, form.fromElement);
  step.shiftStep = form.shiftStep;
  return step;
}

RowStep mlir::fusion::mergeTileReductionStep(const TileReducedStep &step,
                                             ArrayRef<unsigned> partials,
                                             int64_t columnTiles) {
  RowStep merge;
  merge.kind = RowStep::Kind::Reduce;
  const GemmRowReduction &reduction = step.reduction;
  Type f32 = Float32Type::get(step.op->getContext());
  auto partialOperand = [&](unsigned index) {
    return RowOperand{RowOperand::Kind::Rows, partials[index], f32,
                      columnTiles};
  };
  RowOperand shift{RowOperand::Kind::StepValue, step.shiftStep, Type()};
  switch (reduction.kind) {
  case TileReductionKind::Combine:
    merge.source = partials[0];
    merge.reduction = reduction.combiner;
    merge.fn = [](OpBuilder &, Location, Value x, ValueRange) { return x; };
    break;
  case TileReductionKind::ShiftedExpSum:
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
  case TileReductionKind::ShiftedSquareSum:
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
