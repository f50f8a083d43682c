//===- TargetVariants.cpp - one library for several GPU targets -----------===//

#include "fusion/Compiler/TargetVariants.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::fusion;

static std::string variantName(StringRef name, const TargetVariant &target) {
  return (name + "__" + target.name).str();
}

/// A declaration of a function outside the library (the runtime's, libc's).
static bool isRuntimeDeclaration(Operation *op) {
  auto func = dyn_cast<LLVM::LLVMFuncOp>(op);
  return func && func.isExternal();
}

LogicalResult mlir::fusion::addTargetVariant(ModuleOp library, ModuleOp variant,
                                             const TargetVariant &target) {
  MLIRContext *context = variant.getContext();
  SmallVector<Operation *> ops;
  for (Operation &op : *variant.getBody())
    ops.push_back(&op);
  // Renamed inside the variant first, so that every use follows.
  for (Operation *op : ops) {
    auto symbol = dyn_cast<SymbolOpInterface>(op);
    if (!symbol)
      return op->emitError("unexpected op in a library's host code");
    if (isRuntimeDeclaration(op))
      continue;
    auto name = StringAttr::get(context, variantName(symbol.getName(), target));
    if (failed(SymbolTable::replaceAllSymbolUses(op, name, variant)))
      return op->emitError("cannot rename ") << symbol.getName();
    SymbolTable::setSymbolName(op, name);
    if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op))
      func.setLinkage(LLVM::Linkage::Internal);
  }
  // The runtime's functions, declared by every variant alike, once.
  for (Operation *op : ops) {
    if (isRuntimeDeclaration(op) &&
        library.lookupSymbol(cast<SymbolOpInterface>(op).getName()))
      op->erase();
    else
      op->moveBefore(library.getBody(), library.getBody()->end());
  }
  return success();
}

LogicalResult
mlir::fusion::buildVariantDispatchers(ModuleOp library,
                                      ArrayRef<std::string> entries,
                                      ArrayRef<TargetVariant> targets) {
  MLIRContext *context = library.getContext();
  Location loc = library.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(library.getBody());
  Type i32 = b.getI32Type();
  Type ptr = LLVM::LLVMPointerType::get(context);

  // {capability, arch-specific} per variant, in the order of `targets`.
  SmallVector<int32_t> pairs;
  for (const TargetVariant &target : targets) {
    pairs.push_back(target.capability);
    pairs.push_back(target.archSpecific);
  }
  auto targetsType = LLVM::LLVMArrayType::get(i32, pairs.size());
  auto targetsGlobal = LLVM::GlobalOp::create(
      b, loc, targetsType, /*isConstant=*/true, LLVM::Linkage::Internal,
      "__fusion_variant_targets",
      DenseIntElementsAttr::get(
          RankedTensorType::get({static_cast<int64_t>(pairs.size())}, i32),
          ArrayRef<int32_t>(pairs)));
  auto select =
      library.lookupSymbol<LLVM::LLVMFuncOp>("__fusion_rt_select_variant");
  if (!select)
    select = LLVM::LLVMFuncOp::create(
        b, loc, "__fusion_rt_select_variant",
        LLVM::LLVMFunctionType::get(i32, {ptr, ptr, i32, ptr}));

  for (StringRef entry : entries) {
    SmallVector<LLVM::LLVMFuncOp> variants;
    for (const TargetVariant &target : targets) {
      auto func =
          library.lookupSymbol<LLVM::LLVMFuncOp>(variantName(entry, target));
      if (!func)
        return library.emitError("no ")
               << target.name << " variant of entry point " << entry;
      variants.push_back(func);
    }
    LLVM::LLVMFunctionType type = variants.front().getFunctionType();
    b.setInsertionPointToEnd(library.getBody());
    auto dispatcher = LLVM::LLVMFuncOp::create(b, loc, entry, type);
    Block *start = dispatcher.addEntryBlock(b);
    b.setInsertionPointToStart(start);
    Value one = LLVM::ConstantOp::create(b, loc, i32, 1);
    Value chosen = LLVM::AllocaOp::create(b, loc, ptr, i32, one);
    Value table = LLVM::AddressOfOp::create(b, loc, targetsGlobal);
    Value count = LLVM::ConstantOp::create(b, loc, i32, targets.size());
    // Every entry point's first argument is its stream.
    Value status = LLVM::CallOp::create(
                       b, loc, select,
                       ValueRange{start->getArgument(0), table, count, chosen})
                       .getResult();
    Value failed =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, status,
                             LLVM::ConstantOp::create(b, loc, i32, 0));
    Region &body = dispatcher.getBody();
    Block *fail = b.createBlock(&body, body.end());
    LLVM::ReturnOp::create(b, loc, status);
    Block *dispatch = b.createBlock(&body, body.end());
    SmallVector<Block *> calls;
    for (LLVM::LLVMFuncOp variant : variants) {
      calls.push_back(b.createBlock(&body, body.end()));
      auto call = LLVM::CallOp::create(b, loc, variant, start->getArguments());
      LLVM::ReturnOp::create(b, loc, call.getResult());
    }
    b.setInsertionPointToEnd(start);
    LLVM::CondBrOp::create(b, loc, failed, fail, dispatch);
    b.setInsertionPointToEnd(dispatch);
    Value index = LLVM::LoadOp::create(b, loc, i32, chosen);
    SmallVector<int32_t> cases;
    for (size_t i = 1; i < calls.size(); ++i)
      cases.push_back(i);
    SmallVector<ValueRange> caseOperands(cases.size(), ValueRange());
    LLVM::SwitchOp::create(
        b, loc, index, calls.front(), ValueRange(), ArrayRef<int32_t>(cases),
        BlockRange(ArrayRef<Block *>(calls).drop_front()), caseOperands);
  }
  return success();
}
