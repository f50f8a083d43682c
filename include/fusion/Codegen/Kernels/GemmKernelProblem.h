//===- GemmKernelProblem.h - what a generated GEMM computes -----*- C++ -*-===//
//
// The description every generated GEMM kernel builder takes (mma_sync,
// simt, wgmma): the GEMM, its epilogue and intermediate results, the batch
// norm it finishes or the statistics it writes, the reductions of its rows,
// and the verified config that says how.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_KERNELS_GEMMKERNELPROBLEM_H
#define FUSION_CODEGEN_KERNELS_GEMMKERNELPROBLEM_H

#include "fusion/Codegen/Kernels/BatchNormKernels.h"
#include "fusion/Codegen/Kernels/KernelSupport.h"

#include "fusion/Codegen/Config/GemmKernelRules.h"
#include "fusion/Codegen/Config/TileReductions.h"

#include <optional>

namespace mlir::fusion {

/// A reduction of the output's rows, or of each group of contiguous columns
/// of its rows, that the GEMM kernel takes from its tile: each span
/// of a tile row (see getRowReductionSpan; columns past N left out) gets
/// partial results, which a row program merges over the spans of each row
/// or group in column order.
struct GemmRowReduction {
  TileReductionKind kind;
  ReductionKind combiner = ReductionKind::sum;
  /// Of the output element (f32, as stored), no operands: the map of a
  /// Combine, the `a` of a shifted sum.
  ScalarFn fn;

  unsigned partialCount() const { return getPartialCount(kind); }
};

/// The tiles of `config` along N columns: ceil(N / blockN).
inline int64_t countColumnTiles(GemmConfigAttr config, int64_t n) {
  return (n + config.getBlockN() - 1) / config.getBlockN();
}

/// The partials of a row of N columns reduced in spans of `span` columns
/// (see getRowReductionSpan): ceil(N / span).
inline int64_t countPartialColumns(int64_t n, int64_t span) {
  return (n + span - 1) / span;
}

/// A training batch norm that a GEMM kernel finishes in its epilogue, for
/// batches that one block row of tiles holds (#fusion.epilogue_batch_norm):
/// each tile's column moments are then the batch's, so the epilogue
/// normalizes its results (the wgmma kernel in registers, the tiled kernel
/// as its staged tile leaves), applies the elementwise op after the batch
/// norm, writes the output once and updates the running statistics of its
/// columns.
struct GemmBatchNorm {
  BatchNormConfigAttr config;
  BatchNormOperands operands;
  /// The elementwise op after the batch norm, of the normalized value and
  /// its column operands (`afterColumns`); null if none.
  ScalarFn after;
  SmallVector<ColumnOperand> afterColumns;
};

/// What one generated GEMM kernel computes, and how: out = epilogue(alpha *
/// x.w^T + bias, columns, rows), for x: [M, K] (M dynamic), w: [N, K], out:
/// [M, N], all `elementType`, by a verified generated `config`.
struct GemmKernelProblem {
  Type elementType;
  int64_t n, k;
  double alpha;
  bool hasBias;
  SmallVector<ColumnOperand> columns; ///< the epilogue's column operands
  /// Each [M, G] row operand of the epilogue (of `elementType`), or draw.
  SmallVector<RowOperandSource> rows;
  /// The row operand that is x itself, where N = K (`linear(x) + x`): its
  /// tile is x's rows of the K slices of the tile's columns, which a wgmma
  /// kernel's main loop has in its ring (see takesRowOperandFromRing).
  std::optional<unsigned> inputRowOperand;
  ScalarFn epilogue;
  /// The epilogue's intermediate results, of the same arguments as
  /// `epilogue`: each is stored from the registers beside the output,
  /// before any batch norm.
  SmallVector<ScalarFn> intermediates;
  /// Also writes each block row's column moments (training batch norm).
  bool statistics;
  /// Instead, normalizes the output by them (statistics is set too).
  std::optional<GemmBatchNorm> batchNorm;
  GemmConfigAttr config;
  /// Whether the output itself is written: not when all that reads it is
  /// `rowReductions`.
  bool storesOutput = true;
  SmallVector<GemmRowReduction> rowReductions;
  /// The columns each partial of `rowReductions` covers (a
  /// getRowReductionSpan).
  int64_t reductionSpan = 0;

  GemmSharedLayout sharedLayout() const;
  /// Whether the row reductions come straight from the accumulators: a
  /// wgmma kernel's quads of lanes hold whole rows of the tile (see
  /// GemmOutputPath::Direct), so each span whose columns are whole 8-column
  /// blocks reduces within a quad.
  bool reducesRowsInRegisters() const {
    return config.isWgmma() && !rowReductions.empty() && reductionSpan % 8 == 0;
  }
  /// Whether the epilogue reads its output tile back (statistics or row
  /// reductions not taken from the registers), which it must then stage in
  /// shared memory.
  bool readsStagedTile() const {
    return (statistics && !takesColumnMomentsInRegisters(config)) ||
           (!rowReductions.empty() && !reducesRowsInRegisters());
  }
  /// A dual GEMM (wgmma kernels): x.w2^T beside x.w^T, whose accumulators
  /// the epilogue takes as its last operand. w2 is the launch operand
  /// after all the others (dualWeightOperand).
  bool dualWeight = false;
  /// How w (and the dual weight) is stored: `in_out`, [K, N] (GPT-2's
  /// Conv1D), the wgmma kernel reads N-major (whyNotInOutWeight).
  WeightLayout weightLayout = WeightLayout::out_in;
  /// The columns of each part of w where it is several tensors joined along
  /// N (a grouped GEMM, getWeightPartWidths; wgmma kernels): a TMA map a
  /// part, each tile loading from the part that holds its columns. Empty: w
  /// is one tensor. The parts past the first are launch operands after all
  /// the others, after the bias's parts past its first (`biasInParts`: the
  /// bias joined of parts of the same widths).
  SmallVector<int64_t> weightParts;
  bool biasInParts = false;

  /// The first column of w's part `part`.
  int64_t partOffset(size_t part) const {
    int64_t offset = 0;
    for (size_t i = 0; i < part; ++i)
      offset += weightParts[i];
    return offset;
  }
  /// The columns of w's part `part` (N without parts).
  int64_t partWidth(size_t part) const {
    return weightParts.empty() ? n : weightParts[part];
  }

  /// The launch operand of the dual weight: past x, w, bias, the output,
  /// the intermediates, the columns and the row operands (a dual GEMM
  /// takes no statistics, batch norm or row reductions).
  unsigned dualWeightOperand() const {
    return 2 + hasBias + storesOutput + intermediates.size() + columns.size() +
           rows.size();
  }

  /// The spans along N: the columns of each [M, spans] partial matrix.
  int64_t partialColumns() const {
    return countPartialColumns(n, reductionSpan);
  }
};

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_KERNELS_GEMMKERNELPROBLEM_H
