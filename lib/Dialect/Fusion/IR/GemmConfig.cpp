//===- GemmConfig.cpp - what a #fusion.gemm_config may say ----------------===//

#include "fusion/Dialect/Fusion/IR/GemmConfig.h"
#include "fusion/Dialect/Fusion/IR/EnumKeywords.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fusion;

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

bool mlir::fusion::isWgmmaKind(MmaKind mma) {
  return mma == MmaKind::bf16 || mma == MmaKind::f16 || mma == MmaKind::tf32 ||
         mma == MmaKind::tf32x3;
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

/// The wgmma kernel's schedule fields: swapped operands, clusters,
/// split-K and ping-pong, each a wgmma kernel's of some schedule.
static LogicalResult verifyWgmmaSchedule(
    function_ref<InFlightDiagnostic()> emitError, GemmBackend backend,
    int64_t warpsM, int64_t warpsN, WgmmaSchedule schedule, int64_t clusterM,
    WgmmaOperands operands, int64_t splitK, TileScheduler tileScheduler) {
  if (tileScheduler == TileScheduler::per_block &&
      (backend != GemmBackend::wgmma || schedule != WgmmaSchedule::cooperative))
    return emitError() << "tile_scheduler = per_block is a cooperative wgmma "
                          "kernel's (ping-pong's consumers take a block's "
                          "tiles in turn)";
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
  return success();
}

/// A generated kernel's mma kind: mma_sync's and wgmma's need one (wgmma's
/// of its kinds), simt's none.
static LogicalResult verifyMmaKind(function_ref<InFlightDiagnostic()> emitError,
                                   GemmBackend backend,
                                   std::optional<MmaKind> mma) {
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
  return success();
}

/// A wgmma kernel's tiling: one or two consumer warpgroups, each
/// multiplying 64 or 128 rows of the tile by all its columns (one or two
/// m64nNk wgmmas a K step, N <= 256), with N a multiple of the output's
/// 16-byte stores (8 elements of 16 bits). With operands = w_x the
/// warpgroups split the tile's columns and each wgmma's N is the tile's
/// rows.
static LogicalResult
verifyWgmmaTiling(function_ref<InFlightDiagnostic()> invalid,
                  std::optional<MmaKind> mma, int64_t blockM, int64_t blockN,
                  int64_t warpsM, int64_t warpsN, WgmmaOperands operands) {
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
  if (split == 32 * warpsM && (whole > 128 || (mma && *mma == MmaKind::tf32x3)))
    return invalid() << "a consumer warpgroup of 128 " << splitName
                     << " multiplies at most 128 " << wholeName
                     << ", and not in tf32x3";
  return success();
}

/// The tiling of the mma_sync and simt kernels: warp tiles of 16x16
/// multiples, the SIMT thread grid, an equal share of each stage's copies.
static LogicalResult
verifyWarpTiling(function_ref<InFlightDiagnostic()> invalid,
                 GemmBackend backend, int64_t blockM, int64_t blockN,
                 int64_t warpsM, int64_t warpsN) {
  int64_t threads = 32 * warpsM * warpsN;
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

LogicalResult GemmConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, GemmBackend backend,
    std::optional<MmaKind> mma, int64_t blockM, int64_t blockN, int64_t warpsM,
    int64_t warpsN, int64_t stages, int64_t groupM, WgmmaSchedule schedule,
    int64_t clusterM, WgmmaOperands operands, int64_t splitK,
    TileScheduler tileScheduler) {
  if (failed(verifyWgmmaSchedule(emitError, backend, warpsM, warpsN, schedule,
                                 clusterM, operands, splitK, tileScheduler)))
    return failure();
  if (backend == GemmBackend::cublaslt) {
    if (mma || blockM || blockN || warpsM || warpsN || stages || groupM)
      return emitError() << "a cublaslt GEMM config takes no mma kind or "
                            "tiling";
    return success();
  }
  if (failed(verifyMmaKind(emitError, backend, mma)))
    return failure();
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
  if (backend == GemmBackend::wgmma)
    return verifyWgmmaTiling(invalid, mma, blockM, blockN, warpsM, warpsN,
                             operands);
  return verifyWarpTiling(invalid, backend, blockM, blockN, warpsM, warpsN);
}

namespace {
/// The keyed fields of a #fusion.gemm_config, at their defaults.
struct GemmConfigFields {
  std::optional<MmaKind> mma;
  int64_t blockM = 0, blockN = 0, warpsM = 0, warpsN = 0, stages = 0,
          groupM = 0;
  WgmmaSchedule schedule = WgmmaSchedule::cooperative;
  int64_t clusterM = 1, splitK = 1;
  WgmmaOperands operands = WgmmaOperands::x_w;
  TileScheduler tileScheduler = TileScheduler::persistent;
};

/// Two extents, MxN.
ParseResult parseExtentPair(AsmParser &parser, int64_t &first,
                            int64_t &second) {
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
}

/// The value of `key` (after its '='), into `fields`.
ParseResult parseGemmConfigValue(AsmParser &parser, StringRef key, SMLoc keyLoc,
                                 GemmConfigFields &fields) {
  if (key == "mma") {
    MmaKind mma;
    if (parseEnumKeyword(parser, mma, "mma kind",
                         "bf16, f16, tf32, tf32x3, f32_as_bf16 or f32_as_f16"))
      return failure();
    fields.mma = mma;
    return success();
  }
  if (key == "tile")
    return parseExtentPair(parser, fields.blockM, fields.blockN);
  if (key == "warps")
    return parseExtentPair(parser, fields.warpsM, fields.warpsN);
  if (key == "stages")
    return parser.parseInteger(fields.stages);
  if (key == "group_m")
    return parser.parseInteger(fields.groupM);
  if (key == "schedule")
    return parseEnumKeyword(parser, fields.schedule, "schedule",
                            "cooperative or pingpong");
  if (key == "cluster")
    return parser.parseInteger(fields.clusterM);
  if (key == "operands")
    return parseEnumKeyword(parser, fields.operands, "operands", "x_w or w_x");
  if (key == "split_k")
    return parser.parseInteger(fields.splitK);
  if (key == "tile_scheduler")
    return parseEnumKeyword(parser, fields.tileScheduler, "tile scheduler",
                            "persistent or per_block");
  return parser.emitError(keyLoc)
         << "unknown GEMM config key '" << key
         << "' (expected mma, tile, warps, stages, group_m, schedule, "
            "cluster, operands, split_k or tile_scheduler)";
}
} // namespace

Attribute GemmConfigAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  SMLoc backendLoc = parser.getCurrentLocation();
  GemmBackend backend;
  if (parseEnumKeyword(parser, backend, "GEMM backend",
                       "cublaslt, mma_sync, simt or wgmma"))
    return {};
  GemmConfigFields fields;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual() ||
        parseGemmConfigValue(parser, key, keyLoc, fields))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return GemmConfigAttr::getChecked(
      [&] { return parser.emitError(backendLoc); }, parser.getContext(),
      backend, fields.mma, fields.blockM, fields.blockN, fields.warpsM,
      fields.warpsN, fields.stages, fields.groupM, fields.schedule,
      fields.clusterM, fields.operands, fields.splitK, fields.tileScheduler);
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
  if (isPerBlock())
    printer << ", tile_scheduler = "
            << stringifyTileScheduler(getTileScheduler());
  printer << ">";
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

//===----------------------------------------------------------------------===//
// #fusion.lowering
//===----------------------------------------------------------------------===//

Attribute LoweringAttr::parse(AsmParser &parser, Type) {
  GemmConfigAttr gemm;
  if (parser.parseLess() || parser.parseKeyword("gemm") ||
      parser.parseEqual() || parser.parseCustomAttributeWithFallback(gemm))
    return {};
  SmallVector<BatchGemmConfigAttr> batches;
  TileReductionsAttr tileReductions;
  EpilogueBatchNormAttr epilogueBatchNorm;
  bool seenBatches = false;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    auto once = [&](bool seen) -> bool {
      if (seen)
        parser.emitError(keyLoc) << "'" << key << "' is given twice";
      return !seen;
    };
    ParseResult parsed = failure();
    if (key == "batches") {
      if (!once(seenBatches))
        return {};
      seenBatches = true;
      parsed = parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            BatchGemmConfigAttr entry;
            if (parser.parseCustomAttributeWithFallback(entry))
              return failure();
            batches.push_back(entry);
            return success();
          });
    } else if (key == "tile_reductions") {
      if (!once(static_cast<bool>(tileReductions)))
        return {};
      parsed = parser.parseCustomAttributeWithFallback(tileReductions);
    } else if (key == "epilogue_batch_norm") {
      if (!once(static_cast<bool>(epilogueBatchNorm)))
        return {};
      parsed = parser.parseCustomAttributeWithFallback(epilogueBatchNorm);
    } else {
      parser.emitError(keyLoc)
          << "unknown lowering key '" << key
          << "' (expected batches, tile_reductions or epilogue_batch_norm)";
      return {};
    }
    if (failed(parsed))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return LoweringAttr::get(parser.getContext(), gemm, batches, tileReductions,
                           epilogueBatchNorm);
}

void LoweringAttr::print(AsmPrinter &printer) const {
  printer << "<gemm = ";
  printer.printStrippedAttrOrType(getGemm());
  if (!getBatches().empty()) {
    printer << ", batches = [";
    llvm::interleaveComma(getBatches(), printer,
                          [&](BatchGemmConfigAttr entry) { printer << entry; });
    printer << "]";
  }
  if (TileReductionsAttr tiles = getTileReductions()) {
    printer << ", tile_reductions = ";
    printer.printStrippedAttrOrType(tiles);
  }
  if (EpilogueBatchNormAttr batchNorm = getEpilogueBatchNorm()) {
    printer << ", epilogue_batch_norm = ";
    printer.printStrippedAttrOrType(batchNorm);
  }
  printer << ">";
}
