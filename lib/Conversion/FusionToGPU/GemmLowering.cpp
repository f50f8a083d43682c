//===- GemmLowering.cpp - the host code of fused_linear ops ---------------===//

#include "HostLowering.h"

#include "fusion/Codegen/Kernels/TiledGemmKernel.h"
#include "fusion/Codegen/Kernels/WgmmaGemmKernel.h"
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::host;

GemmKernelProblem GemmLowering::getGemmProblem(FusedLinearOp op) {
  RankedTensorType weightType = tensorType(op.getWeight());
  GemmKernelProblem problem;
  problem.elementType = weightType.getElementType();
  problem.n = op.getOutFeatures();
  problem.k = op.getInFeatures();
  problem.alpha = op.getAlpha().convertToDouble();
  problem.hasBias = static_cast<bool>(op.getBias());
  problem.columns = columnOperandsOf(op.getEpilogueOperands());
  problem.rows = rowOperandSourcesOf(op.getEpilogueRows());
  for (auto [i, row] : llvm::enumerate(op.getEpilogueRows()))
    if (row == op.getInput()) {
      problem.inputRowOperand = i;
      break;
    }
  problem.epilogue = epilogueFn(op);
  for (unsigned i = 1; i <= op.getIntermediates().size(); ++i)
    problem.intermediates.push_back(epilogueFn(op, i));
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  problem.statistics = batchNorm && batchNorm.isTraining();
  problem.dualWeight = static_cast<bool>(op.getDualWeight());
  problem.weightLayout = op.getWeightLayout();
  problem.weightParts = getWeightPartWidths(op);
  problem.biasInParts = op.getWeightConcat() && op.getBiasConcat();
  return problem;
}

SmallVector<Value> GemmLowering::getWeightParts(FusedLinearOp op) {
  if (ConcatOp concat = op.getWeightConcat())
    return concat.getInputs();
  return {op.getWeight()};
}

SmallVector<Value> GemmLowering::getBiasParts(FusedLinearOp op) {
  if (ConcatOp concat = op.getBiasConcat())
    return concat.getInputs();
  return {op.getBias()};
}

SmallVector<Value> GemmLowering::getGemmOperands(FusedLinearOp op,
                                                 bool storesOutput,
                                                 size_t &outputOperand,
                                                 Value output,
                                                 ValueRange intermediates) {
  SmallVector<Value> operands{buffers.lookup(op.getInput()).ptr,
                              buffers.lookup(getWeightParts(op)[0]).ptr};
  if (op.getBias())
    operands.push_back(buffers.lookup(getBiasParts(op)[0]).ptr);
  outputOperand = operands.size();
  if (storesOutput)
    operands.push_back(buffers.lookup(output).ptr);
  operands.append(bufferPtrs(intermediates));
  operands.append(bufferPtrs(op.getEpilogueOperands()));
  operands.append(bufferPtrs(op.getEpilogueRows()));
  // The last launch operand (GemmKernelProblem::dualWeightOperand): a dual
  // GEMM has no statistics or partials after it.
  if (Value dual = op.getDualWeight())
    operands.push_back(buffers.lookup(dual).ptr);
  return operands;
}

void GemmLowering::emitOutputWritingGemm(FusedLinearOp op,
                                         const GemmPath &path) {
  size_t outputOperand;
  SmallVector<Value> operands = getGemmOperands(
      op, true, outputOperand, op.getResult(), op.getIntermediates());
  launchGemmKernels(op, getGemmProblem(op), path.kernels, operands);
}

void GemmLowering::emitGeneralGemm(FusedLinearOp op, const GemmPath &path,
                                   ElementwiseOpInterface after) {
  GemmKernelProblem problem = getGemmProblem(op);
  auto tiles = tileReductions.find(op.getResult());
  bool reducesTiles = tiles != tileReductions.end();
  if (reducesTiles) {
    problem.storesOutput = tiles->second.writesOutput;
    problem.reductionSpan = tiles->second.span;
    for (const TileReducedStep &step : tiles->second.steps)
      problem.rowReductions.push_back(step.reduction);
  }
  // The general kernel of a batch norm writes the epilogue's output for
  // the normalizing pass: where an intermediate result is that value (the
  // batch norm's input, which a training step saves), it goes there, and
  // the pass reads it from there.
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  Value output = op.getResult();
  SmallVector<Value> intermediates(op.getIntermediates());
  ValueRange yielded = op.getEpilogueYield().getValues();
  for (unsigned i = 1; batchNorm && i < yielded.size(); ++i) {
    if (yielded[i] != yielded[0])
      continue;
    output = op.getIntermediates()[i - 1];
    problem.intermediates.erase(problem.intermediates.begin() + (i - 1));
    intermediates.erase(intermediates.begin() + (i - 1));
    break;
  }
  size_t outputOperand;
  SmallVector<Value> operands = getGemmOperands(
      op, problem.storesOutput, outputOperand, output, intermediates);
  if (problem.statistics) {
    const BatchNormScratch &s = scratch.at(op);
    operands.append({s.mean, s.m2});
  }
  if (reducesTiles)
    operands.append(tiles->second.partials);
  launchGemmKernels(op, problem, path.kernels, operands);
  if (!batchNorm)
    return;
  // The kernel wrote the epilogue's output and its moments: what is left
  // is the finalize kernel and one normalizing pass.
  MatrixShape shape{problem.elementType, problem.n,
                    getVectorWidth(problem.elementType, problem.n)};
  emitBatchNorm(op, buffers.lookup(output), buffers.lookup(op.getResult()),
                shape, ValueRange(), identityFn(), BatchNormValues::of(op),
                after, /*extra=*/{}, /*statistics=*/false);
}

void GemmLowering::emitBatchNormFinishingGemm(FusedLinearOp op,
                                              const GemmPath &path,
                                              ElementwiseOpInterface after) {
  GemmKernelProblem problem = getGemmProblem(op);
  GemmBatchNorm &bn = problem.batchNorm.emplace();
  BatchNormValues values = BatchNormValues::of(op);
  bn.config = values.config;
  bn.operands = values.present(problem.elementType);
  if (after) {
    bn.afterColumns = columnOperandsOf(after.getColumnOperands());
    bn.after = [after](OpBuilder &nb, Location nl, Value normalized,
                       ValueRange columns) mutable -> Value {
      return after.buildScalar(nb, nl, normalized, columns, ValueRange());
    };
  }
  // The normalized output (or the op's after it) is what the kernel writes.
  Value result = after ? after->getResult(0) : Value(op.getResult());
  size_t outputOperand;
  SmallVector<Value> operands =
      getGemmOperands(op, true, outputOperand, result, op.getIntermediates());
  appendBatchNormOperands(operands, values);
  if (after)
    operands.append(bufferPtrs(after.getColumnOperands()));
  launchGemmKernels(op, problem, path.kernels, operands);
}

void GemmLowering::launchGemmKernels(FusedLinearOp op,
                                     GemmKernelProblem problem,
                                     ArrayRef<GemmKernelCase> kernels,
                                     ArrayRef<Value> operands) {
  Value rows = buffers.lookup(op.getInput()).rows;
  SmallVector<Value> allOperands(operands);
  if (problem.biasInParts)
    allOperands.append(bufferPtrs(ValueRange(getBiasParts(op)).drop_front()));
  if (!problem.weightParts.empty())
    allOperands.append(bufferPtrs(ValueRange(getWeightParts(op)).drop_front()));
  emitForRows(rows, maxRowsOf(kernels), [&](unsigned i) {
    problem.config = kernels[i].config;
    launch(buildGemmKernel(op, problem, kernels[i].kind), rows, allOperands);
  });
}

Kernel GemmLowering::buildGemmKernel(FusedLinearOp op,
                                     const GemmKernelProblem &problem,
                                     StringRef kind) {
  return buildKernel([&] {
    std::string name = kernelName(op, kind);
    return problem.config.isWgmma()
               ? buildWgmmaGemmKernel(b, loc, name, problem)
               : buildTiledGemmKernel(b, loc, name, problem);
  });
}

void GemmLowering::emitFusedLinear(FusedLinearOp op,
                                   ElementwiseOpInterface after) {
  SmallVector<GemmPath> paths = planGemmPaths(op);
  emitForRows(buffers.lookup(op.getInput()).rows, maxRowsOf(paths),
              [&](unsigned i) {
                switch (paths[i].kind) {
                case GemmPath::Kind::WritesOutput:
                  return emitOutputWritingGemm(op, paths[i]);
                case GemmPath::Kind::FinishesBatchNorm:
                  return emitBatchNormFinishingGemm(op, paths[i], after);
                case GemmPath::Kind::General:
                  return emitGeneralGemm(op, paths[i], after);
                case GemmPath::Kind::Cublas:
                  return emitCublasFusedLinear(op, after);
                }
              });
}

void GemmLowering::emitCublasFusedLinear(FusedLinearOp op,
                                         ElementwiseOpInterface after) {
  Buffer x = buffers.lookup(op.getInput());
  Buffer out = buffers.lookup(op.getResult());
  Type elementType = tensorType(op.getWeight()).getElementType();
  int64_t n = op.getOutFeatures(), k = op.getInFeatures();

  // cuBLASLt's GEMM (alpha x w^T + bias) writes the op's first matrix whose
  // epilogue value that is: an intermediate before the result, which a
  // batch norm normalizes. The epilogue kernels compute the others from it.
  SmallVector<Value> matrices{op.getResult()};
  llvm::append_range(matrices, op.getIntermediates());
  ValueRange yielded = op.getEpilogueYield().getValues();
  Value acc = op.getEpilogueBlock().getArgument(0);
  std::optional<unsigned> gemmMatrix;
  for (unsigned i = 1; i < matrices.size() && !gemmMatrix; ++i)
    if (yielded[i] == acc)
      gemmMatrix = i;
  if (!gemmMatrix && yielded[0] == acc)
    gemmMatrix = 0;
  Buffer gemmOut = gemmMatrix ? buffers.lookup(matrices[*gemmMatrix]) : out;
  MLIRContext *context = b.getContext();
  // A grouped GEMM: each part of the weight (and of the bias) into its
  // columns of the output.
  SmallVector<Value> weights = getWeightParts(op), biases = getBiasParts(op);
  int64_t column = 0;
  auto atColumn = [&](Value vector) {
    return column ? offsetPtr(vector, c64(column * elementBytes(elementType)))
                  : vector;
  };
  for (auto [part, weight] : llvm::enumerate(weights)) {
    int64_t columns = tensorType(weight).getDimSize(
        op.getWeightLayout() == WeightLayout::in_out ? 1 : 0);
    Value bias = !op.getBias()        ? nullPtr()
                 : biases.size() == 1 ? atColumn(buffers.lookup(biases[0]).ptr)
                                      : buffers.lookup(biases[part]).ptr;
    checkStatus(fusion_rt::GemmOp::create(
        b, loc, i32Type,
        ElementTypeAttr::get(context, *getElementTypeKind(elementType)),
        PrecisionAttr::get(context, op.getComputePrecision()),
        op.getWeightLayoutAttr(), stream, x.ptr, buffers.lookup(weight).ptr,
        bias, atColumn(gemmOut.ptr), x.rows, b.getI64IntegerAttr(columns),
        b.getI64IntegerAttr(k),
        b.getF32FloatAttr(op.getAlpha().convertToDouble()),
        weights.size() > 1 ? b.getI64IntegerAttr(n) : IntegerAttr()));
    column += columns;
  }

  ExtraOutputs extra;
  for (unsigned i = 1; i < matrices.size(); ++i) {
    if (gemmMatrix == i)
      continue;
    extra.fns.push_back(epilogueFn(op, i));
    extra.ptrs.push_back(buffers.lookup(matrices[i]).ptr);
  }
  MatrixShape shape{elementType, n, getVectorWidth(elementType, n)};
  ScalarFn fn = epilogueFn(op);
  if (op.getBatchNormAttr()) {
    emitBatchNorm(op, gemmOut, out, shape, op.getEpilogueOperands(), fn,
                  BatchNormValues::of(op), after, extra);
    return;
  }
  // The kernel's first output: the result's, unless the GEMM wrote it.
  Value first = out.ptr;
  if (gemmMatrix == 0u) {
    if (extra.fns.empty())
      return;
    fn = extra.fns.front();
    first = extra.ptrs.front();
    extra.fns.erase(extra.fns.begin());
    extra.ptrs.erase(extra.ptrs.begin());
  }
  Kernel epilogue = buildKernel([&] {
    return buildElementwiseKernel(b, loc, kernelName(op, "epilogue"), shape,
                                  columnOperandsOf(op.getEpilogueOperands()),
                                  fn,
                                  rowOperandSourcesOf(op.getEpilogueRows()),
                                  extra.fns);
  });
  SmallVector<Value> operands{gemmOut.ptr, first};
  operands.append(bufferPtrs(op.getEpilogueOperands()));
  operands.append(bufferPtrs(op.getEpilogueRows()));
  operands.append(extra.ptrs);
  launch(epilogue, out.rows, operands);
}
