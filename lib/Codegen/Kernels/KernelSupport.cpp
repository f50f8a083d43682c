//===- KernelSupport.cpp - what every kernel builder uses -----------------===//

#include "fusion/Codegen/Kernels/KernelSupport.h"

#include "fusion/Codegen/Config/Chips.h"
#include "fusion/Codegen/Math/Philox.h"
#include "fusion/Dialect/Fusion/IR/FusionRandomOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

ColumnOperand ColumnOperand::of(Value vector) {
  auto type = cast<RankedTensorType>(vector.getType());
  return {type.getElementType(), type.getDimSize(0) == 1};
}

SmallVector<ColumnOperand> mlir::fusion::columnOperandsOf(ValueRange vectors) {
  return llvm::map_to_vector(vectors, ColumnOperand::of);
}

SmallVector<RowOperandSource>
mlir::fusion::rowOperandSourcesOf(ValueRange rows) {
  return llvm::map_to_vector(rows, [](Value row) {
    auto type = cast<RankedTensorType>(row.getType());
    RowOperandSource source{type.getDimSize(1), std::nullopt};
    if (auto draw = row.getDefiningOp<RandomUniformOp>())
      source.drawStream = draw.getStream();
    return source;
  });
}

Value mlir::fusion::drawElement(OpBuilder &builder, Location loc,
                                std::pair<Value, Value> key, int64_t stream,
                                Value index, Type elementType) {
  return drawRun(builder, loc, key, stream, index, 1, 1, elementType).front();
}

SmallVector<Value> mlir::fusion::drawRun(OpBuilder &builder, Location loc,
                                         std::pair<Value, Value> key,
                                         int64_t stream, Value first,
                                         int64_t count, int64_t rowLength,
                                         Type elementType) {
  return llvm::map_to_vector(
      buildUniformRun(builder, loc, key, first, count,
                      drawAlignment(count, rowLength), stream),
      [&](Value draw) {
        return widenToF32(builder, loc,
                          narrowTo(builder, loc, draw, elementType));
      });
}

std::pair<Value, Value> KernelEmitter::drawKey(Value seed) {
  Type f32 = b.getF32Type();
  return philoxKey(b, loc, load(f32, seed, f32, i64(0), 8),
                   load(f32, seed, f32, i64(1), 4));
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

void mlir::fusion::emitPredecessorWait(OpBuilder &builder, Location loc,
                                       gpu::GPUFuncOp kernel,
                                       LaunchContract &launch) {
  TargetAttr target = TargetAttr::lookup(kernel);
  if (!target || !getChipInfo(target.getChip()).hasGridDependencyControl)
    return;
  NVVM::GriddepcontrolOp::create(builder, loc, NVVM::GridDepActionKind::wait);
  launch.overlapsPredecessor = true;
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

Value mlir::fusion::addReductionScratch(OpBuilder &builder, Location loc,
                                        gpu::GPUFuncOp kernel,
                                        int64_t threads) {
  if (threads <= kWarpSize)
    return {};
  int64_t warps = threads / kWarpSize;
  return kernel.addWorkgroupAttribution(
      MemRefType::get({warps}, builder.getF32Type(),
                      MemRefLayoutAttrInterface(),
                      gpu::AddressSpaceAttr::get(
                          builder.getContext(),
                          gpu::GPUDialect::getWorkgroupAddressSpace())),
      loc);
}

Value mlir::fusion::reduceAcrossLanes(OpBuilder &b, Location loc,
                                      ReductionKind kind, Value value,
                                      int64_t lanes) {
  Value total = value;
  Value width =
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(kWarpSize));
  for (int64_t distance = lanes / 2; distance > 0; distance /= 2) {
    Value offset =
        arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(distance));
    Value other = gpu::ShuffleOp::create(b, loc, total, offset, width,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    total = buildReductionCombine(b, loc, kind, total, other);
  }
  return total;
}

Value mlir::fusion::reduceAcrossThreads(OpBuilder &b, Location loc,
                                        ReductionKind kind, Value value,
                                        Value lane, int64_t threads,
                                        Value scratch) {
  KernelEmitter e(b, loc);
  Value total = reduceAcrossLanes(b, loc, kind, value,
                                  std::min<int64_t>(threads, kWarpSize));
  if (threads <= kWarpSize)
    return total;
  int64_t warps = threads / kWarpSize;
  auto index = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  Value warpLane = arith::RemUIOp::create(b, loc, lane, e.i64(kWarpSize));
  Value isLeader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         warpLane, e.i64(0));
  auto writer = scf::IfOp::create(b, loc, isLeader, false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&writer.getThenRegion().front());
    memref::StoreOp::create(
        b, loc, total, scratch,
        index(arith::DivUIOp::create(b, loc, lane, e.i64(kWarpSize))));
  }
  gpu::BarrierOp::create(b, loc);
  total = memref::LoadOp::create(
      b, loc, scratch, ValueRange{arith::ConstantIndexOp::create(b, loc, 0)});
  for (int64_t w = 1; w < warps; ++w)
    total = buildReductionCombine(
        b, loc, kind, total,
        memref::LoadOp::create(
            b, loc, scratch,
            ValueRange{arith::ConstantIndexOp::create(b, loc, w)}));
  // The scratch is free again once every thread has read it.
  gpu::BarrierOp::create(b, loc);
  return total;
}

void IndexEmitter::guarded(Value cond, function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body();
}

Value IndexEmitter::viewOf(Value bytes, Value offset, ArrayRef<int64_t> shape,
                           Type type) {
  return memref::ViewOp::create(
      b, loc,
      MemRefType::get(shape, type, MemRefLayoutAttrInterface(), workgroup()),
      bytes, offset, ValueRange{});
}
