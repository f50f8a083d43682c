//===- OutlineSpecialFunctions.cpp - special functions once a module ------===//

#include "fusion/Codegen/Math/Passes.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "fusion/Codegen/Math/OutOfLineFunction.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_OUTLINESPECIALFUNCTIONS
#include "fusion/Codegen/Math/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Whether `a` and `b` compute the same function the same way, so that one
/// out-of-line function serves both: libdevice's same function, or the same
/// formula.
static bool computeAlike(SpecialOp a, SpecialOp b) {
  if (a.getFunction() != b.getFunction() ||
      a.getLibdevice() != b.getLibdevice() ||
      a.getInputs().size() != b.getInputs().size())
    return false;
  return a.getLibdevice() ||
         OperationEquivalence::isRegionEquivalentTo(
             &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

/// libdevice's function that `special` names, declared in `symbolTable`
/// unless an earlier op of the table did; an error at `special` if the
/// table's symbol of that name is something else.
static FailureOr<LLVM::LLVMFuncOp>
getOrDeclareLibdevice(SpecialOp special, StringRef name,
                      Operation *symbolTable) {
  Type f32 = Float32Type::get(special.getContext());
  auto type = LLVM::LLVMFunctionType::get(f32, {f32});
  Operation *existing = SymbolTable::lookupSymbolIn(symbolTable, name);
  if (!existing) {
    OpBuilder atTable =
        OpBuilder::atBlockBegin(&symbolTable->getRegion(0).front());
    return LLVM::LLVMFuncOp::create(atTable, special.getLoc(), name, type);
  }
  auto declared = dyn_cast<LLVM::LLVMFuncOp>(existing);
  if (!declared || declared.getFunctionType() != type)
    return special.emitOpError()
           << "calls libdevice's '" << name
           << "', but the module's symbol of that name is not its f32 "
              "function of one f32";
  return declared;
}

/// The body of `special`'s out-of-line function: `library(arguments)`
/// where libdevice has the function, else the op's formula.
static Value buildSpecialBody(SpecialOp special, LLVM::LLVMFuncOp library,
                              OpBuilder &builder, Location loc,
                              ValueRange arguments) {
  if (library)
    return LLVM::CallOp::create(builder, loc, library, arguments).getResult();
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
    // Each distinct op of each symbol table, detached once replaced (an
    // enclosing op's body, made into its function later, must not hold
    // it), with its function. An enclosing op holds a call where its
    // nested ops were, which no op made before them holds.
    struct Made {
      Operation *symbolTable;
      SpecialOp special;
      LLVM::LLVMFuncOp function;
    };
    SmallVector<Made> made;
    for (SpecialOp special : specials) {
      Operation *symbolTable = SymbolTable::getNearestSymbolTable(special);
      const auto *same = llvm::find_if(made, [&](const Made &entry) {
        return entry.symbolTable == symbolTable &&
               computeAlike(entry.special, special);
      });
      bool isNew = same == made.end();
      LLVM::LLVMFuncOp function = isNew ? nullptr : same->function;
      if (isNew && failed(makeFunction(special, symbolTable, function))) {
        signalPassFailure();
        break;
      }
      OpBuilder builder(special);
      auto call = LLVM::CallOp::create(builder, special.getLoc(), function,
                                       special.getInputs());
      special.getResult().replaceAllUsesWith(call.getResult());
      if (isNew) {
        special->remove();
        made.push_back({symbolTable, special, function});
      } else {
        special.erase();
      }
    }
    for (Made &entry : made)
      entry.special.erase();
  }

  /// `special`'s out-of-line function, made in `symbolTable`.
  LogicalResult makeFunction(SpecialOp special, Operation *symbolTable,
                             LLVM::LLVMFuncOp &function) {
    LLVM::LLVMFuncOp library;
    if (std::optional<StringRef> name = special.getLibdevice()) {
      if (failed(
              getOutOfLineSymbolTable(special, getOperation(), getArgument())))
        return failure();
      FailureOr<LLVM::LLVMFuncOp> declared =
          getOrDeclareLibdevice(special, *name, symbolTable);
      if (failed(declared))
        return failure();
      library = *declared;
    }
    // A prefix of its own: the other passes' out-of-line functions
    // (__fusion_powf, ...) are found by name.
    FailureOr<LLVM::LLVMFuncOp> outOfLine = createOutOfLineFunction(
        special, getOperation(), getArgument(),
        ("__fusion_special_" + special.getFunction()).str(),
        special.getInputs().size(),
        [&](OpBuilder &b, Location loc, ValueRange arguments) {
          return buildSpecialBody(special, library, b, loc, arguments);
        });
    if (failed(outOfLine))
      return failure();
    function = *outOfLine;
    return success();
  }
};

} // namespace
