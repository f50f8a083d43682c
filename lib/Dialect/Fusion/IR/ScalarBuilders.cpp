//===- ScalarBuilders.cpp - scalar forms of the fusion ops ----------------===//

#include "fusion/Dialect/Fusion/IR/ScalarBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cfloat>
#include <cmath>
#include <limits>

using namespace mlir;

std::optional<double> mlir::fusion::composeScalarMultipliers(double first,
                                                             double second) {
  if (!std::isfinite(first) || !std::isfinite(second))
    return std::nullopt;
  if (std::fabs(first) == 1.0 || std::fabs(second) == 1.0)
    return first * second;
  auto isPowerOfTwoAtLeastOne = [](double value) {
    int exponent;
    double mantissa = std::frexp(std::fabs(value), &exponent);
    return mantissa == 0.5 && exponent >= 1;
  };
  if (!isPowerOfTwoAtLeastOne(first) || !isPowerOfTwoAtLeastOne(second))
    return std::nullopt;
  double product = first * second;
  if (std::fabs(product) > FLT_MAX)
    return std::nullopt;
  return product;
}

Value mlir::fusion::buildF32Constant(OpBuilder &builder, Location loc,
                                     double value) {
  return arith::ConstantOp::create(builder, loc,
                                   builder.getF32FloatAttr(value));
}

Value mlir::fusion::buildLeakyRelu(OpBuilder &builder, Location loc, Value x,
                                   double slope) {
  Value zero = buildF32Constant(builder, loc, 0.0);
  Value scaled = arith::MulFOp::create(builder, loc, x,
                                       buildF32Constant(builder, loc, slope));
  Value positive =
      arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OGT, x, zero);
  return arith::SelectOp::create(builder, loc, positive, x, scaled);
}

Value mlir::fusion::buildInvStd(OpBuilder &builder, Location loc,
                                Value variance, double epsilon) {
  Value shifted = arith::AddFOp::create(
      builder, loc, variance, buildF32Constant(builder, loc, epsilon));
  return math::RsqrtOp::create(builder, loc, shifted);
}

Value mlir::fusion::buildBatchNormNormalize(OpBuilder &builder, Location loc,
                                            Value x, Value mean, Value invstd,
                                            Value weight, Value bias) {
  Value centered = arith::SubFOp::create(builder, loc, x, mean);
  Value normalized = arith::MulFOp::create(builder, loc, centered, invstd);
  if (weight)
    normalized = arith::MulFOp::create(builder, loc, normalized, weight);
  if (bias)
    normalized = arith::AddFOp::create(builder, loc, normalized, bias);
  return normalized;
}

Value mlir::fusion::buildReductionCombine(OpBuilder &builder, Location loc,
                                          ReductionKind kind, Value acc,
                                          Value value) {
  switch (kind) {
  case ReductionKind::sum:
    return arith::AddFOp::create(builder, loc, acc, value);
  case ReductionKind::max:
    return arith::MaximumFOp::create(builder, loc, acc, value);
  case ReductionKind::min:
    return arith::MinimumFOp::create(builder, loc, acc, value);
  }
  llvm_unreachable("unknown reduction kind");
}

double mlir::fusion::getReductionIdentity(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::sum:
    return 0.0;
  case ReductionKind::max:
    return -std::numeric_limits<double>::infinity();
  case ReductionKind::min:
    return std::numeric_limits<double>::infinity();
  }
  llvm_unreachable("unknown reduction kind");
}
