//===- SelectGemmConfig.cpp - decide how each fused GEMM is lowered -------===//
//
// Fills in the lowering decisions the GPU backends consume: the module's
// #fusion.target and each fused_linear's #fusion.lowering (its
// #fusion.gemm_config, #fusion.batch_gemm_config entries for small batches,
// tile reductions and the epilogue batch norm). Hand-written lowerings are
// kept. The decisions are GemmSelection.h's; this file applies them.
//
//===----------------------------------------------------------------------===//

#include "fusion/Codegen/Config/GemmSelection.h"
#include "fusion/Codegen/Config/Verifiers.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_SELECTGEMMCONFIG
#include "fusion/Codegen/Config/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

struct SelectGemmConfigPass
    : fusion::impl::SelectGemmConfigBase<SelectGemmConfigPass> {
  using SelectGemmConfigBase::SelectGemmConfigBase;

  void runOnOperation() override;

private:
  /// The pass's options as the struct the decisions read.
  SelectGemmConfigOptions getOptions() const;
};

} // namespace

SelectGemmConfigOptions SelectGemmConfigPass::getOptions() const {
  SelectGemmConfigOptions options;
  options.target = target;
  options.strategy = strategy;
  options.fp32Math = fp32Math;
  options.tile.assign(tile.begin(), tile.end());
  options.warps.assign(warps.begin(), warps.end());
  options.stages = stages;
  options.schedule = schedule;
  options.cluster = cluster;
  options.tileScheduler = tileScheduler;
  options.swapOperands = swapOperands;
  options.batchConfigs = batchConfigs;
  options.maxSplitK = maxSplitK;
  return options;
}

namespace {
/// A #fusion.lowering as the selection builds it.
struct LoweringDraft {
  GemmConfigAttr gemm;
  SmallVector<BatchGemmConfigAttr> batches;
  TileReductionsAttr tileReductions;
  EpilogueBatchNormAttr epilogueBatchNorm;

  void setOn(FusedLinearOp op) const {
    op->setAttr(LoweringAttr::getAttrName(),
                LoweringAttr::get(op.getContext(), gemm, batches,
                                  tileReductions, epilogueBatchNorm));
  }
};
} // namespace

/// `op`'s config and batch configs: a static batch takes the config that
/// fits it now, given to `forStaticBatch` with its rows (and no batch
/// configs).
static LoweringDraft draftGemmConfigs(
    FusedLinearOp op, GemmConfigAttr config,
    SmallVector<BatchGemmConfigAttr> batchConfigs,
    function_ref<GemmConfigAttr(GemmConfigAttr, int64_t)> forStaticBatch) {
  int64_t rows = op.getInput().getType().getDimSize(0);
  if (!ShapedType::isDynamic(rows)) {
    config =
        forStaticBatch(getGemmConfigForRows(config, batchConfigs, rows), rows);
    batchConfigs.clear();
  }
  return {config, std::move(batchConfigs), {}, {}};
}

/// cuBLASLt's GEMM: small batches take the wgmma kernels' batch configs
/// where `auto` gives them, which write the output as cuBLASLt's GEMM does
/// (no tile reductions).
static LogicalResult configureLibraryGemm(FusedLinearOp op,
                                          const GemmSelection &selection,
                                          GemmConfigAttr config) {
  SmallVector<BatchGemmConfigAttr> batchConfigs;
  if (takesWgmmaForSmallBatches(op, selection)) {
    GemmConfigAttr wgmma = selectConfig(op, selection, GemmBackend::wgmma);
    if (!wgmma)
      return failure();
    batchConfigs = selectBatchConfigs(op, selection, wgmma, std::nullopt);
    // A plain grouped GEMM's wgmma kernel up to its measured crossover.
    if (isPlainGroupedGemm(op) &&
        (batchConfigs.empty() ||
         batchConfigs.back().getMaxRows() < kGroupedWgmmaMaxRows))
      batchConfigs.push_back(BatchGemmConfigAttr::get(
          op.getContext(), kGroupedWgmmaMaxRows, wgmma));
  }
  draftGemmConfigs(op, config, std::move(batchConfigs),
                   [&](GemmConfigAttr fitting, int64_t rows) {
                     return withSplitK(op, selection, fitting, rows,
                                       std::nullopt);
                   })
      .setOn(op);
  return success();
}

/// The batch configs of a generated kernel's `config` whose row reductions
/// are `tiles` (which may take narrower spans so that small batches get
/// batch configs); `rowConfig` is `config` with operands = x_w.
static SmallVector<BatchGemmConfigAttr>
selectGeneratedBatchConfigs(FusedLinearOp op, const GemmSelection &selection,
                            GemmConfigAttr config, GemmConfigAttr rowConfig,
                            std::optional<GemmTileReductions> &tiles) {
  SmallVector<BatchGemmConfigAttr> batchConfigs;
  // A tiling given in the options is the tiling of every batch.
  if (selection.options.batchConfigs && !selection.fixesTiling()) {
    batchConfigs = selectBatchConfigs(
        op, selection, rowConfig,
        tiles ? std::optional<int64_t>(tiles->span) : std::nullopt);
    // Spans of whole tiles (whole rows, groups of whole tiles) allow no
    // narrower tiling: the wgmma tiles reduce spans of their narrowest
    // batch config's 64 columns instead, a few more partials for the row
    // program, where that gives small batches batch configs.
    if (tiles && batchConfigs.empty() && config.isWgmma() &&
        tiles->span == config.getBlockN())
      if (std::optional<GemmTileReductions> narrowSpans =
              findGemmTileReductions(op, config.getBlockN(),
                                     kNarrowestWgmmaBlockN)) {
        batchConfigs =
            selectBatchConfigs(op, selection, rowConfig, narrowSpans->span);
        if (!batchConfigs.empty())
          tiles = std::move(narrowSpans);
      }
  }
  if (config.swapsOperands() &&
      (batchConfigs.empty() ||
       batchConfigs.back().getMaxRows() < config.getBlockM()))
    batchConfigs.push_back(BatchGemmConfigAttr::get(
        op.getContext(), config.getBlockM(), rowConfig));
  return batchConfigs;
}

/// A batch of one block row of tiles holds each column whole: the kernel
/// finishes a training batch norm itself, one pass instead of three
/// kernels, where it can (canFinishBatchNorm), its scratch and the columns
/// of the op after the norm fit beside every config's pipeline (and a
/// static batch is such a batch). Without it the batch norm's moments come
/// in chunks of the op config's block rows, whatever the batch: no entry
/// of other block rows.
static void configureEpilogueBatchNorm(FusedLinearOp op, const ChipInfo &chip,
                                       LoweringDraft &lowering) {
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  if (!batchNorm || !batchNorm.isTraining())
    return;
  GemmConfigAttr config = lowering.gemm;
  int64_t rows = op.getInput().getType().getDimSize(0);
  auto fits = [&](GemmConfigAttr kernelConfig) {
    return getGemmSharedLayout(op, kernelConfig, /*normalizesBatchNorm=*/true)
               .footprint() <= chip.maxSharedBytesPerBlock;
  };
  if ((ShapedType::isDynamic(rows) || rows <= config.getBlockM()) &&
      canFinishBatchNorm(op) && fits(config) &&
      llvm::all_of(lowering.batches, [&](BatchGemmConfigAttr entry) {
        return fits(entry.getConfig());
      })) {
    lowering.epilogueBatchNorm =
        EpilogueBatchNormAttr::get(op.getContext(), config.getBlockM());
    return;
  }
  llvm::erase_if(lowering.batches, [&](BatchGemmConfigAttr entry) {
    return entry.getConfig().getBlockM() != config.getBlockM();
  });
}

/// A generated kernel's `config`: its batch configs, split-K for a static
/// batch, tile reductions and the epilogue batch norm.
static void configureGeneratedGemm(FusedLinearOp op,
                                   const GemmSelection &selection,
                                   GemmConfigAttr config) {
  MLIRContext *context = op.getContext();
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
        config.getClusterM(), WgmmaOperands::x_w, config.getSplitK(),
        config.getTileScheduler());
  SmallVector<BatchGemmConfigAttr> batchConfigs =
      selectGeneratedBatchConfigs(op, selection, config, rowConfig, tiles);
  // Batches of the swapped tiles (the first batch configs) write the
  // output, which the row program reduces.
  int64_t unreducedRows = 0;
  for (BatchGemmConfigAttr entry : batchConfigs)
    if (tiles && entry.getConfig().swapsOperands())
      unreducedRows = entry.getMaxRows();
  int64_t rows = op.getInput().getType().getDimSize(0);
  bool dynamicRows = ShapedType::isDynamic(rows);
  LoweringDraft lowering = draftGemmConfigs(
      op, config, std::move(batchConfigs),
      [&](GemmConfigAttr fitting, int64_t rows) {
        return selection.options.batchConfigs && !selection.fixesTiling()
                   ? withSplitK(op, selection, fitting, rows,
                                tiles ? std::optional<int64_t>(tiles->span)
                                      : std::nullopt)
                   : fitting;
      });
  // A static batch takes one config: tile reductions where it reduces.
  if (tiles && (dynamicRows || rows > unreducedRows))
    lowering.tileReductions = TileReductionsAttr::get(
        context, tiles->span, dynamicRows ? unreducedRows + 1 : int64_t(1));
  configureEpilogueBatchNorm(op, selection.chip, lowering);
  lowering.setOn(op);
}

/// Splits the dual GEMM of `op` into a GEMM of its own, before `op`, whose
/// result `op`'s epilogue reads as a row operand where it read the dual
/// accumulator; returns that GEMM. The dual product is then stored in the
/// element type: in 16 bits a rounding the register form does not make.
static FusedLinearOp splitDualWeight(FusedLinearOp op) {
  OpBuilder builder(op);
  auto dualGemm =
      FusedLinearOp::create(builder, op.getLoc(), op.getInput(),
                            op.getDualWeight(), Value(), op.getWeightLayout());
  dualGemm.setPrecisionAttr(op.getPrecisionAttr());
  BlockArgument dual = op.getDualAccumulator();
  dual.replaceAllUsesWith(op.addEpilogueRow(dualGemm.getResult()));
  op.getEpilogueBlock().eraseArgument(dual.getArgNumber());
  op.getDualWeightMutable().clear();
  return dualGemm;
}

/// Selects `op`'s lowering; false where no config fits it (diagnosed).
static bool selectLowering(FusedLinearOp op, const GemmSelection &selection) {
  GemmConfigAttr config =
      selectConfig(op, selection, selectBackend(op, selection));
  if (!config)
    return false;
  if (op.getDualWeight()) {
    // One config for every batch: the dual GEMM's wgmma kernel, or, where
    // the backend computes no dual GEMM, two GEMMs.
    if (computesDualWeight(config)) {
      draftGemmConfigs(op, config, {}, [](GemmConfigAttr fitting, int64_t) {
        return fitting;
      }).setOn(op);
      return true;
    }
    return selectLowering(splitDualWeight(op), selection) &&
           selectLowering(op, selection);
  }
  if (!config.isGenerated())
    return succeeded(configureLibraryGemm(op, selection, config));
  configureGeneratedGemm(op, selection, config);
  return true;
}

void SelectGemmConfigPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto checkExtents = [&](StringRef name, ArrayRef<int64_t> extents) {
    if (extents.empty() || extents.size() == 2)
      return true;
    module.emitError() << "option '" << name
                       << "' takes two extents (M,N), got " << extents.size();
    return false;
  };
  if (!checkExtents("tile", tile) || !checkExtents("warps", warps))
    return signalPassFailure();
  if (tileScheduler == TileScheduler::per_block &&
      schedule == WgmmaSchedule::pingpong) {
    module.emitError() << "option 'tile-scheduler=per_block' takes the "
                          "cooperative schedule (ping-pong's consumers take "
                          "a block's tiles in turn)";
    return signalPassFailure();
  }

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
    target = TargetAttr::get(&getContext(), this->target);
    module->setAttr(TargetAttr::getAttrName(), target);
  }
  SelectGemmConfigOptions options = getOptions();
  GemmSelection selection{options, getChipInfo(target.getChip())};

  WalkResult result = module.walk([&](FusedLinearOp op) {
    if (LoweringAttr::of(op))
      return WalkResult::advance();
    return selectLowering(op, selection) ? WalkResult::advance()
                                         : WalkResult::interrupt();
  });
  // What was kept (written by hand) and what was chosen, against the
  // kernels and the chip.
  if (result.wasInterrupted() || failed(verifyLowering(module)))
    signalPassFailure();
}
