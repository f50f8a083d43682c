//===- RowProgramOps.h - the fusion ops one row program runs ----*- C++ -*-===//
//
// Which ops of a function form one row program (a reduction of whole rows
// and the ops after it that read the same matrix or the row values), and
// which of its reductions a generated GEMM producing that matrix can take
// from its output tiles, so that the matrix itself is never written.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_ROWPROGRAMOPS_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_ROWPROGRAMOPS_H

#include "GemmEpilogue.h"
#include "RowProgramKernel.h"

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

/// A reduction step of a row program that the GEMM producing its input
/// computes from its tiles.
struct TileReducedStep {
  ReduceOp op;
  GemmRowReduction reduction;
  /// Shifted sums: the step whose row value r the map subtracts a function
  /// of, and that function.
  unsigned shiftStep = 0;
  ScalarFn shift;
};

/// How a GEMM producing a row program's input computes the program's
/// reductions from its tiles.
struct TileReductionPlan {
  /// The reductions, in step order.
  SmallVector<TileReducedStep> reductions;
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

/// The row program step that merges the partials of `step` (the pointers
/// `partials` of its [M, columnTiles] partial matrices, in order) over the
/// tiles of each row, in tile order.
RowStep mergeTileReductionStep(const TileReducedStep &step,
                               ArrayRef<unsigned> partials,
                               int64_t columnTiles);

} // namespace mlir::fusion

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_ROWPROGRAMOPS_H
