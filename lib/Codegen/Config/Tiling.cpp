//===- Tiling.cpp - the tiles and pipeline of a generated GEMM kernel -----===//
//
// fusion-select-gemm-config's tiling: a backend's tile, warps, schedule,
// cluster and ring depth for an op, with the options' overrides, and the
// narrower tilings that small batches take.
//
//===----------------------------------------------------------------------===//

#include "fusion/Codegen/Config/GemmSelection.h"

using namespace mlir;
using namespace mlir::fusion;

/// The config `build(stages)` with as deep a pipeline as the chip's shared
/// memory holds, up to `maxStages`: 3 for 128x256 blocks on sm_80
/// (163 KiB), 4 on sm_90 (227 KiB).
GemmConfigAttr mlir::fusion::withDeepestPipeline(
    FusedLinearOp op, const ChipInfo &chip, int64_t maxStages,
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

/// `config`'s tile of 64 rows, one consumer warpgroup: wgmma's cooperative
/// 128-row tiles. Its ring goes deeper than a 128-row tile's (12 stages of
/// 64x64, 8 of 64x128: a small batch's loads bound it).
std::optional<Tiling> mlir::fusion::getHalfRowTiling(GemmConfigAttr config) {
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
/// rows by 8192 columns the whole op took 0.66-0.85x its time on the H200:
/// cuBLAS's GEMM's in bf16, 0.73-0.83x it in tf32.
/// Their 10-20 KiB stages take the deepest ring. Not for ping-pong configs
/// (operands = w_x is the cooperative kernel's), nor 3xTF32 tiles of 128 of
/// w's rows (a consumer warpgroup holds the register parts of 64).
/// Epilogue row operands are loaded an element at a time.
std::optional<Tiling>
mlir::fusion::getSwappedSmallBatchTiling(GemmConfigAttr config, int64_t rows,
                                         int64_t blockN) {
  if (!config.isWgmma() || config.isPingpong() ||
      (config.isWgmmaSplit() && blockN != 64))
    return std::nullopt;
  return Tiling{rows, blockN, 4, 1, /*maxStages=*/16, /*swapped=*/true};
}

/// The next narrower tiling of `config`, each measured faster where the
/// narrower tiles still fit the GPU in one wave: wgmma tiles halve down to
/// 64 columns, then to 64 rows of one consumer warpgroup, the tiled
/// kernel's 128x256 blocks of 2x4 warps become 128x128 of 2x2. `splitRows`
/// allows the 64-row tiles.
///
/// A small batch streams w once, each block reading all of x besides its
/// slab of w: the main loop waits on its loads' latency, not the tensor
/// cores, so wgmma's narrower tiles take deeper rings where shared memory
/// holds them: up to 8 stages of 128-row tiles (128 x 8192 -> 8192 21%
/// faster than with 4; 9 stages of 128x64 were slower again).
std::optional<Tiling> mlir::fusion::getNarrowerTiling(GemmConfigAttr config,
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

namespace {
/// A GEMM config's shape before its pipeline depth.
struct ConfigShape {
  int64_t blockM = 128, blockN = 256, warpsM = 2, warpsN = 4;
  WgmmaSchedule schedule = WgmmaSchedule::cooperative;
  WgmmaOperands operands = WgmmaOperands::x_w;
  TileScheduler tileScheduler = TileScheduler::persistent;
  int64_t maxStages = 4, clusterM = 1;
};

/// The mma.sync and SIMT kernels' blocks: 128x256 of 8 warps, 64x64 warp
/// tiles (128 accumulator registers a thread), 48 KiB of shared memory per
/// stage. Narrow outputs take 128x128 blocks of 4 warps, so that more
/// blocks fill the GPU. 3xTF32's second set of accumulators needs 64x32
/// warp tiles to stay in registers; so do the element loads of K rows not
/// 16-byte aligned, a path bound by its loads anyway; SIMT has 8x8
/// accumulators a thread. (f32 operands rounded to 16 bits keep 64x64 warp
/// tiles: on the H100 1.4-1.5x faster than 64x32, despite a few spilled
/// registers.)
ConfigShape getWarpTiledShape(GemmBackend backend, std::optional<MmaKind> mma,
                              Type elementType, int64_t n, int64_t k) {
  ConfigShape shape;
  if (n <= 128) {
    shape.blockN = 128;
    shape.warpsN = 2;
  }
  if (mma == MmaKind::tf32x3 || backend == GemmBackend::simt ||
      !hasChunkAlignedRows(elementType, k)) {
    shape.blockN = 128;
    shape.warpsN = 4;
  }
  return shape;
}

/// The wgmma kernel's tile, schedule, cluster and operand order.
ConfigShape getWgmmaShape(FusedLinearOp op, MmaKind mma,
                          const SelectGemmConfigOptions &options) {
  ConfigShape shape;
  shape.blockN = getWgmmaBlockN(op);
  shape.warpsM = 8;
  shape.warpsN = 1;
  // Row reductions staged in the ring keep the cooperative schedule and
  // unclustered blocks (verifyTileReductions).
  std::optional<GemmTileReductions> tiles =
      findGemmTileReductions(op, shape.blockN);
  bool stagesTile = tiles && tiles->span % 8 != 0;
  // A ping-pong consumer's tile is its warpgroup's alone: 128x128 (two
  // m64n128 wgmmas a K step, CUTLASS's ping-pong tile; measured as fast as
  // 64x256 on the H100), in 32 KiB stages; 3xTF32's x parts in registers
  // cover 64 rows (64x128). A dual GEMM stays cooperative: a ping-pong
  // consumer's whole tile would hold twice its accumulators
  // (computesDualWeight).
  if (options.schedule == WgmmaSchedule::pingpong && !stagesTile &&
      !op.getDualWeight()) {
    shape.schedule = options.schedule;
    shape.blockM = mma == MmaKind::tf32x3 ? 64 : 128;
    shape.blockN = std::min<int64_t>(shape.blockN, 128);
    shape.warpsM = 4;
    shape.maxStages = 6;
  }
  if (!stagesTile)
    shape.clusterM = options.cluster;
  shape.tileScheduler = options.tileScheduler;
  // A training batch norm's column moments: with the tile transposed in the
  // accumulators each quad of lanes holds whole columns, which it sums with
  // two shuffles, where the tile's rows take three rounds of transposing
  // butterflies and a merge of the warps through shared memory.
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  if (batchNorm && batchNorm.isTraining() && op.getEpilogueRows().empty() &&
      shape.schedule == WgmmaSchedule::cooperative && shape.clusterM == 1 &&
      mma != MmaKind::tf32x3 && options.tile.empty() && options.warps.empty() &&
      options.swapOperands)
    shape.operands = WgmmaOperands::w_x;
  return shape;
}
} // namespace

GemmConfigAttr mlir::fusion::selectConfig(FusedLinearOp op,
                                          const GemmSelection &selection,
                                          GemmBackend backend) {
  const SelectGemmConfigOptions &options = selection.options;
  MLIRContext *context = op.getContext();
  if (backend == GemmBackend::cublaslt)
    return GemmConfigAttr::get(context, backend);

  Type elementType = op.getWeight().getType().getElementType();
  int64_t n = op.getOutFeatures(), k = op.getInFeatures();
  std::optional<MmaKind> mma;
  if (backend == GemmBackend::mma_sync || backend == GemmBackend::wgmma)
    mma = getRequiredMmaKind(elementType, op.getComputePrecision());
  ConfigShape shape = backend == GemmBackend::wgmma
                          ? getWgmmaShape(op, *mma, options)
                          : getWarpTiledShape(backend, mma, elementType, n, k);
  if (!options.tile.empty()) {
    shape.blockM = options.tile[0];
    shape.blockN = options.tile[1];
  }
  if (!options.warps.empty()) {
    shape.warpsM = options.warps[0];
    shape.warpsN = options.warps[1];
  }
  constexpr int64_t groupM = 8;
  auto build = [&](int64_t stageCount) {
    return GemmConfigAttr::getChecked(
        [&] { return op.emitOpError(); }, context, backend, mma, shape.blockM,
        shape.blockN, shape.warpsM, shape.warpsN, stageCount, groupM,
        shape.schedule, shape.clusterM, shape.operands, /*splitK=*/int64_t(1),
        shape.tileScheduler);
  };
  if (options.stages)
    return build(options.stages);
  return withDeepestPipeline(op, selection.chip, shape.maxStages, build);
}
