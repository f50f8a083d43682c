//===- GemmSelection.h - fusion-select-gemm-config's decisions --*- C++ -*-===//
//
// fusion-select-gemm-config decides, for each fused GEMM, its backend
// (Backend.cpp), its tiling (Tiling.cpp), the configs of small batches
// (BatchConfigs.cpp) and split-K (SplitK.cpp); the pass
// (SelectGemmConfig.cpp) applies them and writes the attributes.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_CONFIG_GEMMSELECTION_H
#define FUSION_CODEGEN_CONFIG_GEMMSELECTION_H

#include "fusion/Codegen/Config/Passes.h"
#include "fusion/Codegen/Config/Chips.h"
#include "fusion/Codegen/Config/GemmKernelRules.h"
#include "fusion/Codegen/Config/TileReductions.h"

#include <optional>

namespace mlir::fusion {

/// What the decisions read: the pass's options and the target chip.
struct GemmSelection {
  const SelectGemmConfigOptions &options;
  const ChipInfo &chip;

  /// Whether the options fix the tiling of every batch.
  bool fixesTiling() const {
    return !options.tile.empty() || !options.warps.empty() || options.stages;
  }
};

//===----------------------------------------------------------------------===//
// Backend
//===----------------------------------------------------------------------===//

/// Whether `op` computes f32 tensors in fp32.
bool isFp32(FusedLinearOp op);
/// The width of the wgmma kernel's tiles of `mma` for `n` output columns,
/// and of `op`'s.
int64_t getWgmmaBlockN(MmaKind mma, int64_t n);
int64_t getWgmmaBlockN(FusedLinearOp op);
/// Whether `op` is a grouped GEMM (a weight of parts) of 16-bit tensors
/// with nothing fused but a bias: `auto` gives it cuBLASLt's GEMMs, one a
/// part, and the wgmma kernel, one for the group, for batches of at most
/// kGroupedWgmmaMaxRows rows.
bool isPlainGroupedGemm(FusedLinearOp op);
/// The batches up to which a plain grouped GEMM takes the wgmma kernel:
/// measured on the H200 (q, k and v of hidden 2048, bf16), one kernel for
/// the group took 0.17-0.4x the time of three cuBLAS GEMMs at 128 and 512
/// rows, the same at 2048, 1.04x at 8192 (docs/benchmarks.md).
constexpr int64_t kGroupedWgmmaMaxRows = 1024;
/// The backend the strategy gives `op`.
GemmBackend selectBackend(FusedLinearOp op, const GemmSelection &selection);
/// Whether `auto` gives `op` the wgmma kernels for small batches beside
/// cuBLASLt's GEMM for the others.
bool takesWgmmaForSmallBatches(FusedLinearOp op,
                               const GemmSelection &selection);

//===----------------------------------------------------------------------===//
// Tiling
//===----------------------------------------------------------------------===//

/// The narrowest wgmma tiles of a batch config (getNarrowerTiling).
constexpr int64_t kNarrowestWgmmaBlockN = 64;

/// A block's tile, its warps and the deepest ring it takes; with
/// `swapped`, cooperative wgmma tiles of operands = w_x.
struct Tiling {
  int64_t blockM, blockN, warpsM, warpsN, maxStages;
  bool swapped = false;
};

/// The config `build(stages)` with as deep a pipeline as the chip's shared
/// memory holds, up to `maxStages`.
GemmConfigAttr withDeepestPipeline(FusedLinearOp op, const ChipInfo &chip,
                                   int64_t maxStages,
                                   function_ref<GemmConfigAttr(int64_t)> build);
/// `config`'s tile of 64 rows, one consumer warpgroup.
std::optional<Tiling> getHalfRowTiling(GemmConfigAttr config);
/// Tiles of `rows` batch rows by `blockN` of w's, with swapped operands.
std::optional<Tiling> getSwappedSmallBatchTiling(GemmConfigAttr config,
                                                 int64_t rows, int64_t blockN);
/// The next narrower tiling of `config` (`splitRows`: 64-row tiles too).
std::optional<Tiling> getNarrowerTiling(GemmConfigAttr config, bool splitRows);
/// The config of `op` in `backend`, the heuristic tiling with the options'
/// overrides, or null after a diagnostic.
GemmConfigAttr selectConfig(FusedLinearOp op, const GemmSelection &selection,
                            GemmBackend backend);

//===----------------------------------------------------------------------===//
// Batch configs and split-K
//===----------------------------------------------------------------------===//

/// Narrower tilings of the generated `config` for batches whose tiles of
/// `config` would leave more than half of the chip's SMs idle, in
/// increasing max_rows; each reduces `tileSpan`'s spans (if any).
SmallVector<BatchGemmConfigAttr>
selectBatchConfigs(FusedLinearOp op, const GemmSelection &selection,
                   GemmConfigAttr config, std::optional<int64_t> tileSpan);
/// `config` with its blocks in clusters that share each tile's K slices
/// (split_k), where its tiles at a batch of `rows` rows leave more than
/// half of the chip's SMs idle; else `config`.
GemmConfigAttr withSplitK(FusedLinearOp op, const GemmSelection &selection,
                          GemmConfigAttr config, int64_t rows,
                          std::optional<int64_t> tileSpan);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_CONFIG_GEMMSELECTION_H
