//===- GemmEpilogue.h - the generated GEMMs' epilogue -----------*- C++ -*-===//
//
// What every generated GEMM kernel (mma_sync, simt, wgmma) does once its
// accumulators hold the block's tile: alpha, bias, the epilogue region with
// its column and row operands, applied in registers; the output tile staged
// in shared memory and written in 16-byte row chunks; for a training batch
// norm, the tile's column moments. The kernels differ only in where each
// thread's accumulators sit in the tile (its runs).
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_GEMMEPILOGUE_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_GEMMEPILOGUE_H

#include "KernelSupport.h"

#include "fusion/Dialect/Fusion/IR/GemmConfig.h"

namespace mlir::fusion {

/// What one generated GEMM kernel computes, and how: out = epilogue(alpha *
/// x.w^T + bias, columns, rows), for x: [M, K] (M dynamic), w: [N, K], out:
/// [M, N], all `elementType`, by a verified generated `config`.
struct GemmKernelProblem {
  Type elementType;
  int64_t n, k;
  double alpha;
  bool hasBias;
  SmallVector<Type> columnTypes; ///< element types of the epilogue columns
  /// The columns G of each [M, G] row operand of the epilogue (of
  /// `elementType`).
  SmallVector<int64_t> rowGroups;
  ScalarFn epilogue;
  /// Also writes each block row's column moments (training batch norm).
  bool statistics;
  GemmConfigAttr config;

  GemmSharedLayout sharedLayout() const;
};

/// The kernel arguments after x and w, which every generated GEMM kernel
/// takes in this order: ([bias], out, column..., row..., [mean, m2]), as
/// memrefs; launch operands 2 and on.
struct GemmEpilogueArguments {
  Value bias, out, mean, m2;
  SmallVector<Value> columns, rowOperands;

  /// Takes them from `args` (the kernel's arguments past x and w).
  static GemmEpilogueArguments take(const GemmKernelProblem &problem,
                                    ValueRange args);
};

/// Completes the launch of a generated GEMM kernel whose contract has its
/// x and w arguments (launch operands 0 and 1): appends the other
/// arguments' memref types and descriptors (launch operands 2 and on), a
/// block per output tile, the config's threads and the layout's shared
/// memory. With statistics, the moments of block row r (its min(blockM, M
/// - r * blockM) rows) of column n are at [n * ceil(M / blockM) + r] of
/// `mean` and `m2`.
void completeGemmLaunch(const GemmKernelProblem &problem,
                        SmallVectorImpl<Type> &argTypes,
                        LaunchContract &launch);

/// Where a generated GEMM kernel's block is: blocks run in groups of
/// `groupM` block rows that sweep the block columns together, so a wave of
/// blocks shares its x rows and w rows in L2.
struct GemmTilePosition {
  Value blockRowTiles;       ///< ceil(M / blockM)
  Value tileM, tileN;        ///< the block's row and column of tiles
  Value rowBase, columnBase; ///< the tile's first row and column
};
GemmTilePosition rasterizeGemmTile(OpBuilder &builder, Location loc, Value rows,
                                   int64_t n, GemmConfigAttr config);

/// The block's place in the output and the threads that run its epilogue.
struct GemmTile {
  Value thread; ///< index of the thread among the epilogue's threads
  int64_t threads;
  Value rows;                ///< M
  Value tileM;               ///< the block's row of tiles
  Value blockRowTiles;       ///< ceil(M / blockM)
  Value rowBase, columnBase; ///< the tile's first row and column
  /// The dynamic shared memory (i8) at the origin of the shared layout.
  Value shared;
  /// Synchronizes the epilogue's threads.
  std::function<void()> barrier;
};

/// Adjacent outputs of one thread: the accumulators of columns `column`,
/// `column` + 1, ... of row `row`, offsets from the thread's first row and
/// column in the tile.
struct AccumulatorRun {
  int64_t row, column;
  SmallVector<Value> values;
};

class GemmEpilogueEmitter : IndexEmitter {
public:
  GemmEpilogueEmitter(OpBuilder &builder, Location loc,
                      const GemmKernelProblem &problem, const GemmTile &tile,
                      GemmEpilogueArguments args);

  /// Copies the block's bias and epilogue columns, widened to f32, into
  /// shared memory, where the epilogue finds them. Before the main loop:
  /// the layout keeps them apart from the pipeline.
  void loadColumnConstants();
  /// The epilogue on each thread's runs, from its first row and column in
  /// the tile; then the output tile leaves through shared memory (the
  /// pipeline's buffers: every thread must be past the main loop), and the
  /// statistics are taken from it.
  void emit(Value firstRow, Value firstColumn, ArrayRef<AccumulatorRun> runs);

private:
  Value sharedView(int64_t offset, ArrayRef<int64_t> shape, Type type) {
    return viewOf(t.shared, idx(offset), shape, type);
  }

  /// The row operands' elements for the output at `row`, `column` of the
  /// tile, as f32.
  SmallVector<Value> loadRowOperands(Value row, Value column);
  /// Writes the output tile out of shared memory, 16 bytes a thread per
  /// store.
  void storeStagedTile(Value staging);
  /// Each column's moments over the block's rows of the staged tile.
  void emitStatistics(Value staging);

  const GemmKernelProblem &p;
  GemmConfigAttr c;
  GemmSharedLayout layout;
  Type elementType;
  int64_t chunkElements;
  GemmTile t;
  GemmEpilogueArguments args;
  /// [bias, columns...] x blockN, f32, in shared memory.
  Value columnConstants;
};

} // namespace mlir::fusion

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_GEMMEPILOGUE_H
