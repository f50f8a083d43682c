//===- SelectGemmConfig.cpp - decide how each fused GEMM is lowered -------===//
//
// Fills in the lowering decisions the GPU backends consume: the module's
// #fusion.target and each fused_linear's #fusion.gemm_config (with
// #fusion.batch_gemm_config entries for small batches and
// #fusion.tile_reductions). Hand-written configs are kept.
//
//===----------------------------------------------------------------------===//

#include "fusion/Dialect/Fusion/IR/GemmConfig.h"
#include "fusion/Dialect/Fusion/IR/TileReductions.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_SELECTGEMMCONFIG
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

struct SelectGemmConfigPass
    : fusion::impl::SelectGemmConfigBase<SelectGemmConfigPass> {
  using SelectGemmConfigBase::SelectGemmConfigBase;

  void runOnOperation() override;

private:
  /// The backend `strategy` gives `op` on `chip`.
  GemmBackend selectBackend(FusedLinearOp op, const ChipInfo &chip) const;
  /// The config of `op` in `backend`, the heuristic tiling with the
  /// options' overrides, or null after a diagnostic.
  GemmConfigAttr selectConfig(FusedLinearOp op, const ChipInfo &chip,
                              GemmBackend backend) const;
  /// Whether `auto` gives `op` the wgmma kernels for small batches beside
  /// cuBLASLt's GEMM for the others.
  bool takesWgmmaForSmallBatches(FusedLinearOp op, const ChipInfo &chip) const;
  /// Narrower tilings of the generated `config` for batches whose tiles of
  /// `config` would leave more than half of the chip's SMs idle, in
  /// increasing max_rows; each reduces `tileSpan`'s spans (if any).
  SmallVector<BatchGemmConfigAttr>
  selectBatchConfigs(FusedLinearOp op, const ChipInfo &chip,
                     GemmConfigAttr config,
                     std::optional<int64_t> tileSpan) const;
  /// `config` with its blocks in clusters that share each tile's K slices
  /// (split_k), where its tiles at a batch of `rows` rows leave more than
  /// half of the chip's SMs idle; else `config`.
  GemmConfigAttr withSplitK(FusedLinearOp op, const ChipInfo &chip,
                            GemmConfigAttr config, int64_t rows,
                            std::optional<int64_t> tileSpan) const;
};

/// The width of the wgmma kernel's tiles: two consumer warpgroups of
/// m64n256 (128 accumulators a thread); 3xTF32 keeps each K slice's sums
/// apart from the running ones, so m64n128.
static int64_t getWgmmaBlockN(MmaKind mma, int64_t n) {
  return mma == MmaKind::tf32x3 || n <= 128 ? 128 : 256;
}

/// The narrowest wgmma tiles of a batch config (getNarrowerTiling).
constexpr int64_t kNarrowestWgmmaBlockN = 64;

/// The width of `op`'s wgmma tiles.
static int64_t getWgmmaBlockN(FusedLinearOp op) {
  auto weightType = op.getWeight().getType();
  return getWgmmaBlockN(getRequiredMmaKind(weightType.getElementType(),
                                           op.getComputePrecision()),
                        weightType.getDimSize(0));
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

/// Whether `op` computes f32 tensors in fp32.
static bool isFp32(FusedLinearOp op) {
  return op.getWeight().getType().getElementType().isF32() &&
         op.getComputePrecision() == Precision::fp32;
}

/// Whether the wgmma kernel computes `op` on `chip`: its MMA kind, and K
/// rows of whole 16-byte chunks (TMA's strides).
static bool wgmmaComputes(FusedLinearOp op, const ChipInfo &chip) {
  Type elementType = op.getWeight().getType().getElementType();
  return chip.hasWgmma &&
         isWgmmaKind(
             getRequiredMmaKind(elementType, op.getComputePrecision())) &&
         hasChunkAlignedRows(elementType,
                             op.getWeight().getType().getDimSize(1));
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
/// cuBLAS's GEMM and a pass in tf32 and bf16 (benchmark run 51);
/// tan(tanh(y)) (about 40), the heaviest measured that fuses well, stays
/// fused.
static constexpr int64_t kCostlyEpilogueInstructions = 200;

/// Whether `op`'s epilogue holds a function whose code makes cuBLAS's GEMM
/// and an epilogue kernel faster than the register epilogue in tf32 and 16
/// bits (benchmark run 50, at 16384x4096 -> 4096): an accurate
/// power (libdevice's powf, called out of line: |y| ** 2.5 in tf32 1.77 ms
/// against 1.67, in bf16 1.03 against 0.91; the ping-pong schedule 1.81 and
/// 0.98), or an accurate tangent with 16-bit results (its reduction,
/// polynomials and quotient inline: bf16 tan(y / 64) 0.85-0.88 against
/// 0.82; in tf32 1.62-1.66 against 1.69); a special function, called out of
/// line (lgamma(softplus(y)), erfinv(tanh(y)) and digamma(|y| + 1) 1.03 to
/// 1.41 times as long as cuBLAS's GEMM and a pass; run 52); or so many
/// instructions an element that any epilogue of them is costly.
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
/// cuBLAS's; benchmark runs 34, 35).
static bool isWgmmaCandidate(FusedLinearOp op, const ChipInfo &chip,
                             Fp32Math fp32Math) {
  bool fp32 = isFp32(op);
  if (!wgmmaComputes(op, chip) || (fp32 && fp32Math == Fp32Math::simt))
    return false;
  auto weightType = op.getWeight().getType();
  return fp32 ||
         hasLineAlignedRows(weightType.getElementType(), weightType.getDimSize(1));
}

GemmBackend SelectGemmConfigPass::selectBackend(FusedLinearOp op,
                                                const ChipInfo &chip) const {
  bool fp32 = isFp32(op);
  GemmBackend generated = fp32 && fp32Math == Fp32Math::simt
                              ? GemmBackend::simt
                              : GemmBackend::mma_sync;
  switch (strategy) {
  case GemmStrategy::cublas:
    return GemmBackend::cublaslt;
  case GemmStrategy::tiled:
    return generated;
  case GemmStrategy::wgmma:
    return wgmmaComputes(op, chip) ? GemmBackend::wgmma
                                   : GemmBackend::cublaslt;
  case GemmStrategy::Auto:
    // The rule measured on the H100 (benchmark runs 9 to 11, 19
    // and 24): the wgmma kernel for f32 tensors in fp32 (3xTF32) and for
    // outputs only reductions of rows or groups read (never written: at or
    // below the raw GEMM's time); for tf32 and 16-bit multiplies too (the
    // epilogue fused, a residual matrix's reads included: at or above
    // cuBLAS's GEMM plus a pass), but not where reductions read the
    // written output (norms, softmax: the exposed store loses 1-8% to
    // cuBLAS's GEMM before the same row program; such ops take the wgmma
    // kernels for small batches alone, takesWgmmaForSmallBatches), nor for
    // epilogues with an accurate power, a tangent in 16 bits (run 50) or
    // special functions or hundreds of instructions an element (runs 51
    // and 52; the 3xTF32 kernel hides
    // them under its multiplies). Elsewhere only 3xTF32
    // beats cuBLAS.
    if (isWgmmaCandidate(op, chip, fp32Math) &&
        (fp32 || (!isWrittenForReductions(op, getWgmmaBlockN(op)) &&
                  !hasCostlyFunction(op))))
      return GemmBackend::wgmma;
    return fp32 && generated == GemmBackend::mma_sync ? GemmBackend::mma_sync
                                                      : GemmBackend::cublaslt;
  }
  llvm_unreachable("unknown strategy");
}

bool SelectGemmConfigPass::takesWgmmaForSmallBatches(
    FusedLinearOp op, const ChipInfo &chip) const {
  // Both paths write the same output for the same row program, which a
  // batch norm's moments (computed in different kernels) would not.
  return strategy == GemmStrategy::Auto && batchConfigs && tile.empty() &&
         warps.empty() && !stages && !op.getBatchNormAttr() &&
         isWgmmaCandidate(op, chip, fp32Math) && !isFp32(op) &&
         isWrittenForReductions(op, getWgmmaBlockN(op));
}

/// The config `build(stages)` with as deep a pipeline as the chip's shared
/// memory holds, up to `maxStages`: 3 for 128x256 blocks on sm_80
/// (163 KiB), 4 on sm_90 (227 KiB).
static GemmConfigAttr
withDeepestPipeline(FusedLinearOp op, const ChipInfo &chip, int64_t maxStages,
                    function_ref<GemmConfigAttr(int64_t)> build) {
  GemmConfigAttr config = build(maxStages);
  for (int64_t depth = maxStages - 1; config && depth >= 2; --depth) {
    if (getGemmSharedLayout(op, config).footprint() <=
        chip.maxSharedBytesPerBlock)
      break;
    config = build(depth);
  }
  return config;
}

/// A block's tile, its warps and the deepest ring it takes; with
/// `swapped`, cooperative wgmma tiles of operands = w_x.
struct Tiling {
  int64_t blockM, blockN, warpsM, warpsN, maxStages;
  bool swapped = false;
};

/// `config`'s tile of 64 rows, one consumer warpgroup: wgmma's cooperative
/// 128-row tiles. Its ring goes deeper than a 128-row tile's (12 stages of
/// 64x64, 8 of 64x128: run 38).
static std::optional<Tiling> getHalfRowTiling(GemmConfigAttr config) {
  if (!config.isWgmma() || config.getBlockM() != 128 || config.isPingpong())
    return std::nullopt;
  int64_t blockN = config.getBlockN();
  return Tiling{64, blockN, config.getWarpsM() / 2, config.getWarpsN(),
                /*maxStages=*/blockN == 64 ? 12 : 8};
}

/// Tiles of `rows` (16 or 32) batch rows by `blockN` (64 or 128) of w's,
/// with swapped operands (one consumer warpgroup, each wgmma m64 of w's
/// rows by N = `rows` of x's), for batches of at most `rows` rows: a
/// 64-row tile multiplies and loads past the batch's rows, and at 1 to 32
/// rows by 8192 columns the whole op took 0.66-0.85x its time: cuBLAS's
/// GEMM's in bf16, 0.73-0.83x it in tf32 (benchmark run 39).
/// Their 10-20 KiB stages take the deepest ring. Not for ping-pong configs
/// (operands = w_x is the cooperative kernel's), nor 3xTF32 tiles of 128 of
/// w's rows (a consumer warpgroup holds the register parts of 64).
/// Epilogue row operands are loaded an element at a time.
static std::optional<Tiling> getSwappedSmallBatchTiling(GemmConfigAttr config,
                                                        int64_t rows,
                                                        int64_t blockN) {
  if (!config.isWgmma() || config.isPingpong() ||
      (config.isWgmmaSplit() && blockN != 64))
    return std::nullopt;
  return Tiling{rows, blockN, 4, 1, /*maxStages=*/16, /*swapped=*/true};
}

/// The next narrower tiling of `config`, each measured faster where the
/// narrower tiles still fit the GPU in one wave: wgmma tiles halve down to
/// 64 columns (benchmark run 18), then to 64 rows of one
/// consumer warpgroup (run 38), the tiled kernel's 128x256 blocks of 2x4
/// warps become 128x128 of 2x2. `splitRows` allows the 64-row tiles.
///
/// A small batch streams w once, each block reading all of x besides its
/// slab of w: the main loop waits on its loads' latency, not the tensor
/// cores, so wgmma's narrower tiles take deeper rings where shared memory
/// holds them (run 38): up to 8 stages of 128-row tiles (128 x 8192 ->
/// 8192 21% faster than with 4; 9 stages of 128x64 were slower again).
static std::optional<Tiling> getNarrowerTiling(GemmConfigAttr config,
                                               bool splitRows) {
  int64_t blockM = config.getBlockM(), blockN = config.getBlockN();
  if (config.isWgmma() && blockN / 2 >= kNarrowestWgmmaBlockN)
    return Tiling{blockM, blockN / 2, config.getWarpsM(), config.getWarpsN(),
                  /*maxStages=*/8};
  if (splitRows && blockN == 64)
    return getHalfRowTiling(config);
  if (config.getBackend() == GemmBackend::mma_sync && blockN == 256 &&
      config.getWarpsN() == 4)
    return Tiling{blockM, 128, config.getWarpsM(), 2, /*maxStages=*/4};
  return std::nullopt;
}

GemmConfigAttr SelectGemmConfigPass::selectConfig(FusedLinearOp op,
                                                  const ChipInfo &chip,
                                                  GemmBackend backend) const {
  MLIRContext *context = op.getContext();
  if (backend == GemmBackend::cublaslt)
    return GemmConfigAttr::get(context, backend);

  auto weightType = op.getWeight().getType();
  Type elementType = weightType.getElementType();
  int64_t n = weightType.getDimSize(0), k = weightType.getDimSize(1);
  std::optional<MmaKind> mma;
  if (backend == GemmBackend::mma_sync || backend == GemmBackend::wgmma)
    mma = getRequiredMmaKind(elementType, op.getComputePrecision());

  // 128x256 blocks of 8 warps, 64x64 warp tiles (128 accumulator registers
  // a thread), 48 KiB of shared memory per stage. Narrow outputs take
  // 128x128 blocks of 4 warps, so that more blocks fill the GPU. 3xTF32's
  // second set of accumulators needs 64x32 warp tiles to stay in registers;
  // so do the element loads of K rows not 16-byte aligned, a path bound by
  // its loads anyway; SIMT has 8x8 accumulators a thread. (f32 operands
  // rounded to 16 bits keep 64x64 warp tiles: on the H100 1.4-1.5x faster
  // than 64x32, despite a few spilled registers.)
  int64_t blockM = 128, blockN = 256, warpsM = 2, warpsN = 4;
  if (n <= 128) {
    blockN = 128;
    warpsN = 2;
  }
  if (mma == MmaKind::tf32x3 || backend == GemmBackend::simt ||
      !hasChunkAlignedRows(elementType, k)) {
    blockN = 128;
    warpsN = 4;
  }
  WgmmaSchedule wgmmaSchedule = WgmmaSchedule::cooperative;
  WgmmaOperands operands = WgmmaOperands::x_w;
  int64_t maxStages = 4, clusterM = 1;
  if (backend == GemmBackend::wgmma) {
    blockN = getWgmmaBlockN(*mma, n);
    warpsM = 8;
    warpsN = 1;
    // Row reductions staged in the ring keep the cooperative schedule and
    // unclustered blocks (verifyTileReductions).
    std::optional<GemmTileReductions> tiles =
        findGemmTileReductions(op, blockN);
    bool stagesTile = tiles && tiles->span % 8 != 0;
    // A ping-pong consumer's tile is its warpgroup's alone: 128x128 (two
    // m64n128 wgmmas a K step, CUTLASS's ping-pong tile; run 22 timed it as
    // fast as 64x256), in 32 KiB stages; 3xTF32's x parts in registers
    // cover 64 rows (64x128).
    if (schedule == WgmmaSchedule::pingpong && !stagesTile) {
      wgmmaSchedule = schedule;
      blockM = *mma == MmaKind::tf32x3 ? 64 : 128;
      blockN = std::min<int64_t>(blockN, 128);
      warpsM = 4;
      maxStages = 6;
    }
    if (!stagesTile)
      clusterM = cluster;
    // A training batch norm's column moments: with the tile transposed in
    // the accumulators each quad of lanes holds whole columns, which it
    // sums with two shuffles, where the tile's rows take three rounds of
    // transposing butterflies and a merge of the warps through shared
    // memory (benchmark run 37).
    BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
    if (batchNorm && batchNorm.isTraining() && op.getEpilogueRows().empty() &&
        wgmmaSchedule == WgmmaSchedule::cooperative && clusterM == 1 &&
        *mma != MmaKind::tf32x3 && tile.empty() && warps.empty() &&
        swapOperands)
      operands = WgmmaOperands::w_x;
  }
  if (!tile.empty()) {
    blockM = tile[0];
    blockN = tile[1];
  }
  if (!warps.empty()) {
    warpsM = warps[0];
    warpsN = warps[1];
  }
  constexpr int64_t groupM = 8;
  auto build = [&](int64_t stageCount) {
    return GemmConfigAttr::getChecked(
        [&] { return op.emitOpError(); }, context, backend, mma, blockM, blockN,
        warpsM, warpsN, stageCount, groupM, wgmmaSchedule, clusterM, operands,
        /*splitK=*/int64_t(1));
  };
  if (stages)
    return build(stages);
  return withDeepestPipeline(op, chip, maxStages, build);
}

/// The K slices each block of a split_k cluster takes at least, for tiles
/// whose main loop split_k speeds up, or nullopt: 3xTF32's, bound by their
/// arithmetic (three products and the operands' split), and tf32's of 128
/// rows (the most tensor work a byte of w). Small batches of tf32 and
/// 16-bit tiles of 16 to 64 rows stream w at the DRAM's rate from the SMs
/// they have (run 42: 1-64 rows by 4096 columns within -4% to +8% of their
/// time with twice the blocks, and 16-bit ones 1.36x slower at K = 1000).
static std::optional<int64_t> getMinSlicesPerShare(GemmConfigAttr config) {
  if (config.isWgmmaSplit())
    return 16;
  if (config.getMma() == MmaKind::tf32 && !config.swapsOperands() &&
      config.getBlockM() == 128)
    return 32;
  return std::nullopt;
}

GemmConfigAttr
SelectGemmConfigPass::withSplitK(FusedLinearOp op, const ChipInfo &chip,
                                 GemmConfigAttr config, int64_t rows,
                                 std::optional<int64_t> tileSpan) const {
  std::optional<int64_t> minSlices = getMinSlicesPerShare(config);
  if (!minSlices || !config.isWgmma() || config.isPingpong() ||
      config.isClustered() || config.splitsK() ||
      (tileSpan && *tileSpan % 8 != 0))
    return config;
  auto weightType = op.getWeight().getType();
  int64_t tiles =
      llvm::divideCeil(rows, config.getBlockM()) *
      llvm::divideCeil(weightType.getDimSize(0), config.getBlockN());
  if (2 * tiles > chip.smCount)
    return config;
  int64_t kSlices =
      countKSlices(weightType.getElementType(), weightType.getDimSize(1));
  for (int64_t splitK = 4; splitK >= 2; splitK /= 2) {
    if (splitK > maxSplitK || splitK * tiles > chip.smCount ||
        kSlices % splitK != 0 || kSlices / splitK < *minSlices)
      continue;
    GemmConfigAttr split = withDeepestPipeline(
        op, chip, config.getStages(), [&](int64_t stageCount) {
          return GemmConfigAttr::get(
              op.getContext(), config.getBackend(), config.getMma(),
              config.getBlockM(), config.getBlockN(), config.getWarpsM(),
              config.getWarpsN(), stageCount, config.getGroupM(),
              config.getSchedule(), config.getClusterM(), config.getOperands(),
              splitK);
        });
    if (getGemmSharedLayout(op, split).footprint() <=
        chip.maxSharedBytesPerBlock)
      return split;
  }
  return config;
}

SmallVector<BatchGemmConfigAttr> SelectGemmConfigPass::selectBatchConfigs(
    FusedLinearOp op, const ChipInfo &chip, GemmConfigAttr config,
    std::optional<int64_t> tileSpan) const {
  SmallVector<BatchGemmConfigAttr> entries;
  int64_t n = op.getWeight().getType().getDimSize(0);
  // A batch norm's moments come in chunks of the op config's block rows:
  // its narrower tiles keep them, but for batches of at most 64 rows,
  // which one 64-row block row holds and the kernel that finishes the
  // batch norm takes (#fusion.epilogue_batch_norm).
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  bool trainingBatchNorm = batchNorm && batchNorm.isTraining();
  bool splitRows = !batchNorm;
  auto buildTiling = [&](GemmConfigAttr wider, const Tiling &tiling) {
    return withDeepestPipeline(
        op, chip, std::max(tiling.maxStages, wider.getStages()),
        [&](int64_t stageCount) {
          return GemmConfigAttr::getChecked(
              [&] { return op.emitOpError(); }, op.getContext(),
              wider.getBackend(), wider.getMma(), tiling.blockM, tiling.blockN,
              tiling.warpsM, tiling.warpsN, stageCount, wider.getGroupM(),
              tiling.swapped ? WgmmaSchedule::cooperative : wider.getSchedule(),
              /*clusterM=*/int64_t(1),
              tiling.swapped ? WgmmaOperands::w_x : wider.getOperands(),
              /*splitK=*/int64_t(1));
        });
  };
  GemmConfigAttr wider = config;
  for (;;) {
    // Batches of at most `rowTiles` block rows, whose tiles of `wider`
    // leave more than half of the SMs idle, take twice as many narrower
    // tiles (still at most one a SM), where the output is wider than them.
    int64_t rowTiles =
        chip.smCount / (2 * llvm::divideCeil(n, wider.getBlockN()));
    std::optional<Tiling> narrower = getNarrowerTiling(wider, splitRows);
    if (!rowTiles || !narrower || n <= narrower->blockN)
      break;
    GemmConfigAttr narrowConfig = buildTiling(wider, *narrower);
    if (!narrowConfig)
      break;
    // The row program reads partials of the op's spans, whatever the batch.
    if (tileSpan && !findGemmTileReductions(op, narrower->blockN, *tileSpan))
      break;
    entries.insert(entries.begin(),
                   BatchGemmConfigAttr::get(op.getContext(),
                                            rowTiles * wider.getBlockM(),
                                            narrowConfig));
    wider = narrowConfig;
  }
  // Batches of at most 64 rows leave half of a 128-row tile empty, which
  // measured about twice as slow as 64-row tiles of the same columns (run
  // 38, at 8192 and 16384 columns: where the op has batch configs; a
  // training batch norm's in tf32 1.2x, run 42).
  std::optional<Tiling> halfRows = getHalfRowTiling(wider);
  if ((splitRows || trainingBatchNorm) && !entries.empty() && halfRows)
    if (GemmConfigAttr halfRowConfig = buildTiling(wider, *halfRows))
      entries.insert(entries.begin(),
                     BatchGemmConfigAttr::get(op.getContext(), 64,
                                              halfRowConfig));
  // Batches of at most 32 and 16 rows take swapped tiles of 64 of w's rows
  // where those fit the GPU in one wave; else batches of at most 32 take
  // tiles of 128 where those do (run 39, 16384 columns: 16- and 32-row
  // tiles of 64, two waves, within 3% of 64-row tiles either way; 32x128
  // 0.87-0.98x their time, 16x128 no faster than 32x128). With tile
  // reductions, which need rows of the tile in the accumulators, those
  // batches write the output for the row program instead (the op's tile
  // reductions' min_rows).
  if (splitRows && !entries.empty()) {
    SmallVector<int64_t, 2> swappedRows;
    int64_t swappedN = 64;
    if (static_cast<int64_t>(llvm::divideCeil(n, 64)) <= chip.smCount) {
      swappedRows = {32, 16};
    } else if (static_cast<int64_t>(llvm::divideCeil(n, 128)) <= chip.smCount) {
      swappedRows = {32};
      swappedN = 128;
    }
    for (int64_t rows : swappedRows)
      if (std::optional<Tiling> swapped =
              getSwappedSmallBatchTiling(wider, rows, swappedN))
        if (GemmConfigAttr swappedConfig = buildTiling(wider, *swapped))
          entries.insert(entries.begin(),
                         BatchGemmConfigAttr::get(op.getContext(), rows,
                                                  swappedConfig));
  }
  // The batches of each entry whose tiles leave more than half of the SMs
  // idle (all of a one-block-row entry's, the first block rows of 64x64
  // tiles' at 4096 columns) take its config with split_k, entries of their
  // own: the rows whose tiles 4 blocks each fit the SMs, then 2.
  SmallVector<BatchGemmConfigAttr> split;
  int64_t previousRows = 0;
  for (BatchGemmConfigAttr entry : entries) {
    GemmConfigAttr config = entry.getConfig();
    int64_t columnTiles = llvm::divideCeil(n, config.getBlockN());
    int64_t covered = previousRows;
    for (int64_t splitK : {4, 2}) {
      int64_t rows =
          std::min(entry.getMaxRows(),
                   chip.smCount / (splitK * columnTiles) * config.getBlockM());
      if (rows <= covered)
        continue;
      GemmConfigAttr splitConfig = withSplitK(op, chip, config, rows, tileSpan);
      if (splitConfig == config)
        continue;
      // A config that fit fewer rows as well (its K slices allow 2 blocks
      // a tile, not 4) covers these too.
      if (!split.empty() && split.back().getConfig() == splitConfig &&
          split.back().getMaxRows() == covered)
        split.pop_back();
      split.push_back(
          BatchGemmConfigAttr::get(op.getContext(), rows, splitConfig));
      covered = rows;
    }
    if (entry.getMaxRows() > covered)
      split.push_back(entry);
    previousRows = entry.getMaxRows();
  }
  return split;
}

/// Sets `op`'s config and batch configs: a static batch takes the config
/// that fits it now, given to `forStaticBatch` with its rows (and
/// `batchConfigs` is cleared). Returns the op's config.
static GemmConfigAttr setGemmConfigs(
    FusedLinearOp op, GemmConfigAttr config,
    SmallVectorImpl<BatchGemmConfigAttr> &batchConfigs,
    function_ref<GemmConfigAttr(GemmConfigAttr, int64_t)> forStaticBatch) {
  int64_t rows = op.getInput().getType().getDimSize(0);
  if (!ShapedType::isDynamic(rows)) {
    config =
        forStaticBatch(getGemmConfigForRows(config, batchConfigs, rows), rows);
    batchConfigs.clear();
  }
  op->setAttr(FusionDialect::getGemmConfigAttrName(), config);
  if (!batchConfigs.empty())
    op->setAttr(FusionDialect::getBatchGemmConfigsAttrName(),
                ArrayAttr::get(op.getContext(),
                               llvm::to_vector_of<Attribute>(batchConfigs)));
  return config;
}

void SelectGemmConfigPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  auto checkExtents = [&](StringRef name, ArrayRef<int64_t> extents) {
    if (extents.empty() || extents.size() == 2)
      return true;
    module.emitError() << "option '" << name
                       << "' takes two extents (M,N), got " << extents.size();
    return false;
  };
  if (!checkExtents("tile", tile) || !checkExtents("warps", warps))
    return signalPassFailure();

  auto target = module->getAttrOfType<TargetAttr>(TargetAttr::getAttrName());
  bool targetGiven = this->target.getNumOccurrences() > 0;
  if (target && targetGiven && target.getChip() != this->target) {
    module.emitError() << "the module targets "
                       << stringifyChip(target.getChip())
                       << ", option 'target' says "
                       << stringifyChip(this->target);
    return signalPassFailure();
  }
  if (!target) {
    target = TargetAttr::get(context, this->target);
    module->setAttr(TargetAttr::getAttrName(), target);
  }
  const ChipInfo &chip = getChipInfo(target.getChip());

  StringRef configName = FusionDialect::getGemmConfigAttrName();
  StringRef tileReductionsName = FusionDialect::getTileReductionsAttrName();
  WalkResult result = module.walk([&](FusedLinearOp op) {
    if (op->hasAttr(configName))
      return WalkResult::advance();
    GemmConfigAttr config = selectConfig(op, chip, selectBackend(op, chip));
    if (!config || failed(verifyGemmConfig(op, config)))
      return WalkResult::interrupt();
    if (!config.isGenerated()) {
      // Small batches take the wgmma kernels' batch configs, which write
      // the output as cuBLASLt's GEMM does (no tile reductions).
      SmallVector<BatchGemmConfigAttr> batchConfigs;
      if (takesWgmmaForSmallBatches(op, chip)) {
        GemmConfigAttr wgmma = selectConfig(op, chip, GemmBackend::wgmma);
        if (!wgmma)
          return WalkResult::interrupt();
        batchConfigs = selectBatchConfigs(op, chip, wgmma, std::nullopt);
      }
      setGemmConfigs(op, config, batchConfigs,
                     [&](GemmConfigAttr fitting, int64_t rows) {
                       return withSplitK(op, chip, fitting, rows, std::nullopt);
                     });
      return WalkResult::advance();
    }
    std::optional<GemmTileReductions> tiles =
        findGemmTileReductions(op, config.getBlockN());
    // Batches of a few block rows take the config with operands = x_w:
    // narrower tiles split among the warpgroups by rows, and the epilogue
    // that finishes a batch norm of one block row reads rows of the tile.
    GemmConfigAttr rowConfig = config;
    if (config.swapsOperands())
      rowConfig = GemmConfigAttr::get(
          context, config.getBackend(), config.getMma(), config.getBlockM(),
          config.getBlockN(), config.getWarpsM(), config.getWarpsN(),
          config.getStages(), config.getGroupM(), config.getSchedule(),
          config.getClusterM(), WgmmaOperands::x_w, config.getSplitK());
    SmallVector<BatchGemmConfigAttr> batchConfigs;
    // A tiling given in the options is the tiling of every batch.
    if (this->batchConfigs && tile.empty() && warps.empty() && !stages) {
      batchConfigs = selectBatchConfigs(
          op, chip, rowConfig,
          tiles ? std::optional<int64_t>(tiles->span) : std::nullopt);
      // Spans of whole tiles (whole rows, groups of whole tiles) allow no
      // narrower tiling: the wgmma tiles reduce spans of their narrowest
      // batch config's 64 columns instead, a few more partials for the row
      // program, where that gives small batches batch configs (run 40:
      // logsumexp's 128x256 tiles at 1-256 rows took 1.5-3x the time of
      // cuBLAS's GEMM and the row program).
      if (tiles && batchConfigs.empty() && config.isWgmma() &&
          tiles->span == config.getBlockN())
        if (std::optional<GemmTileReductions> narrowSpans =
                findGemmTileReductions(op, config.getBlockN(),
                                       kNarrowestWgmmaBlockN)) {
          batchConfigs =
              selectBatchConfigs(op, chip, rowConfig, narrowSpans->span);
          if (!batchConfigs.empty())
            tiles = std::move(narrowSpans);
        }
    }
    if (config.swapsOperands() &&
        (batchConfigs.empty() ||
         batchConfigs.back().getMaxRows() < config.getBlockM()))
      batchConfigs.push_back(
          BatchGemmConfigAttr::get(context, config.getBlockM(), rowConfig));
    // Batches of the swapped tiles (the first batch configs) write the
    // output, which the row program reduces.
    int64_t unreducedRows = 0;
    for (BatchGemmConfigAttr entry : batchConfigs)
      if (tiles && entry.getConfig().swapsOperands())
        unreducedRows = entry.getMaxRows();
    int64_t rows = op.getInput().getType().getDimSize(0);
    bool dynamicRows = ShapedType::isDynamic(rows);
    config = setGemmConfigs(
        op, config, batchConfigs, [&](GemmConfigAttr fitting, int64_t rows) {
          return this->batchConfigs && tile.empty() && warps.empty() && !stages
                     ? withSplitK(op, chip, fitting, rows,
                                  tiles ? std::optional<int64_t>(tiles->span)
                                        : std::nullopt)
                     : fitting;
        });
    // A static batch takes one config: tile reductions where it reduces.
    if (tiles && (dynamicRows || rows > unreducedRows))
      op->setAttr(tileReductionsName,
                  TileReductionsAttr::get(context, tiles->span,
                                          dynamicRows ? unreducedRows + 1
                                                      : int64_t(1)));
    // A batch of one block row of tiles holds each column whole: the kernel
    // finishes a training batch norm itself, one pass instead of three
    // kernels, where its scratch fits beside every config's pipeline (and
    // a static batch is such a batch).
    BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
    if (batchNorm && batchNorm.isTraining() &&
        (ShapedType::isDynamic(rows) || rows <= config.getBlockM())) {
      StringRef name = FusionDialect::getEpilogueBatchNormAttrName();
      op->setAttr(name,
                  EpilogueBatchNormAttr::get(context, config.getBlockM()));
      auto fits = [&](GemmConfigAttr kernelConfig) {
        return getGemmSharedLayout(op, kernelConfig).footprint() <=
               chip.maxSharedBytesPerBlock;
      };
      if (!fits(config) ||
          !llvm::all_of(batchConfigs, [&](BatchGemmConfigAttr entry) {
            return fits(entry.getConfig());
          }))
        op->removeAttr(name);
    }
    // Without it the batch norm's moments come in chunks of the op
    // config's block rows, whatever the batch: no 64-row entry.
    if (batchNorm && batchNorm.isTraining() &&
        !op->hasAttr(FusionDialect::getEpilogueBatchNormAttrName()) &&
        llvm::any_of(batchConfigs, [&](BatchGemmConfigAttr entry) {
          return entry.getConfig().getBlockM() != config.getBlockM();
        })) {
      llvm::erase_if(batchConfigs, [&](BatchGemmConfigAttr entry) {
        return entry.getConfig().getBlockM() != config.getBlockM();
      });
      StringRef entriesName = FusionDialect::getBatchGemmConfigsAttrName();
      if (batchConfigs.empty())
        op->removeAttr(entriesName);
      else
        op->setAttr(entriesName,
                    ArrayAttr::get(
                        context, llvm::to_vector_of<Attribute>(batchConfigs)));
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    signalPassFailure();
}

} // namespace
