//===- FuseLinearEpilogues.cpp - chains into one fused_linear -------------===//

#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSELINEAREPILOGUES
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// linear -> fused_linear with an identity epilogue.
struct ConvertLinearToFusedLinear : OpRewritePattern<LinearOp> {
  ConvertLinearToFusedLinear(MLIRContext *context,
                             std::optional<Precision> f32Precision)
      : OpRewritePattern(context), f32Precision(f32Precision) {}

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    auto fused = FusedLinearOp::create(rewriter, op.getLoc(), op.getInput(),
                                       op.getWeight(), op.getBias());
    if (f32Precision && op.getType().getElementType().isF32())
      fused.setPrecision(f32Precision);
    rewriter.replaceOp(op, fused.getResult());
    return success();
  }

  std::optional<Precision> f32Precision;
};

/// Claims the fused op producing `value` for `consumer` to grow into: it
/// must be a fused_linear without batch-norm stage whose only user is
/// `consumer`. The producer moves down to the consumer, so that the
/// consumer's other operands dominate it; that is always legal, as the
/// consumer is its only user.
static FailureOr<FusedLinearOp> claimProducer(Value value, Operation *consumer,
                                              PatternRewriter &rewriter) {
  auto producer = value.getDefiningOp<FusedLinearOp>();
  if (!producer)
    return rewriter.notifyMatchFailure(consumer,
                                       "input is not a fused_linear result");
  if (producer.getBatchNormAttr())
    return rewriter.notifyMatchFailure(consumer,
                                       "input comes out of a batch-norm stage");
  if (!producer.getResult().hasOneUse())
    return rewriter.notifyMatchFailure(
        consumer, "input has other users; fusing would recompute it");
  rewriter.moveOpBefore(producer, consumer);
  return producer;
}

/// elementwise(fused_linear) -> fused_linear with the op appended to the
/// epilogue region and its column operands appended to the epilogue operands.
struct AbsorbElementwiseIntoEpilogue
    : OpInterfaceRewritePattern<ElementwiseOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(ElementwiseOpInterface op,
                                PatternRewriter &rewriter) const override {
    FailureOr<FusedLinearOp> claimed =
        claimProducer(op.getMatrixInput(), op, rewriter);
    if (failed(claimed))
      return failure();
    FusedLinearOp producer = *claimed;
    rewriter.modifyOpInPlace(producer, [&] {
      SmallVector<Value> columns, rows;
      for (Value operand : op.getColumnOperands())
        columns.push_back(producer.addEpilogueColumn(operand));
      for (Value operand : op.getRowOperands())
        rows.push_back(producer.addEpilogueRow(operand));
      YieldOp yield = producer.getEpilogueYield();
      rewriter.setInsertionPoint(yield);
      Value result = op.buildScalar(rewriter, op.getLoc(), yield.getValue(),
                                    columns, rows);
      yield.getValueMutable().assign(result);
      producer->setLoc(rewriter.getFusedLoc({producer.getLoc(), op.getLoc()}));
    });
    rewriter.replaceOp(op, producer.getResult());
    return success();
  }
};

/// batch_norm(fused_linear) -> fused_linear with a batch-norm stage.
struct AbsorbBatchNormIntoStage : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    auto reads = op.getInput().getDefiningOp<FusedLinearOp>();
    if (reads && !reads.getEpilogueRows().empty())
      return rewriter.notifyMatchFailure(
          op, "the statistics kernels read no row operands");
    FailureOr<FusedLinearOp> claimed =
        claimProducer(op.getInput(), op, rewriter);
    if (failed(claimed))
      return failure();
    FusedLinearOp producer = *claimed;
    auto fused = FusedLinearOp::create(
        rewriter, rewriter.getFusedLoc({producer.getLoc(), op.getLoc()}),
        op.getResult().getType(), op.getUpdatedRunningStats().getTypes(),
        producer.getInput(), producer.getWeight(), producer.getBias(),
        producer.getEpilogueOperands(), ValueRange(), op.getWeight(),
        op.getBias(),
        op.getRunningMean(), op.getRunningVar(), producer.getPrecisionAttr(),
        producer.getAlphaAttr(), op.getConfig());
    rewriter.inlineRegionBefore(producer.getEpilogue(), fused.getEpilogue(),
                                fused.getEpilogue().end());
    rewriter.replaceOp(op, fused.getResults());
    rewriter.eraseOp(producer);
    return success();
  }
};

struct FuseLinearEpiloguesPass
    : fusion::impl::FuseLinearEpiloguesBase<FuseLinearEpiloguesPass> {
  using FuseLinearEpiloguesBase::FuseLinearEpiloguesBase;

  LogicalResult initialize(MLIRContext *context) override {
    std::optional<Precision> precision;
    if (f32Precision != Precision::fp32)
      precision = f32Precision.getValue();
    RewritePatternSet set(context);
    populateFuseLinearEpiloguesPatterns(set, precision);
    patterns = std::move(set);
    return success();
  }

  void runOnOperation() override {
    if (failed(applyPatternsGreedily(getOperation(), patterns)))
      signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
};

} // namespace

void mlir::fusion::populateFuseLinearEpiloguesPatterns(
    RewritePatternSet &patterns, std::optional<Precision> f32Precision) {
  patterns.add<ConvertLinearToFusedLinear>(patterns.getContext(), f32Precision);
  patterns.add<AbsorbElementwiseIntoEpilogue, AbsorbBatchNormIntoStage>(
      patterns.getContext());
}
