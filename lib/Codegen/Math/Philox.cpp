//===- Philox.cpp - the counter-based draw of fusion.random_uniform -------===//

#include "fusion/Codegen/Math/Philox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fusion;

// Random123's Philox4x32 multipliers and Weyl key increments.
constexpr uint32_t kMultiplier0 = 0xD2511F53u, kMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
constexpr int kRounds = 10;

static Value i32Constant(OpBuilder &b, Location loc, uint32_t value) {
  return arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(static_cast<int32_t>(value)));
}

std::pair<Value, Value> mlir::fusion::philoxKey(OpBuilder &builder,
                                                Location loc, Value first,
                                                Value second) {
  Type i32 = builder.getI32Type();
  return {arith::BitcastOp::create(builder, loc, i32, first),
          arith::BitcastOp::create(builder, loc, i32, second)};
}

Value mlir::fusion::buildUniformDraw(OpBuilder &b, Location loc,
                                     std::pair<Value, Value> key, Value index,
                                     int64_t stream) {
  Type i32 = b.getI32Type();
  Value low = arith::TruncIOp::create(b, loc, i32, index);
  Value high = arith::TruncIOp::create(
      b, loc, i32,
      arith::ShRUIOp::create(
          b, loc, index,
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32))));
  Value counter[4] = {low, high, i32Constant(b, loc, stream),
                      i32Constant(b, loc, 0)};
  Value k0 = key.first, k1 = key.second;
  Value m0 = i32Constant(b, loc, kMultiplier0);
  Value m1 = i32Constant(b, loc, kMultiplier1);
  for (int round = 0; round < kRounds; ++round) {
    if (round > 0) {
      k0 = arith::AddIOp::create(b, loc, k0, i32Constant(b, loc, kWeyl0));
      k1 = arith::AddIOp::create(b, loc, k1, i32Constant(b, loc, kWeyl1));
    }
    auto product0 = arith::MulUIExtendedOp::create(b, loc, m0, counter[0]);
    auto product1 = arith::MulUIExtendedOp::create(b, loc, m1, counter[2]);
    Value next[4] = {
        arith::XOrIOp::create(
            b, loc, arith::XOrIOp::create(b, loc, product1.getHigh(), counter[1]),
            k0),
        product1.getLow(),
        arith::XOrIOp::create(
            b, loc, arith::XOrIOp::create(b, loc, product0.getHigh(), counter[3]),
            k1),
        product0.getLow()};
    std::copy(std::begin(next), std::end(next), std::begin(counter));
  }
  // The top 24 bits, exact in f32.
  Value kept = arith::ShRUIOp::create(b, loc, counter[0], i32Constant(b, loc, 8));
  Value asFloat = arith::UIToFPOp::create(b, loc, b.getF32Type(), kept);
  Value scale =
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(std::ldexp(1.0f, -24)));
  return arith::MulFOp::create(b, loc, asFloat, scale);
}
