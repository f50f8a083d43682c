//===- OutOfLineFunction.cpp - rare branches' code, once a module ---------===//

#include "fusion/Codegen/Math/OutOfLineFunction.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

FailureOr<Operation *> fusion::getOutOfLineSymbolTable(Operation *op,
                                                       Operation *root,
                                                       StringRef passName) {
  Operation *symbolTable = SymbolTable::getNearestSymbolTable(op);
  if (!symbolTable || !root->isAncestor(symbolTable))
    return op->emitOpError("needs a symbol table within the op that ")
           << passName << " runs on (a module), for its out-of-line function";
  return symbolTable;
}

FailureOr<LLVM::LLVMFuncOp> fusion::createOutOfLineFunction(
    Operation *op, Operation *root, StringRef passName, StringRef name,
    unsigned arity,
    function_ref<Value(OpBuilder &, Location, ValueRange)> buildBody) {
  FailureOr<Operation *> symbolTable =
      getOutOfLineSymbolTable(op, root, passName);
  if (failed(symbolTable))
    return failure();
  OpBuilder builder(op->getContext());
  Location loc = op->getLoc();
  Type f32 = builder.getF32Type();
  SmallVector<Type> arguments(arity, f32);
  auto function = LLVM::LLVMFuncOp::create(
      builder, loc, name, LLVM::LLVMFunctionType::get(f32, arguments),
      LLVM::Linkage::Internal);
  function.setNoInline(true);
  Block *entry = function.addEntryBlock(builder);
  builder.setInsertionPointToStart(entry);
  LLVM::ReturnOp::create(builder, loc,
                         buildBody(builder, loc, entry->getArguments()));
  // Renamed should the name be taken.
  SymbolTable(*symbolTable)
      .insert(function, (*symbolTable)->getRegion(0).front().begin());
  return function;
}

FailureOr<LLVM::LLVMFuncOp> fusion::getOrCreateOutOfLineFunction(
    Operation *op, Operation *root, StringRef passName, StringRef name,
    unsigned arity,
    function_ref<Value(OpBuilder &, Location, ValueRange)> buildBody) {
  FailureOr<Operation *> symbolTable =
      getOutOfLineSymbolTable(op, root, passName);
  if (failed(symbolTable))
    return failure();
  if (auto existing = dyn_cast_or_null<LLVM::LLVMFuncOp>(
          SymbolTable::lookupSymbolIn(*symbolTable, name)))
    return existing;
  return createOutOfLineFunction(op, root, passName, name, arity, buildBody);
}

bool fusion::isInOutOfLineFunction(Operation *op, StringRef name) {
  auto function = op->getParentOfType<LLVM::LLVMFuncOp>();
  return function && function.getName() == name;
}

Value fusion::buildFastPathOrCall(OpBuilder &builder, Location loc,
                                  Value condition, Value fast,
                                  LLVM::LLVMFuncOp outOfLine,
                                  ValueRange arguments) {
  auto result = scf::IfOp::create(
      builder, loc, condition,
      [&](OpBuilder &then, Location at) {
        scf::YieldOp::create(then, at, fast);
      },
      [&](OpBuilder &otherwise, Location at) {
        auto call = LLVM::CallOp::create(otherwise, at, outOfLine, arguments);
        scf::YieldOp::create(otherwise, at, call.getResult());
      });
  return result.getResult(0);
}
