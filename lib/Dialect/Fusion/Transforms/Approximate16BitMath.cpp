//===- Approximate16BitMath.cpp - afn math where results are 16 bits -----===//

#include "fusion/Dialect/Fusion/Transforms/Passes.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_APPROXIMATE16BITMATH
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Whether `op` is a fusion op with a region whose values are rounded to a
/// 16-bit float type for its result.
bool roundsRegionTo16Bits(Operation *op) {
  if (!isa<FusedLinearOp, ElementwiseOp, ReduceOp>(op))
    return false;
  auto type = cast<ShapedType>(op->getResult(0).getType());
  return isa<BFloat16Type, Float16Type>(type.getElementType());
}

struct Approximate16BitMathPass
    : fusion::impl::Approximate16BitMathBase<Approximate16BitMathPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (!roundsRegionTo16Bits(op))
        return;
      op->walk([](Operation *inner) {
        if (!isa<math::ErfOp, math::ExpOp, math::SinOp, math::CosOp,
                 arith::DivFOp>(inner))
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
