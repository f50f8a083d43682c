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

/// erfc(t) = 2^(t q(t)) for t = |s| >= 0, where t q(t) = -log2(e) t^2 +
/// log2(erfc(t) exp(t^2)): the second term is a polynomial fitted in float64
/// on [0, 4.5] for the error of erfc(t), the first joins its t^2 coefficient,
/// and the coefficients are rounded to f32 (the values the kernels use,
/// whose accuracy on the GPU the pass description states). Both sets end
/// in a negative coefficient, so t q(t) falls for every t >= 0 (checked in
/// f32 up to 1e38): no clamp is needed, erfc falls to 0 past 4.5 and to
/// exactly 0 at t = inf.
///
/// Exact (f32-accurate) erf: q of degree 9.
constexpr double kExactCoefficients[] = {
    -1.6279078722000122,   -0.9184310436248779,    -0.14837613701820374,
    0.02790195681154728,   -0.0001480902428738773, -0.002121778903529048,
    0.0008099403348751366, -0.00015994790010154247, 1.7075653886422515e-05,
    -7.750865052003064e-07};
/// Approximate erf (fastmath<afn>): q of degree 6, erfc within 6.3e-6
/// relative on [0, 4.5], far below a 16-bit result's rounding.
constexpr double kApproximateCoefficients[] = {
    -1.6280632019042969,  -0.9170815944671631,    -0.15242986381053925,
    0.033910367637872696, -0.005223661661148071,  0.00048609680379740894,
    -2.0318069800850935e-05};

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
    bool approximate = arith::bitEnumContainsAll(erf.getFastmath(),
                                                 arith::FastMathFlags::afn);
    llvm::ArrayRef<double> coefficients =
        approximate ? llvm::ArrayRef(kApproximateCoefficients)
                    : llvm::ArrayRef(kExactCoefficients);
    Value s = erf.getOperand();
    Value t = math::AbsFOp::create(rewriter, loc, s);
    Value q = constant(coefficients.back());
    for (double c : llvm::reverse(coefficients.drop_back()))
      q = math::FmaOp::create(rewriter, loc, q, t, constant(c));
    Value exponent = arith::MulFOp::create(rewriter, loc, q, t);
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
