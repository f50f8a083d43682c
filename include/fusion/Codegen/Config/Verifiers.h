//===- Verifiers.h - lowering configs against kernels, chips ----*- C++ -*-===//
//
// The lowering-config verifier (in the style of IREE's LLVMGPU/Verifiers):
// the checks of a fused op's lowering attributes (#fusion.gemm_config,
// #fusion.tile_reductions, #fusion.batch_gemm_config entries and
// #fusion.epilogue_batch_norm) that need the op they lower, the generated
// kernels' rules or the chip of the enclosing #fusion.target, and of each
// fusion_rt.launch against that chip. The dialects' own verifiers check
// only what the IR says by itself. fusion-select-gemm-config checks what
// it keeps and what it chooses, fusion-lower-to-gpu what it lowers and
// launches, and fusion-verify-lowering runs them on any module.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_CONFIG_VERIFIERS_H
#define FUSION_CODEGEN_CONFIG_VERIFIERS_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

namespace mlir::fusion_rt {
class LaunchOp;
} // namespace mlir::fusion_rt

namespace mlir::fusion {

/// The checks of all of `op`'s lowering attributes, together.
LogicalResult verifyLoweringConfig(FusedLinearOp op);

/// The checks of `launch` against the chip of the enclosing #fusion.target
/// (if any): its shared memory, and programmatic dependent launch.
LogicalResult verifyLaunchOnTarget(fusion_rt::LaunchOp launch);

/// verifyLoweringConfig on each fused op under `root` and
/// verifyLaunchOnTarget on each launch; the first failure's diagnostic.
LogicalResult verifyLowering(Operation *root);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_CONFIG_VERIFIERS_H
