//===- RowProgramKernel.h - several row-local ops in one pass ---*- C++ -*-===//
//
// The kernel of a row program: reductions of whole rows of one [M, N]
// matrix, the scalar functions of their results, and the elementwise ops
// that read those results, all in one launch. Each row is read once from
// memory and again from cache for each further step; the statistics stay in
// registers. Softmax, logsumexp, layer norms and means are row programs.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_ROWPROGRAMKERNEL_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_ROWPROGRAMKERNEL_H

#include "KernelSupport.h"

namespace mlir::fusion {

/// Where a step reads one of its operands (the `fn` operands, in order).
struct RowOperand {
  enum class Kind {
    Column,   ///< a [N] vector (a [1] vector for a row step): pointer `index`
    Rows,     ///< an [M, groups] matrix: pointer `index`
    StepValue ///< the row value of step `index`
  };
  Kind kind;
  unsigned index;
  Type elementType; ///< of Column and Rows
  int64_t groups = 1; ///< of Rows
};

/// One step, in program order.
struct RowStep {
  enum class Kind {
    Reduce, ///< a row value: `reduction` over the row of fn(x[m, n], ...)
    Map,    ///< an [M, N] output: fn(x[m, n], ...)
    Scalar  ///< a row value: fn(value of step `input`, ...)
  };
  Kind kind;
  ReductionKind reduction = ReductionKind::sum;
  unsigned input = 0; ///< Scalar: the step whose value it maps
  /// Reduce: the pointer of the [M, N] matrix it reads, if not the
  /// program's input.
  std::optional<unsigned> source;
  SmallVector<RowOperand> operands;
  ScalarFn fn;
  /// The pointer the result is stored at (row values: element m), if any.
  std::optional<unsigned> output;
};

struct RowProgram {
  MatrixShape shape; ///< of the input
  /// Of the matrices that Reduce steps with a `source` read, if not `shape`.
  std::optional<MatrixShape> sourceShape;
  /// The element type of the outputs (a merge's input is f32 partials).
  Type resultType;
  unsigned pointers; ///< how many pointers the steps refer to
  SmallVector<RowStep> steps;
};

/// Launch operands: (ptr in, ptr 0, ..., ptr pointers-1).
Kernel buildRowProgramKernel(OpBuilder &builder, Location loc, StringRef name,
                             const RowProgram &program);

} // namespace mlir::fusion

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_ROWPROGRAMKERNEL_H
