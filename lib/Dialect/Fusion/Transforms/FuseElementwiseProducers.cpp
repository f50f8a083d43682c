//===- FuseElementwiseProducers.cpp - elementwise ops into their readers --===//

#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSEELEMENTWISEPRODUCERS
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Whether `op` reads `value` only as its matrix input, as a reduction or an
/// elementwise op: a reader that can compute it itself.
static bool readsAsInput(Operation *op, Value value) {
  Value input;
  if (auto reduce = dyn_cast<ReduceOp>(op))
    input = reduce.getInput();
  else if (auto elementwise = dyn_cast<ElementwiseOpInterface>(op))
    input = elementwise.getMatrixInput();
  return input == value &&
         llvm::count(op->getOperands(), value) == 1;
}

/// The elementwise op producing `input` if every reader of its result can
/// compute it itself.
static ElementwiseOpInterface getFoldableProducer(Value input) {
  auto producer = input.getDefiningOp<ElementwiseOpInterface>();
  if (!producer)
    return {};
  for (Operation *user : producer->getUsers())
    if (!readsAsInput(user, input))
      return {};
  return producer;
}

/// The operands and scalar region of a reader that computes `producer`
/// first: the reader's own column and row operands, then the producer's.
struct ComposedOperands {
  SmallVector<Value> columns, rows;
  size_t ownColumns, ownRows;

  ComposedOperands(ValueRange readerColumns, ValueRange readerRows,
                   ElementwiseOpInterface producer)
      : columns(readerColumns), rows(readerRows),
        ownColumns(readerColumns.size()), ownRows(readerRows.size()) {
    llvm::append_range(columns, producer.getColumnOperands());
    llvm::append_range(rows, producer.getRowOperands());
  }

  /// Fills `region` with the composition: `reader(producer(x, ...), ...)`,
  /// where `reader` emits the reader's scalar form.
  void fill(PatternRewriter &rewriter, Region &region,
            ElementwiseOpInterface producer, Location loc,
            function_ref<Value(Value, ArrayRef<Value>, ArrayRef<Value>)>
                reader) {
    Block *block = rewriter.createBlock(&region);
    Type f32 = rewriter.getF32Type();
    Value x = block->addArgument(f32, producer.getLoc());
    SmallVector<Value> columnArgs, rowArgs;
    for (Value column : columns)
      columnArgs.push_back(block->addArgument(f32, column.getLoc()));
    for (Value row : rows)
      rowArgs.push_back(block->addArgument(f32, row.getLoc()));
    Value produced = producer.buildScalar(
        rewriter, producer.getLoc(), x,
        ArrayRef<Value>(columnArgs).drop_front(ownColumns),
        ArrayRef<Value>(rowArgs).drop_front(ownRows));
    Value result = reader(produced, ArrayRef<Value>(columnArgs).take_front(ownColumns),
                          ArrayRef<Value>(rowArgs).take_front(ownRows));
    YieldOp::create(rewriter, loc, result);
  }
};

/// reduce(elementwise(x)) -> reduce(x) with the elementwise function applied
/// first in the map.
struct FoldProducerIntoReductionMap : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    ElementwiseOpInterface producer = getFoldableProducer(op.getInput());
    if (!producer)
      return rewriter.notifyMatchFailure(
          op, "input is not an elementwise result only such readers read");
    ComposedOperands operands(op.getColumnOperands(), op.getRowOperands(),
                              producer);
    auto fused = ReduceOp::create(
        rewriter, rewriter.getFusedLoc({producer.getLoc(), op.getLoc()}),
        op.getType(), op.getKind(), producer.getMatrixInput(),
        operands.columns, operands.rows);
    operands.fill(rewriter, fused.getMap(), producer, op.getLoc(),
                  [&](Value x, ArrayRef<Value> columns, ArrayRef<Value> rows) {
                    return op.buildMap(rewriter, x, columns, rows);
                  });
    rewriter.replaceOp(op, fused.getResult());
    if (producer->use_empty())
      rewriter.eraseOp(producer);
    return success();
  }
};

/// elementwise(elementwise(x)) -> one elementwise op of x.
struct ComposeElementwise : OpInterfaceRewritePattern<ElementwiseOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(ElementwiseOpInterface op,
                                PatternRewriter &rewriter) const override {
    ElementwiseOpInterface producer = getFoldableProducer(op.getMatrixInput());
    if (!producer)
      return rewriter.notifyMatchFailure(
          op, "input is not an elementwise result only such readers read");
    ComposedOperands operands(op.getColumnOperands(), op.getRowOperands(),
                              producer);
    Value input = producer.getMatrixInput();
    auto fused = ElementwiseOp::create(
        rewriter, rewriter.getFusedLoc({producer.getLoc(), op.getLoc()}),
        input.getType(), input, operands.columns, operands.rows);
    operands.fill(rewriter, fused.getBody(), producer, op.getLoc(),
                  [&](Value x, ArrayRef<Value> columns, ArrayRef<Value> rows) {
                    return op.buildScalar(rewriter, op.getLoc(), x, columns,
                                          rows);
                  });
    rewriter.replaceOp(op, fused.getResult());
    if (producer->use_empty())
      rewriter.eraseOp(producer);
    return success();
  }
};

struct FuseElementwiseProducersPass
    : fusion::impl::FuseElementwiseProducersBase<FuseElementwiseProducersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseElementwiseProducersPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::fusion::populateFuseElementwiseProducersPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FoldProducerIntoReductionMap, ComposeElementwise>(
      patterns.getContext());
}
