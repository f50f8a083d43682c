//===- MathToLibmCalls.cpp - libm calls for the CPU reference's math ------===//

#include "fusion/Conversion/FusionToLinalg/FusionToLinalg.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_MATHTOLIBMCALLS
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;

namespace {
struct MathToLibmCallsPass
    : fusion::impl::MathToLibmCallsBase<MathToLibmCallsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathToLibmConversionPatterns(patterns);
    // Rewrites, not a conversion: ops without a libm pattern stay.
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setRegionSimplificationLevel(
                GreedySimplifyRegionLevel::Disabled))))
      signalPassFailure();
  }
};
} // namespace
