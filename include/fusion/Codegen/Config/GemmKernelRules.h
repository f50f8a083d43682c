//===- GemmKernelRules.h - the generated GEMM kernels' rules ----*- C++ -*-===//
//
// What a generated GEMM kernel of a #fusion.gemm_config costs and needs: its
// shared-memory layout (the kernel builders in lib/Codegen/Kernels build
// exactly this layout), the MMA kind a fused op's types and precision call
// for, the alignment of its operands' rows, the spans its tiles reduce and
// the config each batch gets. The config selection, the lowering-config
// verifier (Verifiers.h) and the kernel builders all read these, so a
// config that verifies is one the builders can emit.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_CONFIG_GEMMKERNELRULES_H
#define FUSION_CODEGEN_CONFIG_GEMMKERNELRULES_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/IR/GemmConfig.h"

#include <string>

namespace mlir::fusion {

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
  /// epilogue takes column moments (a training batch norm), whether it
  /// normalizes by them (#fusion.epilogue_batch_norm) and whether its
  /// stages hold a dual weight's tile after w's.
  static GemmSharedLayout of(GemmConfigAttr config, int64_t elementBytes,
                             int64_t columnVectors, bool columnMoments,
                             bool normalizes, bool dualWeight);
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

/// The accumulators a consumer thread of a dual GEMM's wgmma kernel may
/// hold, both GEMMs' (a 128x128 cooperative tile's: 64 each), beside the
/// epilogue's values in its 232 registers.
constexpr int64_t kMaxDualAccumulators = 128;

/// Whether a kernel of `config` computes a dual GEMM (a fused_linear with a
/// dual_weight): the wgmma kernel, multiplying x's rows by both weights'
/// tiles of each stage from shared memory (operands = x_w, not 3xTF32,
/// whose split parts would double again), without split_k, its two sets of
/// accumulators within kMaxDualAccumulators.
bool computesDualWeight(GemmConfigAttr config);

/// Why a kernel of `config` cannot read a weight stored [in_features,
/// out_features] (`weight_layout in_out`, N contiguous) of `elementType`
/// with N columns; empty if it can. Only the wgmma kernel reads one: TMA
/// loads w's tile in boxes of 128 bytes of N by a K slice's rows, which
/// wgmma reads N-major (imm-trans) for 16-bit operands; tf32's it reads
/// K-major only, so 3xTF32's splitters transpose each stage's boxes as
/// they split them (not with swapped operands: w's parts then come from
/// registers), and tf32 reads none. Each block's share of the tile is
/// whole boxes, and w's rows of N are whole 16-byte chunks (TMA's
/// strides).
std::string whyNotInOutWeight(GemmConfigAttr config, Type elementType,
                              int64_t n);
/// The columns of each part of `op`'s weight where it is a concat of them
/// along N (FusedLinearOp::getWeightConcat: a grouped GEMM), in order;
/// empty otherwise.
SmallVector<int64_t> getWeightPartWidths(FusedLinearOp op);
/// Why a kernel of `config` cannot read a weight in parts of `widths`
/// columns in place; empty if it can. Only the wgmma kernel reads one: a
/// TMA map a part, each tile's from the part that holds its columns, so
/// the parts must start at whole tiles; not beside a dual weight.
std::string whyNotWeightParts(GemmConfigAttr config, ArrayRef<int64_t> widths,
                              bool dual);
/// Whether a tile `blockN` wide lies within one part of `widths` wherever it
/// starts at a multiple of `blockN`.
bool tilesWithinParts(ArrayRef<int64_t> widths, int64_t blockN);
/// Whether a wgmma kernel of MMA kind `mma` reads a weight stored in_out
/// (the kinds whyNotInOutWeight allows, whatever the config).
inline bool readsInOutWeight(MmaKind mma) {
  return mma == MmaKind::bf16 || mma == MmaKind::f16 || mma == MmaKind::tf32x3;
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

/// The elementwise op that the normalizing pass of the batch norm `op` (a
/// fusion.batch_norm, or a fused_linear with a batch-norm stage) computes
/// too: the op right after it, of its normalized output alone (and
/// columns), which nothing else reads. Null if none.
ElementwiseOpInterface getNormalizedEpilogue(Operation *op);

/// Whether a generated GEMM kernel can finish `op`'s training batch norm
/// (#fusion.epilogue_batch_norm): the op after the norm, which the kernel
/// computes too, reads none of the norm's statistics, which the kernel
/// writes after it stages that op's columns.
bool canFinishBatchNorm(FusedLinearOp op);

/// The shared layout of `op`'s generated GEMM kernel of `config`, which
/// normalizes a training batch norm in its epilogue (and stages the columns
/// of the op after the norm) where `normalizesBatchNorm`
/// (#fusion.epilogue_batch_norm).
GemmSharedLayout getGemmSharedLayout(FusedLinearOp op, GemmConfigAttr config,
                                     bool normalizesBatchNorm);
/// The same, normalizing where `op`'s #fusion.lowering says so.
GemmSharedLayout getGemmSharedLayout(FusedLinearOp op, GemmConfigAttr config);

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

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_CONFIG_GEMMKERNELRULES_H
