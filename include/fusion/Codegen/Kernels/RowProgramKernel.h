//===- RowProgramKernel.h - several row-local ops in one pass ---*- C++ -*-===//
//
// The kernel of a row program: reductions of whole rows, or of each group of
// G contiguous columns of the rows, of one [M, N] matrix, the scalar
// functions of their results, and the elementwise ops that read those
// results, all in one launch. Each row (group) is read once from memory and
// again from cache for each further step; the statistics stay in registers.
// Softmax, logsumexp, layer and group norms and means are row programs.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_KERNELS_ROWPROGRAMKERNEL_H
#define FUSION_CODEGEN_KERNELS_ROWPROGRAMKERNEL_H

#include "fusion/Codegen/Kernels/KernelSupport.h"

namespace mlir::fusion {

/// Where a step reads one of its operands (the `fn` operands, in order).
struct RowOperand {
  enum class Kind {
    /// a [N] vector (a [G] vector for a row step): pointer `index`
    Column,
    /// an [M, groups] matrix: pointer `index`; for a row step, `groups`
    /// divides the program's G
    Rows,
    StepValue ///< the row value of step `index`
  };
  Kind kind;
  unsigned index;
  Type elementType; ///< of Column and Rows
  int64_t groups = 1; ///< of Rows
  /// Of Column: one value that every column reads.
  bool single = false;
  /// Of Rows: a draw's stream, its pointer the seed (RowOperandSource).
  std::optional<int64_t> drawStream = std::nullopt;

  ColumnOperand column() const { return {elementType, single}; }
  RowOperandSource rows() const { return {groups, drawStream}; }
};

/// One step, in program order.
struct RowStep {
  enum class Kind {
    /// a row value: `reduction` over the row (group) of fn(x[m, n], ...)
    Reduce,
    Map,   ///< an [M, N] output: fn(x[m, n], ...)
    Scalar ///< a row value: fn(value of step `input`, ...)
  };
  Kind kind;
  ReductionKind reduction = ReductionKind::sum;
  unsigned input = 0; ///< Scalar: the step whose value it maps
  /// Reduce: the pointer of the [M, N] matrix it reads, if not the
  /// program's input.
  std::optional<unsigned> source;
  SmallVector<RowOperand> operands;
  ScalarFn fn;
  /// The pointer the result is stored at (row values: element (m, g) of an
  /// [M, G] matrix), if any.
  std::optional<unsigned> output;
};

/// A program over the G groups of N / G contiguous columns of each row
/// (G = 1: whole rows): its row values are [M, G] matrices, and each group
/// is a row of the program, as an [M, N] row-major matrix is an
/// [M * G, N / G] one.
struct RowProgram {
  int64_t groups = 1;
  /// Of the input, by the program's rows: N / G columns.
  MatrixShape shape;
  /// Of the matrices that Reduce steps with a `source` read, by the
  /// program's rows, if not `shape`.
  std::optional<MatrixShape> sourceShape;
  /// The element type of the outputs (a merge's input is f32 partials).
  Type resultType;
  unsigned pointers; ///< how many pointers the steps refer to
  SmallVector<RowStep> steps;
};

/// Launch operands: (ptr in, ptr 0, ..., ptr pointers-1); launched over M
/// rows.
Kernel buildRowProgramKernel(OpBuilder &builder, Location loc, StringRef name,
                             const RowProgram &program);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_KERNELS_ROWPROGRAMKERNEL_H
