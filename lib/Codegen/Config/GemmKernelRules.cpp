//===- GemmKernelRules.cpp - the generated GEMM kernels' rules ------------===//

#include "fusion/Codegen/Config/GemmKernelRules.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fusion;

GemmSharedLayout GemmSharedLayout::of(GemmConfigAttr config,
                                      int64_t elementBytes,
                                      int64_t columnVectors, bool columnMoments,
                                      bool normalizes, bool dualWeight) {
  GemmSharedLayout layout;
  // 8 elements of padding a row: the 8 rows one accumulator store of a warp
  // touches start 4 (16-bit types) or 8 (f32) banks apart, so the pairs of
  // its 32 lanes hit distinct banks.
  layout.stagingRowElements = config.getBlockN() + 8;
  int64_t staging =
      config.getBlockM() * layout.stagingRowElements * elementBytes;
  int64_t stageBytes =
      (config.getBlockM() + config.getBlockN() * (dualWeight ? 2 : 1)) *
      kGemmRowBytes;
  int64_t pipeline = config.getStages() * stageBytes;
  // 3xTF32: the remainders of each stage's shared-memory operand, whose
  // rows are the wgmmas' N.
  if (config.isWgmmaSplit())
    pipeline += config.getStages() * config.getWgmmaN() * kGemmRowBytes;
  layout.constants =
      llvm::alignTo(std::max(pipeline, staging), kGemmChunkBytes);
  int64_t scratch = columnVectors * config.getBlockN() * 4;
  layout.moments = 0;
  if (columnMoments && takesColumnMomentsInRegisters(config)) {
    // With operands = w_x a quad of lanes holds each column whole.
    if (!config.swapsOperands()) {
      layout.moments = layout.constants + scratch;
      int64_t warps = config.getTileThreads() / 32;
      scratch += (warps + 1) * config.getBlockN() * 4;
    }
  } else if (normalizes) {
    layout.moments = layout.constants + scratch;
    scratch += 3 * config.getBlockN() * 4;
  }
  layout.consumerScratchStride = config.isPingpong() ? scratch : 0;
  layout.total = layout.constants + scratch * (config.getConsumerThreads() /
                                               config.getTileThreads());
  // The cluster's first block takes its peers' f32 sums of the tile.
  layout.partials = 0;
  if (config.splitsK()) {
    layout.partials = llvm::alignTo(layout.total, kGemmChunkBytes);
    layout.total = layout.partials + (config.getSplitK() - 1) *
                                         config.getBlockM() *
                                         config.getBlockN() * 4;
  }
  layout.staticBytes = 0;
  if (config.isWgmma()) {
    // The shift to the first 1024-byte boundary; the mbarriers.
    layout.total += kSwizzleAtomBytes;
    layout.staticBytes = getWgmmaBarrierCount(config) * 8;
  }
  return layout;
}

bool mlir::fusion::computesDualWeight(GemmConfigAttr config) {
  if (!config.isWgmma() || config.isWgmmaSplit() || config.swapsOperands() ||
      config.splitsK())
    return false;
  int64_t accumulators =
      config.getWgmmaRowsPerWarpgroup() / 64 * config.getWgmmaN() / 2;
  return 2 * accumulators <= kMaxDualAccumulators;
}

ElementwiseOpInterface mlir::fusion::getNormalizedEpilogue(Operation *op) {
  auto after = dyn_cast_or_null<ElementwiseOpInterface>(op->getNextNode());
  Value normalized = op->getResult(0);
  if (!after || after.getMatrixInput() != normalized ||
      !after.getRowOperands().empty() || !normalized.hasOneUse())
    return {};
  return after;
}

bool mlir::fusion::canFinishBatchNorm(FusedLinearOp op) {
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  if (!batchNorm || !batchNorm.isTraining())
    return false;
  ElementwiseOpInterface after = getNormalizedEpilogue(op);
  // The op's [N] results are its statistics.
  return !after || llvm::none_of(after.getColumnOperands(), [&](Value column) {
    return column.getDefiningOp() == op.getOperation();
  });
}

GemmSharedLayout mlir::fusion::getGemmSharedLayout(FusedLinearOp op,
                                                   GemmConfigAttr config,
                                                   bool normalizesBatchNorm) {
  int64_t vectors = (op.getBias() ? 1 : 0) + op.getEpilogueOperands().size();
  if (ElementwiseOpInterface after =
          normalizesBatchNorm ? getNormalizedEpilogue(op) : nullptr)
    vectors += after.getColumnOperands().size();
  int64_t elementBytes =
      op.getWeight().getType().getElementType().getIntOrFloatBitWidth() / 8;
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  return GemmSharedLayout::of(
      config, elementBytes, vectors, batchNorm && batchNorm.isTraining(),
      normalizesBatchNorm, static_cast<bool>(op.getDualWeight()));
}

GemmSharedLayout mlir::fusion::getGemmSharedLayout(FusedLinearOp op,
                                                   GemmConfigAttr config) {
  LoweringAttr lowering = LoweringAttr::of(op);
  return getGemmSharedLayout(op, config,
                             lowering && lowering.getEpilogueBatchNorm());
}

bool mlir::fusion::hasChunkAlignedRows(Type elementType, int64_t k) {
  return k * (elementType.getIntOrFloatBitWidth() / 8) % kGemmChunkBytes == 0;
}

bool mlir::fusion::hasLineAlignedRows(Type elementType, int64_t k) {
  return k * (elementType.getIntOrFloatBitWidth() / 8) % kGemmRowBytes == 0;
}

int64_t mlir::fusion::countKSlices(Type elementType, int64_t k) {
  return llvm::divideCeil(k * (elementType.getIntOrFloatBitWidth() / 8),
                          kGemmRowBytes);
}

std::optional<int64_t>
mlir::fusion::getRowReductionSpan(int64_t blockN, Type elementType, int64_t n,
                                  int64_t groups, std::optional<int64_t> span) {
  int64_t groupSize = n / groups;
  std::optional<int64_t> derived;
  if (groups == 1 || groupSize % blockN == 0)
    derived = blockN;
  else if (blockN % groupSize == 0 &&
           hasChunkAlignedRows(elementType, groupSize))
    derived = groupSize;
  if (!span || derived == span)
    return derived;
  // Narrower spans tile the tiles and the groups (a span of whole tiles
  // takes a ragged last tile too).
  if (*span > 0 && *span != blockN && blockN % *span == 0 &&
      groupSize % *span == 0 && hasChunkAlignedRows(elementType, *span))
    return span;
  return std::nullopt;
}

SmallVector<int64_t> mlir::fusion::getWeightPartWidths(FusedLinearOp op) {
  SmallVector<int64_t> widths;
  if (ConcatOp concat = op.getWeightConcat())
    for (Value part : concat.getInputs())
      widths.push_back(
          cast<RankedTensorType>(part.getType()).getDimSize(concat.getDim()));
  return widths;
}

bool mlir::fusion::tilesWithinParts(ArrayRef<int64_t> widths, int64_t blockN) {
  // The last part's end is N, where any tile may end.
  for (size_t part = 0; part + 1 < widths.size(); ++part)
    if (widths[part] % blockN != 0)
      return false;
  return true;
}

std::string mlir::fusion::whyNotWeightParts(GemmConfigAttr config,
                                            ArrayRef<int64_t> widths,
                                            bool dual) {
  if (!config.isWgmma())
    return "only the wgmma kernel (a TMA map a part) and cuBLASLt (a GEMM a "
           "part) read one";
  if (dual)
    return "a dual GEMM's weights are read whole";
  if (!tilesWithinParts(widths, config.getBlockN()))
    return ("its parts do not start at whole tiles of " +
            Twine(config.getBlockN()) + " columns")
        .str();
  return {};
}

std::string mlir::fusion::whyNotInOutWeight(GemmConfigAttr config,
                                            Type elementType, int64_t n) {
  if (!config.isWgmma())
    return "only the wgmma kernel reads one";
  // A wgmma config's MMA kind is one of bf16, f16, tf32 and tf32x3 (its
  // attribute's verifier).
  MmaKind mma = *config.getMma();
  if (!readsInOutWeight(mma))
    return "wgmma reads tf32 operands K-major only, not N-major (3xTF32's "
           "splitters transpose w's stages; tf32 has none)";
  if (mma == MmaKind::tf32x3 && config.swapsOperands())
    return "3xTF32 with swapped operands splits w's tile in registers, which "
           "it loads K-major only";
  int64_t boxColumns =
      kGemmRowBytes / (elementType.getIntOrFloatBitWidth() / 8);
  int64_t share = config.getBlockN() / config.getClusterM();
  if (share % boxColumns != 0)
    return ("each block loads its " + Twine(share) +
            " columns of w's tile in boxes of " + Twine(boxColumns) +
            " columns")
        .str();
  if (!hasChunkAlignedRows(elementType, n))
    return ("its rows of N = " + Twine(n) +
            " elements are not multiples of 16 bytes (TMA's strides)")
        .str();
  return {};
}

MmaKind mlir::fusion::getRequiredMmaKind(Type elementType,
                                         Precision precision) {
  if (elementType.isBF16())
    return MmaKind::bf16;
  if (elementType.isF16())
    return MmaKind::f16;
  switch (precision) {
  case Precision::fp32:
    return MmaKind::tf32x3;
  case Precision::tf32:
    return MmaKind::tf32;
  case Precision::bf16:
    return MmaKind::f32_as_bf16;
  case Precision::f16:
    return MmaKind::f32_as_f16;
  }
  llvm_unreachable("unknown precision");
}

SmallVector<BatchGemmConfigAttr> mlir::fusion::getFinishingBatchConfigs(
    ArrayRef<BatchGemmConfigAttr> batchConfigs, int64_t maxRows) {
  return llvm::to_vector(
      llvm::make_filter_range(batchConfigs, [&](BatchGemmConfigAttr entry) {
        return entry.getMaxRows() < maxRows;
      }));
}

GemmConfigAttr
mlir::fusion::getGemmConfigForRows(GemmConfigAttr config,
                                   ArrayRef<BatchGemmConfigAttr> batchConfigs,
                                   int64_t rows) {
  for (BatchGemmConfigAttr entry : batchConfigs)
    if (rows <= entry.getMaxRows())
      return entry.getConfig();
  return config;
}
