//===- SimplifyFusion.cpp - meaning-preserving algebra on fusion ops ------===//

#include "fusion/Dialect/Fusion/IR/ScalarBuilders.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_SIMPLIFYFUSION
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// mul_scalar(leaky_relu(t, s), m) -> leaky_relu(mul_scalar(t, m), s), only
/// where it is exact for every t: m >= 1, so that t * m > 0 exactly when
/// t > 0 (a negative m flips which elements the slope applies to, an m below
/// 1 can underflow a positive t to zero), and (t * s) * m == (t * m) * s,
/// which composeScalarMultipliers decides (s = -1, or both powers of two).
struct HoistScalarMulAboveLeakyRelu : OpRewritePattern<MulScalarOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulScalarOp op,
                                PatternRewriter &rewriter) const override {
    auto leakyRelu = op.getInput().getDefiningOp<LeakyReluOp>();
    if (!leakyRelu)
      return rewriter.notifyMatchFailure(op, "input is not a leaky_relu");
    if (!leakyRelu.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(op, "leaky_relu has other users");
    double multiplier = op.getMultiplier().convertToDouble();
    if (!(multiplier >= 1.0))
      return rewriter.notifyMatchFailure(
          op, "a multiplier below 1 does not commute with leaky_relu");
    if (!composeScalarMultipliers(leakyRelu.getNegativeSlope().convertToDouble(),
                                  multiplier))
      return rewriter.notifyMatchFailure(
          op, "reordering the slope and the multiplier would round "
              "differently");
    auto scaled =
        MulScalarOp::create(rewriter, op.getLoc(), op.getType(),
                            leakyRelu.getInput(), op.getMultiplierAttr());
    rewriter.replaceOpWithNewOp<LeakyReluOp>(op, op.getType(), scaled,
                                             leakyRelu.getNegativeSlopeAttr());
    rewriter.eraseOp(leakyRelu);
    return success();
  }
};

/// A fused_linear without bias whose epilogue begins with `acc * c` takes c
/// into alpha. Every backend applies alpha as one f32 multiply of the
/// finished f32 sum, before the bias: with alpha = a, the epilogue sees
/// round(sum * a) and computes round(round(sum * a) * c), which equals
/// round(sum * a') only for a' from composeScalarMultipliers(a, c) (always
/// when a is 1). With a bias, c * (sum + b) is not alpha * sum + b.
struct FoldLeadingScalarIntoAlpha : OpRewritePattern<FusedLinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusedLinearOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getBias())
      return rewriter.notifyMatchFailure(
          op, "c * (sum + bias) is not alpha * sum + bias");
    BlockArgument acc = op.getEpilogueBlock().getArgument(0);
    if (!acc.hasOneUse())
      return rewriter.notifyMatchFailure(op, "accumulator has several uses");
    auto mul = dyn_cast<arith::MulFOp>(*acc.getUsers().begin());
    if (!mul)
      return rewriter.notifyMatchFailure(op, "accumulator is not multiplied");
    Value other = mul.getLhs() == acc ? mul.getRhs() : mul.getLhs();
    FloatAttr constant;
    if (!matchPattern(other, m_Constant(&constant)))
      return rewriter.notifyMatchFailure(op, "multiplier is not a constant");
    if (!constant.getType().isF32())
      return rewriter.notifyMatchFailure(op, "multiplier is not an f32");
    std::optional<double> alpha = composeScalarMultipliers(
        op.getAlpha().convertToDouble(), constant.getValueAsDouble());
    if (!alpha)
      return rewriter.notifyMatchFailure(
          op, "alpha * c would round differently from the two products");
    rewriter.modifyOpInPlace(
        op, [&] { op.setAlphaAttr(rewriter.getF64FloatAttr(*alpha)); });
    rewriter.replaceOp(mul, acc);
    return success();
  }
};

/// An inference-mode batch-norm stage is elementwise: it becomes the tail
/// of the epilogue, `(e - mean) * rsqrt(var + eps) (* gamma) (+ beta)`.
struct BatchNormInferenceIntoEpilogue : OpRewritePattern<FusedLinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusedLinearOp op,
                                PatternRewriter &rewriter) const override {
    BatchNormConfigAttr config = op.getBatchNormAttr();
    if (!config || config.isTraining())
      return rewriter.notifyMatchFailure(op, "no inference batch-norm stage");
    Value mean = op.getRunningMean(), var = op.getRunningVar();
    Value gamma = op.getBnWeight(), beta = op.getBnBias();
    rewriter.modifyOpInPlace(op, [&] {
      auto addColumn = [&](Value operand) -> Value {
        if (!operand)
          return {};
        return op.addEpilogueColumn(operand);
      };
      Value meanArg = addColumn(mean), varArg = addColumn(var);
      Value gammaArg = addColumn(gamma), betaArg = addColumn(beta);
      YieldOp yield = op.getEpilogueYield();
      rewriter.setInsertionPoint(yield);
      Location loc = op.getLoc();
      Value invstd =
          buildInvStd(rewriter, loc, varArg, config.getEpsilonValue());
      Value normalized = buildBatchNormNormalize(
          rewriter, loc, yield.getValue(), meanArg, invstd, gammaArg, betaArg);
      yield.getValuesMutable()[0].set(normalized);
      op.getRunningMeanMutable().clear();
      op.getRunningVarMutable().clear();
      op.getBnWeightMutable().clear();
      op.getBnBiasMutable().clear();
      op.removeBatchNormAttr();
    });
    return success();
  }
};

struct SimplifyFusionPass
    : fusion::impl::SimplifyFusionBase<SimplifyFusionPass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    populateSimplifyFusionPatterns(set);
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

void mlir::fusion::populateSimplifyFusionPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<HoistScalarMulAboveLeakyRelu, FoldLeadingScalarIntoAlpha,
               BatchNormInferenceIntoEpilogue>(context);
  MulScalarOp::getCanonicalizationPatterns(patterns, context);
  FusedLinearOp::getCanonicalizationPatterns(patterns, context);
}
