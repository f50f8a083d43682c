//===- ReductionKernel.h - row reductions of a matrix -----------*- C++ -*-===//
//
// The kernel of fusion.reduce: each group of contiguous columns of each row
// of an M x N matrix, mapped by a scalar function and combined into one
// value, in a fixed order (the same bits on every run).
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_REDUCTIONKERNEL_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_REDUCTIONKERNEL_H

#include "KernelSupport.h"

namespace mlir::fusion {

/// What a reduction kernel computes: out[m, g] = combine over the N/G
/// columns n of group g of fn(in[m, n], col[n]..., row[m, n / (N / R)]...).
struct RowReduction {
  MatrixShape shape; ///< of the input; its vector width divides N/G or is 1
  int64_t groups;
  ReductionKind kind;
  SmallVector<Type> columnTypes;
  SmallVector<int64_t> rowGroups; ///< R of each row operand
  ScalarFn fn;
};

/// Launch operands: (ptr in, ptr out, ptr column..., ptr row...).
Kernel buildRowReductionKernel(OpBuilder &builder, Location loc,
                               StringRef name, const RowReduction &reduction);

} // namespace mlir::fusion

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_REDUCTIONKERNEL_H
