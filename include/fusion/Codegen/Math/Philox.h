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
/// words), as an f32 in [0, 1): `(w >> 8) * 2^-24`, w word `index % 4` of
/// Philox4x32-10 of the counter (the low and high words of `index / 4`,
/// stream, 0): one block of four words draws four consecutive elements. A
/// 16-bit draw is this value rounded as stored.
Value buildUniformDraw(OpBuilder &builder, Location loc,
                       std::pair<Value, Value> key, Value index,
                       int64_t stream);

/// Elements `first` to `first + count - 1` of the same draw, `first` known
/// to be a multiple of `alignment` (1, 2 or 4): a Philox block for each
/// aligned group of min(alignment, 4) elements, rather than one each.
SmallVector<Value> buildUniformRun(OpBuilder &builder, Location loc,
                                   std::pair<Value, Value> key, Value first,
                                   int64_t count, int64_t alignment,
                                   int64_t stream);

/// The largest of 4, 2 and 1 that divides both `a` and `b`: the alignment
/// of a run of `a` elements that starts at a multiple of `a` in a row of
/// `b`.
int64_t drawAlignment(int64_t a, int64_t b);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_MATH_PHILOX_H
