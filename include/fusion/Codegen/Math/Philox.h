//===- Philox.h - the counter-based draw of fusion.random_uniform -*- C++ -*-===//
//
// One definition of the draw for every path that computes it (the CPU
// reference's linalg body, the GPU kernels that read a draw as a row
// operand), so that a value computed where it is read equals the one
// stored.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_MATH_PHILOX_H
#define FUSION_CODEGEN_MATH_PHILOX_H

#include "mlir/IR/Builders.h"

namespace mlir::fusion {

/// The two i32 key words of a fusion.random_uniform seed: the bits of its
/// two f32 elements `first` and `second`.
std::pair<Value, Value> philoxKey(OpBuilder &builder, Location loc, Value first,
                                  Value second);

/// Element `index` (i64, m * N + n) of stream `stream` under `key` (i32
/// words), as an f32 in [0, 1): `(w >> 8) * 2^-24`, w the first word of
/// Philox4x32-10 of the counter (index's low and high words, stream, 0).
/// A 16-bit draw is this value rounded as stored.
Value buildUniformDraw(OpBuilder &builder, Location loc,
                       std::pair<Value, Value> key, Value index,
                       int64_t stream);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_MATH_PHILOX_H
