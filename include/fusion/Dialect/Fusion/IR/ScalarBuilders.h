//===- ScalarBuilders.h - scalar forms of the fusion ops --------*- C++ -*-===//
//
// The per-element f32 computations of the fusion ops. The fusion patterns put
// them into fused_linear epilogues and the lowerings apply them per element,
// so each op's arithmetic is written once.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_IR_SCALARBUILDERS_H
#define FUSION_DIALECT_FUSION_IR_SCALARBUILDERS_H

#include "mlir/IR/Builders.h"

namespace mlir::fusion {

/// An f32 constant.
Value buildF32Constant(OpBuilder &builder, Location loc, double value);

/// `x > 0 ? x : slope * x`, as PyTorch's leaky_relu.
Value buildLeakyRelu(OpBuilder &builder, Location loc, Value x, double slope);

/// `(x - mean) * invstd (* weight) (+ bias)`, PyTorch's batch-norm
/// normalization; `weight` and `bias` may be null.
Value buildBatchNormNormalize(OpBuilder &builder, Location loc, Value x,
                              Value mean, Value invstd, Value weight,
                              Value bias);

/// `1 / sqrt(variance + epsilon)`.
Value buildInvStd(OpBuilder &builder, Location loc, Value variance,
                  double epsilon);

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_IR_SCALARBUILDERS_H
