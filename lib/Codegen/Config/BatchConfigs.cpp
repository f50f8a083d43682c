//===- BatchConfigs.cpp - the configs of small batches --------------------===//
//
// fusion-select-gemm-config's batch configs: narrower tiles, 64-row tiles,
// swapped operands and split-K for the batches whose tiles of the op's
// config would leave more than half of the SMs idle.
//
//===----------------------------------------------------------------------===//

#include "fusion/Codegen/Config/GemmSelection.h"

using namespace mlir;
using namespace mlir::fusion;

/// `wider`'s config with `tiling`'s tiles and the deepest pipeline that
/// fits; null where none does, or where it cannot read the op's weight
/// (3xTF32's swapped tiles, an in_out one).
static GemmConfigAttr buildTilingConfig(FusedLinearOp op, const ChipInfo &chip,
                                        GemmConfigAttr wider,
                                        const Tiling &tiling) {
  GemmConfigAttr config = withDeepestPipeline(
      op, chip, std::max(tiling.maxStages, wider.getStages()),
      [&](int64_t stageCount) {
        return GemmConfigAttr::getChecked(
            [&] { return op.emitOpError(); }, op.getContext(),
            wider.getBackend(), wider.getMma(), tiling.blockM, tiling.blockN,
            tiling.warpsM, tiling.warpsN, stageCount, wider.getGroupM(),
            tiling.swapped ? WgmmaSchedule::cooperative : wider.getSchedule(),
            /*clusterM=*/int64_t(1),
            tiling.swapped ? WgmmaOperands::w_x : wider.getOperands(),
            /*splitK=*/int64_t(1), wider.getTileScheduler());
      });
  if (config && op.getWeightLayout() == WeightLayout::in_out &&
      !whyNotInOutWeight(config, op.getWeight().getType().getElementType(),
                         op.getOutFeatures())
           .empty())
    return {};
  SmallVector<int64_t> parts = getWeightPartWidths(op);
  if (config && !parts.empty() &&
      !whyNotWeightParts(config, parts, static_cast<bool>(op.getDualWeight()))
           .empty())
    return {};
  return config;
}

/// Batches of at most `rowTiles` block rows, whose tiles of `wider` leave
/// more than half of the SMs idle, take twice as many narrower tiles
/// (still at most one a SM), where the output is wider than them: the
/// entries, first the narrowest; `wider` becomes the narrowest config.
static SmallVector<BatchGemmConfigAttr>
selectNarrowerTiles(FusedLinearOp op, const ChipInfo &chip,
                    GemmConfigAttr &wider, bool splitRows,
                    std::optional<int64_t> tileSpan) {
  int64_t n = op.getOutFeatures();
  SmallVector<BatchGemmConfigAttr> entries;
  for (;;) {
    int64_t rowTiles =
        chip.smCount / (2 * llvm::divideCeil(n, wider.getBlockN()));
    std::optional<Tiling> narrower = getNarrowerTiling(wider, splitRows);
    if (!rowTiles || !narrower || n <= narrower->blockN)
      break;
    GemmConfigAttr narrowConfig = buildTilingConfig(op, chip, wider, *narrower);
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
  return entries;
}

/// Batches of at most 32 and 16 rows take swapped tiles of 64 of w's rows
/// where those fit the GPU in one wave; else batches of at most 32 take
/// tiles of 128 where those do (measured at 16384 columns: 16- and 32-row
/// tiles of 64, two waves, within 3% of 64-row tiles either way; 32x128
/// 0.87-0.98x their time, 16x128 no faster than 32x128). With tile
/// reductions, which need rows of the tile in the accumulators, those
/// batches write the output for the row program instead (the op's tile
/// reductions' min_rows). Inserted first into `entries`.
static void addSwappedTiles(FusedLinearOp op, const ChipInfo &chip,
                            GemmConfigAttr wider,
                            SmallVectorImpl<BatchGemmConfigAttr> &entries) {
  int64_t n = op.getOutFeatures();
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
      if (GemmConfigAttr swappedConfig =
              buildTilingConfig(op, chip, wider, *swapped))
        entries.insert(
            entries.begin(),
            BatchGemmConfigAttr::get(op.getContext(), rows, swappedConfig));
}

/// The batches of each entry whose tiles leave more than half of the SMs
/// idle (all of a one-block-row entry's, the first block rows of 64x64
/// tiles' at 4096 columns) take its config with split_k, entries of their
/// own: the rows whose tiles 4 blocks each fit the SMs, then 2.
static SmallVector<BatchGemmConfigAttr>
splitSmallBatches(FusedLinearOp op, const GemmSelection &selection,
                  ArrayRef<BatchGemmConfigAttr> entries,
                  std::optional<int64_t> tileSpan) {
  int64_t n = op.getOutFeatures();
  SmallVector<BatchGemmConfigAttr> split;
  int64_t previousRows = 0;
  for (BatchGemmConfigAttr entry : entries) {
    GemmConfigAttr config = entry.getConfig();
    int64_t columnTiles = llvm::divideCeil(n, config.getBlockN());
    int64_t covered = previousRows;
    for (int64_t splitK : {4, 2}) {
      int64_t rows = std::min(entry.getMaxRows(), selection.chip.smCount /
                                                      (splitK * columnTiles) *
                                                      config.getBlockM());
      if (rows <= covered)
        continue;
      GemmConfigAttr splitConfig =
          withSplitK(op, selection, config, rows, tileSpan);
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

SmallVector<BatchGemmConfigAttr> mlir::fusion::selectBatchConfigs(
    FusedLinearOp op, const GemmSelection &selection, GemmConfigAttr config,
    std::optional<int64_t> tileSpan) {
  const ChipInfo &chip = selection.chip;
  // A batch norm's moments come in chunks of the op config's block rows:
  // its narrower tiles keep them, but for batches of at most 64 rows,
  // which one 64-row block row holds and the kernel that finishes the
  // batch norm takes (#fusion.epilogue_batch_norm).
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  bool trainingBatchNorm = batchNorm && batchNorm.isTraining();
  bool splitRows = !batchNorm;
  GemmConfigAttr wider = config;
  SmallVector<BatchGemmConfigAttr> entries =
      selectNarrowerTiles(op, chip, wider, splitRows, tileSpan);
  // Batches of at most 64 rows leave half of a 128-row tile empty, which
  // measured about twice as slow as 64-row tiles of the same columns (at
  // 8192 and 16384 columns: where the op has batch configs; a training
  // batch norm's in tf32 1.2x).
  std::optional<Tiling> halfRows = getHalfRowTiling(wider);
  if ((splitRows || trainingBatchNorm) && !entries.empty() && halfRows)
    if (GemmConfigAttr halfRowConfig =
            buildTilingConfig(op, chip, wider, *halfRows))
      entries.insert(entries.begin(), BatchGemmConfigAttr::get(
                                          op.getContext(), 64, halfRowConfig));
  if (splitRows && !entries.empty())
    addSwappedTiles(op, chip, wider, entries);
  return splitSmallBatches(op, selection, entries, tileSpan);
}
