//===- BatchNormKernels.cpp - column statistics and their finalization ----===//

#include "fusion/Codegen/Kernels/BatchNormKernels.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Rows whose loads a statistics thread issues before using them.
constexpr int64_t kRowsInFlight = 8;

/// The lanes of the finalize kernel that merge one column's chunks: a
/// quarter warp, so that 16384 columns take one wave of the H100 and the
/// four leaders of a warp load and store adjacent columns together; each
/// lane merges every eighth chunk (one at batch 1024 with 128-row chunks),
/// then the group's butterfly.
constexpr int64_t kFinalizeLanes = 8;
/// The chunks a finalize lane loads before it merges them: with eight
/// lanes a column and 128 chunks (batch 16384), merging each chunk as it
/// came took 8.2-8.9 us against 5.7 with a warp a column.
constexpr int64_t kChunksInFlight = 4;

/// The moments of a set of rows of one column: f32 count, mean and sum of
/// squared deviations from the mean.
struct Moments {
  Value count, mean, m2;
};

/// `updated` where `a` and `c` are both finite, else a + c: a mean that
/// an infinity or NaN has reached is the sum's (inf, -inf or NaN, as the
/// mean of a sum, float64's and PyTorch's on the CPU), where Welford's and
/// Chan's updates would make inf - inf = NaN of every infinity.
Value meanUnlessNonFinite(OpBuilder &b, Location loc, Value updated, Value a,
                          Value c) {
  Value infinity = buildF32Constant(b, loc, INFINITY);
  auto finite = [&](Value v) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                 math::AbsFOp::create(b, loc, v), infinity);
  };
  Value aFinite = finite(a);
  Value cFinite = finite(c);
  Value bothFinite = arith::AndIOp::create(b, loc, aFinite, cFinite);
  Value sum = arith::AddFOp::create(b, loc, a, c);
  return arith::SelectOp::create(b, loc, bothFinite, updated, sum);
}

/// Chan's merge of the moments of two disjoint sets of rows; either may be
/// empty. Not symmetric in its bits: callers fix the order.
Moments mergeMoments(OpBuilder &b, Location loc, Moments a, Moments c) {
  Value count = arith::AddFOp::create(b, loc, a.count, c.count);
  Value zero = buildF32Constant(b, loc, 0.0);
  Value nonEmpty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, count, zero);
  Value safeCount = arith::SelectOp::create(b, loc, nonEmpty, count,
                                            buildF32Constant(b, loc, 1.0));
  Value weight = arith::DivFOp::create(b, loc, c.count, safeCount);
  Value delta = arith::SubFOp::create(b, loc, c.mean, a.mean);
  Value mean = meanUnlessNonFinite(
      b, loc,
      arith::AddFOp::create(b, loc, a.mean,
                            arith::MulFOp::create(b, loc, delta, weight)),
      a.mean, c.mean);
  // m2 = m2a + m2c + delta^2 * count_a * count_c / count, no cross term
  // where either set is empty: the empty set's mean is a placeholder 0,
  // and delta^2 of a mean past 1.8e19 overflows to inf, which the count's 0
  // would make NaN.
  Value share = arith::MulFOp::create(b, loc, a.count, weight);
  Value bothNonEmpty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, share, zero);
  Value cross = arith::SelectOp::create(
      b, loc, bothNonEmpty,
      arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, delta, delta),
                            share),
      zero);
  Value m2 = arith::AddFOp::create(
      b, loc, arith::AddFOp::create(b, loc, a.m2, c.m2), cross);
  return {count, mean, m2};
}

} // namespace

BatchNormCoefficients
mlir::fusion::buildBatchNormCoefficients(OpBuilder &builder, Location loc,
                                         Value mean, Value invStd, Value weight,
                                         Value bias) {
  Value scale = invStd;
  if (weight)
    scale = arith::MulFOp::create(builder, loc, scale, weight);
  return {mean, scale, bias ? bias : buildF32Constant(builder, loc, 0.0)};
}

Value mlir::fusion::applyBatchNormCoefficients(
    OpBuilder &builder, Location loc, Value x,
    const BatchNormCoefficients &coefficients) {
  Value centered = arith::SubFOp::create(builder, loc, x, coefficients.center);
  Value scaled =
      arith::MulFOp::create(builder, loc, centered, coefficients.scale);
  return arith::AddFOp::create(builder, loc, scaled, coefficients.shift);
}

Value mlir::fusion::buildRunningStatisticUpdate(OpBuilder &builder,
                                                Location loc,
                                                BatchNormConfigAttr config,
                                                Value running, Value batch) {
  double momentum = config.getMomentumValue();
  Value kept = arith::MulFOp::create(
      builder, loc, running, buildF32Constant(builder, loc, 1.0 - momentum));
  Value added = arith::MulFOp::create(builder, loc, batch,
                                      buildF32Constant(builder, loc, momentum));
  return arith::AddFOp::create(builder, loc, kept, added);
}

Value mlir::fusion::buildUnbiasedVariance(OpBuilder &builder, Location loc,
                                          Value variance, Value rows) {
  Value bessel = arith::DivFOp::create(
      builder, loc, rows,
      arith::SubFOp::create(builder, loc, rows,
                            buildF32Constant(builder, loc, 1.0)));
  return arith::MulFOp::create(builder, loc, variance, bessel);
}

namespace {

/// A statistics thread: the Welford moments of its `vectorWidth` columns
/// (of `fn` of the input and the column operands) over one chunk of rows,
/// stored column-major.
class ColumnStatsEmitter {
public:
  ColumnStatsEmitter(OpBuilder &builder, Location loc, MatrixShape shape,
                     ArrayRef<ColumnOperand> columns, const ScalarFn &fn,
                     ValueRange args)
      : b(builder), loc(loc), e(builder, loc), shape(shape), columns(columns),
        fn(fn), args(args), width(shape.vectorWidth) {}

  /// The moments of column group `group`'s columns over the block's chunk.
  void emit(Value group) {
    Value rows = args[1], rowsPerChunk = args[2];
    column = e.mul(group, e.i64(width));
    Value chunk = e.id(gpu::Dimension::y, true);
    Value begin = e.mul(chunk, rowsPerChunk);
    Value end =
        arith::MinSIOp::create(b, loc, rows, e.add(begin, rowsPerChunk));
    // The column operands of this thread's columns, loaded once.
    laneColumns.assign(width, {});
    for (int64_t lane = 0; lane < width; ++lane)
      for (auto [index, operand] : llvm::enumerate(columns))
        laneColumns[lane].push_back(
            e.loadColumn(operand, args[5 + index], e.add(column, e.i64(lane))));
    SmallVector<Value> moments = accumulateRows(begin, end);
    // Column-major partials, so that the finalize kernel reads a column's
    // chunks contiguously.
    Value chunks = arith::IndexCastOp::create(
        b, loc, b.getI64Type(),
        gpu::GridDimOp::create(b, loc, gpu::Dimension::y));
    Type f32 = b.getF32Type();
    for (int64_t lane = 0; lane < width; ++lane) {
      Value index = e.add(e.mul(e.add(column, e.i64(lane)), chunks), chunk);
      e.store(moments[1 + lane], args[3], f32, index, 4);
      e.store(moments[1 + width + lane], args[4], f32, index, 4);
    }
  }

private:
  /// Welford over rows [begin, end): state = (count, mean[lane],
  /// m2[lane]). Rows go in groups of kRowsInFlight whose loads are issued
  /// together, then one at a time for the remainder.
  SmallVector<Value> accumulateRows(Value begin, Value end) {
    SmallVector<Value> init{e.f32(0.0)};
    init.append(2 * width, e.f32(0.0));
    Value count = arith::SubIOp::create(b, loc, end, begin);
    Value groupedEnd =
        e.add(begin,
              e.mul(arith::DivSIOp::create(b, loc, count, e.i64(kRowsInFlight)),
                    e.i64(kRowsInFlight)));
    auto grouped = scf::ForOp::create(
        b, loc, toIndex(begin), toIndex(groupedEnd),
        arith::ConstantIndexOp::create(b, loc, kRowsInFlight), init,
        [&](OpBuilder &nb, Location nl, Value row, ValueRange state) {
          KernelEmitter le(nb, nl);
          Value first =
              arith::IndexCastOp::create(nb, nl, nb.getI64Type(), row);
          SmallVector<SmallVector<Value>> rows;
          for (int64_t r = 0; r < kRowsInFlight; ++r)
            rows.push_back(rowLanes(le, le.add(first, le.i64(r))));
          SmallVector<Value> next(state);
          for (auto &lanes : rows)
            next = welford(nb, nl, next, lanes);
          scf::YieldOp::create(nb, nl, next);
        });
    auto loop = scf::ForOp::create(
        b, loc, toIndex(groupedEnd), toIndex(end),
        arith::ConstantIndexOp::create(b, loc, 1), grouped.getResults(),
        [&](OpBuilder &nb, Location nl, Value row, ValueRange state) {
          KernelEmitter le(nb, nl);
          Value rowI64 =
              arith::IndexCastOp::create(nb, nl, nb.getI64Type(), row);
          scf::YieldOp::create(
              nb, nl,
              welford(nb, nl, SmallVector<Value>(state), rowLanes(le, rowI64)));
        });
    return SmallVector<Value>(loop.getResults());
  }

  /// One row's values `lanes` into the moments `state`.
  SmallVector<Value> welford(OpBuilder &nb, Location nl,
                             SmallVector<Value> state, ArrayRef<Value> lanes) {
    KernelEmitter le(nb, nl);
    Value count = arith::AddFOp::create(nb, nl, state[0], le.f32(1.0));
    Value inverse = arith::DivFOp::create(nb, nl, le.f32(1.0), count);
    state[0] = count;
    for (int64_t lane = 0; lane < width; ++lane) {
      Value x = fn(nb, nl, lanes[lane], laneColumns[lane]);
      Value &mean = state[1 + lane], &m2 = state[1 + width + lane];
      Value delta = arith::SubFOp::create(nb, nl, x, mean);
      mean = meanUnlessNonFinite(
          nb, nl,
          arith::AddFOp::create(nb, nl, mean,
                                arith::MulFOp::create(nb, nl, delta, inverse)),
          mean, x);
      Value newDelta = arith::SubFOp::create(nb, nl, x, mean);
      m2 = arith::AddFOp::create(
          nb, nl, m2, arith::MulFOp::create(nb, nl, delta, newDelta));
    }
    return state;
  }

  /// The thread's columns of row `row` of the input.
  SmallVector<Value> rowLanes(KernelEmitter &le, Value row) {
    Value offset = le.add(le.mul(row, le.i64(shape.columns)), column);
    return le.loadLanes(args[0], shape.elementType, offset, width);
  }

  Value toIndex(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }

  OpBuilder &b;
  Location loc;
  KernelEmitter e;
  MatrixShape shape;
  ArrayRef<ColumnOperand> columns;
  const ScalarFn &fn;
  ValueRange args;
  int64_t width;
  /// The thread's first column, and its columns' column operands.
  Value column;
  SmallVector<SmallVector<Value>> laneColumns;
};

} // namespace

Kernel mlir::fusion::buildColumnStatsKernel(OpBuilder &builder, Location loc,
                                            StringRef name, MatrixShape shape,
                                            ArrayRef<ColumnOperand> columns,
                                            const ScalarFn &fn) {
  OpBuilder::InsertionGuard insertion(builder);
  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
  Type i64 = builder.getI64Type();
  SmallVector<Type> argTypes{ptr, i64, i64, ptr, ptr};
  argTypes.append(columns.size(), ptr);
  gpu::GPUFuncOp kernel = createKernel(builder, loc, name, argTypes);
  LaunchContract launch;
  emitPredecessorWait(builder, loc, kernel, launch);
  KernelEmitter e(builder, loc);
  int64_t width = shape.vectorWidth;
  Value group = e.globalThreadX();
  emitGuarded(builder, loc, e.lessThan(group, e.i64(shape.columns / width)),
              [&] {
                ColumnStatsEmitter(builder, loc, shape, columns, fn,
                                   kernel.getArguments())
                    .emit(group);
              });
  // Threads over the column groups, blocks of rows over y.
  launch.gridX =
      RowExpr::constant((shape.columns / width + kBlockSize - 1) / kBlockSize);
  launch.gridY = RowExpr::ceilDivByOperand(1);
  launch.blockSize = kBlockSize;
  launch.arguments = {KernelArgument::fromOperand(0),
                      KernelArgument::fromValue(RowExpr::rows()),
                      KernelArgument::fromOperand(1),
                      KernelArgument::fromOperand(2),
                      KernelArgument::fromOperand(3)};
  for (unsigned index = 0; index < columns.size(); ++index)
    launch.arguments.push_back(KernelArgument::fromOperand(4 + index));
  return {kernel, std::move(launch)};
}

namespace {

/// The finalize kernel's arguments past its five fixed ones (the chunks'
/// moments, rows, rows a chunk, chunks): each null where absent.
struct FinalizeArguments {
  Value weight, bias, runningMean, runningVar, newMean, newVar, batchMean,
      batchInvStd, centerOut, scaleOut, shiftOut;

  static FinalizeArguments take(ValueRange args, BatchNormOperands operands,
                                bool updates) {
    FinalizeArguments a;
    unsigned next = 5;
    a.weight = operands.weight ? args[next++] : Value();
    a.bias = operands.bias ? args[next++] : Value();
    if (operands.runningStats) {
      a.runningMean = args[next++];
      a.runningVar = args[next++];
    }
    if (updates) {
      a.newMean = args[next++];
      a.newVar = args[next++];
    }
    if (operands.batchStatType) {
      a.batchMean = args[next++];
      a.batchInvStd = args[next++];
    }
    a.centerOut = args[next++];
    a.scaleOut = args[next++];
    a.shiftOut = args[next++];
    return a;
  }
};

/// The moments of column `n`'s chunks that lane `lane` of its
/// kFinalizeLanes merges (l, l + kFinalizeLanes, ... in order), loading
/// kChunksInFlight of them before it merges them; `args` the kernel's.
Moments mergeLaneChunks(OpBuilder &builder, Location loc, ValueRange args,
                        Value lane, Value n) {
  KernelEmitter e(builder, loc);
  Value rows = args[2], rowsPerChunk = args[3], chunks = args[4];
  Type f32 = builder.getF32Type();
  auto toIndex = [&](Value v) -> Value {
    return arith::IndexCastOp::create(builder, loc, builder.getIndexType(), v);
  };
  Moments empty{e.f32(0.0), e.f32(0.0), e.f32(0.0)};
  auto loop = scf::ForOp::create(
      builder, loc, toIndex(lane), toIndex(chunks),
      arith::ConstantIndexOp::create(builder, loc,
                                     kFinalizeLanes * kChunksInFlight),
      ValueRange{empty.count, empty.mean, empty.m2},
      [&](OpBuilder &nb, Location nl, Value first, ValueRange state) {
        KernelEmitter le(nb, nl);
        Value firstI64 =
            arith::IndexCastOp::create(nb, nl, nb.getI64Type(), first);
        SmallVector<std::pair<Value, Moments>> parts;
        for (int64_t i = 0; i < kChunksInFlight; ++i) {
          Value chunk = le.add(firstI64, le.i64(i * kFinalizeLanes));
          Value inChunks = le.lessThan(chunk, chunks);
          // Past the last chunk: the lane's first chunk, loaded and not
          // merged.
          chunk = arith::SelectOp::create(nb, nl, inChunks, chunk, firstI64);
          Value start = le.mul(chunk, rowsPerChunk);
          Value count = arith::SIToFPOp::create(
              nb, nl, nb.getF32Type(),
              arith::MinSIOp::create(
                  nb, nl, rowsPerChunk,
                  arith::SubIOp::create(nb, nl, rows, start)));
          Value index = le.add(le.mul(n, chunks), chunk);
          parts.push_back({inChunks,
                           {count, le.load(f32, args[0], f32, index, 4),
                            le.load(f32, args[1], f32, index, 4)}});
        }
        Moments total{state[0], state[1], state[2]};
        for (auto [inChunks, part] : parts) {
          Moments merged = mergeMoments(nb, nl, total, part);
          auto keep = [&](Value next, Value kept) -> Value {
            return arith::SelectOp::create(nb, nl, inChunks, next, kept);
          };
          total = {keep(merged.count, total.count),
                   keep(merged.mean, total.mean), keep(merged.m2, total.m2)};
        }
        scf::YieldOp::create(nb, nl,
                             ValueRange{total.count, total.mean, total.m2});
      });
  return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
}

/// `total` merged across the column's lanes by a butterfly, in a fixed
/// order: deterministic. Lane 0's partners at distances of at least
/// `chunks` hold no chunk, and merging empty moments changes none of its
/// sums, so the warp skips those levels (all of them for a batch of one
/// block row, 128 rows: the kernel of 16384 columns took 14 us with them).
Moments mergeAcrossLanes(OpBuilder &builder, Location loc, Moments total,
                         Value chunks) {
  KernelEmitter e(builder, loc);
  Type f32 = builder.getF32Type();
  Value width = arith::ConstantOp::create(builder, loc,
                                          builder.getI32IntegerAttr(kWarpSize));
  for (int32_t offset = kFinalizeLanes / 2; offset > 0; offset /= 2) {
    Value partnersHoldChunks = arith::CmpIOp::create(
        builder, loc, arith::CmpIPredicate::slt, e.i64(offset), chunks);
    auto level = scf::IfOp::create(builder, loc, TypeRange{f32, f32, f32},
                                   partnersHoldChunks,
                                   /*withElseRegion=*/true);
    builder.setInsertionPointToStart(&level.getThenRegion().front());
    Value distance = arith::ConstantOp::create(
        builder, loc, builder.getI32IntegerAttr(offset));
    auto shuffle = [&](Value v) -> Value {
      return gpu::ShuffleOp::create(builder, loc, v, distance, width,
                                    gpu::ShuffleMode::XOR)
          .getShuffleResult();
    };
    Moments merged = mergeMoments(
        builder, loc, total,
        {shuffle(total.count), shuffle(total.mean), shuffle(total.m2)});
    scf::YieldOp::create(builder, loc,
                         ValueRange{merged.count, merged.mean, merged.m2});
    builder.setInsertionPointToStart(&level.getElseRegion().front());
    scf::YieldOp::create(builder, loc,
                         ValueRange{total.count, total.mean, total.m2});
    builder.setInsertionPointAfter(level);
    total = {level.getResult(0), level.getResult(1), level.getResult(2)};
  }
  return total;
}

/// Column `n`'s leader: the running statistics' update, the batch
/// statistics and the coefficients (center, scale, shift) of the batch's
/// `mean` and `variance` over `rowsF32` rows (training), or of the running
/// statistics (inference).
void storeFinalizedColumn(OpBuilder &builder, Location loc,
                          BatchNormConfigAttr config,
                          BatchNormOperands operands,
                          const FinalizeArguments &a, Value n, Value mean,
                          Value variance, Value rowsF32) {
  KernelEmitter e(builder, loc);
  Type statType = operands.statType, f32 = builder.getF32Type();
  if (!config.isTraining()) {
    mean = e.loadColumn(a.runningMean, statType, n);
    variance = e.loadColumn(a.runningVar, statType, n);
  }
  if (a.newMean) {
    unsigned statBytes = elementBytes(statType);
    auto update = [&](Value running, Value batch) {
      return e.narrow(
          buildRunningStatisticUpdate(builder, loc, config, running, batch),
          statType);
    };
    e.store(update(e.loadColumn(a.runningMean, statType, n), mean), a.newMean,
            statType, n, statBytes);
    e.store(update(e.loadColumn(a.runningVar, statType, n),
                   buildUnbiasedVariance(builder, loc, variance, rowsF32)),
            a.newVar, statType, n, statBytes);
  }
  Value invStd = buildInvStd(builder, loc, variance, config.getEpsilonValue());
  if (a.batchMean) {
    Type type = operands.batchStatType;
    unsigned bytes = elementBytes(type);
    e.store(e.narrow(mean, type), a.batchMean, type, n, bytes);
    e.store(e.narrow(invStd, type), a.batchInvStd, type, n, bytes);
  }
  Value weightValue = a.weight ? e.loadColumn(a.weight, statType, n) : Value();
  Value biasValue = a.bias ? e.loadColumn(a.bias, statType, n) : Value();
  BatchNormCoefficients coefficients = buildBatchNormCoefficients(
      builder, loc, mean, invStd, weightValue, biasValue);
  e.store(coefficients.center, a.centerOut, f32, n, 4);
  e.store(coefficients.scale, a.scaleOut, f32, n, 4);
  e.store(coefficients.shift, a.shiftOut, f32, n, 4);
}

} // namespace

Kernel mlir::fusion::buildBatchNormFinalizeKernel(OpBuilder &builder,
                                                  Location loc, StringRef name,
                                                  int64_t columns,
                                                  BatchNormConfigAttr config,
                                                  BatchNormOperands operands) {
  OpBuilder::InsertionGuard insertion(builder);
  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
  Type i64 = builder.getI64Type();
  SmallVector<Type> argTypes{ptr, ptr, i64, i64, i64};
  bool updates = config.isTraining() && operands.runningStats;
  bool writesBatchStats = static_cast<bool>(operands.batchStatType);
  argTypes.append(operands.weight + operands.bias + 2 * operands.runningStats +
                      2 * updates + 2 * writesBatchStats,
                  ptr);
  argTypes.append(3, ptr);
  gpu::GPUFuncOp kernel = createKernel(builder, loc, name, argTypes);
  LaunchContract launch;
  emitPredecessorWait(builder, loc, kernel, launch);
  KernelEmitter e(builder, loc);
  auto args = kernel.getArguments();
  FinalizeArguments finalizeArgs =
      FinalizeArguments::take(args, operands, updates);

  // kFinalizeLanes lanes a column. The groups past the last column merge
  // the last one's chunks and store nothing, so that the shuffles below see
  // all 32 lanes of each warp; whole warps past it return.
  Value thread = e.globalThreadX();
  Value group =
      arith::DivUIOp::create(builder, loc, thread, e.i64(kFinalizeLanes));
  Value lane =
      arith::RemUIOp::create(builder, loc, thread, e.i64(kFinalizeLanes));
  Value inRange = e.lessThan(group, e.i64(columns));
  Value n =
      arith::SelectOp::create(builder, loc, inRange, group, e.i64(columns - 1));
  Value firstOfWarp = arith::SubIOp::create(
      builder, loc, group,
      arith::RemUIOp::create(builder, loc, group,
                             e.i64(kWarpSize / kFinalizeLanes)));
  emitGuarded(builder, loc, e.lessThan(firstOfWarp, e.i64(columns)), [&] {
    Value mean, variance, rowsF32;
    if (config.isTraining()) {
      Moments total = mergeAcrossLanes(
          builder, loc, mergeLaneChunks(builder, loc, args, lane, n), args[4]);
      rowsF32 =
          arith::SIToFPOp::create(builder, loc, builder.getF32Type(), args[2]);
      mean = total.mean;
      variance = arith::DivFOp::create(builder, loc, total.m2, rowsF32);
    }
    Value isLeader = arith::AndIOp::create(
        builder, loc, inRange,
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, lane,
                              e.i64(0)));
    auto leader = scf::IfOp::create(builder, loc, isLeader, false);
    OpBuilder::InsertionGuard leaderGuard(builder);
    builder.setInsertionPointToStart(&leader.getThenRegion().front());
    storeFinalizedColumn(builder, loc, config, operands, finalizeArgs, n, mean,
                         variance, rowsF32);
  });
  // kFinalizeLanes threads a column. Without statistics (inference) the
  // row and chunk counts are unused.
  launch.gridX = RowExpr::constant((columns * kFinalizeLanes + kBlockSize - 1) /
                                   kBlockSize);
  launch.blockSize = kBlockSize;
  bool training = config.isTraining();
  launch.arguments = {
      KernelArgument::fromOperand(0), KernelArgument::fromOperand(1),
      KernelArgument::fromValue(training ? RowExpr::rows()
                                         : RowExpr::constant(0)),
      KernelArgument::fromOperand(2),
      KernelArgument::fromValue(training ? RowExpr::ceilDivByOperand(2)
                                         : RowExpr::constant(0))};
  for (unsigned index = 3; index < argTypes.size() - 2; ++index)
    launch.arguments.push_back(KernelArgument::fromOperand(index));
  return {kernel, std::move(launch)};
}
