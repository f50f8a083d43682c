//===- Verifiers.cpp - lowering configs against kernels and chips ---------===//

#include "fusion/Codegen/Config/Verifiers.h"

#include "fusion/Codegen/Config/Chips.h"
#include "fusion/Codegen/Config/GemmKernelRules.h"
#include "fusion/Codegen/Config/Passes.h"
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_VERIFYLOWERING
#include "fusion/Codegen/Config/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

/// The checks of `config` that need the op it lowers: the MMA kind against
/// the op's types and precision, the rows' alignment and K slices, and the
/// shared-memory footprint against the chip of the enclosing
/// #fusion.target (if any).
static LogicalResult verifyGemmConfig(FusedLinearOp op, GemmConfigAttr config) {
  if (!config.isGenerated())
    return success();
  Type elementType = op.getWeight().getType().getElementType();
  Precision precision = op.getComputePrecision();
  if (config.getBackend() == GemmBackend::simt &&
      !(elementType.isF32() && precision == Precision::fp32))
    return op.emitOpError("a simt GEMM computes f32 tensors in fp32 only, "
                          "not ")
           << elementType << " in " << stringifyPrecision(precision);
  MmaKind required = getRequiredMmaKind(elementType, precision);
  if (config.getMma() && *config.getMma() != required)
    return op.emitOpError("mma kind ")
           << stringifyMmaKind(*config.getMma()) << " does not compute "
           << elementType << " tensors in " << stringifyPrecision(precision)
           << " precision (that is " << stringifyMmaKind(required) << ")";
  if (op.getWeightLayout() == WeightLayout::in_out) {
    std::string why =
        whyNotInOutWeight(config, elementType, op.getOutFeatures());
    if (!why.empty())
      return op.emitOpError("a generated GEMM (")
             << stringifyGemmBackend(config.getBackend())
             << ") cannot read this weight stored in_out ([in_features, "
                "out_features]): "
             << why;
  }
  SmallVector<int64_t> parts = getWeightPartWidths(op);
  if (!parts.empty()) {
    std::string why =
        whyNotWeightParts(config, parts, static_cast<bool>(op.getDualWeight()));
    if (!why.empty())
      return op.emitOpError("a generated GEMM (")
             << stringifyGemmBackend(config.getBackend())
             << ") cannot read this weight in parts (a concat): " << why;
  }
  int64_t k = op.getInFeatures();
  if (config.isWgmma() && !hasChunkAlignedRows(elementType, k))
    return op.emitOpError("a wgmma GEMM loads rows of x and w with TMA, "
                          "whose rows must be multiples of 16 bytes; K = ")
           << k << " of " << elementType << " is not";
  int64_t kSlices = countKSlices(elementType, k);
  if (kSlices % config.getSplitK() != 0)
    return op.emitOpError("split_k ")
           << config.getSplitK() << " does not divide the " << kSlices
           << " K slices of 128 bytes (K = " << k << " of " << elementType
           << ")";
  TargetAttr target = TargetAttr::lookup(op);
  if (!target)
    return success();
  const ChipInfo &chip = getChipInfo(target.getChip());
  if (config.isWgmma() && !chip.hasWgmma)
    return op.emitOpError("wgmma GEMM kernels need TMA and wgmma (sm_90), "
                          "which ")
           << stringifyChip(chip.chip) << " lacks";
  if (!chip.hasMmaSync)
    return op.emitOpError("generated GEMM kernels need cp.async and "
                          "mma.sync, which ")
           << stringifyChip(chip.chip) << " lacks";
  int64_t bytes = getGemmSharedLayout(op, config).footprint();
  if (bytes > chip.maxSharedBytesPerBlock)
    return op.emitOpError("tiling ")
           << config.getBlockM() << "x" << config.getBlockN() << " with "
           << config.getStages() << " stages needs " << bytes
           << " bytes of shared memory, " << stringifyChip(chip.chip) << " has "
           << chip.maxSharedBytesPerBlock;
  return success();
}

/// The checks of `tiles` on `op` (of GEMM config `config`, if any): a
/// generated GEMM, no batch norm stage, and a span that tiles of the
/// config's width can reduce over the output's columns.
static LogicalResult verifyTileReductions(FusedLinearOp op,
                                          GemmConfigAttr config,
                                          TileReductionsAttr tiles) {
  if (!config.isGenerated())
    return op.emitOpError("tile reductions need a generated GEMM config");
  if (op.getBatchNormAttr())
    return op.emitOpError("tile reductions of an output with a batch norm "
                          "stage: its statistics take the tiles");
  if (config.swapsOperands())
    return op.emitOpError("tile reductions need a GEMM config whose "
                          "accumulators hold rows of the tile, not "
                          "operands = w_x");
  if (tiles.getMinRows() < 1)
    return op.emitOpError("tile reductions from min_rows = ")
           << tiles.getMinRows() << ": a batch of at least 1 row";
  int64_t span = tiles.getSpan(), blockN = config.getBlockN();
  auto type = op.getResult().getType();
  int64_t n = type.getDimSize(1);
  // Only the registers' spans (GemmKernelProblem) need no staging in the
  // ring, where both consumers of a ping-pong kernel would stage their
  // tiles, a clustered kernel's peer multicasts its loads, and the blocks
  // that share a tile's K slices run no epilogue but the first's.
  if ((config.isPingpong() || config.isClustered() || config.splitsK()) &&
      span % 8 != 0)
    return op.emitOpError("tile reductions over spans of ")
           << span << " columns: a "
           << (config.isPingpong()    ? "pingpong"
               : config.isClustered() ? "clustered"
                                      : "split_k")
           << " wgmma kernel reduces spans of whole 8-column blocks, from its "
              "registers";
  // A span of whole tiles, or of groups that tile a tile (of whole 16-byte
  // chunks), as getRowReductionSpan gives.
  if (span != blockN && (span <= 0 || blockN % span != 0 || n % span != 0 ||
                         !hasChunkAlignedRows(type.getElementType(), span)))
    return op.emitOpError("tile reductions over spans of ")
           << span << " columns: tiles " << blockN
           << " wide reduce whole tiles or groups of 16-byte chunks that tile "
              "them and the "
           << n << " output columns";
  return success();
}

/// The checks of `batchConfigs` (#fusion.batch_gemm_config entries) on
/// `op`, of GEMM config `config` and tile reductions `tiles` (if any):
/// entries in increasing max_rows, each a config that verifies on `op` with
/// the op config's backend (and block rows, with a batch norm), and that
/// reduces `tiles`' spans from `tiles`' min_rows on (smaller batches, which
/// end an entry, write the output instead: no tile reductions);
/// or, where the op config is cuBLASLt's (the host then branches between
/// backends) and the op has no batch norm, entries of one generated
/// backend.
static LogicalResult verifyBatchGemmConfigs(FusedLinearOp op,
                                            LoweringAttr lowering) {
  GemmConfigAttr config = lowering.getGemm();
  TileReductionsAttr tiles = lowering.getTileReductions();
  ArrayRef<BatchGemmConfigAttr> entries = lowering.getBatches();
  // An op of cuBLASLt's GEMM may give small batches one generated backend's
  // kernels (the host branches on the batch between them), where both
  // write the same output: no batch norm, whose moments the two paths
  // compute in different kernels and workspaces.
  bool branchesBackends = !config.isGenerated();
  if (branchesBackends && op.getBatchNormAttr())
    return op.emitOpError("batch GEMM configs of a ")
           << stringifyGemmBackend(config.getBackend())
           << " op with a batch norm stage: cuBLASLt's path and the "
              "generated kernels compute its moments in different kernels";
  GemmBackend backend = branchesBackends && !entries.empty()
                            ? entries.front().getConfig().getBackend()
                            : config.getBackend();
  // Batches below the tile reductions' min_rows (which end an entry, the
  // verifyLoweringConfig checks) write the output instead.
  int64_t unreducedRows = tiles ? tiles.getMinRows() - 1 : 0;
  EpilogueBatchNormAttr epilogueBatchNorm = lowering.getEpilogueBatchNorm();
  int64_t previousRows = 0;
  for (BatchGemmConfigAttr entry : entries) {
    GemmConfigAttr batchConfig = entry.getConfig();
    if (entry.getMaxRows() <= previousRows)
      return op.emitOpError("batch GEMM configs must be in increasing "
                            "max_rows, got ")
             << entry.getMaxRows() << " after " << previousRows;
    previousRows = entry.getMaxRows();
    if (batchConfig.getBackend() != backend)
      return op.emitOpError("the batch GEMM config for up to ")
             << entry.getMaxRows() << " rows must keep the "
             << (branchesBackends ? "first batch config's " : "op config's ")
             << stringifyGemmBackend(backend) << " backend, not "
             << stringifyGemmBackend(batchConfig.getBackend());
    // A batch norm's moments come in chunks of the op config's block rows,
    // but for batches that one block row holds and the GEMM kernel
    // finishes (#fusion.epilogue_batch_norm).
    bool finished = epilogueBatchNorm &&
                    entry.getMaxRows() <= epilogueBatchNorm.getMaxRows() &&
                    entry.getMaxRows() <= batchConfig.getBlockM();
    if (op.getBatchNormAttr() &&
        batchConfig.getBlockM() != config.getBlockM() && !finished)
      return op.emitOpError("the batch GEMM config for up to ")
             << entry.getMaxRows() << " rows of an op with a batch norm "
             << "must keep the op config's " << config.getBlockM()
             << "-row blocks, not " << batchConfig.getBlockM()
             << " (or hold its batches in one block row, which the epilogue "
                "batch norm finishes)";
    if (failed(verifyGemmConfig(op, batchConfig)) ||
        (tiles && entry.getMaxRows() > unreducedRows &&
         failed(verifyTileReductions(op, batchConfig, tiles))))
      return failure();
  }
  return success();
}

/// The checks of `epilogueBatchNorm` on `op`, of GEMM config `config` and
/// batch configs `batchConfigs`: a training batch-norm stage whose
/// statistics the op after the norm does not read, a generated config,
/// max_rows from 1 to its block rows (which every batch config
/// keeps), and a config for max_rows rows whose accumulators hold rows of
/// the tile (operands = x_w), which the normalizing epilogue reads.
static LogicalResult
verifyEpilogueBatchNorm(FusedLinearOp op, GemmConfigAttr config,
                        ArrayRef<BatchGemmConfigAttr> batchConfigs,
                        EpilogueBatchNormAttr epilogueBatchNorm) {
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  if (!batchNorm || !batchNorm.isTraining())
    return op.emitOpError("an epilogue batch norm needs a training batch_norm "
                          "stage");
  if (!config.isGenerated())
    return op.emitOpError("an epilogue batch norm needs a generated GEMM "
                          "config");
  if (!canFinishBatchNorm(op))
    return op.emitOpError("an epilogue batch norm computes the op after the "
                          "norm, which here reads the norm's statistics: the "
                          "kernel writes them after it stages that op's "
                          "columns");
  int64_t maxRows = epilogueBatchNorm.getMaxRows();
  if (maxRows < 1 || maxRows > config.getBlockM())
    return op.emitOpError("an epilogue batch norm for up to ")
           << maxRows
           << " rows: one block row of the config's tiles holds 1 to "
           << config.getBlockM();
  // Each config that finishes some of these batches reads rows of the
  // tile.
  if (getGemmConfigForRows(config, batchConfigs, maxRows).swapsOperands() ||
      llvm::any_of(getFinishingBatchConfigs(batchConfigs, maxRows),
                   [](BatchGemmConfigAttr entry) {
                     return entry.getConfig().swapsOperands();
                   }))
    return op.emitOpError("an epilogue batch norm for up to ")
           << maxRows
           << " rows needs a GEMM config for those rows with operands = x_w "
              "(a batch config where the op's swaps them)";
  return success();
}

/// The checks of a dual GEMM's lowering: one config for every batch (no
/// batch configs, tile reductions or split_k) of a kernel that computes
/// dual GEMMs (computesDualWeight).
static LogicalResult verifyDualGemmLowering(FusedLinearOp op,
                                            LoweringAttr lowering) {
  GemmConfigAttr config = lowering.getGemm();
  if (!computesDualWeight(config))
    return op.emitOpError("a dual GEMM (dual_weight) is computed by a wgmma "
                          "kernel of operands = x_w, not 3xTF32, without "
                          "split_k, its two sets of accumulators at most ")
           << kMaxDualAccumulators
           << " a thread (cooperative 128x128 tiles); this config is not "
              "one: fusion-select-gemm-config splits the dual GEMM into two "
              "for other configs";
  if (!lowering.getBatches().empty() || lowering.getTileReductions())
    return op.emitOpError("a dual GEMM takes one config for every batch, "
                          "without batch configs or tile reductions");
  return success();
}

LogicalResult mlir::fusion::verifyLoweringConfig(FusedLinearOp op) {
  LoweringAttr lowering = LoweringAttr::of(op);
  if (!lowering)
    return success();
  GemmConfigAttr config = lowering.getGemm();
  if (op.getDualWeight() && failed(verifyDualGemmLowering(op, lowering)))
    return failure();
  if (failed(verifyGemmConfig(op, config)))
    return failure();
  TileReductionsAttr tiles = lowering.getTileReductions();
  if (tiles && failed(verifyTileReductions(op, config, tiles)))
    return failure();
  ArrayRef<BatchGemmConfigAttr> entries = lowering.getBatches();
  // Batches below the tile reductions' min_rows end a batch config: the
  // host branches on the batch there.
  int64_t unreducedRows = tiles ? tiles.getMinRows() - 1 : 0;
  if (unreducedRows > 0 &&
      llvm::none_of(entries, [&](BatchGemmConfigAttr entry) {
        return entry.getMaxRows() == unreducedRows;
      }))
    return op.emitOpError("tile reductions from min_rows = ")
           << unreducedRows + 1 << ": batches of at most " << unreducedRows
           << " rows must end a batch GEMM config";
  if (!entries.empty() && failed(verifyBatchGemmConfigs(op, lowering)))
    return failure();
  if (EpilogueBatchNormAttr epilogueBatchNorm = lowering.getEpilogueBatchNorm())
    return verifyEpilogueBatchNorm(op, config, entries, epilogueBatchNorm);
  return success();
}

LogicalResult mlir::fusion::verifyLaunchOnTarget(fusion_rt::LaunchOp launch) {
  TargetAttr target = TargetAttr::lookup(launch);
  if (!target)
    return success();
  const ChipInfo &chip = getChipInfo(target.getChip());
  if (launch.getShared() > chip.maxSharedBytesPerBlock)
    return launch.emitOpError("asks for ")
           << launch.getShared() << " bytes of shared memory, "
           << stringifyChip(chip.chip) << " has "
           << chip.maxSharedBytesPerBlock;
  if (launch.getOverlapPredecessor() && !chip.hasGridDependencyControl)
    return launch.emitOpError("overlaps its predecessor, which ")
           << stringifyChip(chip.chip)
           << " cannot (programmatic dependent launch needs sm_90)";
  return success();
}

LogicalResult mlir::fusion::verifyLowering(Operation *root) {
  WalkResult result = root->walk([](Operation *op) {
    LogicalResult verified = success();
    if (auto fused = dyn_cast<FusedLinearOp>(op))
      verified = verifyLoweringConfig(fused);
    else if (auto launch = dyn_cast<fusion_rt::LaunchOp>(op))
      verified = verifyLaunchOnTarget(launch);
    return failed(verified) ? WalkResult::interrupt() : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

namespace {
struct VerifyLoweringPass
    : public fusion::impl::VerifyLoweringBase<VerifyLoweringPass> {
  void runOnOperation() override {
    if (failed(verifyLowering(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
