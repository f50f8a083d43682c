//===- TileReductions.h - reductions taken from GEMM tiles ------*- C++ -*-===//
//
// Which ops of a function form one row program (a reduction of whole rows,
// or of groups of columns, and the ops after it that read the same matrix
// or the row values), and which of its reductions a generated GEMM
// producing that matrix can compute from its output tiles, so that the
// matrix is written only if elementwise steps read it. fusion-select-gemm-
// config decides with it (#fusion.tile_reductions), fusion-lower-to-gpu
// lowers what it found.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_CONFIG_TILEREDUCTIONS_H
#define FUSION_CODEGEN_CONFIG_TILEREDUCTIONS_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::fusion {

/// The ops of a row program, in order: reductions of `input`'s rows, or of
/// each of the same G groups of their columns, elementwise ops of `input`
/// and elementwise ops of the row values ([M, G]) they compute.
struct RowProgramOps {
  Value input;
  /// Each op and its step index.
  llvm::MapVector<Operation *, unsigned> steps;
  DenseSet<Value> rowValues;
  /// The op after the program's last.
  Block::iterator end;

  bool isRowValue(Value v) const { return rowValues.contains(v); }
};

/// The row program that starts with the reduction `first` and takes the ops
/// after it, up to `end`, that can join it.
RowProgramOps collectRowProgram(ReduceOp first, Block::iterator end);

/// How a GEMM's tiles compute a reduction: the partials of each span of a
/// tile row, which the row program merges in column order.
enum class TileReductionKind {
  /// The reduction's combiner over its map of the element: one partial.
  Combine,
  /// A sum of exp(a - s), `a` of the element, `s` of a row value known only
  /// after the merge: the span's maximum t of a (0 where infinite) and its
  /// sum of exp(a - t); the merge adds sum * exp(t - s).
  ShiftedExpSum,
  /// A sum of (a - s)^2: the span's mean u of a, its sum of (a - u)^2 and
  /// its column count c; the merge adds the sum + c * (u - s)^2 (Chan's
  /// formula: no cancellation where s is the row's mean).
  ShiftedSquareSum,
};

/// Partials a tile span computes for `kind`.
unsigned getPartialCount(TileReductionKind kind);

/// One reduction of a row program as its GEMM's tiles compute it.
struct TileReduction {
  ReduceOp op;
  TileReductionKind kind;
  /// Shifted sums: the map's a - s, the exp or square of it that the map
  /// yields, the values of the map computed from the element (argument 0)
  /// and from the row value (argument 1), and the step computing that row
  /// value.
  arith::SubFOp difference;
  Operation *shifted = nullptr;
  DenseSet<Value> fromElement, fromRowValue;
  unsigned shiftStep = 0;
};

/// How a GEMM producing a row program's input computes the program's
/// reductions from its tiles.
struct TileReductionPlan {
  /// The reductions, in step order.
  SmallVector<TileReduction> reductions;
  /// Whether elementwise steps read the input too (a softmax, a norm), so
  /// that the GEMM still writes it.
  bool readsMatrix = false;
};

/// The plan for `program` if its input is read by its steps alone, as their
/// matrix (never as a row operand), and each reduction is computable per
/// tile: a map of the element alone, or a sum of exp(a - s) or of (a - s)^2
/// with `a` a map of the element alone and `s` one of a row value of the
/// program alone. Otherwise none.
std::optional<TileReductionPlan>
planTileReductions(const RowProgramOps &program);

/// The row program reading a fused op's output that a generated GEMM
/// computes from its tiles, and the columns each partial covers.
struct GemmTileReductions {
  RowProgramOps program;
  TileReductionPlan plan;
  int64_t span;
};

/// The tile reductions of `op`'s output for a generated GEMM of tiles
/// `blockN` wide: where the output's first reader is a reduction starting
/// a row program that reads it alone, with a plan, and groups the tiles can
/// reduce, in spans of getRowReductionSpan (of `span` where given). None
/// with a batch norm stage.
std::optional<GemmTileReductions>
findGemmTileReductions(FusedLinearOp op, int64_t blockN,
                       std::optional<int64_t> span = std::nullopt);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_CONFIG_TILEREDUCTIONS_H
