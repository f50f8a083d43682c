//===- EpilogueKernels.cpp - generated elementwise and BN kernels ---------===//

#include "EpilogueKernels.h"

#include "fusion/Dialect/Fusion/IR/ScalarBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;

int64_t mlir::fusion::getVectorWidth(Type elementType, int64_t columns) {
  int64_t width = 16 / (elementType.getIntOrFloatBitWidth() / 8);
  return columns % width == 0 ? width : 1;
}

namespace {

/// Rows whose loads a statistics thread issues before using them.
constexpr int64_t kRowsInFlight = 8;

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

  /// `width` consecutive elements from `base[index]`, as f32 lanes; `index`
  /// is a multiple of `width` and `base` 16-byte aligned.
  SmallVector<Value> loadLanes(Value base, Type elementType, Value index,
                               int64_t width) {
    unsigned bytes = elementType.getIntOrFloatBitWidth() / 8;
    if (width == 1)
      return {widen(load(elementType, base, elementType, index, bytes))};
    auto vectorType = VectorType::get({width}, elementType);
    Value vector = widen(load(vectorType, base, elementType, index,
                              std::min<unsigned>(16, width * bytes)));
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
    // The `width` columns of a thread are consecutive and start at a multiple
    // of `width`: each column operand is one aligned vector load.
    SmallVector<SmallVector<Value>> columnLanes;
    for (auto [index, type] : llvm::enumerate(columnTypes))
      columnLanes.push_back(
          e.loadLanes(args[3 + index], type, column, width));
    for (int64_t lane = 0; lane < width; ++lane) {
      SmallVector<Value> columns;
      for (auto &values : columnLanes)
        columns.push_back(values[lane]);
      lanes[lane] = fn(builder, loc, lanes[lane], columns);
    }
    e.storeLanes(lanes, args[1], shape.elementType, first);
  });
  return kernel;
}

namespace {
/// Welford state of a set of rows: count, mean, sum of squared deviations.
struct Moments {
  Value count, mean, m2;
};

/// Chan's merge of two sets of rows; either may be empty.
Moments merge(OpBuilder &b, Location loc, Moments a, Moments c) {
  Value count = arith::AddFOp::create(b, loc, a.count, c.count);
  Value zero = buildF32Constant(b, loc, 0.0);
  Value nonEmpty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, count, zero);
  Value safeCount = arith::SelectOp::create(
      b, loc, nonEmpty, count, buildF32Constant(b, loc, 1.0));
  Value weight = arith::DivFOp::create(b, loc, c.count, safeCount);
  Value delta = arith::SubFOp::create(b, loc, c.mean, a.mean);
  Value mean = arith::AddFOp::create(
      b, loc, a.mean, arith::MulFOp::create(b, loc, delta, weight));
  // m2 = m2a + m2c + delta^2 * count_a * count_c / count
  Value cross = arith::MulFOp::create(
      b, loc, arith::MulFOp::create(b, loc, delta, delta),
      arith::MulFOp::create(b, loc, a.count, weight));
  Value m2 = arith::AddFOp::create(
      b, loc, arith::AddFOp::create(b, loc, a.m2, c.m2), cross);
  return {count, mean, m2};
}
} // namespace

gpu::GPUFuncOp mlir::fusion::buildBatchNormKernel(
    OpBuilder &builder, Location loc, StringRef name, MatrixShape shape,
    TypeRange columnTypes, const ScalarFn &fn, BatchNormConfigAttr config,
    BatchNormOperands operands) {
  OpBuilder::InsertionGuard insertion(builder);
  MLIRContext *context = builder.getContext();
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = builder.getI64Type(), f32 = builder.getF32Type();
  bool training = config.isTraining();
  bool updates = training && operands.runningStats;
  SmallVector<Type> argTypes{ptr, ptr, i64};
  argTypes.append(operands.weight + operands.bias +
                      2 * operands.runningStats + 2 * updates,
                  ptr);
  argTypes.append(columnTypes.size(), ptr);
  gpu::GPUFuncOp kernel = createKernel(builder, loc, name, argTypes);
  int64_t width = shape.vectorWidth;
  // Shared memory: per thread (count, mean[width], m2[width]) for the tree
  // merge, then center, scale and shift of the strip's columns.
  int64_t slots = 1 + 2 * width;
  auto sharedType = MemRefType::get(
      {slots * kBlockSize + 3 * width}, f32, AffineMap(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
  Value shared = kernel.addWorkgroupAttribution(sharedType, loc);

  KernelEmitter e(builder, loc);
  auto args = kernel.getArguments();
  Value in = args[0], out = args[1], rows = args[2];
  unsigned next = 3;
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
  ValueRange columnArgs = args.drop_front(next);
  Type statType = operands.statType;
  unsigned statBytes = statType.getIntOrFloatBitWidth() / 8;

  auto toIndex = [&](OpBuilder &b, Location l, Value v) -> Value {
    return arith::IndexCastOp::create(b, l, b.getIndexType(), v);
  };
  auto sharedAt = [&](OpBuilder &b, Location l, int64_t slot, Value i) {
    KernelEmitter le(b, l);
    return toIndex(b, l, le.add(le.i64(slot * kBlockSize), i));
  };
  auto loadShared = [&](OpBuilder &b, Location l, Value at) -> Value {
    return memref::LoadOp::create(b, l, shared, ValueRange{at});
  };
  auto storeShared = [&](OpBuilder &b, Location l, Value v, Value at) {
    memref::StoreOp::create(b, l, v, shared, ValueRange{at});
  };
  auto barrier = [&](OpBuilder &b, Location l) {
    gpu::BarrierOp::create(b, l);
  };

  Value tid = e.id(gpu::Dimension::x, false);
  // Rows tid, tid + kBlockSize, ...: how many this thread has.
  Value mine = arith::SelectOp::create(
      builder, loc, e.lessThan(tid, rows),
      arith::DivUIOp::create(
          builder, loc,
          e.add(arith::SubIOp::create(builder, loc, rows, tid),
                e.i64(kBlockSize - 1)),
          e.i64(kBlockSize)),
      e.i64(0));
  auto rowOf = [&](KernelEmitter &le, Value i) {
    return le.add(tid, le.mul(i, le.i64(kBlockSize)));
  };

  int64_t strips = shape.columns / width;
  Value firstStrip = toIndex(builder, loc, e.id(gpu::Dimension::x, true));
  Value stripStep = gpu::GridDimOp::create(builder, loc, gpu::Dimension::x);
  scf::ForOp::create(
      builder, loc, firstStrip,
      arith::ConstantIndexOp::create(builder, loc, strips), stripStep,
      ValueRange{},
      [&](OpBuilder &b, Location l, Value strip, ValueRange) {
        KernelEmitter se(b, l);
        Value column = se.mul(
            arith::IndexCastOp::create(b, l, i64, strip), se.i64(width));
        SmallVector<SmallVector<Value>> columnLanes;
        for (auto [i, type] : llvm::enumerate(columnTypes))
          columnLanes.push_back(
              se.loadLanes(columnArgs[i], type, column, width));
        auto columnsOfLane = [&](int64_t lane) {
          SmallVector<Value> values;
          for (auto &lanes : columnLanes)
            values.push_back(lanes[lane]);
          return values;
        };
        auto rowLanes = [&](KernelEmitter &le, Value row) {
          Value offset =
              le.add(le.mul(row, le.i64(shape.columns)), column);
          return le.loadLanes(in, shape.elementType, offset, width);
        };
        Value base = se.i64(slots * kBlockSize);

        if (training) {
          // Phase 1: Welford over this thread's rows, kRowsInFlight loads
          // at a time, then one by one.
          auto welford = [&](OpBuilder &nb, Location nl,
                             SmallVector<Value> state,
                             ArrayRef<Value> lanes) {
            KernelEmitter le(nb, nl);
            Value count = arith::AddFOp::create(nb, nl, state[0],
                                                le.f32(1.0));
            Value inverse = arith::DivFOp::create(nb, nl, le.f32(1.0), count);
            state[0] = count;
            for (int64_t lane = 0; lane < width; ++lane) {
              Value x = fn(nb, nl, lanes[lane], columnsOfLane(lane));
              Value &mean = state[1 + lane], &m2 = state[1 + width + lane];
              Value delta = arith::SubFOp::create(nb, nl, x, mean);
              mean = arith::AddFOp::create(
                  nb, nl, mean, arith::MulFOp::create(nb, nl, delta, inverse));
              Value newDelta = arith::SubFOp::create(nb, nl, x, mean);
              m2 = arith::AddFOp::create(
                  nb, nl, m2, arith::MulFOp::create(nb, nl, delta, newDelta));
            }
            return state;
          };
          SmallVector<Value> init(1 + 2 * width, se.f32(0.0));
          Value grouped = se.mul(
              arith::DivUIOp::create(b, l, mine, se.i64(kRowsInFlight)),
              se.i64(kRowsInFlight));
          auto groups = scf::ForOp::create(
              b, l, toIndex(b, l, se.i64(0)), toIndex(b, l, grouped),
              arith::ConstantIndexOp::create(b, l, kRowsInFlight), init,
              [&](OpBuilder &nb, Location nl, Value i, ValueRange state) {
                KernelEmitter le(nb, nl);
                Value first = arith::IndexCastOp::create(nb, nl, i64, i);
                SmallVector<SmallVector<Value>> loaded;
                for (int64_t r = 0; r < kRowsInFlight; ++r)
                  loaded.push_back(
                      rowLanes(le, rowOf(le, le.add(first, le.i64(r)))));
                SmallVector<Value> next(state);
                for (auto &lanes : loaded)
                  next = welford(nb, nl, next, lanes);
                scf::YieldOp::create(nb, nl, next);
              });
          auto rest = scf::ForOp::create(
              b, l, toIndex(b, l, grouped), toIndex(b, l, mine),
              arith::ConstantIndexOp::create(b, l, 1), groups.getResults(),
              [&](OpBuilder &nb, Location nl, Value i, ValueRange state) {
                KernelEmitter le(nb, nl);
                Value row =
                    rowOf(le, arith::IndexCastOp::create(nb, nl, i64, i));
                scf::YieldOp::create(
                    nb, nl, welford(nb, nl, SmallVector<Value>(state),
                                    rowLanes(le, row)));
              });
          for (int64_t slot = 0; slot < slots; ++slot)
            storeShared(b, l, rest.getResult(slot), sharedAt(b, l, slot, tid));

          // Tree merge across the block, in a fixed order: deterministic.
          for (int64_t stride = kBlockSize / 2; stride > 0; stride /= 2) {
            barrier(b, l);
            auto active = scf::IfOp::create(b, l,
                                            se.lessThan(tid, se.i64(stride)),
                                            false);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(&active.getThenRegion().front());
            Value other = se.add(tid, se.i64(stride));
            auto moments = [&](Value who, int64_t lane) {
              return Moments{
                  loadShared(b, l, sharedAt(b, l, 0, who)),
                  loadShared(b, l, sharedAt(b, l, 1 + lane, who)),
                  loadShared(b, l, sharedAt(b, l, 1 + width + lane, who))};
            };
            for (int64_t lane = 0; lane < width; ++lane) {
              Moments merged =
                  merge(b, l, moments(tid, lane), moments(other, lane));
              storeShared(b, l, merged.mean,
                          sharedAt(b, l, 1 + lane, tid));
              storeShared(b, l, merged.m2,
                          sharedAt(b, l, 1 + width + lane, tid));
              if (lane + 1 == width)
                storeShared(b, l, merged.count, sharedAt(b, l, 0, tid));
            }
          }
          barrier(b, l);
        }

        // Thread 0: the strip's statistics, running-stat updates, and the
        // per-column center, scale and shift.
        auto leader = scf::IfOp::create(
            b, l,
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, tid,
                                  se.i64(0)),
            false);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&leader.getThenRegion().front());
          Value zero = se.i64(0);
          Value rowsF32 = arith::SIToFPOp::create(b, l, f32, rows);
          for (int64_t lane = 0; lane < width; ++lane) {
            Value n = se.add(column, se.i64(lane));
            Value mean, variance;
            if (training) {
              mean = loadShared(b, l, sharedAt(b, l, 1 + lane, zero));
              variance = arith::DivFOp::create(
                  b, l, loadShared(b, l, sharedAt(b, l, 1 + width + lane,
                                                  zero)),
                  rowsF32);
            } else {
              mean = se.loadColumn(runningMean, statType, n);
              variance = se.loadColumn(runningVar, statType, n);
            }
            if (updates) {
              double momentum = config.getMomentumValue();
              auto update = [&](Value running, Value batch) -> Value {
                Value kept = arith::MulFOp::create(b, l, running,
                                                   se.f32(1.0 - momentum));
                Value added =
                    arith::MulFOp::create(b, l, batch, se.f32(momentum));
                return se.narrow(arith::AddFOp::create(b, l, kept, added),
                                 statType);
              };
              Value bessel = arith::DivFOp::create(
                  b, l, rowsF32,
                  arith::SubFOp::create(b, l, rowsF32, se.f32(1.0)));
              se.store(update(se.loadColumn(runningMean, statType, n), mean),
                       newMean, statType, n, statBytes);
              Value unbiased = arith::MulFOp::create(b, l, variance, bessel);
              se.store(update(se.loadColumn(runningVar, statType, n),
                              unbiased),
                       newVar, statType, n, statBytes);
            }
            // y = (x - mean) * (invstd * weight) + bias: centering first
            // keeps the precision when |mean| is large against the spread.
            Value scale =
                buildInvStd(b, l, variance, config.getEpsilonValue());
            if (weight)
              scale = arith::MulFOp::create(
                  b, l, scale, se.loadColumn(weight, statType, n));
            Value shift = bias ? se.loadColumn(bias, statType, n)
                               : se.f32(0.0);
            auto at = [&](int64_t which) {
              return toIndex(b, l, se.add(base, se.i64(which * width + lane)));
            };
            storeShared(b, l, mean, at(0));
            storeShared(b, l, scale, at(1));
            storeShared(b, l, shift, at(2));
          }
        }
        barrier(b, l);

        // Phase 2: normalize the strip; its rows are read again, from L2.
        SmallVector<Value> center, scale, shift;
        for (int64_t lane = 0; lane < width; ++lane) {
          auto at = [&](int64_t which) {
            return toIndex(b, l, se.add(base, se.i64(which * width + lane)));
          };
          center.push_back(loadShared(b, l, at(0)));
          scale.push_back(loadShared(b, l, at(1)));
          shift.push_back(loadShared(b, l, at(2)));
        }
        scf::ForOp::create(
            b, l, toIndex(b, l, se.i64(0)), toIndex(b, l, mine),
            arith::ConstantIndexOp::create(b, l, 1), ValueRange{},
            [&](OpBuilder &nb, Location nl, Value i, ValueRange) {
              KernelEmitter le(nb, nl);
              Value row =
                  rowOf(le, arith::IndexCastOp::create(nb, nl, i64, i));
              SmallVector<Value> lanes = rowLanes(le, row);
              for (int64_t lane = 0; lane < width; ++lane) {
                Value x = fn(nb, nl, lanes[lane], columnsOfLane(lane));
                Value centered =
                    arith::SubFOp::create(nb, nl, x, center[lane]);
                lanes[lane] = arith::AddFOp::create(
                    nb, nl,
                    arith::MulFOp::create(nb, nl, centered, scale[lane]),
                    shift[lane]);
              }
              le.storeLanes(lanes, out, shape.elementType,
                            le.add(le.mul(row, le.i64(shape.columns)),
                                   column));
              scf::YieldOp::create(nb, nl);
            });
        // The next strip reuses the shared memory.
        barrier(b, l);
        scf::YieldOp::create(b, l);
      });
  gpu::ReturnOp::create(builder, loc);
  return kernel;
}
