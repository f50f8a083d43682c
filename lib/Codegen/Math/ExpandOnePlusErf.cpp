//===- ExpandOnePlusErf.cpp - 1 + erf(s) as one ex2 of a polynomial -------===//

#include "fusion/Codegen/Math/Passes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::fusion {
#define GEN_PASS_DEF_EXPANDONEPLUSERF
#include "fusion/Codegen/Math/Passes.h.inc"
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

/// `value * constant` (either order) for a finite, nonzero f32 constant.
static std::optional<std::pair<Value, double>> matchScaled(Value product) {
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return std::nullopt;
  for (auto [value, other] : {std::pair(mul.getLhs(), mul.getRhs()),
                              std::pair(mul.getRhs(), mul.getLhs())}) {
    FloatAttr scale;
    if (matchPattern(other, m_Constant(&scale)) &&
        scale.getValue().isFiniteNonZero())
      return std::make_pair(value, scale.getValueAsDouble());
  }
  return std::nullopt;
}

/// The coefficients of q in |x| for s = x c: |s| q(|s|) = |x| sum_i
/// (a_i |c|^(i+1)) |x|^i.
static SmallVector<double> scaledPolynomial(ArrayRef<double> coefficients,
                                            double scale) {
  SmallVector<double> scaled;
  double power = std::abs(scale);
  for (double c : coefficients) {
    scaled.push_back(c * power);
    power *= std::abs(scale);
  }
  return scaled;
}

static bool isNormalF32(double value) {
  double magnitude = std::abs(value);
  return magnitude >= std::numeric_limits<float>::min() &&
         magnitude <= std::numeric_limits<float>::max();
}

/// 1 + erf(s) -> (s <= 0 ? e : 2 - e), e = erfc(|s|) as one ex2.
///
/// Two products around it fold into the polynomial, an instruction an
/// element each (gelu's `x / 2 * (1 + erf(x / sqrt 2))` has both):
///  - s = x c: the polynomial is taken in |x|, its coefficients times powers
///    of |c|, and the sign of s is the sign of x (or its opposite);
///  - (x / 2) (1 + erf(s)) = x ((1 + erf(s)) / 2), exact as both halvings
///    are, where (1 + erf(s)) / 2 = (s <= 0 ? e / 2 : 1 - e / 2) and
///    e / 2 = 2^(|s| q(|s|) - 1): the exponent's multiply by |s| becomes a
///    multiply-add.
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

    bool approximate = arith::bitEnumContainsAll(erf.getFastmath(),
                                                 arith::FastMathFlags::afn);
    llvm::ArrayRef<double> coefficients =
        approximate ? llvm::ArrayRef(kApproximateCoefficients)
                    : llvm::ArrayRef(kExactCoefficients);
    // The erf's argument s = x c, or s itself (c = 1) where a coefficient
    // times its power of |c| would leave f32's normal range.
    Value x = erf.getOperand();
    double scale = 1.0;
    if (std::optional<std::pair<Value, double>> scaled = matchScaled(x))
      if (llvm::all_of(scaledPolynomial(coefficients, scaled->second),
                       isNormalF32))
        std::tie(x, scale) = *scaled;
    // The sum's one user (x' / 2) (1 + erf(s)), for its x'.
    arith::MulFOp halvedUser;
    Value halvedFactor;
    if (add->hasOneUse())
      if (auto user = dyn_cast<arith::MulFOp>(*add->user_begin())) {
        Value other = user.getLhs() == add.getResult() ? user.getRhs()
                                                       : user.getLhs();
        std::optional<std::pair<Value, double>> factor = matchScaled(other);
        if (factor && factor->second == 0.5) {
          halvedUser = user;
          halvedFactor = factor->first;
        }
      }

    Location loc = add.getLoc();
    auto constant = [&](double value) -> Value {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getF32FloatAttr(value));
    };
    SmallVector<double> scaledCoefficients =
        scaledPolynomial(coefficients, scale);
    Value t = math::AbsFOp::create(rewriter, loc, x);
    Value q = constant(scaledCoefficients.back());
    for (double c : llvm::reverse(ArrayRef(scaledCoefficients).drop_back()))
      q = math::FmaOp::create(rewriter, loc, q, t, constant(c));
    Value exponent =
        halvedUser ? Value(math::FmaOp::create(rewriter, loc, q, t,
                                               constant(-1.0)))
                   : Value(arith::MulFOp::create(rewriter, loc, q, t));
    // ftz: results below 2^-126 flush to 0, as erfc(t) falls to 0; the
    // non-ftz form adds a range check and two scalings an element.
    Value erfc = LLVM::CallIntrinsicOp::create(
                     rewriter, loc, rewriter.getF32Type(),
                     rewriter.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"),
                     ValueRange{exponent})
                     .getResult(0);
    // s <= 0 is x <= 0, or x >= 0 where c is negative.
    Value nonPositive = arith::CmpFOp::create(
        rewriter, loc,
        scale > 0 ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OGE, x,
        constant(0.0));
    Value upper = arith::SubFOp::create(rewriter, loc,
                                        constant(halvedUser ? 1.0 : 2.0), erfc);
    Value cdf =
        arith::SelectOp::create(rewriter, loc, nonPositive, erfc, upper);
    if (halvedUser) {
      rewriter.setInsertionPoint(halvedUser);
      rewriter.replaceOpWithNewOp<arith::MulFOp>(halvedUser, halvedFactor,
                                                 cdf);
      rewriter.eraseOp(add);
    } else {
      rewriter.replaceOp(add, cdf);
    }
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
