//===- Backend.cpp - which backend computes a fused GEMM ------------------===//
//
// fusion-select-gemm-config's first decision: cuBLASLt and an epilogue
// kernel, the tiled kernel or the wgmma kernel, by the strategy and, for
// `auto`, the rule measured on the H100.
//
//===----------------------------------------------------------------------===//

#include "fusion/Codegen/Config/GemmSelection.h"

using namespace mlir;
using namespace mlir::fusion;

/// The width of the wgmma kernel's tiles: two consumer warpgroups of
/// m64n256 (128 accumulators a thread); 3xTF32 keeps each K slice's sums
/// apart from the running ones, so m64n128.
int64_t mlir::fusion::getWgmmaBlockN(MmaKind mma, int64_t n) {
  return mma == MmaKind::tf32x3 || n <= 128 ? 128 : 256;
}

/// The width of `op`'s wgmma tiles.
int64_t mlir::fusion::getWgmmaBlockN(FusedLinearOp op) {
  // A dual GEMM's two sets of accumulators: m64n128 each.
  if (op.getDualWeight())
    return 128;
  int64_t blockN = getWgmmaBlockN(
      getRequiredMmaKind(op.getWeight().getType().getElementType(),
                         op.getComputePrecision()),
      op.getOutFeatures());
  // A grouped GEMM's tiles each lie within one part of its weight.
  SmallVector<int64_t> parts = getWeightPartWidths(op);
  while (blockN > kNarrowestWgmmaBlockN && !tilesWithinParts(parts, blockN))
    blockN /= 2;
  return blockN;
}

/// Whether reductions read `op`'s output after it is written: a GEMM of
/// tiles `blockN` wide does not take them all from its tiles.
static bool isWrittenForReductions(FusedLinearOp op, int64_t blockN) {
  if (llvm::none_of(op.getResult().getUsers(),
                    [](Operation *user) { return isa<ReduceOp>(user); }))
    return false;
  std::optional<GemmTileReductions> tiles = findGemmTileReductions(op, blockN);
  return !tiles || tiles->plan.readsMatrix;
}

/// Whether cuBLASLt adds `op`'s bias as a broadcast C matrix: 16-bit
/// GEMMs do, since its bias epilogue rounds the product to 16 bits before
/// adding the bias (runtime/lib/Gemm.cpp). Reading C costs cuBLASLt's GEMM
/// more than the wgmma kernel's exposed store costs where a row program
/// reads the written output (docs/architecture.md, runs 149-150).
static bool cublasAddsBiasAsMatrix(FusedLinearOp op) {
  return op.getBias() && isa<BFloat16Type, Float16Type>(
                             op.getWeight().getType().getElementType());
}

/// Whether `op` has a training batch-norm stage, whose column statistics
/// the wgmma kernel's epilogue computes from its accumulators where
/// cuBLASLt's GEMM leaves them to a pass over its output (KernelBench 84 in
/// tf32: 0.394 ms against 0.421, docs/log/benchmark-runs.md run 150).
static bool computesBatchStatistics(FusedLinearOp op) {
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  return batchNorm && batchNorm.isTraining();
}

/// Whether `op` computes f32 tensors in fp32.
bool mlir::fusion::isFp32(FusedLinearOp op) {
  return op.getWeight().getType().getElementType().isF32() &&
         op.getComputePrecision() == Precision::fp32;
}

/// Whether `op`'s weight is stored [out_features, in_features], the
/// layout every generated kernel reads (K-major).
static bool readsOutInWeight(FusedLinearOp op) {
  return op.getWeightLayout() == WeightLayout::out_in;
}

/// Whether the wgmma kernel computes `op` on `chip`: its MMA kind, K rows
/// of whole 16-byte chunks (TMA's strides), and a weight it reads (stored
/// in_out: 16-bit or 3xTF32, see whyNotInOutWeight).
static bool wgmmaComputes(FusedLinearOp op, const ChipInfo &chip) {
  Type elementType = op.getWeight().getType().getElementType();
  MmaKind mma = getRequiredMmaKind(elementType, op.getComputePrecision());
  bool readsWeight = readsOutInWeight(op) ||
                     (readsInOutWeight(mma) &&
                      hasChunkAlignedRows(elementType, op.getOutFeatures()));
  return chip.hasWgmma && readsWeight && isWgmmaKind(mma) &&
         hasChunkAlignedRows(elementType, op.getInFeatures()) &&
         tilesWithinParts(getWeightPartWidths(op), kNarrowestWgmmaBlockN) &&
         (!op.getWeightConcat() || !op.getDualWeight());
}

/// The instructions an element of `op`'s epilogue roughly takes: about 20
/// for a function of the math dialect (libdevice's code, or an expansion),
/// a remainder or a special function (a call, its formula or libdevice's
/// code out of line), 10 for a correctly rounded division (its slow path),
/// 1 for other ops; cheap math ops (sign and rounding ops, fma, square
/// roots) count 1.
static int64_t estimateElementInstructions(FusedLinearOp op) {
  int64_t instructions = 0;
  op.getEpilogue().walk<WalkOrder::PreOrder>([&](Operation *inner) {
    if (isa<SpecialOp>(inner)) {
      instructions += 20;
      return WalkResult::skip();
    }
    if (inner->hasTrait<OpTrait::IsTerminator>() ||
        inner->hasTrait<OpTrait::ConstantLike>())
      return WalkResult::advance();
    if (isa<math::AbsFOp, math::CopySignOp, math::FloorOp, math::CeilOp,
            math::TruncOp, math::RoundOp, math::RoundEvenOp, math::FmaOp,
            math::SqrtOp, math::RsqrtOp>(inner))
      instructions += 1;
    else if (isa<math::MathDialect>(inner->getDialect()) ||
             isa<arith::RemFOp>(inner))
      instructions += 20;
    else if (auto division = dyn_cast<arith::DivFOp>(inner))
      instructions += arith::bitEnumContainsAny(division.getFastmath(),
                                                arith::FastMathFlags::afn)
                          ? 1
                          : 10;
    else
      instructions += 1;
    return WalkResult::advance();
  });
  return instructions;
}

/// Past this many instructions an element (estimateElementInstructions),
/// the register epilogue loses to cuBLAS's GEMM and an epilogue kernel by
/// far: lgamma's and erfinv's formulas inline, lgamma(softplus(y)) (about
/// 310) and erfinv(tanh(y)) (about 270), took 2.5 to 3.2 times as long as
/// cuBLAS's GEMM and a pass in tf32 and bf16; tan(tanh(y)) (about 40), the
/// heaviest measured that fuses well, stays fused.
static constexpr int64_t kCostlyEpilogueInstructions = 200;

/// Whether `op`'s epilogue holds a function whose code makes cuBLAS's GEMM
/// and an epilogue kernel faster than the register epilogue in tf32 and 16
/// bits (measured on the H100 at 16384x4096 -> 4096): an accurate power
/// (libdevice's powf, called out of line: |y| ** 2.5 fused 6-13% slower, in
/// either schedule), or an accurate tangent with 16-bit results (its
/// reduction, polynomials and quotient inline: bf16 tan(y / 64) 4-7%
/// slower; tf32 fuses faster); a special function, called out of line
/// (lgamma(softplus(y)), erfinv(tanh(y)) and digamma(|y| + 1) up to 1.41x
/// as long as cuBLAS's GEMM and a pass); or so many instructions an element
/// that any epilogue of them is costly.
static bool hasCostlyFunction(FusedLinearOp op) {
  bool sixteenBit = isa<BFloat16Type, Float16Type>(
      cast<ShapedType>(op->getResult(0).getType()).getElementType());
  if (estimateElementInstructions(op) > kCostlyEpilogueInstructions)
    return true;
  return op.getEpilogue()
      .walk([&](Operation *inner) {
        if (isa<SpecialOp>(inner))
          return WalkResult::interrupt();
        if (!isa<math::PowFOp>(inner) &&
            !(sixteenBit && isa<math::TanOp>(inner)))
          return WalkResult::advance();
        auto flags = cast<arith::ArithFastMathInterface>(inner)
                         .getFastMathFlagsAttr()
                         .getValue();
        return arith::bitEnumContainsAny(flags, arith::FastMathFlags::afn)
                   ? WalkResult::advance()
                   : WalkResult::interrupt();
      })
      .wasInterrupted();
}

/// Whether `auto` weighs the wgmma kernel against cuBLASLt's GEMM for `op`
/// (3xTF32 takes it wherever it computes: about 2x cuBLAS's SGEMM): K rows
/// of whole 128-byte lines, since TMA's loads of others take two L2
/// requests a row (the bf16 GEMM at K = N = 1000 and 2056 measured 1.4-1.9x
/// cuBLAS's time on the H100).
static bool isWgmmaCandidate(FusedLinearOp op, const ChipInfo &chip,
                             Fp32Math fp32Math) {
  bool fp32 = isFp32(op);
  if (!wgmmaComputes(op, chip) || (fp32 && fp32Math == Fp32Math::simt))
    return false;
  return fp32 || hasLineAlignedRows(op.getWeight().getType().getElementType(),
                                    op.getInFeatures());
}

bool mlir::fusion::isPlainGroupedGemm(FusedLinearOp op) {
  Block &epilogue = op.getEpilogueBlock();
  return op.getWeightConcat() &&
         isa<BFloat16Type, Float16Type>(
             op.getWeight().getType().getElementType()) &&
         !op.getBatchNormAttr() && !op.getDualWeight() &&
         epilogue.getNumArguments() == 1 && op.getIntermediates().empty() &&
         op.getEpilogueYield().getValues()[0] == epilogue.getArgument(0);
}

GemmBackend mlir::fusion::selectBackend(FusedLinearOp op,
                                        const GemmSelection &selection) {
  const ChipInfo &chip = selection.chip;
  const SelectGemmConfigOptions &options = selection.options;
  bool fp32 = isFp32(op);
  // A dual GEMM: the wgmma kernel where it computes one (not 3xTF32); any
  // other backend's config makes the selection split it into two GEMMs.
  if (op.getDualWeight() && !fp32 &&
      (options.strategy == GemmStrategy::wgmma
           ? wgmmaComputes(op, chip)
           : options.strategy == GemmStrategy::Auto &&
                 isWgmmaCandidate(op, chip, options.fp32Math) &&
                 !hasCostlyFunction(op)))
    return GemmBackend::wgmma;
  GemmBackend generated = fp32 && options.fp32Math == Fp32Math::simt
                              ? GemmBackend::simt
                              : GemmBackend::mma_sync;
  switch (options.strategy) {
  case GemmStrategy::cublas:
    return GemmBackend::cublaslt;
  case GemmStrategy::tiled:
    return generated;
  case GemmStrategy::wgmma:
    return wgmmaComputes(op, chip) ? GemmBackend::wgmma
                                   : GemmBackend::cublaslt;
  case GemmStrategy::Auto:
    // The rule measured on the H100: the wgmma kernel for f32 tensors in
    // fp32 (3xTF32) and for outputs only reductions of rows or groups read
    // (never written: at or below the raw GEMM's time); for tf32 and 16-bit
    // multiplies too (the epilogue fused, a residual matrix's reads
    // included: at or above cuBLAS's GEMM plus a pass), but not where
    // reductions read the written output (norms, softmax: the exposed store
    // loses 1-8% to cuBLAS's GEMM before the same row program; such ops take
    // the wgmma kernels for small batches alone, takesWgmmaForSmallBatches)
    // unless cuBLASLt would read a 16-bit bias as a matrix
    // (cublasAddsBiasAsMatrix) or a training batch norm's statistics come
    // from the epilogue (computesBatchStatistics), nor for epilogues with an
    // accurate power, a
    // tangent in 16 bits or special functions or hundreds of instructions an
    // element
    // (hasCostlyFunction; the 3xTF32 kernel hides them under its
    // multiplies). Elsewhere only 3xTF32 beats cuBLAS.
    // A grouped GEMM with nothing fused: cuBLASLt's GEMMs, one a part,
    // the wgmma kernel for small batches (takesWgmmaForSmallBatches).
    if (isWgmmaCandidate(op, chip, options.fp32Math) &&
        (fp32 || ((!isWrittenForReductions(op, getWgmmaBlockN(op)) ||
                   cublasAddsBiasAsMatrix(op) ||
                   computesBatchStatistics(op)) &&
                  !hasCostlyFunction(op) && !isPlainGroupedGemm(op))))
      return GemmBackend::wgmma;
    return fp32 && generated == GemmBackend::mma_sync && readsOutInWeight(op) &&
                   !op.getWeightConcat()
               ? GemmBackend::mma_sync
               : GemmBackend::cublaslt;
  }
  llvm_unreachable("unknown strategy");
}

bool mlir::fusion::takesWgmmaForSmallBatches(FusedLinearOp op,
                                             const GemmSelection &selection) {
  const ChipInfo &chip = selection.chip;
  const SelectGemmConfigOptions &options = selection.options;
  // Both paths write the same output for the same row program, which a
  // batch norm's moments (computed in different kernels) would not.
  return options.strategy == GemmStrategy::Auto && options.batchConfigs &&
         !selection.fixesTiling() && !op.getBatchNormAttr() &&
         isWgmmaCandidate(op, chip, options.fp32Math) && !isFp32(op) &&
         (isWrittenForReductions(op, getWgmmaBlockN(op)) ||
          isPlainGroupedGemm(op));
}
