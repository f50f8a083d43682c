//===- Approximate16BitMath.cpp - afn math where results are 16 bits -----===//

#include "fusion/Dialect/Fusion/Transforms/Passes.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_APPROXIMATE16BITMATH
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// The 16-bit float type to which `op`, a fusion op with a region, rounds
/// the region's values for its result; null for others.
Type getRoundedTo16Bits(Operation *op) {
  if (!isa<FusedLinearOp, ElementwiseOp, ReduceOp>(op))
    return Type();
  Type type = cast<ShapedType>(op->getResult(0).getType()).getElementType();
  return isa<BFloat16Type, Float16Type>(type) ? type : Type();
}

/// Whether `inner`'s approximate form stays within `rounded`'s rounding:
/// erf, exp, sin, cos and divisions within both 16-bit types', tanh
/// (tanh.approx.f32, 2^-11 relative) within bf16's alone.
bool approximatesWithin(Operation *inner, Type rounded) {
  if (isa<math::TanhOp>(inner))
    return rounded.isBF16();
  return isa<math::ErfOp, math::ExpOp, math::SinOp, math::CosOp, arith::DivFOp>(
      inner);
}

struct Approximate16BitMathPass
    : fusion::impl::Approximate16BitMathBase<Approximate16BitMathPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      Type rounded = getRoundedTo16Bits(op);
      if (!rounded)
        return;
      op->walk([&](Operation *inner) {
        if (!approximatesWithin(inner, rounded))
          return;
        auto fastMath = cast<arith::ArithFastMathInterface>(inner);
        inner->setAttr(fastMath.getFastMathAttrName(),
                       arith::FastMathFlagsAttr::get(
                           inner->getContext(),
                           fastMath.getFastMathFlagsAttr().getValue() |
                               arith::FastMathFlags::afn));
      });
    });
  }
};

} // namespace
