//===- Quotients.h - f32 quotients without div.rn.f32's slow path -*- C++ -*-===//
//
// The expansions' divisions whose denominators they know to be in range, in
// one place so that each computes its quotient alike.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_MATH_QUOTIENTS_H
#define FUSION_CODEGEN_MATH_QUOTIENTS_H

#include "mlir/IR/Builders.h"

namespace mlir::fusion {

/// n / d (f32) from d's approximate reciprocal (`rcp.approx.f32`, within 1
/// ulp) and Markstein's correction, q0 = n r, q = q0 + fma(-q0, d, n) r:
/// within an ulp of the correctly rounded quotient, without `div.rn.f32`'s
/// range check and the slow path it branches to. For denominators whose
/// reciprocals are normal (neither subnormal nor past 2^126); others are
/// the caller's to guard.
Value buildMarksteinQuotient(OpBuilder &builder, Location loc, Value numerator,
                             Value denominator);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_MATH_QUOTIENTS_H
