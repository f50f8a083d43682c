//===- PackedEntries.cpp - the packed form of a CPU library's entries -----===//

#include "fusion/Compiler/PackedEntries.h"
#include "fusion/Dialect/Fusion/IR/EntryPoints.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

#include "fusion_runtime.h"

using namespace mlir;
using namespace mlir::fusion;

/// The arguments of one buffer's expanded memref descriptor (allocated and
/// aligned pointer, offset, sizes, strides) for the dense row-major tensor
/// `type` at `ptr`.
static void appendDescriptor(OpBuilder &b, Location loc, RankedTensorType type,
                             Value ptr, Value batch,
                             SmallVectorImpl<Value> &args) {
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t value) -> Value {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(value));
  };
  SmallVector<Value> sizes;
  for (int64_t dim : type.getShape())
    sizes.push_back(ShapedType::isDynamic(dim) ? batch : constant(dim));
  SmallVector<Value> strides(type.getRank());
  Value stride = constant(1);
  for (int64_t dim = type.getRank() - 1; dim >= 0; --dim) {
    strides[dim] = stride;
    stride = LLVM::MulOp::create(b, loc, stride, sizes[dim]);
  }
  args.append({ptr, ptr, constant(0)});
  args.append(sizes);
  args.append(strides);
}

LogicalResult mlir::fusion::addPackedCpuEntries(ModuleOp library,
                                                ModuleOp signatures) {
  OpBuilder b = OpBuilder::atBlockEnd(library.getBody());
  Location loc = library.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(library.getContext());
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  for (func::FuncOp func : getEntryPoints(signatures)) {
    auto entry = library.lookupSymbol<LLVM::LLVMFuncOp>(func.getName());
    if (!entry)
      return library.emitError("no lowered entry point ") << func.getName();
    b.setInsertionPointToEnd(library.getBody());
    auto packed = LLVM::LLVMFuncOp::create(
        b, loc, (func.getName() + FUSION_PACKED_ENTRY_SUFFIX).str(),
        LLVM::LLVMFunctionType::get(i32, {ptr, i64, ptr, i32}));
    b.setInsertionPointToStart(packed.addEntryBlock(b));
    Value batch = packed.getArgument(1), table = packed.getArgument(2);
    SmallVector<Value> args;
    auto types = llvm::concat<const Type>(func.getArgumentTypes(),
                                          func.getResultTypes());
    for (auto [index, type] : llvm::enumerate(types)) {
      Value slot = LLVM::GEPOp::create(
          b, loc, ptr, ptr, table,
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(index)});
      appendDescriptor(b, loc, cast<RankedTensorType>(type),
                       LLVM::LoadOp::create(b, loc, ptr, slot), batch, args);
    }
    if (args.size() != entry.getNumArguments())
      return entry.emitError("takes ")
             << entry.getNumArguments() << " arguments, not the " << args.size()
             << " of its buffers' memref descriptors";
    LLVM::CallOp::create(b, loc, entry, args);
    LLVM::ReturnOp::create(
        b, loc,
        LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0))
            .getResult());
  }
  return success();
}
