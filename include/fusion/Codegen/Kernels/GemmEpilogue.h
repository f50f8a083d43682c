//===- GemmEpilogue.h - the generated GEMMs' epilogue -----------*- C++ -*-===//
//
// What every generated GEMM kernel (mma_sync, simt, wgmma) does once its
// accumulators hold the block's tile: alpha, bias, the epilogue region with
// its column and row operands, applied in registers; the output tile staged
// in shared memory and written in 16-byte row chunks; for a training batch
// norm, the tile's column moments; for reductions of the output's rows, each
// tile row's partial results (then the output need not be written at all).
// The kernels differ only in where each thread's accumulators sit in the
// tile (its runs).
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_KERNELS_GEMMEPILOGUE_H
#define FUSION_CODEGEN_KERNELS_GEMMEPILOGUE_H

#include "fusion/Codegen/Kernels/GemmKernelProblem.h"

#include <array>
#include <functional>
#include <map>

namespace mlir::fusion {

/// The kernel arguments after x and w, which every generated GEMM kernel
/// takes in this order: ([bias], [out], intermediate..., column..., row...,
/// [mean, m2], partial...), as memrefs; launch operands 2 and on. The partials
/// are the row reductions' [M, partialColumns] f32 matrices, in order. A kernel
/// that normalizes a batch norm takes, instead of mean and m2, the batch
/// norm's ([weight], [bias], [running mean, running var, updated mean,
/// updated var], [batch mean, batch inverse standard deviation]) and the
/// columns of the op after it.
struct GemmEpilogueArguments {
  Value bias, out, mean, m2;
  SmallVector<Value> intermediates, columns, rowOperands, partials;
  Value bnWeight, bnBias, runningMean, runningVar, newMean, newVar;
  Value batchMean, batchInvStd;
  SmallVector<Value> afterColumns;
  /// The bias's parts past the first (GemmKernelProblem::biasInParts).
  SmallVector<Value> biasParts;

  /// An [M, ...] argument, whose first dimension is the row count.
  Value rowsOperand() const { return out ? out : partials.front(); }

  /// Takes them from `args` (the kernel's arguments past x and w).
  static GemmEpilogueArguments take(const GemmKernelProblem &problem,
                                    ValueRange args);
};

/// Completes the launch of a generated GEMM kernel whose contract has its
/// x and w arguments (launch operands 0 and 1): appends the other
/// arguments' memref types and descriptors (launch operands 2 and on), a
/// block per output tile (clusters: per tile of a cluster's block rows), the
/// config's threads and the layout's shared memory. With statistics, the
/// moments of block row r (its min(blockM, M - r * blockM) rows) of column
/// n are at [n * ceil(M / blockM) + r] of `mean` and `m2`.
/// With a batch norm to normalize, the launch operands past the row
/// operands are the batch norm's and the after op's columns, in the order
/// of GemmEpilogueArguments. Then the bias's parts past the first
/// (GemmKernelProblem::biasInParts). Returns the launch operand after
/// those it takes.
unsigned completeGemmLaunch(const GemmKernelProblem &problem,
                            SmallVectorImpl<Type> &argTypes,
                            LaunchContract &launch);

/// Where output tile number `tile` of a generated GEMM is: tiles are
/// numbered in groups of `groupM` block rows that sweep the block columns
/// together, so that a wave of blocks shares its x rows and w rows in L2.
/// A clustered config numbers the clusters' tiles instead, `clusterM`
/// adjacent block rows of one block column, of which block `clusterRank`
/// of the cluster takes one (past the last block row where the block rows
/// do not fill the cluster).
struct GemmTilePosition {
  Value blockRowTiles;       ///< ceil(M / blockM)
  Value tileM, tileN;        ///< the tile's row and column of tiles
  Value rowBase, columnBase; ///< the tile's first row and column
};
GemmTilePosition rasterizeGemmTile(OpBuilder &builder, Location loc, Value tile,
                                   Value rows, int64_t n, GemmConfigAttr config,
                                   Value clusterRank = Value());

/// How an epilogue's output tile leaves the block.
enum class GemmOutputPath {
  /// Through shared memory at the layout's origin (the pipeline's buffers,
  /// which every epilogue thread must be done with), in 16-byte row chunks.
  /// Statistics and row reductions read the staged tile.
  Staged,
  /// From the accumulators straight to memory, leaving the pipeline's
  /// buffers to the next tile's loads. Only where nothing reads the staged
  /// tile (see GemmKernelProblem::readsStagedTile). The runs are mma
  /// accumulator fragments: lane l of a warp holds columns 2 (l % 4), +1 of
  /// each 8-column block of rows l / 4 and l / 4 + 8 (in a wgmma kernel,
  /// every 8-column block of the tile, so that each quad holds whole rows).
  Direct,
};

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
  GemmOutputPath outputPath = GemmOutputPath::Staged;
};

/// Adjacent outputs of one thread: the accumulators of columns `column`,
/// `column` + 1, ... of row `row`, offsets from the thread's first row and
/// column in the tile; in a kernel whose config swaps the operands
/// (operands = w_x), of rows `row`, `row` + 1, ... of column `column`.
struct AccumulatorRun {
  int64_t row, column;
  SmallVector<Value> values;
  /// A dual GEMM's accumulators of the same outputs (GemmKernelProblem::
  /// dualWeight), else empty.
  SmallVector<Value> dualValues;
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
  /// The bias of output column `column` (< N) where it is joined of parts
  /// (GemmKernelProblem::biasInParts), widened to f32: each part's element
  /// loaded at an index within it, the one of the part holding the column
  /// kept.
  Value loadBiasInParts(Value column);
  /// The epilogue on each thread's runs, from its first row and column in
  /// the tile; then the output tile leaves by the tile's output path, and
  /// the statistics and the row reductions' partials are taken from the
  /// staged tile. A run's first column is a multiple of its length.
  void emit(Value firstRow, Value firstColumn, ArrayRef<AccumulatorRun> runs);
  /// A row operand's elements of one of emit's runs (of the operand's type,
  /// the run's values), by the run's number; emit asks for each run once,
  /// in order, where it would load them.
  using RowOperandProvider = std::function<SmallVector<Value>(size_t run)>;
  /// `emit` takes row operand `operand`'s elements from `provider` instead
  /// of loading them.
  void provideRowOperand(unsigned operand, RowOperandProvider provider) {
    providedOperand = operand;
    providedRows = std::move(provider);
  }

private:
  /// emit's walk over the runs, and sumColumnMoments' sums
  /// (GemmEpilogue.cpp).
  struct RunWalk;
  struct ColumnMomentSums;

  Value sharedView(int64_t offset, ArrayRef<int64_t> shape, Type type) {
    return viewOf(t.shared, idx(offset), shape, type);
  }
  /// The staged tile's path once the runs are staged: its stores, or the
  /// batch norm, statistics and row reductions that read it.
  void finishStagedTile(Value staging);

  /// The row operands' elements for the outputs of `run`, run number
  /// `runNumber` of emit's, as f32: each output's operands (a provided
  /// operand's from provideRowOperand's values).
  SmallVector<SmallVector<Value>> loadRowOperands(Value firstRow,
                                                  Value firstColumn,
                                                  const AccumulatorRun &run,
                                                  size_t runNumber);
  /// Stores the runs' `results` (f32) from the registers (the Direct path)
  /// to `target`: the output, or an intermediate result.
  void storeFragments(Value firstRow, Value firstColumn,
                      ArrayRef<AccumulatorRun> runs,
                      ArrayRef<SmallVector<Value>> results, Value target);
  /// The same where the runs go down columns (operands = w_x): each
  /// quad of 16-bit pair runs (rows r, r + 8 of columns c, c + 8) is
  /// transposed across the warp's lanes (movmatrix, four 8x8 matrices),
  /// which leaves the pairs of rows that storePackedQuadChunks stores;
  /// f32 results (or 16-bit ones where N is not a multiple of 8) are
  /// stored an element at a time, the 8 lanes of a column block filling
  /// 32-byte sectors.
  void storeColumnFragments(Value firstRow, Value firstColumn,
                            ArrayRef<AccumulatorRun> runs,
                            ArrayRef<SmallVector<Value>> results, Value target);
  /// The quads of 16-bit pair runs among `runs`, where N is a multiple of
  /// a 16-byte chunk: the runs at rows r, r + 8 and columns c, c + 8 (r and
  /// c multiples of 16), in the order (r, c), (r, c + 8), (r + 8, c),
  /// (r + 8, c + 8).
  SmallVector<std::array<size_t, 4>> pairQuadsOf(ArrayRef<AccumulatorRun> runs);
  /// Two f32 values narrowed to the output's 16-bit type, packed in an i32.
  Value packPair(Value first, Value second);
  /// Stores the 16-bit results of the four pair runs at rows r, r + 8 and
  /// columns c, c + 8 of each lane of a quad as one 16-byte chunk a lane:
  /// the quad's lanes trade values in two rounds of shuffles, so that lane
  /// l % 4 = 2h + j ends with the 8 columns c + 8j.. of row r + 8h.
  void storeQuadChunks(Value row, Value column, ArrayRef<Value> pairs,
                       Value target);
  /// The same of the four pairs packed (packPair), index 2h + j holding
  /// row `row` + 8h, columns `column` + 8j, + 1.
  void storePackedQuadChunks(Value row, Value column, ArrayRef<Value> packed,
                             Value target);
  /// Stores a run's `results` (f32), narrowed, as storeVector does.
  void storeRun(Value row, Value column, ArrayRef<Value> results, Value target);
  /// Stores `vector` (of the output's type) to `target` (the output or an
  /// intermediate result) at `row`, `column` of the tile, a column that is a
  /// multiple of its width: one store where N is a multiple too, else
  /// element by element; what lies past M or N is left out.
  void storeVector(Value vector, Value row, Value column, Value target);
  /// Writes the output tile out of shared memory, 16 bytes a thread per
  /// store, each chunk (of the output's type) through `transform` (of the
  /// chunk and its first column in the tile) if given.
  void storeStagedTile(
      Value staging,
      function_ref<Value(Value chunk, Value column)> transform = nullptr);
  /// The tile's rows within M (index), and as f32.
  Value tileRowCount();
  Value tileRowCountF32();
  /// Whether the tile's rows are all within M: only the last block row can
  /// hold rows past M.
  Value isWholeTile();
  /// The `count` f32 results of `sweep(masked)`, which yields them: without
  /// row masks where `wholeTile`, with them elsewhere.
  SmallVector<Value> sweepTileRows(Value wholeTile, size_t count,
                                   function_ref<void(bool masked)> sweep);
  /// Where the moments of column `globalColumn` over the tile's rows go in
  /// the mean and m2 arguments (see completeGemmLaunch).
  Value momentsIndex(Value globalColumn);
  /// Each column's moments over the block's rows of the staged tile.
  void emitStatistics(Value staging);
  /// Sums each column's moments over the block's rows of the staged tile
  /// on one thread a column (within N), then calls `finish(column, mean,
  /// squares, count)` there.
  void sumStagedColumnMoments(
      Value staging,
      function_ref<void(Value column, Value mean, Value squares, Value count)>
          finish);
  /// The same from the runs' `results` (f32, before narrowing) of a wgmma
  /// kernel (takesColumnMomentsInRegisters), whose lanes l, l ^ 4, l ^ 8
  /// and l ^ 16 hold the same columns: each column's values are summed
  /// over the warp's lanes by sumOverColumnLanes, then over the warps in
  /// warp order through the layout's moments scratch; twice (the means,
  /// then the squared deviations from them).
  void emitStatisticsFromRegisters(Value firstRow, Value firstColumn,
                                   ArrayRef<AccumulatorRun> runs,
                                   ArrayRef<SmallVector<Value>> results);
  /// The runs' results as the output stores them (narrowed to its type and
  /// widened back), which is what a batch norm finished in the kernel
  /// normalizes and takes its statistics from.
  SmallVector<SmallVector<Value>>
  storedValues(ArrayRef<AccumulatorRun> runs,
               ArrayRef<SmallVector<Value>> results);
  /// Sums the column moments of the runs' `values` (f32) over the tile's
  /// rows within M (see emitStatisticsFromRegisters), then calls
  /// `finish(column, mean, squares, count)` on one thread for each column of
  /// the tile, with the column's mean, sum of squared deviations and the
  /// rows' count (f32); where the operands are swapped, by
  /// sumColumnMomentsInQuads.
  void sumColumnMoments(
      Value firstRow, Value firstColumn, ArrayRef<AccumulatorRun> runs,
      ArrayRef<SmallVector<Value>> values,
      function_ref<void(Value column, Value mean, Value squares, Value count)>
          finish);
  /// sumColumnMoments where the runs go down columns (operands = w_x):
  /// the lanes of a quad hold the same columns, so each sums its own
  /// values of a column and the quad adds them (two shuffles), twice;
  /// `finish` runs on the quad's first lane.
  void sumColumnMomentsInQuads(
      Value firstRow, Value firstColumn, ArrayRef<AccumulatorRun> runs,
      ArrayRef<SmallVector<Value>> values,
      function_ref<void(Value column, Value mean, Value squares, Value count)>
          finish);
  /// Where a batch norm's column coefficients go in shared memory: rows of
  /// the [rows, blockN] f32 `scratch`.
  struct CoefficientRows {
    Value scratch, center, scale, shift;
  };
  /// On a column's thread, from its batch mean, sum of squared deviations
  /// and rows' count: the coefficients into `rows`, and the running
  /// statistics' update (GemmKernelProblem::batchNorm).
  void finishBatchNormColumn(Value column, Value mean, Value squares,
                             Value count, const CoefficientRows &rows);
  /// `value` (f32, as stored) of tile column `column` normalized by the
  /// coefficients in `rows`, then through the op after the batch norm.
  Value applyBatchNorm(Value value, Value column, const CoefficientRows &rows);
  /// The batch norm of the problem finished from the staged tile: the
  /// column moments and coefficients on one thread a column, then the tile
  /// normalized as it leaves.
  void emitBatchNormFromStagedTile(Value staging);
  /// The batch norm of the problem finished in registers
  /// (GemmKernelProblem::batchNorm): the column moments, then per column
  /// the coefficients (through the moments scratch) and the running
  /// statistics' update, then the stored values normalized, the op after
  /// the batch norm applied, and the output written.
  void emitBatchNormFromRegisters(Value firstRow, Value firstColumn,
                                  ArrayRef<AccumulatorRun> runs,
                                  ArrayRef<SmallVector<Value>> results);
  /// Sums `slots` (a thread's values, slot s the same column on each lane
  /// of a group l, l ^ 4, l ^ 8, l ^ 16) over each group with a
  /// transposing butterfly: at each distance a lane keeps half of its
  /// slots (the upper half where its bit of the distance is set) and adds
  /// its partner's sums of them, so that the shuffles halve each round
  /// (an odd count is summed whole). Returns the lane's totals, of slots
  /// `firstSlot`, `firstSlot` + 1, ..., and whether the lane is the one of
  /// the lanes holding them that is to store them (null: each is).
  struct ColumnLaneSums {
    SmallVector<Value> totals;
    Value firstSlot, stores;
  };
  ColumnLaneSums sumOverColumnLanes(SmallVector<Value> slots);
  /// The partial results of the row reductions over each span of each row
  /// of the staged tile.
  void emitRowPartials(Value staging);
  /// The same from the runs' `results` (f32, before narrowing to the
  /// output's type) where each quad of lanes holds whole rows
  /// (GemmKernelProblem::reducesRowsInRegisters).
  void emitRowPartialsFromRegisters(Value firstRow, Value firstColumn,
                                    ArrayRef<AccumulatorRun> runs,
                                    ArrayRef<SmallVector<Value>> results);
  /// Calls its callback with each element (f32, as stored) of a span that
  /// the thread holds, and whether it lies within N (null: all do).
  using SpanElements =
      function_ref<void(function_ref<void(Value element, Value valid)>)>;
  /// The partials of one span of one row (in the order of
  /// GemmEpilogueArguments::partials) from the `elements` each of `lanes`
  /// adjacent lanes holds of it, the same on every lane; `count` is the
  /// span's columns within N (f32).
  SmallVector<Value> reduceSpan(SpanElements elements, Value count,
                                int64_t lanes);
  /// One reduction over a span: `combiner` of term(fn(element)).
  struct SpanAccumulation {
    ReductionKind combiner;
    const ScalarFn *fn;
    std::function<Value(Value)> term;
  };
  /// The accumulations in one sweep over the thread's elements, in order,
  /// then a butterfly across the lanes: the same bits on every run.
  SmallVector<Value> sweepSpan(SpanElements elements,
                               ArrayRef<SpanAccumulation> accumulations,
                               int64_t lanes);
  /// The shift (`shift`) of a shifted reduction from its first sweep's
  /// total, and its second sweep's accumulation.
  SpanAccumulation shiftedAccumulation(const GemmRowReduction &reduction,
                                       Value firstTotal, Value count,
                                       Value &shift);
  /// The columns within N of the tile's spans (f32): the span, or for a
  /// whole-row span of the last tile, the columns left.
  Value spanColumnCount();
  /// Where whole-row spans can pass N (the last tile of a ragged row), the
  /// columns of the tile within N, past which elements count as the
  /// combiner's identity; else null.
  Value spanColumnLimit();

  const GemmKernelProblem &p;
  GemmConfigAttr c;
  GemmSharedLayout layout;
  Type elementType;
  int64_t chunkElements;
  GemmTile t;
  /// provideRowOperand's.
  std::optional<unsigned> providedOperand;
  RowOperandProvider providedRows;
  /// The row statistics ([M, 1] row operands) that emit's runs loaded, by
  /// operand and row of the tile: each is loaded once for all its runs, so
  /// that its uses share one value (a division by it, one reciprocal).
  std::map<std::pair<size_t, int64_t>, Value> rowStatistics;
  GemmEpilogueArguments args;
  /// [bias, columns..., after columns...] x blockN, f32, in shared memory.
  Value columnConstants;
};

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_KERNELS_GEMMEPILOGUE_H
