//===- GemmPaths.h - the batch dispatch of fused ops' host code -*- C++ -*-===//
//
// The plan half of the host lowering: which kernels compute a fused_linear
// (or merge its tile reductions) for which batches, decided once from its
// #fusion.lowering, as data the emitter reads. The emitter branches on the
// batch where a plan has several cases, in one place (HostEmitter's
// emitForRows).
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_GEMMPATHS_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_GEMMPATHS_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include <limits>
#include <string>

namespace mlir::fusion {

/// The max_rows of a plan's last case: every batch past the previous case's.
constexpr int64_t kAnyRows = std::numeric_limits<int64_t>::max();

/// One generated GEMM kernel a path launches: for batches up to `maxRows`
/// rows (past the previous kernel's), of `config`, its name `kind` (the
/// emitter prefixes the entry point and the op).
struct GemmKernelCase {
  int64_t maxRows;
  GemmConfigAttr config;
  std::string kind;
};

/// How a fused_linear computes its batches up to `maxRows` (past the
/// previous path's).
struct GemmPath {
  enum class Kind {
    /// A generated GEMM writes the output, which the row program reduces:
    /// batches below the tile reductions' min_rows.
    WritesOutput,
    /// A generated GEMM finishes the training batch norm in its epilogue
    /// (#fusion.epilogue_batch_norm).
    FinishesBatchNorm,
    /// A generated GEMM with the op's tile reductions, or the batch norm's
    /// moments that a finalize kernel and a normalizing pass then use.
    General,
    /// cuBLASLt's GEMM and the epilogue's kernels.
    Cublas,
  };
  Kind kind;
  int64_t maxRows;
  /// The generated GEMM kernels, by batch; none for Cublas.
  SmallVector<GemmKernelCase> kernels;
};

/// The paths of `op` (its #fusion.lowering verified), in increasing
/// max_rows, the last for kAnyRows.
SmallVector<GemmPath> planGemmPaths(FusedLinearOp op);

/// How a row program reads the output of a GEMM with tile reductions for
/// batches up to `maxRows` (past the previous case's): merging the tiles'
/// partials, or reducing the output that the GEMM wrote.
struct RowProgramCase {
  int64_t maxRows;
  bool mergesTiles;
  std::string kind;
};

/// The cases of a row program whose input's GEMM reduces its tiles from
/// batches of `minRows` (the tile reductions' min_rows; 1 where there are
/// none, or all batches reduce).
SmallVector<RowProgramCase> planRowProgramCases(int64_t minRows);

/// The max_rows of each of `cases` (paths or kernel or row-program cases).
template <typename Range> SmallVector<int64_t> maxRowsOf(const Range &cases) {
  SmallVector<int64_t> maxRows;
  for (const auto &entry : cases)
    maxRows.push_back(entry.maxRows);
  return maxRows;
}

} // namespace mlir::fusion

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_GEMMPATHS_H
