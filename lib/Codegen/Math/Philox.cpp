//===- Philox.cpp - the counter-based draw of fusion.random_uniform -------===//

#include "fusion/Codegen/Math/Philox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <array>
#include <cassert>
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

/// The four words of Philox4x32-10 of block `block` (i64) of `stream`.
static std::array<Value, 4> philoxBlock(OpBuilder &b, Location loc,
                                        std::pair<Value, Value> key,
                                        Value block, int64_t stream) {
  Type i32 = b.getI32Type();
  Value low = arith::TruncIOp::create(b, loc, i32, block);
  Value high = arith::TruncIOp::create(
      b, loc, i32,
      arith::ShRUIOp::create(
          b, loc, block,
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32))));
  std::array<Value, 4> counter = {low, high, i32Constant(b, loc, stream),
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
    counter = {
        arith::XOrIOp::create(
            b, loc, arith::XOrIOp::create(b, loc, product1.getHigh(), counter[1]),
            k0),
        product1.getLow(),
        arith::XOrIOp::create(
            b, loc, arith::XOrIOp::create(b, loc, product0.getHigh(), counter[3]),
            k1),
        product0.getLow()};
  }
  return counter;
}

/// A word as a draw: its top 24 bits, exact in f32, times 2^-24.
static Value uniformOf(OpBuilder &b, Location loc, Value word) {
  Value kept = arith::ShRUIOp::create(b, loc, word, i32Constant(b, loc, 8));
  Value asFloat = arith::UIToFPOp::create(b, loc, b.getF32Type(), kept);
  Value scale =
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(std::ldexp(1.0f, -24)));
  return arith::MulFOp::create(b, loc, asFloat, scale);
}

static Value i64Constant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
}

/// The word of `words` for element `position` (i64): word `position % 4`;
/// where `fromPairs`, `position` is even and the word is word `offset` (the
/// element's place in its pair) of the pair that `position`'s bit 1
/// picks.
static Value pickWord(OpBuilder &b, Location loc,
                      const std::array<Value, 4> &words, Value position,
                      int64_t offset, bool fromPairs) {
  auto bitSet = [&](int64_t bit) {
    Value masked =
        arith::AndIOp::create(b, loc, position, i64Constant(b, loc, bit));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, masked,
                                 i64Constant(b, loc, 0));
  };
  Value high = bitSet(2);
  Value fromLow = words[offset], fromHigh = words[offset + 2];
  if (!fromPairs) {
    Value odd = bitSet(1);
    fromLow = arith::SelectOp::create(b, loc, odd, words[1], words[0]);
    fromHigh = arith::SelectOp::create(b, loc, odd, words[3], words[2]);
  }
  return arith::SelectOp::create(b, loc, high, fromHigh, fromLow);
}

SmallVector<Value> mlir::fusion::buildUniformRun(OpBuilder &b, Location loc,
                                                 std::pair<Value, Value> key,
                                                 Value first, int64_t count,
                                                 int64_t alignment,
                                                 int64_t stream) {
  int64_t group = std::min<int64_t>(alignment, 4);
  assert((group == 1 || group == 2 || group == 4) && "alignment 1, 2 or 4");
  SmallVector<Value> draws;
  for (int64_t start = 0; start < count; start += group) {
    Value index = start == 0 ? first
                             : arith::AddIOp::create(
                                   b, loc, first, i64Constant(b, loc, start));
    Value block =
        arith::ShRUIOp::create(b, loc, index, i64Constant(b, loc, 2));
    std::array<Value, 4> words = philoxBlock(b, loc, key, block, stream);
    for (int64_t lane = 0; lane < group && start + lane < count; ++lane) {
      Value word = group == 4 ? words[lane]
                              : pickWord(b, loc, words, index, lane,
                                         /*fromPairs=*/group == 2);
      draws.push_back(uniformOf(b, loc, word));
    }
  }
  return draws;
}

Value mlir::fusion::buildUniformDraw(OpBuilder &b, Location loc,
                                     std::pair<Value, Value> key, Value index,
                                     int64_t stream) {
  return buildUniformRun(b, loc, key, index, 1, 1, stream).front();
}

int64_t mlir::fusion::drawAlignment(int64_t a, int64_t b) {
  for (int64_t alignment : {4, 2})
    if (a % alignment == 0 && b % alignment == 0)
      return alignment;
  return 1;
}
