//===- VerifyEntryPoints.cpp - what a compiled library can take -----------===//

#include "fusion/Dialect/Fusion/Transforms/Passes.h"
#include "fusion/Dialect/Fusion/IR/EntryPoints.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_VERIFYENTRYPOINTS
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Bytes of one element of `type`, rounded up; none for types of unknown
/// size (indices, pointers, ...).
std::optional<int64_t> elementBytes(Type type) {
  if (type.isIntOrFloat())
    return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
  if (auto complex = dyn_cast<ComplexType>(type))
    if (std::optional<int64_t> part = elementBytes(complex.getElementType()))
      return 2 * *part;
  return std::nullopt;
}

/// Bytes of the static part of a shaped type (dynamic dimensions count as
/// one); none if it overflows int64. Types of unknown element size count one
/// byte per element.
std::optional<int64_t> staticBytes(ShapedType type) {
  int64_t bytes = elementBytes(type.getElementType()).value_or(1);
  for (int64_t dim : type.getShape()) {
    if (ShapedType::isDynamic(dim))
      continue;
    if (llvm::MulOverflow(bytes, dim, bytes))
      return std::nullopt;
  }
  return bytes;
}

LogicalResult checkEntryType(func::FuncOp func, StringRef kind,
                             unsigned index, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getEncoding())
    return func.emitOpError()
           << "entry point " << kind << " #" << index << " has type " << type
           << "; entry points take and return ranked tensors";
  Type element = tensor.getElementType();
  if (!element.isF32() && !element.isBF16() && !element.isF16())
    return func.emitOpError()
           << "entry point " << kind << " #" << index << " has type " << type
           << "; entry-point tensors must have an f32, bf16 or f16 element "
              "type";
  return success();
}

LogicalResult checkValueType(Operation *op, Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank() || staticBytes(shaped))
    return success();
  return op->emitOpError() << "has a value of type " << type
                           << " whose size in bytes overflows int64";
}

struct VerifyEntryPointsPass
    : fusion::impl::VerifyEntryPointsBase<VerifyEntryPointsPass> {
  using VerifyEntryPointsBase::VerifyEntryPointsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool ok = true;
    for (func::FuncOp func : getEntryPoints(module)) {
      for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
        ok &= succeeded(checkEntryType(func, "argument", index, type));
      for (auto [index, type] : llvm::enumerate(func.getResultTypes()))
        ok &= succeeded(checkEntryType(func, "result", index, type));
    }
    module.walk([&](Operation *op) {
      // Each type once per op: its results, its blocks' arguments and, for
      // functions (declarations included), its signature.
      llvm::SetVector<Type> types;
      types.insert(op->result_type_begin(), op->result_type_end());
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            types.insert(arg.getType());
      if (auto func = dyn_cast<FunctionOpInterface>(op)) {
        types.insert(func.getArgumentTypes().begin(),
                     func.getArgumentTypes().end());
        types.insert(func.getResultTypes().begin(),
                     func.getResultTypes().end());
      }
      for (Type type : types)
        ok &= succeeded(checkValueType(op, type));
      for (NamedAttribute attr : op->getAttrs()) {
        auto elements = dyn_cast<ElementsAttr>(attr.getValue());
        if (!elements)
          continue;
        std::optional<int64_t> bytes = staticBytes(elements.getShapedType());
        if (bytes && *bytes <= maxConstantBytes)
          continue;
        InFlightDiagnostic diag = op->emitOpError()
                                  << "has a constant of type "
                                  << elements.getShapedType();
        if (bytes)
          diag << " (" << *bytes << " bytes)";
        diag << " that is too large to materialize (the limit is "
             << maxConstantBytes.getValue() << " bytes)";
        ok = false;
      }
    });
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
