//===- Quotients.cpp - f32 quotients without div.rn.f32's slow path -------===//

#include "fusion/Codegen/Math/Quotients.h"

#include "fusion/Dialect/Fusion/IR/ScalarBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

Value fusion::buildMarksteinQuotient(OpBuilder &b, Location loc,
                                     Value numerator, Value denominator) {
  Value reciprocal =
      arith::DivFOp::create(b, loc, buildF32Constant(b, loc, 1.0), denominator,
                            arith::FastMathFlags::afn);
  Value quotient = arith::MulFOp::create(b, loc, numerator, reciprocal);
  Value negated = arith::NegFOp::create(b, loc, quotient);
  Value residual = math::FmaOp::create(b, loc, negated, denominator, numerator);
  return math::FmaOp::create(b, loc, residual, reciprocal, quotient);
}
