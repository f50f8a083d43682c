//===- KernelSupport.cpp - what every kernel builder uses -----------------===//

#include "KernelSupport.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fusion;

Value mlir::fusion::widenToF32(OpBuilder &builder, Location loc, Value value) {
  Type target = builder.getF32Type();
  if (auto vector = dyn_cast<VectorType>(value.getType()))
    target = vector.clone(target);
  if (value.getType() == target)
    return value;
  return arith::ExtFOp::create(builder, loc, target, value);
}

Value mlir::fusion::narrowTo(OpBuilder &builder, Location loc, Value value,
                             Type elementType) {
  Type target = elementType;
  if (auto vector = dyn_cast<VectorType>(value.getType()))
    target = vector.clone(elementType);
  if (value.getType() == target)
    return value;
  return arith::TruncFOp::create(builder, loc, target, value);
}

int64_t mlir::fusion::getVectorWidth(Type elementType, int64_t columns) {
  int64_t width = 16 / elementBytes(elementType);
  return columns % width == 0 ? width : 1;
}

gpu::GPUFuncOp mlir::fusion::createKernel(OpBuilder &builder, Location loc,
                                         StringRef name, TypeRange argTypes,
                                         int64_t blockSize) {
  auto kernel = gpu::GPUFuncOp::create(builder, loc, name,
                                       builder.getFunctionType(argTypes, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                  builder.getUnitAttr());
  kernel.setKnownBlockSizeAttr(
      builder.getDenseI32ArrayAttr({static_cast<int32_t>(blockSize), 1, 1}));
  builder.setInsertionPointToStart(&kernel.getBody().front());
  return kernel;
}

void mlir::fusion::emitGuarded(OpBuilder &builder, Location loc,
                               Value condition, function_ref<void()> body) {
  auto guard = scf::IfOp::create(builder, loc, condition, false);
  {
    OpBuilder::InsertionGuard insertion(builder);
    builder.setInsertionPointToStart(&guard.getThenRegion().front());
    body();
  }
  gpu::ReturnOp::create(builder, loc);
}

