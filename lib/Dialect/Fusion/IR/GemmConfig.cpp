//===- GemmConfig.cpp - chips and the generated GEMM kernels' rules -------===//

#include "fusion/Dialect/Fusion/IR/GemmConfig.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fusion;

namespace {
// Shared memory per block with the opt-in carve-out (CUDA programming guide,
// compute capabilities table); SM counts of the A100, RTX A6000, L40S, H100.
constexpr ChipInfo kChips[] = {
    {Chip::sm_80, 163 * 1024, 108, true, false, false},
    {Chip::sm_86, 99 * 1024, 84, true, false, false},
    {Chip::sm_89, 99 * 1024, 142, true, false, false},
    {Chip::sm_90, 227 * 1024, 132, true, true, true},
};
} // namespace

std::optional<ElementType> mlir::fusion::getElementTypeKind(Type type) {
  if (type.isF32())
    return ElementType::f32;
  if (type.isBF16())
    return ElementType::bf16;
  if (type.isF16())
    return ElementType::f16;
  return std::nullopt;
}

Type mlir::fusion::getElementTypeOf(ElementType kind, MLIRContext *context) {
  switch (kind) {
  case ElementType::f32:
    return Float32Type::get(context);
  case ElementType::bf16:
    return BFloat16Type::get(context);
  case ElementType::f16:
    return Float16Type::get(context);
  }
  llvm_unreachable("every ElementType has an MLIR type");
}

const ChipInfo &mlir::fusion::getChipInfo(Chip chip) {
  for (const ChipInfo &info : kChips)
    if (info.chip == chip)
      return info;
  llvm_unreachable("every Chip has a ChipInfo");
}

std::string mlir::fusion::getSupportedChipList() {
  std::string list;
  for (const ChipInfo &info : kChips) {
    if (!list.empty())
      list += ", ";
    list += stringifyChip(info.chip).str();
  }
  return list;
}

GemmSharedLayout GemmSharedLayout::of(GemmConfigAttr config,
                                      int64_t elementBytes,
                                      int64_t columnVectors, bool columnMoments,
                                      bool normalizes) {
  GemmSharedLayout layout;
  // 8 elements of padding a row: the 8 rows one accumulator store of a warp
  // touches start 4 (16-bit types) or 8 (f32) banks apart, so the pairs of
  // its 32 lanes hit distinct banks.
  layout.stagingRowElements = config.getBlockN() + 8;
  int64_t staging =
      config.getBlockM() * layout.stagingRowElements * elementBytes;
  int64_t stageBytes =
      (config.getBlockM() + config.getBlockN()) * kGemmRowBytes;
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

GemmSharedLayout mlir::fusion::getGemmSharedLayout(FusedLinearOp op,
                                                   GemmConfigAttr config) {
  int64_t vectors = (op.getBias() ? 1 : 0) + op.getEpilogueOperands().size();
  int64_t elementBytes =
      op.getWeight().getType().getElementType().getIntOrFloatBitWidth() / 8;
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  return GemmSharedLayout::of(
      config, elementBytes, vectors, batchNorm && batchNorm.isTraining(),
      op->hasAttr(FusionDialect::getEpilogueBatchNormAttrName()));
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

bool mlir::fusion::isWgmmaKind(MmaKind mma) {
  return mma == MmaKind::bf16 || mma == MmaKind::f16 || mma == MmaKind::tf32 ||
         mma == MmaKind::tf32x3;
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

/// The checks of a config that need the op it is attached to: the MMA kind
/// against the op's types and precision, the footprint against the chip.
LogicalResult mlir::fusion::verifyGemmConfig(FusedLinearOp op, GemmConfigAttr config) {
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
  int64_t k = op.getWeight().getType().getDimSize(1);
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
           << " bytes of shared memory, " << stringifyChip(chip.chip)
           << " has " << chip.maxSharedBytesPerBlock;
  return success();
}

//===----------------------------------------------------------------------===//
// #fusion.target
//===----------------------------------------------------------------------===//

TargetAttr TargetAttr::lookup(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto target = op->getAttrOfType<TargetAttr>(getAttrName()))
      return target;
  return {};
}

//===----------------------------------------------------------------------===//
// #fusion.gemm_config
//===----------------------------------------------------------------------===//

// Bounds that keep every product of the kernel's arithmetic far from
// overflow; real tilings are well inside them.
static constexpr int64_t kMaxBlockExtent = 1024;
static constexpr int64_t kMaxStages = 16;
static constexpr int64_t kMaxGroupM = 64;

LogicalResult GemmConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, GemmBackend backend,
    std::optional<MmaKind> mma, int64_t blockM, int64_t blockN, int64_t warpsM,
    int64_t warpsN, int64_t stages, int64_t groupM, WgmmaSchedule schedule,
    int64_t clusterM, WgmmaOperands operands, int64_t splitK) {
  if (operands == WgmmaOperands::w_x &&
      (backend != GemmBackend::wgmma ||
       schedule != WgmmaSchedule::cooperative || clusterM != 1))
    return emitError() << "operands = w_x is a cooperative, unclustered wgmma "
                          "kernel's";
  if (clusterM != 1 && (backend != GemmBackend::wgmma || clusterM != 2))
    return emitError() << "cluster " << clusterM
                       << ": a wgmma kernel's blocks run alone or in "
                          "clusters of 2 (cluster = 1 or 2)";
  if (splitK != 1 &&
      (backend != GemmBackend::wgmma || (splitK != 2 && splitK != 4) ||
       schedule != WgmmaSchedule::cooperative || clusterM != 1))
    return emitError() << "split_k " << splitK
                       << ": a cooperative, unclustered wgmma kernel's "
                          "clusters of 2 or 4 blocks share a tile's K slices";
  if (schedule == WgmmaSchedule::pingpong &&
      (backend != GemmBackend::wgmma || warpsM != 4 || warpsN != 1))
    return emitError() << "a pingpong schedule is a wgmma kernel's whose "
                          "tiles are one warpgroup's (warps = 4x1)";
  if (backend == GemmBackend::cublaslt) {
    if (mma || blockM || blockN || warpsM || warpsN || stages || groupM)
      return emitError() << "a cublaslt GEMM config takes no mma kind or "
                            "tiling";
    return success();
  }
  if ((backend == GemmBackend::mma_sync || backend == GemmBackend::wgmma) &&
      !mma)
    return emitError() << "an " << stringifyGemmBackend(backend)
                       << " GEMM config needs an mma kind";
  if (backend == GemmBackend::wgmma && !isWgmmaKind(*mma))
    return emitError() << "a wgmma GEMM config multiplies with bf16, f16, "
                          "tf32 or tf32x3, not "
                       << stringifyMmaKind(*mma);
  if (backend == GemmBackend::simt && mma)
    return emitError() << "a simt GEMM config takes no mma kind (it "
                          "multiplies with f32 fma)";
  auto outOfRange = [&](StringRef what, int64_t value, int64_t low,
                        int64_t high) -> bool {
    if (value >= low && value <= high)
      return false;
    emitError() << what << " " << value << " is out of range [" << low << ", "
                << high << "]";
    return true;
  };
  if (outOfRange("tile rows", blockM, 16, kMaxBlockExtent) ||
      outOfRange("tile columns", blockN, 16, kMaxBlockExtent) ||
      outOfRange("warps along M", warpsM, 1, 32) ||
      outOfRange("warps along N", warpsN, 1, 32) ||
      outOfRange("stages", stages, 2, kMaxStages) ||
      outOfRange("group_m", groupM, 1, kMaxGroupM))
    return failure();
  int64_t threads = 32 * warpsM * warpsN;
  auto invalid = [&]() {
    return emitError() << "tiling " << blockM << "x" << blockN << " with "
                       << warpsM << "x" << warpsN << " warps: ";
  };
  if (threads > 1024)
    return invalid() << threads << " threads, more than 1024 per block";
  if (backend == GemmBackend::wgmma) {
    // Each consumer warpgroup multiplies 64 or 128 rows of the tile by all
    // its columns (one or two m64nNk wgmmas a K step, N <= 256), with N a
    // multiple of the output's 16-byte stores (8 elements of 16 bits).
    // With operands = w_x the warpgroups split the tile's columns and
    // each wgmma's N is the tile's rows.
    if (warpsN != 1 || (warpsM != 4 && warpsM != 8))
      return invalid() << "a wgmma kernel has one or two consumer "
                          "warpgroups (warps = 4x1 or 8x1)";
    bool swapped = operands == WgmmaOperands::w_x;
    int64_t split = swapped ? blockN : blockM;
    int64_t whole = swapped ? blockM : blockN;
    StringRef splitName = swapped ? "columns" : "rows";
    StringRef wholeName = swapped ? "rows" : "columns";
    if (split != 16 * warpsM && split != 32 * warpsM)
      return invalid() << "each consumer warpgroup computes 64 or 128 "
                       << splitName;
    if (whole > 256 || whole % 16)
      return invalid() << "wgmma tiles have at most 256 " << wholeName
                       << ", a multiple of 16";
    // 128 accumulators a thread at most; 3xTF32 holds the parts of its 64
    // rows (x's, or w's with swapped operands) in registers beside them.
    if (split == 32 * warpsM &&
        (whole > 128 || (mma && *mma == MmaKind::tf32x3)))
      return invalid() << "a consumer warpgroup of 128 " << splitName
                       << " multiplies at most 128 " << wholeName
                       << ", and not in tf32x3";
    return success();
  }
  if (blockM % (16 * warpsM) || blockN % (16 * warpsN))
    return invalid() << "warp tiles must be multiples of 16x16";
  if (backend == GemmBackend::simt &&
      (blockM % (threads / kSimtThreadsN) || blockN % kSimtThreadsN))
    return invalid() << "the SIMT thread grid (" << kSimtThreadsN
                     << " threads along N) must divide the block tile";
  if ((blockM * kGemmChunksPerRow) % threads ||
      (blockN * kGemmChunksPerRow) % threads)
    return invalid() << "each thread must copy the same number of 16-byte "
                        "chunks";
  return success();
}

Attribute GemmConfigAttr::parse(AsmParser &parser, Type) {
  MLIRContext *context = parser.getContext();
  if (parser.parseLess())
    return {};
  SMLoc backendLoc = parser.getCurrentLocation();
  StringRef backendName;
  if (parser.parseKeyword(&backendName))
    return {};
  std::optional<GemmBackend> backend = symbolizeGemmBackend(backendName);
  if (!backend) {
    parser.emitError(backendLoc)
        << "unknown GEMM backend '" << backendName
        << "' (expected cublaslt, mma_sync, simt or wgmma)";
    return {};
  }
  std::optional<MmaKind> mma;
  int64_t blockM = 0, blockN = 0, warpsM = 0, warpsN = 0, stages = 0,
          groupM = 0;
  WgmmaSchedule schedule = WgmmaSchedule::cooperative;
  int64_t clusterM = 1, splitK = 1;
  WgmmaOperands operands = WgmmaOperands::x_w;
  // A keyword naming a case of an enum, into `value`.
  auto parseEnum = [&](auto &value, StringRef what,
                       StringRef expected) -> ParseResult {
    StringRef name;
    SMLoc nameLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&name))
      return failure();
    auto symbol = symbolizeEnum<std::decay_t<decltype(value)>>(name);
    if (!symbol)
      return parser.emitError(nameLoc)
             << "unknown " << what << " '" << name << "' (expected "
             << expected << ")";
    value = *symbol;
    return success();
  };
  auto parsePair = [&](int64_t &first, int64_t &second) -> ParseResult {
    SmallVector<int64_t, 2> dims;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseDimensionList(dims, /*allowDynamic=*/false,
                                  /*withTrailingX=*/false))
      return failure();
    if (dims.size() != 2)
      return parser.emitError(loc) << "expected two extents, MxN";
    first = dims[0];
    second = dims[1];
    return success();
  };
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    ParseResult parsed = success();
    if (key == "mma") {
      StringRef kind;
      SMLoc kindLoc = parser.getCurrentLocation();
      parsed = parser.parseKeyword(&kind);
      if (succeeded(parsed) && !(mma = symbolizeMmaKind(kind))) {
        parser.emitError(kindLoc) << "unknown mma kind '" << kind << "'";
        return {};
      }
    } else if (key == "tile") {
      parsed = parsePair(blockM, blockN);
    } else if (key == "warps") {
      parsed = parsePair(warpsM, warpsN);
    } else if (key == "stages") {
      parsed = parser.parseInteger(stages);
    } else if (key == "group_m") {
      parsed = parser.parseInteger(groupM);
    } else if (key == "schedule") {
      parsed = parseEnum(schedule, "schedule", "cooperative or pingpong");
    } else if (key == "cluster") {
      parsed = parser.parseInteger(clusterM);
    } else if (key == "operands") {
      parsed = parseEnum(operands, "operands", "x_w or w_x");
    } else if (key == "split_k") {
      parsed = parser.parseInteger(splitK);
    } else {
      parser.emitError(keyLoc)
          << "unknown GEMM config key '" << key
          << "' (expected mma, tile, warps, stages, group_m, schedule, "
             "cluster, operands or split_k)";
      return {};
    }
    if (failed(parsed))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return GemmConfigAttr::getChecked(
      [&] { return parser.emitError(backendLoc); }, context, *backend, mma,
      blockM, blockN, warpsM, warpsN, stages, groupM, schedule, clusterM,
      operands, splitK);
}

void GemmConfigAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyGemmBackend(getBackend());
  if (std::optional<MmaKind> mma = getMma())
    printer << ", mma = " << stringifyMmaKind(*mma);
  if (isGenerated())
    printer << ", tile = " << getBlockM() << "x" << getBlockN()
            << ", warps = " << getWarpsM() << "x" << getWarpsN()
            << ", stages = " << getStages() << ", group_m = " << getGroupM();
  if (isPingpong())
    printer << ", schedule = " << stringifyWgmmaSchedule(getSchedule());
  if (isClustered())
    printer << ", cluster = " << getClusterM();
  if (swapsOperands())
    printer << ", operands = " << stringifyWgmmaOperands(getOperands());
  if (splitsK())
    printer << ", split_k = " << getSplitK();
  printer << ">";
}

LogicalResult mlir::fusion::verifyTileReductions(FusedLinearOp op,
                                                 GemmConfigAttr config,
                                                 TileReductionsAttr tiles) {
  if (!config || !config.isGenerated())
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

//===----------------------------------------------------------------------===//
// #fusion.batch_gemm_config
//===----------------------------------------------------------------------===//

LogicalResult
BatchGemmConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            int64_t maxRows, GemmConfigAttr config) {
  if (maxRows < 1)
    return emitError() << "max_rows must be positive, got " << maxRows;
  if (!config.isGenerated())
    return emitError() << "a batch config is a generated GEMM's, not "
                       << stringifyGemmBackend(config.getBackend());
  return success();
}

LogicalResult mlir::fusion::verifyBatchGemmConfigs(FusedLinearOp op,
                                                   GemmConfigAttr config,
                                                   TileReductionsAttr tiles,
                                                   ArrayAttr batchConfigs) {
  if (!config)
    return op.emitOpError("batch GEMM configs need a GEMM config");
  auto entries = batchConfigs.getAsRange<BatchGemmConfigAttr>();
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
                            ? (*entries.begin()).getConfig().getBackend()
                            : config.getBackend();
  // Batches below the tile reductions' min_rows (which end an entry, the
  // op's verifier checks) write the output instead.
  int64_t unreducedRows = tiles ? tiles.getMinRows() - 1 : 0;
  auto epilogueBatchNorm = op->getAttrOfType<EpilogueBatchNormAttr>(
      FusionDialect::getEpilogueBatchNormAttrName());
  int64_t previousRows = 0;
  for (auto entry : entries) {
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

LogicalResult
mlir::fusion::verifyEpilogueBatchNorm(
    FusedLinearOp op, GemmConfigAttr config,
    ArrayRef<BatchGemmConfigAttr> batchConfigs,
    EpilogueBatchNormAttr epilogueBatchNorm) {
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  if (!batchNorm || !batchNorm.isTraining())
    return op.emitOpError("an epilogue batch norm needs a training batch_norm "
                          "stage");
  if (!config || !config.isGenerated())
    return op.emitOpError("an epilogue batch norm needs a generated GEMM "
                          "config");
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
