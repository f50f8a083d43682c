//===- ElementwiseKernel.h - a scalar function over a matrix ----*- C++ -*-===//
//
// The kernel that applies a fused op's epilogue (or an unfused elementwise
// op, or a batch norm's normalization) to a matrix in memory: a thread
// takes one 16-byte chunk of a row, or of several rows, for which it loads
// its column operands once.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_KERNELS_ELEMENTWISEKERNEL_H
#define FUSION_CODEGEN_KERNELS_ELEMENTWISEKERNEL_H

#include "fusion/Codegen/Kernels/KernelSupport.h"

namespace mlir::fusion {

/// out = fn(in, col[n]..., row[m, n / (N / G)]...) per element, for M x N
/// matrices of `shape`, and each of `intermediates` of the same arguments
/// into a matrix of its own. Launch operands: (ptr in, ptr out, ptr
/// column..., ptr row..., ptr intermediate...), `in` may equal `out`;
/// the column operands are `columns`, the row operands `rows` (of the
/// element type of `shape`; a draw's pointer is its seed).
Kernel buildElementwiseKernel(OpBuilder &builder, Location loc, StringRef name,
                              MatrixShape shape,
                              ArrayRef<ColumnOperand> columns,
                              const ScalarFn &fn,
                              ArrayRef<RowOperandSource> rows = {},
                              ArrayRef<ScalarFn> intermediates = {});

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_KERNELS_ELEMENTWISEKERNEL_H
