//===- ExpandTrigonometry.cpp - sin, cos, tan without libdevice's code ----===//

#include "fusion/Codegen/Math/Passes.h"
#include "fusion/Codegen/Math/Quotients.h"
#include "fusion/Dialect/Fusion/IR/ScalarBuilders.h"

#include "fusion/Codegen/Math/OutOfLineFunction.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_EXPANDTRIGONOMETRY
#include "fusion/Codegen/Math/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// The largest argument reduced inline (CUDA's bound for the same
/// three-part reduction): the pass's description says why it holds there.
constexpr float kLargestReducedArgument = 105615.0f;

constexpr float kTwoOverPi = 0x1.45f306p-1f;
/// pi/2 in three parts, each the f32 truncation of what the ones before
/// leave: the first's products by a quadrant index are multiples of its
/// ulp, so that |x| - j kHalfPiHigh is exact.
constexpr float kHalfPiHigh = 0x1.921fb4p+0f;
constexpr float kHalfPiMiddle = 0x1.4442dp-24f;
constexpr float kHalfPiLow = 0x1.846988p-48f;

/// Cephes' minimax polynomials on [-pi/4, pi/4]:
/// sin r = r + r^3 (S1 + S2 r^2 + S3 r^4),
/// cos r = 1 - r^2 / 2 + r^4 (C1 + C2 r^2 + C3 r^4).
constexpr float kSineCoefficients[] = {-1.6666654611e-1f, 8.3321608736e-3f,
                                       -1.9515295891e-4f};
constexpr float kCosineCoefficients[] = {
    4.166664568298827e-2f, -1.388731625493765e-3f, 2.443315711809948e-5f};

/// The sine and cosine of |x| reduced to [-pi/4, pi/4] about j pi/2, and
/// j's two low bits.
struct ReducedArgument {
  Value sine, cosine;
  /// j odd: sin |x| = +-cos r, cos |x| = +-sin r.
  Value swapped;
  /// Whether sin |x| is minus the reduced value it takes (j mod 4 is 2 or
  /// 3), and whether cos |x| is (j mod 4 is 1 or 2).
  Value sineNegated, cosineNegated;
};

class TrigonometryBuilder {
public:
  TrigonometryBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  ReducedArgument reduce(Value magnitude) {
    Value j = math::RoundEvenOp::create(
        b, loc, arith::MulFOp::create(b, loc, magnitude, constant(kTwoOverPi)));
    Value r = magnitude;
    for (float part : {kHalfPiHigh, kHalfPiMiddle, kHalfPiLow})
      r = math::FmaOp::create(b, loc, j, constant(-part), r);
    // One op a statement: the order of the IR does not depend on the
    // compiler's order of evaluating arguments.
    Value z = arith::MulFOp::create(b, loc, r, r);
    // r + r^3 S(z).
    Value cube = arith::MulFOp::create(b, loc, r, z);
    Value sine =
        math::FmaOp::create(b, loc, cube, polynomial(z, kSineCoefficients), r);
    // 1 + z (-1/2 + z C(z)).
    Value cosineTail = polynomial(z, kCosineCoefficients);
    Value half = constant(-0.5f);
    Value one = constant(1.0f);
    Value cosine = math::FmaOp::create(
        b, loc, z, math::FmaOp::create(b, loc, z, cosineTail, half), one);
    Value quadrant = arith::FPToSIOp::create(b, loc, b.getI32Type(), j);
    auto bitSet = [&](Value bits, int64_t mask) {
      Value masked = arith::AndIOp::create(b, loc, bits, integer(mask));
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, masked,
                                   integer(0));
    };
    Value next = arith::AddIOp::create(b, loc, quadrant, integer(1));
    return {sine, cosine, bitSet(quadrant, 1), bitSet(quadrant, 2),
            bitSet(next, 2)};
  }

  Value select(Value condition, Value ifTrue, Value ifFalse) {
    return arith::SelectOp::create(b, loc, condition, ifTrue, ifFalse);
  }

  Value negate(Value value) { return arith::NegFOp::create(b, loc, value); }

  Value negateWhere(Value condition, Value value) {
    return select(condition, negate(value), value);
  }

  /// `value` with its sign flipped where x is negative (-0 included): sine
  /// and tangent are odd.
  Value withSignOf(Value x, Value value) {
    Type i32 = b.getI32Type();
    Value bits = arith::BitcastOp::create(b, loc, i32, x);
    Value sign = arith::AndIOp::create(
        b, loc, bits, integer(static_cast<int32_t>(0x80000000u)));
    Value flipped = arith::XOrIOp::create(
        b, loc, arith::BitcastOp::create(b, loc, i32, value), sign);
    return arith::BitcastOp::create(b, loc, b.getF32Type(), flipped);
  }

  Value constant(float value) { return buildF32Constant(b, loc, value); }

  /// n / d, d a reduced cosine or a nonzero reduced sine: neither
  /// subnormal nor huge.
  Value divide(Value numerator, Value denominator) {
    return buildMarksteinQuotient(b, loc, numerator, denominator);
  }

private:
  Value integer(int64_t value) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
  }

  /// c0 + c1 z + c2 z^2 in multiply-adds, from the highest power.
  Value polynomial(Value z, ArrayRef<float> coefficients) {
    Value sum = constant(coefficients.back());
    for (float coefficient : llvm::reverse(coefficients.drop_back()))
      sum = math::FmaOp::create(b, loc, sum, z, constant(coefficient));
    return sum;
  }

  OpBuilder &b;
  Location loc;
};

/// sin, cos or tan of x for |x| up to kLargestReducedArgument.
static Value expandInline(TrigonometryBuilder &t, Operation *op, Value x,
                          Value magnitude) {
  ReducedArgument reduced = t.reduce(magnitude);
  if (isa<math::CosOp>(op))
    return t.negateWhere(
        reduced.cosineNegated,
        t.select(reduced.swapped, reduced.sine, reduced.cosine));
  if (isa<math::SinOp>(op))
    return t.withSignOf(
        x,
        t.negateWhere(reduced.sineNegated,
                      t.select(reduced.swapped, reduced.cosine, reduced.sine)));
  // tan |x| = sin r / cos r, or -cos r / sin r for odd j.
  Value numerator =
      t.select(reduced.swapped, t.negate(reduced.cosine), reduced.sine);
  Value denominator = t.select(reduced.swapped, reduced.sine, reduced.cosine);
  return t.withSignOf(x, t.divide(numerator, denominator));
}

/// The op itself in `__fusion_sinf`, `__fusion_cosf` or `__fusion_tanf`.
static StringRef getOutOfLineName(Operation *op) {
  if (isa<math::SinOp>(op))
    return "__fusion_sinf";
  if (isa<math::CosOp>(op))
    return "__fusion_cosf";
  return "__fusion_tanf";
}

/// Whether the pass expands `op`: an accurate f32 sine, cosine or tangent
/// outside the function that holds it out of line.
static bool expands(Operation *op) {
  if (!isa<math::SinOp, math::CosOp, math::TanOp>(op) ||
      !op->getResult(0).getType().isF32())
    return false;
  auto flags = cast<arith::ArithFastMathInterface>(op).getFastMathFlagsAttr();
  if (flags &&
      arith::bitEnumContainsAny(flags.getValue(), arith::FastMathFlags::afn))
    return false;
  return !isInOutOfLineFunction(op, getOutOfLineName(op));
}

struct ExpandTrigonometryPass
    : fusion::impl::ExpandTrigonometryBase<ExpandTrigonometryPass> {
  void runOnOperation() override {
    // Collected first; the out-of-line functions' own ops stay.
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (expands(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OperationName name = op->getName();
      FailureOr<LLVM::LLVMFuncOp> outOfLine = getOrCreateOutOfLineFunction(
          op, getOperation(), getArgument(), getOutOfLineName(op), 1,
          [&](OpBuilder &b, Location at, ValueRange arguments) -> Value {
            OperationState state(at, name);
            state.addOperands(arguments);
            state.addTypes(b.getF32Type());
            return b.create(state)->getResult(0);
          });
      if (failed(outOfLine))
        return signalPassFailure();
      OpBuilder builder(op);
      Location loc = op->getLoc();
      TrigonometryBuilder t(builder, loc);
      Value x = op->getOperand(0);
      Value magnitude = math::AbsFOp::create(builder, loc, x);
      Value fast = expandInline(t, op, x, magnitude);
      Value reducible = builder.createOrFold<arith::CmpFOp>(
          loc, arith::CmpFPredicate::OLE, magnitude,
          t.constant(kLargestReducedArgument));
      op->getResult(0).replaceAllUsesWith(buildFastPathOrCall(
          builder, loc, reducible, fast, *outOfLine, ValueRange{x}));
      op->erase();
    }
  }
};

} // namespace
