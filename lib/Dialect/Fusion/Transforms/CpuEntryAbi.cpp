//===- CpuEntryAbi.cpp - destination-passing memref entry points ----------===//

#include "fusion/Dialect/Fusion/Transforms/Passes.h"
#include "fusion/Dialect/Fusion/IR/EntryPoints.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_CPUENTRYABI
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Whether `type` can cross the memref ABI; otherwise emits why at `func`.
LogicalResult checkAbiType(func::FuncOp func, StringRef kind, unsigned index,
                           Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  StringRef problem;
  if (!tensor)
    problem = "only ranked tensors can be passed as memrefs";
  else if (tensor.getEncoding())
    problem = "tensors with an encoding cannot be passed as memrefs";
  else if (!BaseMemRefType::isValidElementType(tensor.getElementType()))
    problem = "its element type cannot be a memref element type";
  else
    return success();
  return func.emitOpError()
         << kind << " #" << index << " has type " << type
         << ", which the CPU entry-point ABI cannot take: " << problem;
}

LogicalResult checkEntry(ModuleOp module, func::FuncOp func) {
  bool ok = true;
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
    ok &= succeeded(checkAbiType(func, "argument", index, type));
  for (auto [index, type] : llvm::enumerate(func.getResultTypes()))
    ok &= succeeded(checkAbiType(func, "result", index, type));
  std::string inner = (func.getName() + "__tensors").str();
  if (module.lookupSymbol(inner)) {
    func.emitOpError() << "cannot be wrapped: its tensor body would be named @"
                       << inner << ", which is taken";
    ok = false;
  }
  return success(ok);
}

void wrapEntry(ModuleOp module, func::FuncOp func, OpBuilder &builder) {
  std::string name = func.getName().str();
  // Calls between entry points keep calling the tensor function.
  auto inner = builder.getStringAttr(name + "__tensors");
  (void)SymbolTable::replaceAllSymbolUses(func, inner, module);
  func.setName(inner);
  func.setPrivate();
  SmallVector<Type> argTypes;
  for (Type type : llvm::concat<const Type>(func.getArgumentTypes(),
                                            func.getResultTypes())) {
    auto tensor = cast<RankedTensorType>(type);
    argTypes.push_back(
        MemRefType::get(tensor.getShape(), tensor.getElementType()));
  }
  Location loc = func.getLoc();
  builder.setInsertionPoint(func);
  auto wrapper = func::FuncOp::create(builder, loc, name,
                                      builder.getFunctionType(argTypes, {}));
  Block *body = wrapper.addEntryBlock();
  builder.setInsertionPointToStart(body);
  SmallVector<Value> inputs;
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
    inputs.push_back(bufferization::ToTensorOp::create(
        builder, loc, type, body->getArgument(index), /*restrict=*/true));
  auto call = func::CallOp::create(builder, loc, func, inputs);
  for (auto [index, result] : llvm::enumerate(call.getResults())) {
    auto materialize = bufferization::MaterializeInDestinationOp::create(
        builder, loc, result,
        body->getArgument(func.getNumArguments() + index));
    materialize.setRestrictAttr(builder.getUnitAttr());
    materialize.setWritableAttr(builder.getUnitAttr());
  }
  func::ReturnOp::create(builder, loc);
}

struct CpuEntryAbiPass : fusion::impl::CpuEntryAbiBase<CpuEntryAbiPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries = getEntryPoints(module);
    // Check every entry before changing any, so that a failure leaves the
    // module as it was.
    bool ok = true;
    for (func::FuncOp func : entries)
      ok &= succeeded(checkEntry(module, func));
    if (!ok)
      return signalPassFailure();
    OpBuilder builder(&getContext());
    for (func::FuncOp func : entries)
      wrapEntry(module, func, builder);
  }
};

} // namespace
