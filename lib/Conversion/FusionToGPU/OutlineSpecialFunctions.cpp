//===- OutlineSpecialFunctions.cpp - special functions once a module ------===//

#include "fusion/Conversion/FusionToGPU/FusionToGPU.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "OutOfLineFunction.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_OUTLINESPECIALFUNCTIONS
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Whether `a` and `b` compute the same function the same way, so that one
/// out-of-line function serves both.
static bool computeAlike(SpecialOp a, SpecialOp b) {
  return a.getFunction() == b.getFunction() &&
         a.getLibdevice() == b.getLibdevice() &&
         a.getInputs().size() == b.getInputs().size() &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

/// The body of `special`'s out-of-line function: libdevice's function of
/// `arguments`, declared in `symbolTable` if needed, or the op's formula.
static Value buildSpecialBody(SpecialOp special, Operation *symbolTable,
                              OpBuilder &builder, Location loc,
                              ValueRange arguments) {
  if (std::optional<StringRef> name = special.getLibdevice()) {
    auto library = dyn_cast_or_null<LLVM::LLVMFuncOp>(
        SymbolTable::lookupSymbolIn(symbolTable, *name));
    if (!library) {
      OpBuilder atTable =
          OpBuilder::atBlockBegin(&symbolTable->getRegion(0).front());
      Type f32 = builder.getF32Type();
      library = LLVM::LLVMFuncOp::create(
          atTable, loc, *name,
          LLVM::LLVMFunctionType::get(
              f32, SmallVector<Type>(arguments.size(), f32)));
    }
    return LLVM::CallOp::create(builder, loc, library, arguments).getResult();
  }
  IRMapping mapping;
  mapping.map(special.getBodyBlock().getArguments(), arguments);
  for (Operation &op : special.getBodyBlock().without_terminator())
    builder.clone(op, mapping);
  return mapping.lookup(special.getBodyYield().getValue());
}

struct OutlineSpecialFunctionsPass
    : fusion::impl::OutlineSpecialFunctionsBase<OutlineSpecialFunctionsPass> {
  void runOnOperation() override {
    // Innermost first (post-order): an op's body holds calls, not ops,
    // once its function is made.
    SmallVector<SpecialOp> specials;
    getOperation()->walk(
        [&](SpecialOp special) { specials.push_back(special); });
    // Each distinct op, detached once replaced (an enclosing op's body,
    // made into its function later, must not hold it), with its function.
    SmallVector<std::pair<SpecialOp, LLVM::LLVMFuncOp>> made;
    for (SpecialOp special : specials) {
      const auto *same = llvm::find_if(made, [&](const auto &entry) {
        return computeAlike(entry.first, special);
      });
      LLVM::LLVMFuncOp function = same != made.end() ? same->second : nullptr;
      if (!function) {
        FailureOr<LLVM::LLVMFuncOp> outOfLine = createOutOfLineFunction(
            special, getOperation(), getArgument(),
            ("__fusion_" + special.getFunction()).str(),
            special.getInputs().size(),
            [&](OpBuilder &b, Location loc, ValueRange arguments) {
              return buildSpecialBody(
                  special, SymbolTable::getNearestSymbolTable(special), b, loc,
                  arguments);
            });
        if (failed(outOfLine)) {
          signalPassFailure();
          break;
        }
        function = *outOfLine;
      }
      OpBuilder builder(special);
      auto call = LLVM::CallOp::create(builder, special.getLoc(), function,
                                       special.getInputs());
      special.getResult().replaceAllUsesWith(call.getResult());
      if (same != made.end()) {
        special.erase();
      } else {
        special->remove();
        made.push_back({special, function});
      }
    }
    for (auto &entry : made)
      entry.first.erase();
  }
};

} // namespace
