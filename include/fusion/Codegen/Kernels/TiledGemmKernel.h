//===- TiledGemmKernel.h - the generated GEMM kernel family -----*- C++ -*-===//
//
// The builder of one GEMM kernel (#fusion.gemm_config mma_sync: tensor
// cores; simt: fma on the CUDA cores; sm_80 instructions) that applies a
// fused op's GEMM epilogue (alpha, bias, epilogue region) to its
// accumulators and, for a training batch norm, computes the per-tile column
// statistics on chip, before the output reaches memory.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_KERNELS_TILEDGEMMKERNEL_H
#define FUSION_CODEGEN_KERNELS_TILEDGEMMKERNEL_H

#include "fusion/Codegen/Kernels/GemmEpilogue.h"

namespace mlir::fusion {

/// Launch operands: (ptr x, ptr w, [ptr bias], ptr out, ptr column...,
/// ptr row..., [ptr mean, ptr m2]), passed to the kernel as memref
/// descriptors (see completeGemmLaunch).
Kernel buildTiledGemmKernel(OpBuilder &builder, Location loc, StringRef name,
                            const GemmKernelProblem &problem);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_KERNELS_TILEDGEMMKERNEL_H
