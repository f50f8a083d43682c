//===- ExpandOnePlusExp.cpp - c + exp(a) and its reciprocal, cheaper ------===//

#include "fusion/Codegen/Math/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_EXPANDONEPLUSEXP
#include "fusion/Codegen/Math/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

constexpr llvm::StringLiteral kFlushingExp2 = "llvm.nvvm.ex2.approx.ftz.f";

/// Whether `value` is an exponential, nonnegative or NaN: a math.exp, or
/// the ex2 that FlushedExpBeforeAddition makes of one.
static bool isExponential(Value value) {
  if (value.getDefiningOp<math::ExpOp>())
    return true;
  auto call = value.getDefiningOp<LLVM::CallIntrinsicOp>();
  return call && call.getIntrin() == kFlushingExp2;
}

/// The smallest constant that absorbs every subnormal f32 added to it: half
/// its ulp, at least 2^-126, is more than any subnormal.
constexpr float kAbsorbingMagnitude = 0x1p-102f;

/// Whether `value` is an f32 constant c with |c| >= kAbsorbingMagnitude
/// (infinities included): c + e is c for every subnormal e.
static bool isAbsorbingConstant(Value value) {
  FloatAttr constant;
  return matchPattern(value, m_Constant(&constant)) &&
         std::abs(constant.getValue().convertToFloat()) >= kAbsorbingMagnitude;
}

/// An approximate exp(a) whose every user adds it to such a constant
/// (sigmoid's 1 + exp(-x)) -> ex2.approx.ftz(a log2(e)): the product and
/// the ex2 that libdevice's __nv_fast_expf computes, whose results below
/// 2^-126 are flushed to 0 instead of kept by a range check and two
/// scalings an element. The sums are the same bits.
struct FlushedExpBeforeAddition : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp exp,
                                PatternRewriter &rewriter) const override {
    if (!exp.getType().isF32() ||
        !arith::bitEnumContainsAll(exp.getFastmath(),
                                   arith::FastMathFlags::afn) ||
        exp->use_empty())
      return failure();
    for (Operation *user : exp->getUsers()) {
      auto add = dyn_cast<arith::AddFOp>(user);
      if (!add)
        return failure();
      Value other =
          add.getLhs() == exp.getResult() ? add.getRhs() : add.getLhs();
      if (!isAbsorbingConstant(other))
        return failure();
    }
    Location loc = exp.getLoc();
    Value log2e = arith::ConstantOp::create(
        rewriter, loc, rewriter.getF32FloatAttr(1.44269504088896340736f));
    Value exponent =
        arith::MulFOp::create(rewriter, loc, exp.getOperand(), log2e);
    rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        exp, exp.getType(), rewriter.getStringAttr(kFlushingExp2),
        ValueRange{exponent});
    return success();
  }
};

/// The smallest normal f32, 2^-126.
constexpr float kSmallestNormal = 0x1p-126f;
/// Past it, an f32 reciprocal is subnormal, which rcp.approx.ftz.f32
/// flushes to 0.
constexpr float kLargestNormalReciprocal = 0x1p126f;

/// An approximate reciprocal 1 / (c + exp(a)) (sigmoid's) with an f32
/// constant c >= 2^-126 -> rcp.approx.ftz.f32(d s) s, s = 1/4 for d past
/// 2^126, else 1: the sequence that ptxas makes of rcp.approx.f32 (whose
/// MUFU.RCP flushes), less its check and scaling for subnormal divisors,
/// which d >= c rules out. The same bits, two SASS instructions an element
/// fewer.
struct ReciprocalOfOnePlusExp : OpRewritePattern<arith::DivFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::DivFOp div,
                                PatternRewriter &rewriter) const override {
    if (!div.getType().isF32() ||
        div.getFastmath() != arith::FastMathFlags::afn ||
        !matchPattern(div.getLhs(), m_OneFloat()))
      return failure();
    auto add = div.getRhs().getDefiningOp<arith::AddFOp>();
    if (!add)
      return failure();
    auto [exp, other] = isExponential(add.getLhs())
                            ? std::pair(add.getLhs(), add.getRhs())
                            : std::pair(add.getRhs(), add.getLhs());
    FloatAttr constant;
    if (!isExponential(exp) || !matchPattern(other, m_Constant(&constant)) ||
        !(constant.getValue().convertToFloat() >= kSmallestNormal))
      return failure();
    Location loc = div.getLoc();
    auto f32 = [&](float value) -> Value {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getF32FloatAttr(value));
    };
    Value divisor = div.getRhs();
    Value large =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, divisor,
                              f32(kLargestNormalReciprocal));
    Value scale =
        arith::SelectOp::create(rewriter, loc, large, f32(0.25f), f32(1.0f));
    Value reciprocal = NVVM::RcpApproxFtzF32Op::create(
        rewriter, loc, rewriter.getF32Type(),
        arith::MulFOp::create(rewriter, loc, divisor, scale));
    rewriter.replaceOpWithNewOp<arith::MulFOp>(div, reciprocal, scale);
    return success();
  }
};

struct ExpandOnePlusExpPass
    : fusion::impl::ExpandOnePlusExpBase<ExpandOnePlusExpPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FlushedExpBeforeAddition, ReciprocalOfOnePlusExp>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
