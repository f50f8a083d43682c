//===- GemmConfig.h - what a #fusion.gemm_config may say --------*- C++ -*-===//
//
// The element types fusion computes on and the units of the generated GEMM
// kernels that a #fusion.gemm_config's own verifier checks its tiling
// against. Whatever needs a chip or the op a config lowers (the chip table,
// shared-memory layouts, MMA kinds, the lowering-config verifier) is
// Codegen's: include/fusion/Codegen/Config.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_IR_GEMMCONFIG_H
#define FUSION_DIALECT_FUSION_IR_GEMMCONFIG_H

#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"

namespace mlir::fusion {

/// The ElementType of `type`, if fusion computes on it.
std::optional<ElementType> getElementTypeKind(Type type);
/// The MLIR type of `kind`, the inverse of `getElementTypeKind`.
Type getElementTypeOf(ElementType kind, MLIRContext *context);

/// Shared-memory rows of the generated GEMM kernels hold 128 bytes of K, in
/// 16-byte chunks (one cp.async, one ldmatrix row each).
constexpr int64_t kGemmRowBytes = 128;
constexpr int64_t kGemmChunkBytes = 16;
constexpr int64_t kGemmChunksPerRow = kGemmRowBytes / kGemmChunkBytes;
/// SIMT kernels: threads along N of the block's thread grid.
constexpr int64_t kSimtThreadsN = 16;

/// Whether a wgmma kernel multiplies with `mma`: bf16, f16, tf32 and
/// 3xTF32 (f32 operands rounded to 16 bits are mma_sync's alone).
bool isWgmmaKind(MmaKind mma);

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_IR_GEMMCONFIG_H
