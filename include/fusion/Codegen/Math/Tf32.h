//===- Tf32.h - f32 values as the tensor cores' tf32 ------------*- C++ -*-===//
//
// tf32 rounding (cvt.rna.tf32.f32's, in arith for the CPU reference of a
// tf32 GEMM and as the instruction in the GPU kernels) and the split-tf32
// (3xTF32) operand parts, in one place so that every path rounds alike.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_MATH_TF32_H
#define FUSION_CODEGEN_MATH_TF32_H

#include "mlir/IR/Builders.h"

#include <utility>

namespace mlir::fusion {

/// `x` (f32, or a vector of f32) rounded to tf32's 10 mantissa bits, to
/// nearest with ties away from zero (cvt.rna.tf32.f32), as an f32 whose low
/// 13 bits are 0. Infinities stay, and a NaN becomes the quiet NaN
/// 0x7fc00000: the rounding's carry would turn the GPU's canonical NaN
/// 0x7fffffff into -0, and the tensor cores would read one whose payload
/// is all in the low 13 bits as an infinity.
Value roundToTf32(OpBuilder &builder, Location loc, Value x);

/// The same rounding on the GPU: `cvt.rna.tf32.f32` of each element of `x`
/// (f32, or a vector of f32), as an f32. The instruction keeps a NaN a NaN
/// (the GPU's canonical 0x7fffffff included) in fewer instructions than
/// roundToTf32's guard, where a kernel rounds in its main loop.
Value convertToTf32(OpBuilder &builder, Location loc, Value x);

/// The split-tf32 (3xTF32) parts {high, low} of an f32 operand (or a vector
/// of them): high is x rounded to tf32 (to nearest, ties away) and clamped
/// to the largest finite tf32, low the exact remainder x - high, of which
/// the tensor cores read the top tf32 bits. With high rounded to nearest,
/// |low| <= 2^-11 |x|, so that a product's dropped low * low term is at most
/// 2^-22 of it and the truncation of low 2^-22 of x (a few f32 units each),
/// where a truncated high left 2^-20 and 2^-21. An infinite x has a finite
/// high part and an infinite low part: its products with the other
/// operand's parts are an infinity of the product's sign wherever fp32's
/// is, never inf * 0 (a partner exact in tf32, whose low part is 0) nor
/// inf - inf. A NaN x has a finite high part (the clamp's, or the
/// rounding's carry) and a NaN low part.
std::pair<Value, Value> splitTf32(OpBuilder &builder, Location loc, Value x);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_MATH_TF32_H
