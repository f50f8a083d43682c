//===- FusionRuntimeDialect.cpp - host side of the GPU backends -----------===//

#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"
#include "fusion/Dialect/Fusion/IR/GemmConfig.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::fusion_rt;

#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.cpp.inc"

void FusionRuntimeDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeOps.cpp.inc"
      >();
}

Type FusionRuntimeDialect::getTensorMapType(MLIRContext *context) {
  return LLVM::LLVMArrayType::get(IntegerType::get(context, 64), 16);
}

LogicalResult
FusionRuntimeDialect::verifyOperationAttribute(Operation *op,
                                               NamedAttribute attr) {
  if (attr.getName() != getTensorMapArgsAttrName())
    return op->emitError() << "unknown fusion_rt attribute '"
                           << attr.getName().getValue() << "'";
  auto indices = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!indices || !function)
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' must be an array<i64> of argument indices "
                              "on a kernel";
  for (int64_t index : indices.asArrayRef()) {
    if (index < 0 || index >= static_cast<int64_t>(function.getNumArguments()))
      return op->emitError()
             << "tensor-map argument #" << index << " is out of range";
    if (!isa<LLVM::LLVMPointerType>(function.getArgumentTypes()[index]))
      return op->emitError()
             << "tensor-map argument #" << index << " must be an !llvm.ptr";
  }
  return success();
}

/// Whether argument `index` of `kernel` is a tensor map.
static bool isTensorMapArg(Operation *kernel, size_t index) {
  auto tensorMaps = kernel->getAttrOfType<DenseI64ArrayAttr>(
      FusionRuntimeDialect::getTensorMapArgsAttrName());
  return tensorMaps && llvm::is_contained(tensorMaps.asArrayRef(),
                                          static_cast<int64_t>(index));
}

/// The types of a kernel argument as the C ABI passes it: a memref as its
/// expanded descriptor, anything else as it is.
static void appendAbiTypes(Type type, SmallVectorImpl<Type> &types) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref) {
    types.push_back(type);
    return;
  }
  MLIRContext *context = type.getContext();
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = IntegerType::get(context, 64);
  types.append({ptr, ptr, i64});
  types.append(2 * memref.getRank(), i64);
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  // Once the kernels' module is a gpu.binary, its kernels are opaque.
  if (isa_and_nonnull<gpu::BinaryOp>(symbolTable.lookupNearestSymbolFrom(
          *this, getKernelAttr().getRootReference())))
    return success();
  Operation *callee =
      symbolTable.lookupNearestSymbolFrom(*this, getKernelAttr());
  SmallVector<Type> expected;
  if (auto kernel = dyn_cast_or_null<gpu::GPUFuncOp>(callee);
      kernel && kernel.isKernel()) {
    if (std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize();
        known && (*known)[0] != static_cast<int32_t>(getBlock()))
      return emitOpError("launches ")
             << getBlock() << " threads a block, the kernel is built for "
             << (*known)[0];
    for (auto [index, type] : llvm::enumerate(kernel.getArgumentTypes())) {
      if (isTensorMapArg(kernel, index))
        expected.push_back(
            FusionRuntimeDialect::getTensorMapType(getContext()));
      else
        appendAbiTypes(type, expected);
    }
  } else if (auto lowered = dyn_cast_or_null<LLVM::LLVMFuncOp>(callee);
             lowered &&
             lowered->hasAttr(gpu::GPUDialect::getKernelFuncAttrName())) {
    // Lowered to NVVM: its parameters are the ABI's, a byval one passed as
    // its value.
    for (auto [index, type] : llvm::enumerate(lowered.getArgumentTypes())) {
      if (auto byval = lowered.getArgAttrOfType<TypeAttr>(
              index, LLVM::LLVMDialect::getByValAttrName()))
        expected.push_back(byval.getValue());
      else if (isTensorMapArg(lowered, index))
        expected.push_back(
            FusionRuntimeDialect::getTensorMapType(getContext()));
      else
        expected.push_back(type);
    }
  } else {
    return emitOpError("names ")
           << getKernelAttr() << ", which is not a kernel";
  }
  TypeRange actual = getArgs().getTypes();
  if (actual != TypeRange(expected))
    return emitOpError("passes ")
           << actual.size() << " arguments that do not match the kernel's "
           << expected.size() << " (memrefs as expanded descriptors)";
  // Started early, a kernel that does not wait would race its predecessor.
  if (getOverlapPredecessor()) {
    WalkResult waits = callee->walk([](NVVM::GriddepcontrolOp op) {
      return op.getKind() == NVVM::GridDepActionKind::wait
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (!waits.wasInterrupted())
      return emitOpError("overlaps its predecessor, but ")
             << getKernelAttr()
             << " never waits for it (nvvm.griddepcontrol wait)";
  }
  // Its shared memory against the chip: Codegen's verifyLaunchOnTarget.
  return success();
}

LogicalResult CheckSizeOp::verify() {
  if (getWhat().empty())
    return emitOpError("must name the size it checks");
  return success();
}

LogicalResult CheckBufferOp::verify() {
  if (getWhat().empty())
    return emitOpError("must name the buffer it checks");
  return success();
}

LogicalResult EncodeTensorMapOp::verify() {
  // The tensor map's 128-byte swizzle takes box rows of whole 16-byte
  // chunks, at most the swizzle's span.
  Type element = fusion::getElementTypeOf(getElementType(), getContext());
  int64_t bytes =
      int64_t(getBoxColumns()) * element.getIntOrFloatBitWidth() / 8;
  if (getBoxColumns() < 1 || bytes > 128 || bytes % 16 != 0)
    return emitOpError("box rows of ")
           << getBoxColumns() << " elements (" << bytes
           << " bytes) are not 1 to 8 whole 16-byte chunks of the "
              "128-byte swizzle";
  return success();
}

#define GET_OP_CLASSES
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeOps.cpp.inc"
