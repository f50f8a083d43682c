//===- RowProgramKernel.cpp - several row-local ops in one pass -----------===//

#include "fusion/Codegen/Kernels/RowProgramKernel.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// A chunk of the input row that a thread keeps in registers (the row is
/// read once where several steps read it, see cacheInputRow).
struct CachedChunk {
  Value chunk;
  Value index;  ///< of the chunk in the row
  Value column; ///< of its first element
  Value valid;  ///< whether it lies in the row; null where it always does
};

/// Builds a row program's kernel: `threads` threads a row (group), the
/// block's rows side by side, the steps in program order.
class RowProgramEmitter {
public:
  RowProgramEmitter(OpBuilder &builder, Location loc,
                    const RowProgram &program)
      : builder(builder), loc(loc), program(program), shape(program.shape),
        e(builder, loc),
        threads(threadsPerReduction(shape.columns / shape.vectorWidth,
                                    shape.vectorWidth)),
        rowsPerBlock(kBlockSize / threads) {}

  Kernel build(StringRef name);

private:
  /// A chunk's body in overRow: its first column, its elements as f32
  /// lanes, whether it lies in the row where that may not hold, and the
  /// state; returns the next state.
  using RowBody = function_ref<SmallVector<Value>(KernelEmitter &, Value column,
                                                  ArrayRef<Value> xs,
                                                  Value valid, ValueRange)>;

  Value pointer(unsigned index) const { return args[2 + index]; }
  void setUpRow();
  void cacheInputRow();
  SmallVector<SmallVector<Value>> operandLanes(KernelEmitter &le,
                                               const RowStep &step,
                                               const MatrixShape &over,
                                               Value column);
  SmallVector<Value> overRow(Value matrix, const MatrixShape &over,
                             ValueRange init, RowBody body);
  void emitReduce(size_t index);
  void emitScalar(size_t index);
  void emitMap(const RowStep &step);
  void storeRowValue(size_t index);

  OpBuilder &builder;
  Location loc;
  const RowProgram &program;
  const MatrixShape &shape;
  KernelEmitter e;
  int64_t threads, rowsPerBlock;
  ArrayRef<BlockArgument> args;
  Value scratch;
  /// The program's row `row` (row 0 past the end, where `inRange` is
  /// false) is group `group` of row `matrixRow` of the [M, N] matrices;
  /// the thread is lane `lane` of it.
  Value row, lane, inRange, matrixRow, group;
  Value storesRowValues;
  SmallVector<Value> stepValues;
  SmallVector<CachedChunk> cachedChunks;
  /// The lanes of the column and row operands at the chunks kept in
  /// registers, by chunk column, operand kind and index: loaded once for
  /// all the steps that read them, so that every step computes the same
  /// expression of a chunk, which CSE then evaluates once (softmax's
  /// maximum, sum and output of gelu(layer_norm(y))).
  DenseMap<std::tuple<Value, unsigned, unsigned>, SmallVector<Value>>
      keptOperandLanes;
  bool keepOperandLanes = false;
};

} // namespace

void RowProgramEmitter::setUpRow() {
  Value thread = e.id(gpu::Dimension::x, false);
  row = e.add(e.mul(e.id(gpu::Dimension::x, true), e.i64(rowsPerBlock)),
              arith::DivUIOp::create(builder, loc, thread, e.i64(threads)));
  lane = arith::RemUIOp::create(builder, loc, thread, e.i64(threads));
  // Every thread runs every step, so that the shuffles see whole warps
  // (short rows share one) and the barriers the whole block; rows past the
  // end compute on row 0 and store nothing.
  inRange = e.lessThan(row, args[1]);
  row = arith::SelectOp::create(builder, loc, inRange, row, e.i64(0));
  int64_t groups = program.groups;
  matrixRow = row;
  group = e.i64(0);
  if (groups > 1) {
    matrixRow = arith::DivUIOp::create(builder, loc, row, e.i64(groups));
    group = arith::RemUIOp::create(builder, loc, row, e.i64(groups));
  }
  storesRowValues = arith::AndIOp::create(
      builder, loc, inRange,
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, lane,
                            e.i64(0)));
}

/// A row of the input that several steps read (a norm's passes,
/// softmax's) is read from memory once when each thread's chunks, at most
/// kMaxCachedElements, fit in registers: each thread keeps them as loaded.
/// Where the chunks do not spread evenly, a thread's last chunk may lie
/// past the row: it loads the row's last chunk instead and leaves it out.
/// The operands' lanes are kept too where they fit beside the row.
void RowProgramEmitter::cacheInputRow() {
  int64_t inputChunks = shape.columns / shape.vectorWidth;
  int64_t chunksPerThread = (inputChunks + threads - 1) / threads;
  int64_t inputReaders = llvm::count_if(program.steps, [](const RowStep &s) {
    return s.kind == RowStep::Kind::Map ||
           (s.kind == RowStep::Kind::Reduce && !s.source);
  });
  if (inputReaders > 1 &&
      chunksPerThread * shape.vectorWidth <= kMaxCachedElements)
    for (int64_t j = 0; j < chunksPerThread; ++j) {
      CachedChunk cached;
      cached.index = e.add(lane, e.i64(j * threads));
      if ((j + 1) * threads > inputChunks) {
        cached.valid = e.lessThan(cached.index, e.i64(inputChunks));
        cached.index = arith::SelectOp::create(
            builder, loc, cached.valid, cached.index, e.i64(inputChunks - 1));
      }
      cached.column = e.mul(cached.index, e.i64(shape.vectorWidth));
      cached.chunk =
          e.loadChunk(args[0], shape.elementType,
                      e.add(e.mul(row, e.i64(shape.columns)), cached.column),
                      shape.vectorWidth);
      cachedChunks.push_back(cached);
    }
  llvm::SmallDenseSet<std::pair<unsigned, unsigned>> elementOperands;
  for (const RowStep &step : program.steps)
    if (step.kind == RowStep::Kind::Map ||
        (step.kind == RowStep::Kind::Reduce && !step.source))
      for (const RowOperand &operand : step.operands)
        if (operand.kind != RowOperand::Kind::StepValue)
          elementOperands.insert(
              {static_cast<unsigned>(operand.kind), operand.index});
  keepOperandLanes =
      !cachedChunks.empty() &&
      chunksPerThread * shape.vectorWidth * (1 + elementOperands.size()) <=
          kMaxCachedElements;
}

/// The operand lanes of `step` over the `over.vectorWidth` columns from
/// `column` of a matrix of shape `over`.
SmallVector<SmallVector<Value>>
RowProgramEmitter::operandLanes(KernelEmitter &le, const RowStep &step,
                                const MatrixShape &over, Value column) {
  int64_t width = over.vectorWidth;
  int64_t groups = program.groups;
  Value matrixColumn =
      groups > 1 ? le.add(le.mul(group, le.i64(over.columns)), column)
                 : column;
  SmallVector<SmallVector<Value>> lanes;
  for (const RowOperand &operand : step.operands) {
    auto key = std::make_tuple(column, static_cast<unsigned>(operand.kind),
                               operand.index);
    if (keepOperandLanes && operand.kind != RowOperand::Kind::StepValue) {
      auto kept = keptOperandLanes.find(key);
      if (kept != keptOperandLanes.end()) {
        lanes.push_back(kept->second);
        continue;
      }
    }
    switch (operand.kind) {
    case RowOperand::Kind::Column:
      lanes.push_back(le.loadColumnLanes(
          operand.column(), pointer(operand.index), matrixColumn, width));
      break;
    case RowOperand::Kind::Rows:
      lanes.push_back(le.loadRowLanes(
          operand.rows(), pointer(operand.index), operand.elementType,
          matrixRow, matrixColumn, width, over.columns * groups));
      break;
    case RowOperand::Kind::StepValue:
      lanes.push_back(SmallVector<Value>(width, stepValues[operand.index]));
      continue;
    }
    if (keepOperandLanes)
      keptOperandLanes[key] = lanes.back();
  }
  return lanes;
}

/// The operands of lane `l` of `lanes`.
static SmallVector<Value> laneOperands(ArrayRef<SmallVector<Value>> lanes,
                                       int64_t l) {
  return llvm::map_to_vector(
      lanes, [&](const SmallVector<Value> &values) { return values[l]; });
}

/// Thread `lane` visits the chunks of `over.vectorWidth` columns lane,
/// lane + threads, ... of its row of `matrix` (of shape `over`), in order,
/// through `body` (the state it returns for a chunk past the row is
/// dropped). The input's chunks come from the registers where they are
/// kept.
SmallVector<Value> RowProgramEmitter::overRow(Value matrix,
                                              const MatrixShape &over,
                                              ValueRange init, RowBody body) {
  int64_t width = over.vectorWidth;
  if (matrix == args[0] && !cachedChunks.empty()) {
    SmallVector<Value> state(init);
    for (const CachedChunk &cached : cachedChunks) {
      SmallVector<Value> next = body(e, cached.column,
                                     e.chunkLanes(cached.chunk), cached.valid,
                                     state);
      if (cached.valid)
        for (auto [value, previous] : llvm::zip(next, state))
          value = arith::SelectOp::create(builder, loc, cached.valid, value,
                                          previous);
      state = std::move(next);
    }
    return state;
  }
  auto index = [&](Value v) -> Value {
    return arith::IndexCastOp::create(builder, loc, builder.getIndexType(), v);
  };
  auto loop = scf::ForOp::create(
      builder, loc, index(lane),
      arith::ConstantIndexOp::create(builder, loc, over.columns / width),
      arith::ConstantIndexOp::create(builder, loc, threads), init,
      [&](OpBuilder &nb, Location nl, Value chunk, ValueRange state) {
        KernelEmitter le(nb, nl);
        Value column =
            le.mul(arith::IndexCastOp::create(nb, nl, nb.getI64Type(), chunk),
                   le.i64(width));
        SmallVector<Value> xs = le.loadLanes(
            matrix, over.elementType,
            le.add(le.mul(row, le.i64(over.columns)), column), width);
        scf::YieldOp::create(nb, nl, body(le, column, xs, Value(), state));
      });
  return SmallVector<Value>(loop.getResults());
}

void RowProgramEmitter::emitReduce(size_t index) {
  const RowStep &step = program.steps[index];
  const MatrixShape &over =
      step.source ? program.sourceShape.value_or(shape) : shape;
  SmallVector<Value> partial =
      overRow(step.source ? pointer(*step.source) : Value(args[0]), over,
              ValueRange{e.f32(getReductionIdentity(step.reduction))},
              [&](KernelEmitter &le, Value column, ArrayRef<Value> xs, Value,
                  ValueRange state) {
                auto lanes = operandLanes(le, step, over, column);
                Value acc = state.front();
                for (int64_t l = 0; l < over.vectorWidth; ++l)
                  acc = buildReductionCombine(
                      le.b, le.loc, step.reduction, acc,
                      step.fn(le.b, le.loc, xs[l], laneOperands(lanes, l)));
                return SmallVector<Value>{acc};
              });
  stepValues[index] = reduceAcrossThreads(builder, loc, step.reduction,
                                          partial.front(), lane, threads,
                                          scratch);
}

void RowProgramEmitter::emitScalar(size_t index) {
  const RowStep &step = program.steps[index];
  int64_t groups = program.groups;
  SmallVector<Value> operands;
  for (const RowOperand &operand : step.operands) {
    switch (operand.kind) {
    case RowOperand::Kind::Column:
      operands.push_back(
          e.loadColumn(operand.column(), pointer(operand.index), group));
      break;
    case RowOperand::Kind::Rows: {
      // Element (m, g / (G / groups)) of an [M, groups] matrix.
      Value element =
          operand.groups == groups
              ? row
              : e.add(e.mul(matrixRow, e.i64(operand.groups)),
                      arith::DivUIOp::create(builder, loc, group,
                                             e.i64(groups / operand.groups)));
      operands.push_back(
          operand.drawStream
              ? drawElement(builder, loc, e.drawKey(pointer(operand.index)),
                            *operand.drawStream, element, operand.elementType)
              : e.loadColumn(pointer(operand.index), operand.elementType,
                             element));
      break;
    }
    case RowOperand::Kind::StepValue:
      operands.push_back(stepValues[operand.index]);
      break;
    }
  }
  stepValues[index] = step.fn(builder, loc, stepValues[step.input], operands);
}

void RowProgramEmitter::emitMap(const RowStep &step) {
  Type resultType = program.resultType;
  overRow(args[0], shape, ValueRange(),
          [&](KernelEmitter &le, Value column, ArrayRef<Value> inputs,
              Value valid, ValueRange) {
            Value first = le.add(le.mul(row, le.i64(shape.columns)), column);
            SmallVector<Value> xs(inputs);
            auto lanes = operandLanes(le, step, shape, column);
            for (int64_t l = 0; l < shape.vectorWidth; ++l)
              xs[l] = step.fn(le.b, le.loc, xs[l], laneOperands(lanes, l));
            Value stores =
                valid ? arith::AndIOp::create(le.b, le.loc, inRange, valid)
                            .getResult()
                      : inRange;
            auto store = scf::IfOp::create(le.b, le.loc, stores, false);
            OpBuilder::InsertionGuard guard(le.b);
            le.b.setInsertionPointToStart(&store.getThenRegion().front());
            le.storeLanes(xs, pointer(*step.output), resultType, first);
            return SmallVector<Value>();
          });
}

/// The row value of step `index`, stored by the row's first lane.
void RowProgramEmitter::storeRowValue(size_t index) {
  Type resultType = program.resultType;
  auto leader = scf::IfOp::create(builder, loc, storesRowValues, false);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&leader.getThenRegion().front());
  e.store(e.narrow(stepValues[index], resultType),
          pointer(*program.steps[index].output), resultType, row,
          elementBytes(resultType));
}

Kernel RowProgramEmitter::build(StringRef name) {
  OpBuilder::InsertionGuard insertion(builder);
  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
  SmallVector<Type> argTypes{ptr, builder.getI64Type()};
  argTypes.append(program.pointers, ptr);
  gpu::GPUFuncOp kernel = createKernel(builder, loc, name, argTypes);
  LaunchContract launch;
  emitPredecessorWait(builder, loc, kernel, launch);
  scratch = addReductionScratch(builder, loc, kernel, threads);
  args = kernel.getArguments();
  setUpRow();
  stepValues.assign(program.steps.size(), Value());
  cacheInputRow();
  for (size_t index = 0; index < program.steps.size(); ++index) {
    const RowStep &step = program.steps[index];
    switch (step.kind) {
    case RowStep::Kind::Reduce:
      emitReduce(index);
      break;
    case RowStep::Kind::Scalar:
      emitScalar(index);
      break;
    case RowStep::Kind::Map:
      emitMap(step);
      break;
    }
    if (step.kind != RowStep::Kind::Map && step.output)
      storeRowValue(index);
  }
  gpu::ReturnOp::create(builder, loc);

  int64_t groups = program.groups;
  launch.gridX = RowExpr::ceilDiv(groups, rowsPerBlock);
  launch.blockSize = kBlockSize;
  launch.arguments = {KernelArgument::fromOperand(0),
                      KernelArgument::fromValue(RowExpr::ceilDiv(groups, 1))};
  for (unsigned index = 0; index < program.pointers; ++index)
    launch.arguments.push_back(KernelArgument::fromOperand(1 + index));
  return {kernel, std::move(launch)};
}

Kernel mlir::fusion::buildRowProgramKernel(OpBuilder &builder, Location loc,
                                           StringRef name,
                                           const RowProgram &program) {
  return RowProgramEmitter(builder, loc, program).build(name);
}
