//===- ScalarBuilders.h - scalar forms of the fusion ops --------*- C++ -*-===//
//
// The per-element f32 computations of the fusion ops. The fusion patterns put
// them into fused_linear epilogues and the lowerings apply them per element,
// so each op's arithmetic is written once.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_IR_SCALARBUILDERS_H
#define FUSION_DIALECT_FUSION_IR_SCALARBUILDERS_H

#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::fusion {

/// The exact composition rule of scalar multipliers: the multiplier `c` such
/// that `(x * first) * second == x * c` bit for bit for every input `x` (any
/// f32, bf16 or f16 value, subnormals, infinities and NaNs included, with
/// the intermediate rounded to the tensor's element type, multipliers
/// applied as f32), or none. It holds, symmetrically, when
///
/// - `first` or `second` is exactly +1 or -1: negation is exact and
///   round-to-nearest is symmetric, so `c = first * second`; or
/// - both are powers of two of magnitude >= 1 and `|first * second|` is at
///   most the largest f32: scaling by `2^p`, `p >= 0`, never rounds (a
///   subnormal scaled up stays exact), and it overflows to infinity exactly
///   when the composed scaling does, since every intermediate is no larger
///   than the final magnitude.
///
/// Everything else may round differently: `x * 1e38 * 1e-38` overflows
/// where `x * 1.0` does not; two factors below 1 round twice in the
/// subnormal range (`x * 0.125 * 0.5` is `2^-148`, `x * 0.0625` is `2^-149` for
/// `x = 21 * 2^-149`);
/// a power of two after an inexact factor scales a subnormal rounding
/// error (`(2^-149 * 1.3) * 2` vs `2^-149 * 2.6`).
std::optional<double> composeScalarMultipliers(double first, double second);

/// An f32 constant.
Value buildF32Constant(OpBuilder &builder, Location loc, double value);

/// `x > 0 ? x : slope * x`, as PyTorch's leaky_relu.
Value buildLeakyRelu(OpBuilder &builder, Location loc, Value x, double slope);

/// `(x - mean) * invstd (* weight) (+ bias)`, PyTorch's batch-norm
/// normalization; `weight` and `bias` may be null.
Value buildBatchNormNormalize(OpBuilder &builder, Location loc, Value x,
                              Value mean, Value invstd, Value weight,
                              Value bias);

/// `kind`'s combination of an accumulated f32 value and the next one: the
/// f32 sum, or the IEEE maximum/minimum (NaN propagating, as torch.amax and
/// torch.amin); and the value a reduction of `kind` starts from.
Value buildReductionCombine(OpBuilder &builder, Location loc,
                            ReductionKind kind, Value acc, Value value);
double getReductionIdentity(ReductionKind kind);

/// `1 / sqrt(variance + epsilon)`.
Value buildInvStd(OpBuilder &builder, Location loc, Value variance,
                  double epsilon);

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_IR_SCALARBUILDERS_H
