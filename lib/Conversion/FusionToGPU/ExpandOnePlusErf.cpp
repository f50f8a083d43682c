//===- ExpandOnePlusErf.cpp - 1 + erf(s) as one ex2 of a polynomial -------===//

#include "fusion/Conversion/FusionToGPU/FusionToGPU.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_EXPANDONEPLUSERF
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Past this t, r(t) is held at r(4.5): erfc(t) < 2e-10 there, and the
/// exact -log2(e) t^2 term carries the result to 0.
constexpr double kPolynomialEnd = 4.5;

/// r(t) = log2(erfc(t) exp(t^2)) on [0, 4.5] as sum c_i t^i, i = 1..10
/// (r(0) = 0), fitted in float64 for the absolute error of erfc(t) and
/// rounded to f32 (the values the kernels use, whose accuracy on the GPU
/// the pass description states).
constexpr double kCoefficients[] = {
    -1.6279078722000122,   0.5242639780044556,      -0.14837613701820374,
    0.02790195681154728,   -0.0001480902428738773,  -0.002121778903529048,
    0.0008099403348751366, -0.00015994790010154247, 1.7075653886422515e-05,
    -7.750865052003064e-07};

/// 1 + erf(s) -> (s <= 0 ? e : 2 - e), e = erfc(|s|) as one ex2.
struct OnePlusErfAsExp2 : OpRewritePattern<arith::AddFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::AddFOp add,
                                PatternRewriter &rewriter) const override {
    if (!add.getType().isF32())
      return failure();
    auto erf = add.getLhs().getDefiningOp<math::ErfOp>();
    Value one = add.getRhs();
    if (!erf) {
      erf = add.getRhs().getDefiningOp<math::ErfOp>();
      one = add.getLhs();
    }
    if (!erf || !erf->hasOneUse() || !matchPattern(one, m_OneFloat()))
      return failure();

    Location loc = add.getLoc();
    auto constant = [&](double value) -> Value {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getF32FloatAttr(value));
    };
    Value s = erf.getOperand();
    Value t = math::AbsFOp::create(rewriter, loc, s);
    // minnumf: a NaN t gives 4.5 here, and NaN through t * t below.
    Value clamped =
        arith::MinNumFOp::create(rewriter, loc, t, constant(kPolynomialEnd));
    Value r = constant(kCoefficients[std::size(kCoefficients) - 1]);
    for (double c : llvm::reverse(llvm::ArrayRef(kCoefficients).drop_back()))
      r = math::FmaOp::create(rewriter, loc, r, clamped, constant(c));
    r = arith::MulFOp::create(rewriter, loc, r, clamped);
    Value square = arith::MulFOp::create(rewriter, loc, s, s);
    Value exponent = math::FmaOp::create(rewriter, loc, square,
                                         constant(-1.4426950408889634), r);
    // ftz: results below 2^-126 flush to 0, as erfc(t) falls to 0; the
    // non-ftz form adds a range check and two scalings an element.
    Value erfc = LLVM::CallIntrinsicOp::create(
                     rewriter, loc, rewriter.getF32Type(),
                     rewriter.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"),
                     ValueRange{exponent})
                     .getResult(0);
    Value nonPositive = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OLE, s, constant(0.0));
    Value upper = arith::SubFOp::create(rewriter, loc, constant(2.0), erfc);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(add, nonPositive, erfc, upper);
    rewriter.eraseOp(erf);
    return success();
  }
};

struct ExpandOnePlusErfPass
    : fusion::impl::ExpandOnePlusErfBase<ExpandOnePlusErfPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<OnePlusErfAsExp2>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
