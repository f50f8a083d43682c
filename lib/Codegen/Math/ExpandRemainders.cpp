//===- ExpandRemainders.cpp - fmod of small quotients without a branch ----===//

#include "fusion/Codegen/Math/Passes.h"
#include "fusion/Dialect/Fusion/IR/ScalarBuilders.h"

#include "fusion/Codegen/Math/OutOfLineFunction.h"

#include <cmath>

namespace mlir::fusion {
#define GEN_PASS_DEF_EXPANDREMAINDERS
#include "fusion/Codegen/Math/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Below it, an approximate quotient within 2 ulps is within 1/8 of a / b,
/// so its trunc is within 1 of the integer quotient.
constexpr float kLargestFastQuotient = 1 << 20;

/// |y|, once for the remainders by y, where y is defined: the divisions by
/// it are then divisions by one value, which fusion-expand-divisions
/// shares where many are, or a loop's are (a row statistic). Folded where
/// y is a constant, so that the division by it is one product.
static Value magnitudeOf(OpBuilder &b, Value y,
                         DenseMap<Value, Value> &magnitudes) {
  Value &magnitude = magnitudes[y];
  if (!magnitude) {
    OpBuilder::InsertionGuard guard(b);
    if (Operation *definition = y.getDefiningOp())
      b.setInsertionPointAfter(definition);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(y).getOwner());
    magnitude = b.createOrFold<math::AbsFOp>(y.getLoc(), y);
  }
  return magnitude;
}

/// `__fusion_fmodf(x, y)`, the `arith.remf` out of line.
constexpr llvm::StringLiteral kOutOfLineRemainder = "__fusion_fmodf";

/// fmod(x, y) as the pass's description derives it, with a call of the
/// out-of-line `arith.remf` in the branch for quotients of 2^20 and more,
/// infinite or NaN, and for infinite y.
static Value expandRemainder(OpBuilder &b, arith::RemFOp rem,
                             LLVM::LLVMFuncOp outOfLine,
                             DenseMap<Value, Value> &magnitudes) {
  Location loc = rem.getLoc();
  Value x = rem.getLhs();
  Value a = math::AbsFOp::create(b, loc, x);
  Value divisor = magnitudeOf(b, rem.getRhs(), magnitudes);
  Value quotient =
      arith::DivFOp::create(b, loc, a, divisor, arith::FastMathFlags::afn);
  auto remainderOf = [&](Value q) {
    return math::FmaOp::create(b, loc, arith::NegFOp::create(b, loc, q),
                               divisor, a);
  };
  auto compare = [&](arith::CmpFPredicate predicate, Value lhs, Value rhs) {
    return b.createOrFold<arith::CmpFOp>(loc, predicate, lhs, rhs);
  };
  // One op a statement: the order of the IR does not depend on the
  // compiler's order of evaluating arguments.
  Value q = math::TruncOp::create(b, loc, quotient);
  Value low = compare(arith::CmpFPredicate::OGE, remainderOf(q), divisor);
  Value next = arith::AddFOp::create(b, loc, q, buildF32Constant(b, loc, 1));
  q = arith::SelectOp::create(b, loc, low, next, q);
  Value r = remainderOf(q);
  Value negative =
      compare(arith::CmpFPredicate::OLT, r, buildF32Constant(b, loc, 0));
  Value up = arith::AddFOp::create(b, loc, r, divisor);
  r = arith::SelectOp::create(b, loc, negative, up, r);
  Value fast = math::CopySignOp::create(b, loc, r, x);
  Value small = compare(arith::CmpFPredicate::OLT, quotient,
                        buildF32Constant(b, loc, kLargestFastQuotient));
  Value finite = compare(arith::CmpFPredicate::OLT, divisor,
                         buildF32Constant(b, loc, INFINITY));
  Value fits = b.createOrFold<arith::AndIOp>(loc, small, finite);
  return buildFastPathOrCall(b, loc, fits, fast, outOfLine,
                             ValueRange{x, rem.getRhs()});
}

struct ExpandRemaindersPass
    : fusion::impl::ExpandRemaindersBase<ExpandRemaindersPass> {
  void runOnOperation() override {
    // Collected first; the out-of-line function's own remf stays.
    SmallVector<arith::RemFOp> remainders;
    getOperation()->walk([&](arith::RemFOp rem) {
      if (rem.getType().isF32() &&
          !isInOutOfLineFunction(rem, kOutOfLineRemainder))
        remainders.push_back(rem);
    });
    DenseMap<Value, Value> magnitudes;
    for (arith::RemFOp rem : remainders) {
      FailureOr<LLVM::LLVMFuncOp> outOfLine = getOrCreateOutOfLineFunction(
          rem, getOperation(), getArgument(), kOutOfLineRemainder, 2,
          [](OpBuilder &b, Location loc, ValueRange arguments) -> Value {
            return arith::RemFOp::create(b, loc, arguments[0], arguments[1]);
          });
      if (failed(outOfLine))
        return signalPassFailure();
      OpBuilder builder(rem);
      rem.replaceAllUsesWith(
          expandRemainder(builder, rem, *outOfLine, magnitudes));
      rem.erase();
    }
  }
};

} // namespace
