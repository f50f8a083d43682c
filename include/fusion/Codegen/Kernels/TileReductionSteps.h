//===- TileReductionSteps.h - tile reductions as kernel steps ---*- C++ -*-===//
//
// The reductions a generated GEMM takes from its tiles (TileReductions.h),
// as the GEMM epilogue's partial reductions and as the row program steps
// that merge their partials.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_KERNELS_TILEREDUCTIONSTEPS_H
#define FUSION_CODEGEN_KERNELS_TILEREDUCTIONSTEPS_H

#include "fusion/Codegen/Kernels/GemmEpilogue.h"
#include "fusion/Codegen/Kernels/RowProgramKernel.h"

#include "fusion/Codegen/Config/TileReductions.h"

namespace mlir::fusion {

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

/// `reduction` as the GEMM epilogue computes it and the merge reads it.
TileReducedStep lowerTileReduction(const TileReduction &reduction);

/// The row program step that merges the partials of `step` (the pointers
/// `partials` of its [M, columnTiles] partial matrices, in order) over the
/// tiles of each row, in tile order.
RowStep mergeTileReductionStep(const TileReducedStep &step,
                               ArrayRef<unsigned> partials,
                               int64_t columnTiles);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_KERNELS_TILEREDUCTIONSTEPS_H
