//===- GemmConfig.h - chips and the generated GEMM kernels' rules -*- C++ -*-===//
//
// What a #fusion.gemm_config may say and what it costs: the table of chips
// fusion generates code for, the shape rules and shared-memory footprint of
// the generated GEMM kernels (the kernel builders in
// lib/Conversion/FusionToGPU build exactly this layout), and the MMA kind a
// fused op's types and precision call for. The attribute verifiers, the
// config selection and the kernel builders all read these, so a config that
// verifies is one the builders can emit.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_IR_GEMMCONFIG_H
#define FUSION_DIALECT_FUSION_IR_GEMMCONFIG_H

#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"

#include <string>

namespace mlir::fusion {

/// The ElementType of `type`, if fusion computes on it.
std::optional<ElementType> getElementTypeKind(Type type);
/// The MLIR type of `kind`, the inverse of `getElementTypeKind`.
Type getElementTypeOf(ElementType kind, MLIRContext *context);

/// What fusion needs to know of a chip.
struct ChipInfo {
  Chip chip;
  /// The most dynamic shared memory one block may use (opt-in), in bytes.
  int64_t maxSharedBytesPerBlock;
  /// Streaming multiprocessors of the chip's reference part.
  int64_t smCount;
  /// cp.async, ldmatrix and mma.sync of bf16/f16/tf32 (sm_80 and newer).
  bool hasMmaSync;
  /// TMA, mbarrier transactions and wgmma (sm_90, as its arch-specific
  /// sm_90a target).
  bool hasWgmma;
  /// Programmatic dependent launch (griddepcontrol, sm_90): a kernel may
  /// start while the stream's previous one finishes.
  bool hasGridDependencyControl;
};

const ChipInfo &getChipInfo(Chip chip);
/// "sm_80, sm_86, sm_89, sm_90", for diagnostics.
std::string getSupportedChipList();

/// Shared-memory rows of the generated GEMM kernels hold 128 bytes of K, in
/// 16-byte chunks (one cp.async, one ldmatrix row each).
constexpr int64_t kGemmRowBytes = 128;
constexpr int64_t kGemmChunkBytes = 16;
constexpr int64_t kGemmChunksPerRow = kGemmRowBytes / kGemmChunkBytes;
/// SIMT kernels: threads along N of the block's thread grid.
constexpr int64_t kSimtThreadsN = 16;

/// TMA's 128-byte swizzle repeats every 8 rows of 128 bytes: a wgmma
/// kernel's stage buffers start at multiples of this.
constexpr int64_t kSwizzleAtomBytes = 1024;

/// Where a generated GEMM kernel keeps what in its dynamic shared memory, in
/// bytes. The pipeline's stages come first; past the main loop the epilogue
/// reuses them for the output tile. The block's bias and epilogue columns
/// (f32) live past both, then a wgmma kernel's column moments' scratch. A
/// wgmma kernel's offsets count from the first 1024-byte boundary of its
/// dynamic shared memory (`total` has room for the shift); with 3xTF32, a
/// buffer of w's remainders a stage follows them; its mbarriers are static
/// shared memory.
struct GemmSharedLayout {
  int64_t stagingRowElements; ///< one row of the output tile, padded
  int64_t constants;          ///< offset of the column constants
  /// Offset of the [tile warps + 1, blockN] f32 scratch in which a
  /// kernel that takes column moments from its registers merges its warps'
  /// sums (the last row: the tile's column means), or of the [3, blockN]
  /// f32 center, scale and shift of the columns with which another kernel
  /// normalizes a batch norm; 0 if it has none (a wgmma kernel with
  /// operands = w_x sums each column within a quad of lanes).
  int64_t moments;
  /// A ping-pong kernel's second consumer warpgroup has column constants
  /// and moments scratch of its own, this many bytes past the first's; 0
  /// where the consumers share them.
  int64_t consumerScratchStride;
  /// Offset of the [split_k - 1, blockM * blockN] f32 sums that the other
  /// blocks of a cluster sharing the tile's K slices store into its first
  /// block's; 0 without split_k.
  int64_t partials;
  int64_t total;       ///< dynamic shared memory
  int64_t staticBytes; ///< static shared memory (mbarriers)
  /// What a block asks of the chip's shared memory.
  int64_t footprint() const { return total + staticBytes; }
  /// For `config` on elements of `elementBytes`, with `columnVectors`
  /// per-column vectors (bias and epilogue operands), whether the
  /// epilogue takes column moments (a training batch norm) and whether it
  /// normalizes by them (#fusion.epilogue_batch_norm).
  static GemmSharedLayout of(GemmConfigAttr config, int64_t elementBytes,
                             int64_t columnVectors, bool columnMoments,
                             bool normalizes);
};

/// Whether a kernel of `config` takes column moments from its accumulators
/// (the lanes of a wgmma kernel's warps that hold the same columns sum
/// them with shuffles) rather than from its output tile staged in shared
/// memory; then its tile need not be staged, and its blocks can be
/// persistent.
inline bool takesColumnMomentsInRegisters(GemmConfigAttr config) {
  return config.isWgmma();
}

/// A wgmma kernel's mbarriers: a full and an empty one a stage (3xTF32: and
/// a split one), the epilogue's release of the stages, with the ping-pong
/// schedule the end of each tile's main loop, and with split_k the peers'
/// sums stored (in the cluster's first block) and taken (in each peer).
inline int64_t getWgmmaBarrierCount(GemmConfigAttr config) {
  return (config.isWgmmaSplit() ? 3 : 2) * config.getStages() + 1 +
         (config.isPingpong() ? 1 : 0) + (config.splitsK() ? 2 : 0);
}

/// The MMA kind a generated kernel must use for tensors of `elementType` in
/// `precision`: 16-bit tensors multiply natively (their products are exact
/// in fp32 and tf32 too); f32 tensors by precision.
MmaKind getRequiredMmaKind(Type elementType, Precision precision);

/// Whether rows of K elements of `elementType` (of x and w) are multiples of
/// 16 bytes: one cp.async chunk, and the unit of TMA's strides.
bool hasChunkAlignedRows(Type elementType, int64_t k);
/// Whether those rows are whole 128-byte lines (kGemmRowBytes): TMA splits
/// a box row that crosses a line into two L2 requests.
bool hasLineAlignedRows(Type elementType, int64_t k);
/// The K slices of those rows: 128-byte pieces (kGemmRowBytes), the last
/// one partial where K is not a multiple.
int64_t countKSlices(Type elementType, int64_t k);

/// The columns each partial covers when a generated GEMM of tiles `blockN`
/// wide reduces, from its tiles, the G = `groups` groups of N / G
/// contiguous columns of its [M, n] `elementType` output: blockN (whole
/// rows, or groups of whole tiles), or N / G (groups that tile a tile, of
/// whole 16-byte chunks). None where groups and tiles straddle each other.
/// With `span`, that span where it divides blockN and the groups and is of
/// whole 16-byte chunks (each tile then reduces several spans).
std::optional<int64_t>
getRowReductionSpan(int64_t blockN, Type elementType, int64_t n, int64_t groups,
                    std::optional<int64_t> span = std::nullopt);

/// Whether a wgmma kernel multiplies with `mma`: bf16, f16, tf32 and
/// 3xTF32 (f32 operands rounded to 16 bits are mma_sync's alone).
bool isWgmmaKind(MmaKind mma);

class FusedLinearOp;
/// The shared layout of `op`'s generated GEMM kernel of `config`.
GemmSharedLayout getGemmSharedLayout(FusedLinearOp op, GemmConfigAttr config);

/// The checks of `config` that need the op it lowers: the MMA kind against
/// the op's types and precision, the footprint against the chip of the
/// enclosing #fusion.target (if any). Run by the op's verifier.
LogicalResult verifyGemmConfig(FusedLinearOp op, GemmConfigAttr config);

/// The checks of `tiles` on `op` (of GEMM config `config`, if any): a
/// generated GEMM, no batch norm stage, and a span that tiles of the
/// config's width can reduce over the output's columns. Run by the op's
/// verifier.
LogicalResult verifyTileReductions(FusedLinearOp op, GemmConfigAttr config,
                                   TileReductionsAttr tiles);

/// The checks of `batchConfigs` (#fusion.batch_gemm_config entries) on
/// `op`, of GEMM config `config` and tile reductions `tiles` (if any):
/// entries in increasing max_rows, each a config that verifies on `op` with
/// the op config's backend (and block rows, with a batch norm), and that
/// reduces `tiles`' spans from `tiles`' min_rows on (smaller batches, which
/// end an entry, write the output instead: no tile reductions);
/// or, where the op config is cuBLASLt's (the host then branches between
/// backends) and the op has no batch norm, entries of one generated
/// backend. Run by the op's verifier.
LogicalResult verifyBatchGemmConfigs(FusedLinearOp op, GemmConfigAttr config,
                                     TileReductionsAttr tiles,
                                     ArrayAttr batchConfigs);

/// The config a batch of `rows` rows gets: that of the first of
/// `batchConfigs` (in increasing max_rows) that fits it, else the op's
/// `config`.
GemmConfigAttr getGemmConfigForRows(GemmConfigAttr config,
                                    ArrayRef<BatchGemmConfigAttr> batchConfigs,
                                    int64_t rows);

/// The entries of `batchConfigs` below `maxRows` (an epilogue batch norm's):
/// their batches take finishing kernels of their own, those of `maxRows`
/// rows the config getGemmConfigForRows gives.
SmallVector<BatchGemmConfigAttr>
getFinishingBatchConfigs(ArrayRef<BatchGemmConfigAttr> batchConfigs,
                         int64_t maxRows);

/// The checks of `epilogueBatchNorm` on `op`, of GEMM config `config` and
/// batch configs `batchConfigs`: a training batch-norm stage, a generated
/// config, max_rows from 1 to its block rows (which every batch config
/// keeps), and a config for max_rows rows whose accumulators hold rows of
/// the tile (operands = x_w), which the normalizing epilogue reads. Run by
/// the op's verifier.
LogicalResult
verifyEpilogueBatchNorm(FusedLinearOp op, GemmConfigAttr config,
                        ArrayRef<BatchGemmConfigAttr> batchConfigs,
                        EpilogueBatchNormAttr epilogueBatchNorm);

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_IR_GEMMCONFIG_H
