//===- SplitK.cpp - blocks of a cluster sharing a tile's K slices ---------===//
//
// fusion-select-gemm-config's split-K: where a batch's tiles leave most of
// the SMs idle, clusters of 2 or 4 blocks share each tile's K slices.
//
//===----------------------------------------------------------------------===//

#include "fusion/Codegen/Config/GemmSelection.h"

using namespace mlir;
using namespace mlir::fusion;

/// The K slices each block of a split_k cluster takes at least, for tiles
/// whose main loop split_k speeds up, or nullopt: 3xTF32's, bound by their
/// arithmetic (three products and the operands' split), and tf32's of 128
/// rows (the most tensor work a byte of w). Small batches of tf32 and
/// 16-bit tiles of 16 to 64 rows stream w at the DRAM's rate from the SMs
/// they have: twice the blocks gained nothing on the H200 (-4% to +8% at
/// 1-64 rows), and 16-bit ones were 1.36x slower at K = 1000.
static std::optional<int64_t> getMinSlicesPerShare(GemmConfigAttr config) {
  if (config.isWgmmaSplit())
    return 16;
  if (config.getMma() == MmaKind::tf32 && !config.swapsOperands() &&
      config.getBlockM() == 128)
    return 32;
  return std::nullopt;
}

GemmConfigAttr mlir::fusion::withSplitK(FusedLinearOp op,
                                        const GemmSelection &selection,
                                        GemmConfigAttr config, int64_t rows,
                                        std::optional<int64_t> tileSpan) {
  const ChipInfo &chip = selection.chip;
  std::optional<int64_t> minSlices = getMinSlicesPerShare(config);
  if (!minSlices || !config.isWgmma() || config.isPingpong() ||
      config.isClustered() || config.splitsK() ||
      (tileSpan && *tileSpan % 8 != 0))
    return config;
  int64_t tiles = llvm::divideCeil(rows, config.getBlockM()) *
                  llvm::divideCeil(op.getOutFeatures(), config.getBlockN());
  if (2 * tiles > chip.smCount)
    return config;
  int64_t kSlices = countKSlices(op.getWeight().getType().getElementType(),
                                 op.getInFeatures());
  for (int64_t splitK = 4; splitK >= 2; splitK /= 2) {
    if (splitK > selection.options.maxSplitK || splitK * tiles > chip.smCount ||
        kSlices % splitK != 0 || kSlices / splitK < *minSlices)
      continue;
    GemmConfigAttr split = withDeepestPipeline(
        op, chip, config.getStages(), [&](int64_t stageCount) {
          return GemmConfigAttr::get(
              op.getContext(), config.getBackend(), config.getMma(),
              config.getBlockM(), config.getBlockN(), config.getWarpsM(),
              config.getWarpsN(), stageCount, config.getGroupM(),
              config.getSchedule(), config.getClusterM(), config.getOperands(),
              splitK, config.getTileScheduler());
        });
    if (getGemmSharedLayout(op, split).footprint() <=
        chip.maxSharedBytesPerBlock)
      return split;
  }
  return config;
}
