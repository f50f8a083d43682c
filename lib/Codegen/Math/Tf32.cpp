//===- Tf32.cpp - f32 values as the tensor cores' tf32 --------------------===//

#include "fusion/Codegen/Math/Tf32.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fusion;

/// The constant `scalar` of `type`: the scalar's type, or a vector of it.
static Value splat(OpBuilder &builder, Location loc, Type type,
                   TypedAttr scalar) {
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(builder, loc,
                                     DenseElementsAttr::get(vector, scalar));
  return arith::ConstantOp::create(builder, loc, scalar);
}

/// x's sign, exponent and 10 mantissa bits after adding half a unit of
/// tf32's last place: to nearest, ties away from zero, as the bits are sign
/// and magnitude. An infinity stays; a NaN may become an infinity or -0.
static Value roundBitsToTf32(OpBuilder &builder, Location loc, Value x) {
  Type type = x.getType();
  Type bitsType = builder.getI32Type();
  if (auto vector = dyn_cast<VectorType>(type))
    bitsType = vector.clone(bitsType);
  auto constant = [&](uint32_t bits) {
    return splat(builder, loc, bitsType,
                 builder.getI32IntegerAttr(static_cast<int32_t>(bits)));
  };
  Value bits = arith::BitcastOp::create(builder, loc, bitsType, x);
  Value halfUlp = arith::AddIOp::create(builder, loc, bits, constant(0x1000));
  Value kept =
      arith::AndIOp::create(builder, loc, halfUlp, constant(0xffffe000u));
  return arith::BitcastOp::create(builder, loc, type, kept);
}

Value mlir::fusion::roundToTf32(OpBuilder &builder, Location loc, Value x) {
  Value rounded = roundBitsToTf32(builder, loc, x);
  Value isNaN =
      arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UNO, x, x);
  Value quietNaN =
      splat(builder, loc, x.getType(), builder.getF32FloatAttr(NAN));
  return arith::SelectOp::create(builder, loc, isNaN, quietNaN, rounded);
}

Value mlir::fusion::convertToTf32(OpBuilder &builder, Location loc, Value x) {
  auto convert = [&](Value element) -> Value {
    auto bits = NVVM::ConvertFloatToTF32Op::create(
        builder, loc, builder.getI32Type(), element, NVVM::FPRoundingMode::RNA,
        NVVM::SaturationMode::NONE, /*relu=*/false);
    return arith::BitcastOp::create(builder, loc, builder.getF32Type(), bits);
  };
  auto vectorType = dyn_cast<VectorType>(x.getType());
  if (!vectorType)
    return convert(x);
  // Element by element at each position: a shape cast to one dimension
  // leaves ub.poison that the sm_80 pipeline does not lower.
  Value result = arith::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(vectorType, builder.getF32FloatAttr(0)));
  SmallVector<int64_t> strides = computeStrides(vectorType.getShape());
  for (int64_t i = 0, e = vectorType.getNumElements(); i < e; ++i) {
    SmallVector<int64_t> position = delinearize(i, strides);
    Value element = vector::ExtractOp::create(builder, loc, x, position);
    result = vector::InsertOp::create(builder, loc, convert(element), result,
                                      position);
  }
  return result;
}

std::pair<Value, Value> mlir::fusion::splitTf32(OpBuilder &builder,
                                                Location loc, Value x) {
  Type type = x.getType();
  // The largest finite tf32: (2 - 2^-10) * 2^127.
  double largest = 0x1.ffcp127;
  Value upper = splat(builder, loc, type, builder.getF32FloatAttr(largest));
  Value lower = splat(builder, loc, type, builder.getF32FloatAttr(-largest));
  Value rounded = roundBitsToTf32(builder, loc, x);
  Value below = arith::MinNumFOp::create(builder, loc, rounded, upper);
  Value high = arith::MaxNumFOp::create(builder, loc, below, lower);
  return {high, arith::SubFOp::create(builder, loc, x, high)};
}
