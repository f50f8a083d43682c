//===- TiledGemmKernel.h - the generated GEMM kernel family -----*- C++ -*-===//
//
// The builder of one GEMM kernel (#fusion.gemm_config mma_sync: tensor
// cores; simt: fma on the CUDA cores; sm_80 instructions) that applies a
// fused op's GEMM epilogue (alpha, bias, epilogue region) to its
// accumulators and, for a training batch norm, computes the per-tile column
// statistics on chip, before the output reaches memory.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_TILEDGEMMKERNEL_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_TILEDGEMMKERNEL_H

#include "KernelSupport.h"

#include "fusion/Dialect/Fusion/IR/GemmConfig.h"

namespace mlir::fusion {

/// What one kernel computes, and how: out = epilogue(alpha * x.w^T + bias,
/// columns), for x: [M, K] (M dynamic), w: [N, K], out: [M, N], all
/// `elementType`, by a verified generated `config`.
struct TiledGemmProblem {
  Type elementType;
  int64_t n, k;
  double alpha;
  bool hasBias;
  SmallVector<Type> columnTypes; ///< element types of the epilogue columns
  /// The columns G of each [M, G] row operand of the epilogue (of
  /// `elementType`).
  SmallVector<int64_t> rowGroups;
  ScalarFn epilogue;
  /// Also writes each block row's column moments (training batch norm).
  bool statistics;
  GemmConfigAttr config;

  GemmSharedLayout sharedLayout() const;
};

/// Launch operands: (ptr x, ptr w, [ptr bias], ptr out, ptr column...,
/// ptr row..., [ptr mean, ptr m2]), passed to the kernel as memref
/// descriptors. With
/// statistics, the moments of block row r (its min(blockM, M - r * blockM)
/// rows) of column n are at [n * ceil(M / blockM) + r] of `mean` and `m2`.
Kernel buildTiledGemmKernel(OpBuilder &builder, Location loc, StringRef name,
                            const TiledGemmProblem &problem);

} // namespace mlir::fusion

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_TILEDGEMMKERNEL_H
