//===- Passes.h - fusion dialect transformations ----------------*- C++ -*-===//

#ifndef FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_H
#define FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace fusion {

#define GEN_PASS_DECL
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"

/// The fusion patterns of `fusion-fuse-linear-epilogues`. Linears become
/// fused ops of `f32Precision` when their tensors are f32 (none: default).
void populateFuseLinearEpiloguesPatterns(RewritePatternSet &patterns,
                                         std::optional<Precision> f32Precision);

/// The patterns of `fusion-fuse-elementwise-producers`.
void populateFuseElementwiseProducersPatterns(RewritePatternSet &patterns);

/// The algebraic simplifications of `fusion-simplify`.
void populateSimplifyFusionPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"

} // namespace fusion
} // namespace mlir

#endif // FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_H
