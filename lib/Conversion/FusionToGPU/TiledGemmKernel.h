//===- TiledGemmKernel.h - GPU backend 2: the tiled GEMM kernel -*- C++ -*-===//
//
// The builder of one GEMM kernel for sm_80 (tensor cores, or CUDA cores for
// fp32-math=simt) that applies a fused op's GEMM epilogue (alpha, bias,
// epilogue region) to its accumulators and, for a training batch norm,
// computes the per-tile column statistics on chip, before the output reaches
// memory.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_TILEDGEMMKERNEL_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_TILEDGEMMKERNEL_H

#include "EpilogueKernels.h"

namespace mlir::fusion {

/// How the warps multiply their tiles.
enum class MmaKind {
  BF16, ///< mma.sync m16n8k16 on bf16
  F16,  ///< mma.sync m16n8k16 on f16
  TF32, ///< mma.sync m16n8k8 on f32 rounded to tf32
  /// fp32-accurate: each f32 operand split into a tf32 high part and a tf32
  /// low part; three m16n8k8 products (low*high, high*low, high*high).
  TF32x3,
  /// fp32 on the CUDA cores: each thread a grid of f32 fma accumulators.
  SIMT,
  /// f32 operands rounded (to nearest even) to bf16 or f16 in registers,
  /// mma.sync m16n8k16 on them: f32 tensors in bf16 or f16 precision.
  F32AsBF16,
  F32AsF16,
};

/// Whether `kind` rounds f32 operands to 16 bits for its mma.sync.
inline bool roundsToHalf(MmaKind kind) {
  return kind == MmaKind::F32AsBF16 || kind == MmaKind::F32AsF16;
}

/// The tiling of one kernel. Shared-memory rows are 128 bytes of K (64 bf16
/// or f16, 32 f32 elements), so that the swizzle is the same for all types.
struct TiledGemmConfig {
  int64_t blockM = 128, blockN = 256; ///< the tile of one thread block
  int64_t warpsM = 2, warpsN = 4;     ///< warps per block along M and N
  int64_t stages = 3;                 ///< depth of the cp.async pipeline
  /// Block rows sharing one sweep over N (threadblock rasterization).
  int64_t groupM = 8;

  int64_t threads() const { return 32 * warpsM * warpsN; }
  int64_t warpTileM() const { return blockM / warpsM; }
  int64_t warpTileN() const { return blockN / warpsN; }
  /// SIMT: threads along N (the rest along M); thread t owns the rows
  /// t / kSimtThreadsN + i * simtRowStride() and the columns
  /// t % kSimtThreadsN + j * kSimtThreadsN of the block tile.
  static constexpr int64_t kSimtThreadsN = 16;
  int64_t simtRowStride() const { return threads() / kSimtThreadsN; }
  int64_t simtRows() const { return blockM / simtRowStride(); }
  int64_t simtColumns() const { return blockN / kSimtThreadsN; }
  /// Why this config cannot be built for `kind` (empty when it can).
  std::string validate(MmaKind kind) const;
};

/// What one kernel computes: out = epilogue(alpha * x.w^T + bias, columns),
/// for x: [M, K] (M dynamic), w: [N, K], out: [M, N], all `elementType`.
struct TiledGemmProblem {
  Type elementType;
  int64_t n, k;
  MmaKind kind;
  double alpha;
  bool hasBias;
  SmallVector<Type> columnTypes; ///< element types of the epilogue columns
  ScalarFn epilogue;
  /// Also writes each block row's column moments (training batch norm).
  bool statistics;
};

/// Where the kernel keeps what in its dynamic shared memory, in bytes. The
/// pipeline's stages come first; past the main loop the epilogue reuses
/// them for the output tile. The block's bias and epilogue columns (f32)
/// live past both.
struct TiledGemmSharedLayout {
  int64_t stagingRowElements; ///< one row of the output tile, padded
  int64_t constants;          ///< offset of the column constants
  int64_t total;
  static TiledGemmSharedLayout of(const TiledGemmProblem &problem,
                                  const TiledGemmConfig &config);
};

/// The most dynamic shared memory one block may use on `chip` (sm_XY).
int64_t maxSharedBytes(StringRef chip);

/// The heuristic tiling for a problem on `chip`, documented in
/// docs/architecture.md.
TiledGemmConfig chooseTiledGemmConfig(const TiledGemmProblem &problem,
                                      StringRef chip);

/// `@name(x: memref<?xKxT>, w: memref<NxKxT>, [bias: memref<NxT>],
/// out: memref<?xNxT>, column: memref<NxC>..., [mean: memref<?xf32>,
/// m2: memref<?xf32>])`, memrefs passed as expanded descriptors.
/// Grid: (ceil(M / blockM) * ceil(N / blockN)) blocks of config.threads(),
/// TiledGemmSharedLayout::of(problem, config).total bytes of dynamic shared
/// memory. With statistics, the
/// moments of block row r (its min(blockM, M - r * blockM) rows) of column
/// n are at [n * ceil(M / blockM) + r] of `mean` and `m2`.
gpu::GPUFuncOp buildTiledGemmKernel(OpBuilder &builder, Location loc,
                                    StringRef name,
                                    const TiledGemmProblem &problem,
                                    const TiledGemmConfig &config);

} // namespace mlir::fusion

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_TILEDGEMMKERNEL_H
