//===- FusionRandomOps.td - fusion ops that draw random numbers -*- tablegen -*-===//
//
// Apart from FusionOps.td so that the translation units that build or
// lower draws are the only ones that include them.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_IR_FUSIONRANDOMOPS_TD
#define FUSION_DIALECT_FUSION_IR_FUSIONRANDOMOPS_TD

include "fusion/Dialect/Fusion/IR/FusionBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Fusion_RandomUniformOp : Fusion_Op<"random_uniform", [Pure]> {
  let summary = "a matrix of uniform random numbers in [0, 1), drawn by "
                "a counter-based generator";
  let description = [{
    `y[m, n] = (w >> 8) * 2^-24`, rounded to the element type, where `w`
    is word `i mod 4` of Philox4x32-10 (Random123's) of the counter
    `(b mod 2^32, b / 2^32, stream, 0)`, `i = m * N + n`, `b = i / 4`
    (one block of four words draws four consecutive elements), under the
    64-bit key whose two words are the bits of `seed`'s two elements: in [0, 1)
    in f32; a 16-bit draw is the f32 one rounded to nearest (1.0 where it
    rounds up), as PyTorch's `rand` of that dtype, so that comparing it
    with a threshold keeps the f32 draw's resolution near the threshold. A
    draw computed where it is read is rounded as the draw stored.

    It is a function of its operands, so the GPU backends compute the draw
    where an op reads it as a row operand (dropout's comparison in a GEMM's
    epilogue): no matrix of random numbers is written or read. `seed` holds
    64 random bits in two f32 elements (the entry ABI passes floating-point
    tensors; callers draw it per call, as `torch.randint` viewed as
    float32). `rows_of` gives the draw its rows and is not read. Draws of
    one seed are independent when their `stream`s differ.

    ```mlir
    %u = fusion.random_uniform seed(%seed : tensor<2xf32>)
        rows_of(%x : tensor<?x512xbf16>) stream 0 : tensor<?x256xbf16>
    ```
  }];
  let arguments = (ins Fusion_Vector:$seed, Fusion_Matrix:$rows_of,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$stream);
  let results = (outs Fusion_Matrix:$result);
  let assemblyFormat = [{
    `seed` `(` $seed `:` type($seed) `)`
    `rows_of` `(` $rows_of `:` type($rows_of) `)`
    `stream` $stream attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

#endif // FUSION_DIALECT_FUSION_IR_FUSIONRANDOMOPS_TD
