//===- ExpandDivisionByConstant.cpp - x / c as a multiply and two fmas ----===//

#include "fusion/Conversion/FusionToGPU/FusionToGPU.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::fusion {
#define GEN_PASS_DEF_EXPANDDIVISIONBYCONSTANT
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// x / c -> q0 - e |r|, q0 = x r, e = q0 |c| - sign(c) x, r = RN(1/c).
///
/// With r correctly rounded and q0 within an ulp of x / c, the remainder
/// e is exact and q0 - e |r| rounds to RN(x / c) (Markstein). Taking |c|
/// and |r| with the sign of c on x makes both zero quotients' signs come
/// out right: the zero terms of both multiply-adds then have q0's sign.
struct DivisionByConstantAsMultiply : OpRewritePattern<arith::DivFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::DivFOp div,
                                PatternRewriter &rewriter) const override {
    FloatAttr divisorAttr;
    if (!div.getType().isF32() ||
        div.getFastmath() != arith::FastMathFlags::none ||
        !matchPattern(div.getRhs(), m_Constant(&divisorAttr)))
      return failure();
    float divisor = divisorAttr.getValue().convertToFloat();
    float reciprocal = 1.0f / divisor;
    if (!std::isfinite(divisor) || divisor == 0.0f ||
        !std::isnormal(reciprocal))
      return failure();

    Location loc = div.getLoc();
    auto constant = [&](float value) -> Value {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getF32FloatAttr(value));
    };
    Value x = div.getLhs();
    Value product =
        arith::MulFOp::create(rewriter, loc, x, constant(reciprocal));
    // A power of two: the reciprocal is exact, and so is the product.
    if (divisorAttr.getValue().getExactInverse(nullptr)) {
      rewriter.replaceOp(div, product);
      return success();
    }
    Value signedX =
        divisor > 0 ? Value(arith::NegFOp::create(rewriter, loc, x)) : x;
    Value remainder = math::FmaOp::create(
        rewriter, loc, product, constant(std::fabs(divisor)), signedX);
    Value corrected = math::FmaOp::create(
        rewriter, loc, arith::NegFOp::create(rewriter, loc, remainder),
        constant(std::fabs(reciprocal)), product);
    // Infinite and NaN quotients are the product's: an infinite product's
    // remainder is NaN.
    Value finite =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT,
                              math::AbsFOp::create(rewriter, loc, product),
                              constant(std::numeric_limits<float>::infinity()));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(div, finite, corrected,
                                                 product);
    return success();
  }
};

struct ExpandDivisionByConstantPass
    : fusion::impl::ExpandDivisionByConstantBase<ExpandDivisionByConstantPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DivisionByConstantAsMultiply>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
