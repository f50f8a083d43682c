//===- ExpandTanh.cpp - mish's tanh(softplus(x)) and approximate tanh -----===//

#include "fusion/Codegen/Math/Passes.h"
#include "fusion/Codegen/Math/Quotients.h"
#include "fusion/Dialect/Fusion/IR/ScalarBuilders.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::fusion {
#define GEN_PASS_DEF_EXPANDTANH
#include "fusion/Codegen/Math/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Past this x, tanh(x) rounds to 1 in f32 (tanh(9.02) = 1 - 2^-25).
constexpr float kTanhIsOne = 10.0f;
/// The guard of the rational form: below it e^x (e^x + 2) stays finite.
constexpr float kRationalLimit = 20.0f;

/// numerator / denominator for a denominator of at least 1. With the
/// tanh's `afn`, approximate (`fusion-expand-divisions` makes it
/// div.full.f32, 0 for an infinite denominator); otherwise the corrected
/// quotient of the approximate reciprocal (within an ulp, as the forms' exp
/// is): `div.rn.f32`'s range check branches to its slow path apart in a
/// warp's lanes, and mish's twice in a tf32 GEMM epilogue added 11% to the
/// GEMM (KernelBench 29, run 160). Its correction is NaN for an infinite
/// denominator: with `mayBeInfinite`, the quotient is 0 there.
static Value quotientOfAtLeastOne(OpBuilder &b, Location loc, Value numerator,
                                  Value denominator,
                                  arith::FastMathFlags fastmath,
                                  bool mayBeInfinite) {
  if (arith::bitEnumContainsAll(fastmath, arith::FastMathFlags::afn))
    return arith::DivFOp::create(b, loc, numerator, denominator, fastmath);
  Value quotient = buildMarksteinQuotient(b, loc, numerator, denominator);
  if (!mayBeInfinite)
    return quotient;
  Value infinite = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OEQ, denominator,
      buildF32Constant(b, loc, std::numeric_limits<float>::infinity()));
  return arith::SelectOp::create(b, loc, infinite,
                                 buildF32Constant(b, loc, 0.0), quotient);
}

/// `x` where `value` is log1p(exp(x)).
static Value getSoftplusArgument(Value value) {
  auto log1p = value.getDefiningOp<math::Log1pOp>();
  if (!log1p)
    return Value();
  auto exp = log1p.getOperand().getDefiningOp<math::ExpOp>();
  return exp ? exp.getOperand() : Value();
}

/// `x` where `value` is softplus(x), as PyTorch decomposes it: log1p(exp(x)),
/// or x > T ? x : log1p(exp(x)) with a threshold T >= kTanhIsOne, past
/// which tanh(x) is 1.
static Value getSoftplusOf(Value value) {
  if (Value x = getSoftplusArgument(value))
    return x;
  auto select = value.getDefiningOp<arith::SelectOp>();
  if (!select)
    return Value();
  auto compare = select.getCondition().getDefiningOp<arith::CmpFOp>();
  FloatAttr threshold;
  Value x = getSoftplusArgument(select.getFalseValue());
  if (!compare || !x || select.getTrueValue() != x ||
      compare.getPredicate() != arith::CmpFPredicate::OGT ||
      compare.getLhs() != x ||
      !matchPattern(compare.getRhs(), m_Constant(&threshold)) ||
      !(threshold.getValue().convertToFloat() >= kTanhIsOne))
    return Value();
  return x;
}

/// tanh(softplus(x)) (mish's) -> n / (n + 2), n = e (e + 2), e = exp(x):
/// tanh(log(1 + e)) = ((1 + e)^2 - 1) / ((1 + e)^2 + 1). One exp and one
/// division instead of an exp, a log1p and a tanh; x > 20 (where n would
/// overflow, and tanh is 1) gives 1, so the quotient that counts has a
/// denominator in [2, 2.4e17].
struct RationalTanhOfSoftplus : OpRewritePattern<math::TanhOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::TanhOp tanh,
                                PatternRewriter &rewriter) const override {
    Value x = getSoftplusOf(tanh.getOperand());
    if (!tanh.getType().isF32() || !x)
      return failure();
    Location loc = tanh.getLoc();
    auto f32 = [&](float value) -> Value {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getF32FloatAttr(value));
    };
    Value two = f32(2.0f);
    Value e = math::ExpOp::create(rewriter, loc, x, tanh.getFastmath());
    Value n = arith::MulFOp::create(
        rewriter, loc, e, arith::AddFOp::create(rewriter, loc, e, two));
    // Past x = 20, where n overflows, the select below takes 1.
    Value rational = quotientOfAtLeastOne(
        rewriter, loc, n, arith::AddFOp::create(rewriter, loc, n, two),
        tanh.getFastmath(), /*mayBeInfinite=*/false);
    Value large = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OGT, x, f32(kRationalLimit));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(tanh, large, f32(1.0f),
                                                 rational);
    return success();
  }
};

/// 1 + tanh(y) (gelu's tanh form) -> 2 / (1 + exp(-2y)), and 1 - tanh(y)
/// -> 2 / (1 + exp(2y)): the sum cancels where tanh(y) nears -1 (or 1),
/// the quotient keeps every digit. One exp and a division; the exp and the
/// division keep the tanh's fastmath flags. The exact form's quotient is 0
/// where exp overflows.
struct OnePlusTanh : OpRewritePattern<math::TanhOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::TanhOp tanh,
                                PatternRewriter &rewriter) const override {
    if (!tanh.getType().isF32() || !tanh->hasOneUse())
      return failure();
    Operation *user = *tanh->getUsers().begin();
    float sign;
    if (auto add = dyn_cast<arith::AddFOp>(user);
        add && matchPattern(add.getLhs() == tanh.getResult() ? add.getRhs()
                                                             : add.getLhs(),
                            m_OneFloat()))
      sign = -2.0f;
    else if (auto sub = dyn_cast<arith::SubFOp>(user);
             sub && sub.getRhs() == tanh.getResult() &&
             matchPattern(sub.getLhs(), m_OneFloat()))
      sign = 2.0f;
    else
      return failure();
    Location loc = tanh.getLoc();
    rewriter.setInsertionPoint(user);
    auto f32 = [&](float value) -> Value {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getF32FloatAttr(value));
    };
    arith::FastMathFlags fastmath = tanh.getFastmath();
    Value e = math::ExpOp::create(
        rewriter, loc,
        arith::MulFOp::create(rewriter, loc, tanh.getOperand(), f32(sign)),
        fastmath);
    Value denominator = arith::AddFOp::create(rewriter, loc, f32(1.0f), e);
    Value quotient =
        quotientOfAtLeastOne(rewriter, loc, f32(2.0f), denominator, fastmath,
                             /*mayBeInfinite=*/true);
    rewriter.replaceOp(user, quotient);
    rewriter.eraseOp(tanh);
    return success();
  }
};

/// An approximate f32 tanh (`afn`) -> PTX's tanh.approx.f32, one MUFU
/// instruction instead of libdevice's tanhf; not where a sum or difference
/// reads it, whose cancellation would magnify its relative error.
struct ApproximateTanh : OpRewritePattern<math::TanhOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::TanhOp tanh,
                                PatternRewriter &rewriter) const override {
    if (!tanh.getType().isF32() ||
        !arith::bitEnumContainsAll(tanh.getFastmath(),
                                   arith::FastMathFlags::afn) ||
        llvm::any_of(tanh->getUsers(), [](Operation *user) {
          return isa<arith::AddFOp, arith::SubFOp>(user);
        }))
      return failure();
    rewriter.replaceOpWithNewOp<LLVM::InlineAsmOp>(
        tanh, tanh.getType(), ValueRange{tanh.getOperand()},
        "tanh.approx.f32 $0, $1;", "=f,f", /*has_side_effects=*/false,
        /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr::get(rewriter.getContext(),
                                  LLVM::AsmDialect::AD_ATT),
        /*operand_attrs=*/ArrayAttr());
    return success();
  }
};

struct ExpandTanhPass : fusion::impl::ExpandTanhBase<ExpandTanhPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // The exact forms first: a tanh they rewrite takes no approximation.
    patterns.add<RationalTanhOfSoftplus, OnePlusTanh>(&getContext(),
                                                      /*benefit=*/2);
    patterns.add<ApproximateTanh>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
