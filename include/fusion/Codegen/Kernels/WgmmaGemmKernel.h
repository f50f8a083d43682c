//===- WgmmaGemmKernel.h - the Hopper GEMM kernel family --------*- C++ -*-===//
//
// The builder of one warp-specialized Hopper GEMM kernel (#fusion.gemm_config
// wgmma, sm_90a): a producer warpgroup streams K slices of x and w into a
// ring of shared-memory stages with TMA, consumer warpgroups multiply them
// with wgmma, mbarriers hand each stage back and forth, and the epilogue
// runs on the accumulators (GemmEpilogue).
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_KERNELS_WGMMAGEMMKERNEL_H
#define FUSION_CODEGEN_KERNELS_WGMMAGEMMKERNEL_H

#include "fusion/Codegen/Kernels/GemmEpilogue.h"

namespace mlir::fusion {

/// Launch operands: (ptr x, ptr w, [ptr bias], ptr out, ptr column...,
/// ptr row..., [ptr mean, ptr m2]); x and w reach the kernel as TMA tensor
/// maps (128-byte K boxes, 128-byte swizzle, zero fill past the edges), the
/// others as memref descriptors (see completeGemmLaunch).
Kernel buildWgmmaGemmKernel(OpBuilder &builder, Location loc, StringRef name,
                            const GemmKernelProblem &problem);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_KERNELS_WGMMAGEMMKERNEL_H
