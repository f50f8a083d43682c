//===- EpilogueKernels.cpp - generated elementwise and BN kernels ---------===//

#include "EpilogueKernels.h"

#include "fusion/Dialect/Fusion/IR/ScalarBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;

int64_t mlir::fusion::getVectorWidth(Type elementType, int64_t columns) {
  int64_t width = 16 / (elementType.getIntOrFloatBitWidth() / 8);
  return columns % width == 0 ? width : 1;
}

namespace {

/// Emits kernel bodies: i64 index math in arith, memory through llvm ops.
class KernelEmitter {
public:
  KernelEmitter(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  Value i64(int64_t value) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
  }
  Value f32(double value) { return buildF32Constant(b, loc, value); }
  Value add(Value l, Value r) { return arith::AddIOp::create(b, loc, l, r); }
  Value mul(Value l, Value r) { return arith::MulIOp::create(b, loc, l, r); }
  Value lessThan(Value l, Value r) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, l, r);
  }

  Value id(gpu::Dimension dim, bool block) {
    Value index = block ? gpu::BlockIdOp::create(b, loc, dim).getResult()
                        : gpu::ThreadIdOp::create(b, loc, dim).getResult();
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  }
  /// blockIdx.x * kBlockSize + threadIdx.x.
  Value globalThreadX() {
    return add(mul(id(gpu::Dimension::x, true), i64(kBlockSize)),
               id(gpu::Dimension::x, false));
  }

  Value address(Value base, Type elementType, Value index) {
    return LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()),
                               elementType, base, ValueRange{index});
  }
  Value load(Type type, Value base, Type elementType, Value index,
             unsigned alignment) {
    return LLVM::LoadOp::create(b, loc, type,
                                address(base, elementType, index), alignment);
  }
  void store(Value value, Value base, Type elementType, Value index,
             unsigned alignment) {
    LLVM::StoreOp::create(b, loc, value, address(base, elementType, index),
                          alignment);
  }
  /// One element of a column vector, as f32.
  Value loadColumn(Value column, Type elementType, Value n) {
    return widen(load(elementType, column, elementType, n,
                      elementType.getIntOrFloatBitWidth() / 8));
  }

  /// `width` consecutive elements from `base[index]`, as f32 lanes.
  SmallVector<Value> loadLanes(Value base, Type elementType, Value index,
                               int64_t width) {
    if (width == 1)
      return {widen(load(elementType, base, elementType, index,
                         elementType.getIntOrFloatBitWidth() / 8))};
    auto vectorType = VectorType::get({width}, elementType);
    Value vector = widen(load(vectorType, base, elementType, index, 16));
    SmallVector<Value> lanes;
    for (int64_t lane = 0; lane < width; ++lane)
      lanes.push_back(vector::ExtractOp::create(b, loc, vector, lane));
    return lanes;
  }
  void storeLanes(ArrayRef<Value> lanes, Value base, Type elementType,
                  Value index) {
    int64_t width = lanes.size();
    if (width == 1) {
      store(narrow(lanes.front(), elementType), base, elementType, index,
            elementType.getIntOrFloatBitWidth() / 8);
      return;
    }
    Value vector = vector::BroadcastOp::create(
        b, loc, VectorType::get({width}, b.getF32Type()), f32(0.0));
    for (auto [lane, value] : llvm::enumerate(lanes))
      vector = vector::InsertOp::create(b, loc, value, vector, lane);
    store(narrow(vector, elementType), base, elementType, index, 16);
  }

  Value widen(Value value) {
    Type f32 = b.getF32Type();
    Type target = f32;
    if (auto vector = dyn_cast<VectorType>(value.getType()))
      target = vector.clone(f32);
    if (value.getType() == target)
      return value;
    return arith::ExtFOp::create(b, loc, target, value);
  }
  Value narrow(Value value, Type elementType) {
    Type target = elementType;
    if (auto vector = dyn_cast<VectorType>(value.getType()))
      target = vector.clone(elementType);
    if (value.getType() == target)
      return value;
    return arith::TruncFOp::create(b, loc, target, value);
  }

  OpBuilder &b;
  Location loc;
};

/// Creates `gpu.func @name(argTypes) kernel` at the builder's insertion point
/// and sets the builder into its body.
gpu::GPUFuncOp createKernel(OpBuilder &builder, Location loc, StringRef name,
                            TypeRange argTypes) {
  auto kernel = gpu::GPUFuncOp::create(builder, loc, name,
                                       builder.getFunctionType(argTypes, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                  builder.getUnitAttr());
  kernel.setKnownBlockSizeAttr(
      builder.getDenseI32ArrayAttr({static_cast<int32_t>(kBlockSize), 1, 1}));
  builder.setInsertionPointToStart(&kernel.getBody().front());
  return kernel;
}

/// Runs `body` under `if (condition)` and ends the kernel.
void emitGuarded(OpBuilder &builder, Location loc, Value condition,
                 function_ref<void()> body) {
  auto guard = scf::IfOp::create(builder, loc, condition, false);
  {
    OpBuilder::InsertionGuard insertion(builder);
    builder.setInsertionPointToStart(&guard.getThenRegion().front());
    body();
  }
  gpu::ReturnOp::create(builder, loc);
}

} // namespace

gpu::GPUFuncOp mlir::fusion::buildElementwiseKernel(
    OpBuilder &builder, Location loc, StringRef name, MatrixShape shape,
    TypeRange columnTypes, const ScalarFn &fn) {
  OpBuilder::InsertionGuard insertion(builder);
  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
  SmallVector<Type> argTypes{ptr, ptr, builder.getI64Type()};
  argTypes.append(columnTypes.size(), ptr);
  gpu::GPUFuncOp kernel = createKernel(builder, loc, name, argTypes);
  KernelEmitter e(builder, loc);
  auto args = kernel.getArguments();
  Value group = e.globalThreadX();
  emitGuarded(builder, loc, e.lessThan(group, args[2]), [&] {
    int64_t width = shape.vectorWidth;
    Value first = e.mul(group, e.i64(width));
    Value column = arith::RemUIOp::create(builder, loc, first,
                                          e.i64(shape.columns));
    SmallVector<Value> lanes =
        e.loadLanes(args[0], shape.elementType, first, width);
    for (int64_t lane = 0; lane < width; ++lane) {
      Value n = e.add(column, e.i64(lane));
      SmallVector<Value> columns;
      for (auto [index, type] : llvm::enumerate(columnTypes))
        columns.push_back(e.loadColumn(args[3 + index], type, n));
      lanes[lane] = fn(builder, loc, lanes[lane], columns);
    }
    e.storeLanes(lanes, args[1], shape.elementType, first);
  });
  return kernel;
}

gpu::GPUFuncOp mlir::fusion::buildColumnStatsKernel(
    OpBuilder &builder, Location loc, StringRef name, MatrixShape shape,
    TypeRange columnTypes, const ScalarFn &fn) {
  OpBuilder::InsertionGuard insertion(builder);
  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
  Type i64 = builder.getI64Type(), f32 = builder.getF32Type();
  SmallVector<Type> argTypes{ptr, i64, i64, ptr, ptr};
  argTypes.append(columnTypes.size(), ptr);
  gpu::GPUFuncOp kernel = createKernel(builder, loc, name, argTypes);
  KernelEmitter e(builder, loc);
  auto args = kernel.getArguments();
  Value rows = args[1], rowsPerChunk = args[2];
  int64_t width = shape.vectorWidth;
  Value group = e.globalThreadX();
  emitGuarded(builder, loc, e.lessThan(group, e.i64(shape.columns / width)),
              [&] {
    Value column = e.mul(group, e.i64(width));
    Value chunk = e.id(gpu::Dimension::y, true);
    Value begin = e.mul(chunk, rowsPerChunk);
    Value end = arith::MinSIOp::create(builder, loc, rows,
                                       e.add(begin, rowsPerChunk));
    // The column operands of this thread's columns, loaded once.
    SmallVector<SmallVector<Value>> laneColumns(width);
    for (int64_t lane = 0; lane < width; ++lane)
      for (auto [index, type] : llvm::enumerate(columnTypes))
        laneColumns[lane].push_back(e.loadColumn(
            args[5 + index], type, e.add(column, e.i64(lane))));

    // Welford over the chunk's rows: (count, mean[lane], m2[lane]).
    SmallVector<Value> init{e.f32(0.0)};
    init.append(2 * width, e.f32(0.0));
    Value beginIndex = arith::IndexCastOp::create(
        builder, loc, builder.getIndexType(), begin);
    Value endIndex =
        arith::IndexCastOp::create(builder, loc, builder.getIndexType(), end);
    Value one = arith::ConstantIndexOp::create(builder, loc, 1);
    auto loop = scf::ForOp::create(
        builder, loc, beginIndex, endIndex, one, init,
        [&](OpBuilder &nb, Location nl, Value row, ValueRange state) {
          KernelEmitter le(nb, nl);
          Value rowI64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(),
                                                    row);
          Value offset = le.add(le.mul(rowI64, le.i64(shape.columns)), column);
          SmallVector<Value> lanes =
              le.loadLanes(args[0], shape.elementType, offset, width);
          Value count = arith::AddFOp::create(nb, nl, state[0], le.f32(1.0));
          Value inverse = arith::DivFOp::create(nb, nl, le.f32(1.0), count);
          SmallVector<Value> next{count};
          SmallVector<Value> m2s;
          for (int64_t lane = 0; lane < width; ++lane) {
            Value x = fn(nb, nl, lanes[lane], laneColumns[lane]);
            Value mean = state[1 + lane], m2 = state[1 + width + lane];
            Value delta = arith::SubFOp::create(nb, nl, x, mean);
            Value newMean = arith::AddFOp::create(
                nb, nl, mean, arith::MulFOp::create(nb, nl, delta, inverse));
            Value newDelta = arith::SubFOp::create(nb, nl, x, newMean);
            next.push_back(newMean);
            m2s.push_back(arith::AddFOp::create(
                nb, nl, m2, arith::MulFOp::create(nb, nl, delta, newDelta)));
          }
          next.append(m2s);
          scf::YieldOp::create(nb, nl, next);
        });
    Value base = e.add(e.mul(chunk, e.i64(shape.columns)), column);
    for (int64_t lane = 0; lane < width; ++lane) {
      Value index = e.add(base, e.i64(lane));
      e.store(loop.getResult(1 + lane), args[3], f32, index, 4);
      e.store(loop.getResult(1 + width + lane), args[4], f32, index, 4);
    }
  });
  return kernel;
}

gpu::GPUFuncOp mlir::fusion::buildBatchNormFinalizeKernel(
    OpBuilder &builder, Location loc, StringRef name, int64_t columns,
    BatchNormConfigAttr config, BatchNormOperands operands) {
  OpBuilder::InsertionGuard insertion(builder);
  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
  Type i64 = builder.getI64Type(), f32 = builder.getF32Type();
  SmallVector<Type> argTypes{ptr, ptr, i64, i64, i64};
  bool updates = config.isTraining() && operands.runningStats;
  argTypes.append(operands.weight + operands.bias +
                      2 * operands.runningStats + 2 * updates,
                  ptr);
  argTypes.append(3, ptr);
  gpu::GPUFuncOp kernel = createKernel(builder, loc, name, argTypes);
  KernelEmitter e(builder, loc);
  auto args = kernel.getArguments();
  unsigned next = 5;
  Value weight = operands.weight ? args[next++] : Value();
  Value bias = operands.bias ? args[next++] : Value();
  Value runningMean, runningVar, newMean, newVar;
  if (operands.runningStats) {
    runningMean = args[next++];
    runningVar = args[next++];
  }
  if (updates) {
    newMean = args[next++];
    newVar = args[next++];
  }
  Value centerOut = args[next++], scaleOut = args[next++],
        shiftOut = args[next++];
  Type statType = operands.statType;

  Value n = e.globalThreadX();
  emitGuarded(builder, loc, e.lessThan(n, e.i64(columns)), [&] {
    Value mean, variance;
    if (!config.isTraining()) {
      mean = e.loadColumn(runningMean, statType, n);
      variance = e.loadColumn(runningVar, statType, n);
    } else {
      // Chan's merge of the chunks in chunk order: deterministic.
      Value rows = args[2], rowsPerChunk = args[3], chunks = args[4];
      auto toF32 = [&](OpBuilder &nb, Location nl, Value v) -> Value {
        return arith::SIToFPOp::create(nb, nl, nb.getF32Type(), v);
      };
      Value firstCount = toF32(
          builder, loc, arith::MinSIOp::create(builder, loc, rows,
                                               rowsPerChunk));
      SmallVector<Value> init{firstCount,
                              e.load(f32, args[0], f32, n, 4),
                              e.load(f32, args[1], f32, n, 4)};
      auto toIndex = [&](Value v) -> Value {
        return arith::IndexCastOp::create(builder, loc,
                                          builder.getIndexType(), v);
      };
      auto loop = scf::ForOp::create(
          builder, loc, toIndex(e.i64(1)), toIndex(chunks),
          arith::ConstantIndexOp::create(builder, loc, 1), init,
          [&](OpBuilder &nb, Location nl, Value chunk, ValueRange state) {
            KernelEmitter le(nb, nl);
            Value chunkI64 =
                arith::IndexCastOp::create(nb, nl, nb.getI64Type(), chunk);
            Value start = le.mul(chunkI64, rowsPerChunk);
            Value countB = toF32(
                nb, nl,
                arith::MinSIOp::create(
                    nb, nl, rowsPerChunk,
                    arith::SubIOp::create(nb, nl, rows, start)));
            Value index = le.add(le.mul(chunkI64, le.i64(columns)), n);
            Value meanB = le.load(f32, args[0], f32, index, 4);
            Value m2B = le.load(f32, args[1], f32, index, 4);
            Value countA = state[0], meanA = state[1], m2A = state[2];
            Value count = arith::AddFOp::create(nb, nl, countA, countB);
            Value delta = arith::SubFOp::create(nb, nl, meanB, meanA);
            Value weightB = arith::DivFOp::create(nb, nl, countB, count);
            Value newMeanA = arith::AddFOp::create(
                nb, nl, meanA, arith::MulFOp::create(nb, nl, delta, weightB));
            // m2 = m2A + m2B + delta^2 * countA * countB / count
            Value cross = arith::MulFOp::create(
                nb, nl, arith::MulFOp::create(nb, nl, delta, delta),
                arith::MulFOp::create(nb, nl, countA, weightB));
            Value newM2 = arith::AddFOp::create(
                nb, nl, arith::AddFOp::create(nb, nl, m2A, m2B), cross);
            scf::YieldOp::create(nb, nl,
                                 ValueRange{count, newMeanA, newM2});
          });
      Value rowsF32 = toF32(builder, loc, rows);
      mean = loop.getResult(1);
      variance = arith::DivFOp::create(builder, loc, loop.getResult(2),
                                       rowsF32);
      if (updates) {
        double momentum = config.getMomentumValue();
        Value bessel = arith::DivFOp::create(
            builder, loc, rowsF32,
            arith::SubFOp::create(builder, loc, rowsF32, e.f32(1.0)));
        auto update = [&](Value running, Value batch) -> Value {
          Value kept = arith::MulFOp::create(builder, loc, running,
                                             e.f32(1.0 - momentum));
          Value added =
              arith::MulFOp::create(builder, loc, batch, e.f32(momentum));
          return arith::AddFOp::create(builder, loc, kept, added);
        };
        unsigned statBytes = statType.getIntOrFloatBitWidth() / 8;
        e.store(e.narrow(update(e.loadColumn(runningMean, statType, n), mean),
                         statType),
                newMean, statType, n, statBytes);
        Value unbiased = arith::MulFOp::create(builder, loc, variance, bessel);
        e.store(e.narrow(update(e.loadColumn(runningVar, statType, n),
                                unbiased),
                         statType),
                newVar, statType, n, statBytes);
      }
    }
    // y = (x - mean) * (invstd * weight) + bias: centering first keeps the
    // precision when |mean| is large against the spread.
    Value scale = buildInvStd(builder, loc, variance,
                              config.getEpsilonValue());
    if (weight)
      scale = arith::MulFOp::create(builder, loc, scale,
                                    e.loadColumn(weight, statType, n));
    Value shift = bias ? e.loadColumn(bias, statType, n) : e.f32(0.0);
    e.store(mean, centerOut, f32, n, 4);
    e.store(scale, scaleOut, f32, n, 4);
    e.store(shift, shiftOut, f32, n, 4);
  });
  return kernel;
}
