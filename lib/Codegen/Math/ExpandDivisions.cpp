//===- ExpandDivisions.cpp - x / d as a multiply and two fmas -------------===//

#include "fusion/Codegen/Math/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::fusion {
#define GEN_PASS_DEF_EXPANDDIVISIONS
#include "fusion/Codegen/Math/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// RN(x / d) from d's correctly rounded reciprocal (Markstein): q0 = x r,
/// e = q0 |d| - sign(d) x, exact where q0 is within an ulp of x / d, and
/// q0 - e |r|. Taking |d| and |r| with the sign of d on x gives both zero
/// quotients the right sign: the zero terms of both multiply-adds then
/// have q0's. Where the correction is NaN (x or q0 infinite, d 0 or
/// infinite) the quotient is q0, as x / d's special values are x r's.
static Value correctedQuotient(RewriterBase &rewriter, Location loc, Value x,
                               Value reciprocal, Value magnitude,
                               Value reciprocalMagnitude, Value negSignX) {
  Value product = arith::MulFOp::create(rewriter, loc, x, reciprocal);
  Value remainder =
      math::FmaOp::create(rewriter, loc, product, magnitude, negSignX);
  Value corrected = math::FmaOp::create(
      rewriter, loc, arith::NegFOp::create(rewriter, loc, remainder),
      reciprocalMagnitude, product);
  Value nan = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO,
                                    corrected, corrected);
  return arith::SelectOp::create(rewriter, loc, nan, product, corrected);
}

static Value f32Constant(RewriterBase &rewriter, Location loc, float value) {
  return arith::ConstantOp::create(rewriter, loc,
                                   rewriter.getF32FloatAttr(value));
}

/// An f32 division, correctly rounded (no fastmath flags) or approximate
/// (afn, which the fusion ops' verifier allows alone).
static bool isExpandable(arith::DivFOp div) {
  return div.getType().isF32() &&
         (div.getFastmath() == arith::FastMathFlags::none ||
          div.getFastmath() == arith::FastMathFlags::afn);
}

static bool isApproximate(arith::DivFOp div) {
  return div.getFastmath() == arith::FastMathFlags::afn;
}

/// x / c for a constant c, finite and nonzero with a normal reciprocal;
/// by a power of two, or where the division is approximate, one product
/// (within 1.5 ulps).
struct DivisionByConstant : OpRewritePattern<arith::DivFOp> {
  DivisionByConstant(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(arith::DivFOp div,
                                PatternRewriter &rewriter) const override {
    FloatAttr divisorAttr;
    if (!isExpandable(div) ||
        !matchPattern(div.getRhs(), m_Constant(&divisorAttr)))
      return failure();
    float divisor = divisorAttr.getValue().convertToFloat();
    // Not normal for a divisor that is 0, infinite or NaN too.
    float reciprocal = 1.0f / divisor;
    if (!std::isnormal(reciprocal))
      return failure();

    Location loc = div.getLoc();
    auto constant = [&](float value) {
      return f32Constant(rewriter, loc, value);
    };
    Value x = div.getLhs();
    if (isApproximate(div) || divisorAttr.getValue().getExactInverse(nullptr)) {
      rewriter.replaceOpWithNewOp<arith::MulFOp>(div, x, constant(reciprocal));
      return success();
    }
    Value negSignX =
        divisor > 0 ? Value(arith::NegFOp::create(rewriter, loc, x)) : x;
    rewriter.replaceOp(
        div, correctedQuotient(rewriter, loc, x, constant(reciprocal),
                               constant(std::fabs(divisor)),
                               constant(std::fabs(reciprocal)), negSignX));
    return success();
  }
};

/// The divisions by one computed value d, where its reciprocal is worth
/// its one correctly rounded division: at least four of them, or one in a
/// loop that d is defined outside of (a row's sum for each of its
/// elements). d is scaled by s, a power of two, into [2^-64, 2^64] (0,
/// infinities and NaN stay such), where its reciprocal is normal: x / d =
/// (x / |d| s) s', s' = s with d's sign, exact but for quotients below
/// 2^-126.
struct DivisionsBySharedValue : OpRewritePattern<arith::DivFOp> {
  DivisionsBySharedValue(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  static constexpr unsigned kMinDivisions = 4;

  LogicalResult matchAndRewrite(arith::DivFOp div,
                                PatternRewriter &rewriter) const override {
    Value divisor = div.getRhs();
    if (!isExpandable(div) || matchPattern(divisor, m_Constant()))
      return failure();
    SmallVector<arith::DivFOp> divisions;
    for (OpOperand &use : divisor.getUses())
      if (auto user = dyn_cast<arith::DivFOp>(use.getOwner()))
        if (use.getOperandNumber() == 1 && isExpandable(user))
          divisions.push_back(user);
    auto loop = div->getParentOfType<LoopLikeOpInterface>();
    bool inLoop = loop && loop.isDefinedOutsideOfLoop(divisor);
    if (divisions.size() < kMinDivisions && !inLoop)
      return failure();

    Location loc = divisor.getLoc();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointAfterValue(divisor);
    auto constant = [&](float value) {
      return f32Constant(rewriter, loc, value);
    };
    Value magnitude = math::AbsFOp::create(rewriter, loc, divisor);
    auto below = [&](Value a, float bound) {
      return arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, a,
                                   constant(bound));
    };
    auto above = [&](Value a, float bound) {
      return arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, a,
                                   constant(bound));
    };
    Value scale = arith::SelectOp::create(
        rewriter, loc, below(magnitude, 0x1p-64f), constant(0x1p64f),
        arith::SelectOp::create(rewriter, loc, above(magnitude, 0x1p64f),
                                constant(0x1p-64f), constant(1.0f)));
    Value scaled = arith::MulFOp::create(rewriter, loc, magnitude, scale);
    Value reciprocal =
        arith::DivFOp::create(rewriter, loc, constant(1.0f), scaled);
    // s' = s with d's sign bit (d = -0 included).
    Type i32 = rewriter.getI32Type();
    Value sign = arith::AndIOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, i32, divisor),
        arith::ConstantOp::create(rewriter, loc,
                                  rewriter.getI32IntegerAttr(INT32_MIN)));
    Value signedScale = arith::BitcastOp::create(
        rewriter, loc, rewriter.getF32Type(),
        arith::OrIOp::create(
            rewriter, loc, arith::BitcastOp::create(rewriter, loc, i32, scale),
            sign));

    for (arith::DivFOp division : divisions) {
      rewriter.setInsertionPoint(division);
      Location at = division.getLoc();
      Value x = division.getLhs();
      Value quotient =
          correctedQuotient(rewriter, at, x, reciprocal, scaled, reciprocal,
                            arith::NegFOp::create(rewriter, at, x));
      rewriter.replaceOpWithNewOp<arith::MulFOp>(division, quotient,
                                                 signedScale);
    }
    return success();
  }
};

/// An approximate quotient x / d that neither pattern above takes:
/// div.full.f32, within 2 ulps over the whole range (LLVM's lowering of an
/// afn fdiv, div.approx.f32, gives 0 for divisors past 2^126). An
/// approximate reciprocal stays: LLVM lowers it to rcp.approx.f32, 1 ulp.
struct ApproximateQuotient : OpRewritePattern<arith::DivFOp> {
  ApproximateQuotient(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/1) {}

  LogicalResult matchAndRewrite(arith::DivFOp div,
                                PatternRewriter &rewriter) const override {
    if (!div.getType().isF32() || !isApproximate(div) ||
        matchPattern(div.getLhs(), m_OneFloat()))
      return failure();
    rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        div, div.getType(), rewriter.getStringAttr("llvm.nvvm.div.full"),
        ValueRange{div.getLhs(), div.getRhs()});
    return success();
  }
};

struct ExpandDivisionsPass
    : fusion::impl::ExpandDivisionsBase<ExpandDivisionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns
        .add<DivisionByConstant, DivisionsBySharedValue, ApproximateQuotient>(
            &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
