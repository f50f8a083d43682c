//===- OutlinePowers.cpp - libdevice's powf once a module -----------------===//

#include "fusion/Codegen/Math/Passes.h"

#include "fusion/Codegen/Math/OutOfLineFunction.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_OUTLINEPOWERS
#include "fusion/Codegen/Math/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// `__fusion_powf(x, y)`, the `math.powf` out of line.
constexpr llvm::StringLiteral kOutOfLinePower = "__fusion_powf";

/// Whether the pass calls `power` out of line: an accurate f32 one outside
/// the function that holds it. Approximate ones (afn) are libdevice's
/// `__nv_fast_powf`, a few instructions.
static bool outlines(math::PowFOp power) {
  if (!power.getType().isF32() ||
      arith::bitEnumContainsAny(power.getFastmath(), arith::FastMathFlags::afn))
    return false;
  return !isInOutOfLineFunction(power, kOutOfLinePower);
}

struct OutlinePowersPass : fusion::impl::OutlinePowersBase<OutlinePowersPass> {
  void runOnOperation() override {
    // Collected first; the out-of-line function's own powf stays.
    SmallVector<math::PowFOp> powers;
    getOperation()->walk([&](math::PowFOp power) {
      if (outlines(power))
        powers.push_back(power);
    });
    for (math::PowFOp power : powers) {
      FailureOr<LLVM::LLVMFuncOp> outOfLine = getOrCreateOutOfLineFunction(
          power, getOperation(), getArgument(), kOutOfLinePower, 2,
          [](OpBuilder &b, Location loc, ValueRange arguments) -> Value {
            return math::PowFOp::create(b, loc, arguments[0], arguments[1]);
          });
      if (failed(outOfLine))
        return signalPassFailure();
      OpBuilder builder(power);
      auto call = LLVM::CallOp::create(builder, power.getLoc(), *outOfLine,
                                       power->getOperands());
      power.replaceAllUsesWith(call.getResult());
      power.erase();
    }
  }
};

} // namespace
