//===- InlineSpecialFunctions.cpp - special functions as formulas ---------===//

#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_INLINESPECIALFUNCTIONS
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

struct InlineSpecialFunctionsPass
    : fusion::impl::InlineSpecialFunctionsBase<InlineSpecialFunctionsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Post-order: nested ops are inlined into their enclosing body first.
    getOperation()->walk([&](SpecialOp special) {
      // The C library's function: fusion-math-to-libm calls it.
      if (!special.hasFormula())
        return;
      YieldOp yield = special.getBodyYield();
      rewriter.inlineBlockBefore(&special.getBodyBlock(), special,
                                 special.getInputs());
      rewriter.replaceOp(special, yield.getValue());
      rewriter.eraseOp(yield);
    });
  }
};

} // namespace
