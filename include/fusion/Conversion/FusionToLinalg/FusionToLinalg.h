//===- FusionToLinalg.h - fusion to linalg reference lowering ---*- C++ -*-===//

#ifndef FUSION_CONVERSION_FUSIONTOLINALG_FUSIONTOLINALG_H
#define FUSION_CONVERSION_FUSIONTOLINALG_FUSIONTOLINALG_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace fusion {

#define GEN_PASS_DECL_CONVERTFUSIONTOLINALG
#include "fusion/Conversion/Passes.h.inc"

/// Patterns lowering every fusion op to linalg/tensor/arith/math.
void populateFusionToLinalgPatterns(RewritePatternSet &patterns);

} // namespace fusion
} // namespace mlir

#endif // FUSION_CONVERSION_FUSIONTOLINALG_FUSIONTOLINALG_H
