//===- MathToLibmCalls.cpp - libm calls for the CPU reference's math ------===//

#include "fusion/Codegen/Math/Passes.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_MATHTOLIBMCALLS
#include "fusion/Codegen/Math/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// The C library's function `name` of one f32, declared in `special`'s
/// nearest symbol table unless it is; an error at `special` if that
/// table's symbol of the name is anything else (a definition included).
static FailureOr<func::FuncOp> getOrDeclareLibm(SpecialOp special,
                                                StringRef name) {
  Operation *symbolTable = SymbolTable::getNearestSymbolTable(special);
  Type f32 = Float32Type::get(special.getContext());
  auto type = FunctionType::get(special.getContext(), {f32}, {f32});
  Operation *existing = SymbolTable::lookupSymbolIn(symbolTable, name);
  if (!existing) {
    auto builder = OpBuilder::atBlockBegin(&symbolTable->getRegion(0).front());
    auto declared = func::FuncOp::create(builder, special.getLoc(), name, type);
    declared.setPrivate();
    return declared;
  }
  auto declared = dyn_cast<func::FuncOp>(existing);
  if (!declared || !declared.isExternal() || declared.getFunctionType() != type)
    return special.emitOpError()
           << "calls the C library's '" << name
           << "', but the module's symbol of that name is not a declaration "
              "of its f32 function of one f32";
  return declared;
}

struct MathToLibmCallsPass
    : fusion::impl::MathToLibmCallsBase<MathToLibmCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult calls = module.walk([&](SpecialOp special) {
      std::optional<StringRef> name = special.getLibm();
      if (!name)
        return WalkResult::advance();
      FailureOr<func::FuncOp> function = getOrDeclareLibm(special, *name);
      if (failed(function))
        return WalkResult::interrupt();
      OpBuilder builder(special);
      auto call = func::CallOp::create(builder, special.getLoc(), *function,
                                       special.getInputs());
      special.getResult().replaceAllUsesWith(call.getResult(0));
      special.erase();
      return WalkResult::advance();
    });
    if (calls.wasInterrupted())
      return signalPassFailure();
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
