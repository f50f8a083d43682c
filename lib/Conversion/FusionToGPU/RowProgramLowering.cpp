//===- RowProgramLowering.cpp - the host code of row programs -------------===//

#include "HostLowering.h"

#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::host;

Block::iterator RowProgramLowering::emitRowProgram(ReduceOp first,
                                                   Block::iterator end) {
  RowProgramOps ops = collectRowProgram(first, end);
  auto found = tileReductions.find(ops.input);
  const TileReductions *tiles =
      found != tileReductions.end() ? &found->second : nullptr;
  // Batches below the tile reductions' min_rows reduce the output their
  // GEMM wrote (planGemmPaths' WritesOutput path).
  SmallVector<RowProgramCase> cases =
      planRowProgramCases(tiles ? tiles->minRows : 1);
  emitForRows(rowsOf(ops.input), maxRowsOf(cases), [&](unsigned i) {
    launchRowProgram(first, ops, cases[i].mergesTiles ? tiles : nullptr,
                     cases[i].kind);
  });
  return ops.end;
}

namespace {

/// The description of a row program (RowProgramKernel.h) from its ops, and
/// the tensors its kernel's pointer operands are, in order.
class RowProgramDescriber {
public:
  RowProgramDescriber(const RowProgramOps &ops, const TileReductions *tiles)
      : ops(ops), tiles(tiles) {}

  /// The program starting with the reduction `first`, its rows the groups
  /// of the input's rows; `f32` the partials' type.
  RowProgram describe(ReduceOp first, Type f32) {
    RowProgram program;
    program.groups = first.getGroups();
    RankedTensorType inputType = tensorType(ops.input);
    Type elementType = inputType.getElementType();
    int64_t groupColumns = inputType.getDimSize(1) / program.groups;
    program.resultType = elementType;
    program.shape = {elementType, groupColumns,
                     getVectorWidth(elementType, groupColumns)};
    // A merge's reductions read the [M, partials] f32 partial matrices;
    // without the input, the partials set the threads per row.
    if (tiles) {
      int64_t partialsPerGroup = tiles->partialColumns / program.groups;
      MatrixShape partialShape{f32, partialsPerGroup,
                               getVectorWidth(f32, partialsPerGroup)};
      if (readsInput())
        program.sourceShape = partialShape;
      else
        program.shape = partialShape;
    }
    nextTileStep = tiles ? tiles->steps.begin() : nullptr;
    for (auto [op, index] : ops.steps)
      program.steps.push_back(describeStep(op));
    program.pointers = pointers.size();
    return program;
  }

  /// Whether the program reads its input matrix: not when a GEMM reduced
  /// its tiles for all the program needs.
  bool readsInput() const { return !tiles || tiles->writesOutput; }
  /// The tensors (or partials' pointers) of the kernel's pointer operands.
  const llvm::MapVector<Value, unsigned> &getPointers() const {
    return pointers;
  }

private:
  RowStep describeStep(Operation *op);
  unsigned pointerOf(Value tensor) {
    return pointers.insert({tensor, pointers.size()}).first->second;
  }
  SmallVector<RowOperand> operandsOf(ValueRange columns, ValueRange rows);

  const RowProgramOps &ops;
  const TileReductions *tiles;
  llvm::MapVector<Value, unsigned> pointers;
  /// The tile reductions' steps and partials, in order.
  const TileReducedStep *nextTileStep = nullptr;
  unsigned nextPartial = 0;
};

} // namespace

SmallVector<RowOperand> RowProgramDescriber::operandsOf(ValueRange columns,
                                                        ValueRange rows) {
  SmallVector<RowOperand> operands;
  for (Value column : columns) {
    ColumnOperand operand = ColumnOperand::of(column);
    operands.push_back({RowOperand::Kind::Column, pointerOf(column),
                        operand.elementType, /*groups=*/1, operand.single});
  }
  for (Value row : rows) {
    if (ops.isRowValue(row)) {
      operands.push_back({RowOperand::Kind::StepValue,
                          ops.steps.lookup(row.getDefiningOp()), Type()});
      continue;
    }
    RankedTensorType type = tensorType(row);
    RowOperand operand{RowOperand::Kind::Rows, pointerOf(row),
                       type.getElementType(), type.getDimSize(1)};
    operand.drawStream = rowOperandSourcesOf(row).front().drawStream;
    operands.push_back(operand);
  }
  return operands;
}

RowStep RowProgramDescriber::describeStep(Operation *op) {
  RowStep step;
  if (isa<ReduceOp>(op) && tiles) {
    const TileReducedStep &tileStep = *nextTileStep++;
    SmallVector<unsigned> partials;
    for (unsigned i = 0; i < tileStep.reduction.partialCount(); ++i)
      partials.push_back(pointerOf(tiles->partials[nextPartial++]));
    step = mergeTileReductionStep(tileStep, partials, tiles->partialColumns);
  } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
    step.kind = RowStep::Kind::Reduce;
    step.reduction = reduce.getKind();
    step.operands =
        operandsOf(reduce.getColumnOperands(), reduce.getRowOperands());
    size_t columnCount = reduce.getColumnOperands().size();
    step.fn = [reduce, columnCount](OpBuilder &nb, Location, Value x,
                                    ValueRange operands) {
      ReduceOp op = reduce;
      return op.buildMap(nb, x, operands.take_front(columnCount),
                         operands.drop_front(columnCount));
    };
  } else {
    auto elementwise = cast<ElementwiseOpInterface>(op);
    Value from = elementwise.getMatrixInput();
    step.kind = from == ops.input ? RowStep::Kind::Map : RowStep::Kind::Scalar;
    if (step.kind == RowStep::Kind::Scalar)
      step.input = ops.steps.lookup(from.getDefiningOp());
    step.operands = operandsOf(elementwise.getColumnOperands(),
                               elementwise.getRowOperands());
    size_t columnCount = elementwise.getColumnOperands().size();
    step.fn = [elementwise, columnCount](OpBuilder &nb, Location nl, Value x,
                                         ValueRange operands) {
      ElementwiseOpInterface op = elementwise;
      return op.buildScalar(nb, nl, x, operands.take_front(columnCount),
                            operands.drop_front(columnCount));
    };
  }
  // Stored if anything after the program reads it (or it is an [M, N]
  // output, which nothing in the program reads).
  Value result = op->getResult(0);
  if (step.kind == RowStep::Kind::Map ||
      llvm::any_of(result.getUsers(),
                   [&](Operation *user) { return !ops.steps.count(user); }))
    step.output = pointerOf(result);
  return step;
}

void RowProgramLowering::launchRowProgram(ReduceOp first,
                                          const RowProgramOps &ops,
                                          const TileReductions *tiles,
                                          StringRef kind) {
  RowProgramDescriber describer(ops, tiles);
  RowProgram program = describer.describe(first, b.getF32Type());
  Kernel kernel = buildKernel([&] {
    return buildRowProgramKernel(b, loc, kernelName(first, kind), program);
  });
  // The reductions of a merge name their partial matrices; without the
  // input, its place holds the first.
  Value in = describer.readsInput() ? buffers.lookup(ops.input).ptr
                                    : tiles->partials.front();
  SmallVector<Value> operands{in};
  for (auto &entry : describer.getPointers())
    operands.push_back(isa<LLVM::LLVMPointerType>(entry.first.getType())
                           ? entry.first
                           : buffers.lookup(entry.first).ptr);
  launch(kernel, rowsOf(ops.input), operands);
}

LogicalResult RowProgramLowering::planGemmTileReductions(FusedLinearOp op) {
  LoweringAttr lowering = LoweringAttr::of(op);
  TileReductionsAttr attr =
      lowering ? lowering.getTileReductions() : TileReductionsAttr();
  if (!attr)
    return success();
  int64_t blockN = getConfig(op).getBlockN();
  if (!findGemmTileReductions(op, blockN))
    return op.emitOpError("has tile reductions, but its output is not read by "
                          "one row program whose reductions its tiles compute");
  std::optional<GemmTileReductions> found =
      findGemmTileReductions(op, blockN, attr.getSpan());
  if (!found)
    return op.emitOpError("has tile reductions over spans of ")
           << attr.getSpan() << " columns, which tiles " << blockN
           << " wide do not reduce: spans must divide the tiles and the "
              "reduction's groups";
  TileReductions tiles;
  for (const TileReduction &reduction : found->plan.reductions)
    tiles.steps.push_back(lowerTileReduction(reduction));
  tiles.writesOutput = found->plan.readsMatrix;
  tiles.span = found->span;
  tiles.minRows = attr.getMinRows();
  tiles.partialColumns =
      countPartialColumns(tensorType(op.getResult()).getDimSize(1), tiles.span);
  Value bytes = mul(rowsOf(op.getResult()), c64(tiles.partialColumns * 4));
  for (const TileReducedStep &step : tiles.steps)
    for (unsigned i = 0; i < step.reduction.partialCount(); ++i)
      tiles.partials.push_back(reserve(bytes));
  tileReductions[op.getResult()] = std::move(tiles);
  return success();
}
