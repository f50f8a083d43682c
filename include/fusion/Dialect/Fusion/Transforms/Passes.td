//===- Passes.td - fusion dialect transformations ----------*- tablegen -*-===//

#ifndef FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_TD
#define FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseElementwiseProducers : Pass<"fusion-fuse-elementwise-producers"> {
  let summary = "Compute each elementwise op inside the reductions and "
                "elementwise ops that read it";
  let description = [{
    An op implementing `ElementwiseOpInterface` whose result is read only as
    the input of `fusion.reduce` and elementwise ops is computed inside each
    of them: a reduction takes it into its `map` region, an elementwise op
    composes it before its own body, and its column and row operands join
    the reader's (after the reader's own). Its [M, N] result is then never
    materialized (softmax's `exp(x - max)` before its sum, a layer norm's
    output before a softmax), and every reader reads the producer's input,
    which lets the GPU backend compute all of them in one pass over each
    row. Recomputing an elementwise function costs less than a trip of its
    result through memory.

    An elementwise op read by anything else (a result, a linear, a batch
    norm, a row operand) stays where it is: its result is materialized
    anyway. Runs after `fusion-fuse-linear-epilogues`, so that a function
    every reader applies is computed once, in the GEMM epilogue.

    ```mlir
    %e = fusion.elementwise %y rows(%max : tensor<?x1xf32>) : tensor<?x8xf32> {
    ^bb0(%in: f32, %row: f32):
      %0 = arith.subf %in, %row : f32
      %1 = math.exp %0 : f32
      fusion.yield %1 : f32
    }
    %s = fusion.reduce sum %e : tensor<?x8xf32> -> tensor<?x1xf32> {
    ^bb0(%in: f32):
      fusion.yield %in : f32
    }
    ```

    becomes

    ```mlir
    %s = fusion.reduce sum %y rows(%max : tensor<?x1xf32>)
        : tensor<?x8xf32> -> tensor<?x1xf32> {
    ^bb0(%in: f32, %row: f32):
      %0 = arith.subf %in, %row : f32
      %1 = math.exp %0 : f32
      fusion.yield %1 : f32
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def FuseLinearEpilogues : Pass<"fusion-fuse-linear-epilogues"> {
  let summary = "Fuse each linear and the elementwise ops and batch_norm after "
                "it into one fusion.fused_linear";
  let description = [{
    Every `fusion.linear` becomes a `fusion.fused_linear` with an identity
    epilogue. Then, greedily, each op implementing `ElementwiseOpInterface`
    (`mul_scalar`, `mul`, `leaky_relu`, ...) whose input is a fused value is
    appended to that op's epilogue region, its per-column operands becoming
    epilogue operands and its row operands (a residual matrix, a row
    statistic) the fused op's row operands; a `batch_norm` on a fused value
    without row operands becomes the fused op's batch-norm stage. Each chain
    ends up as exactly one fused op.

    A fused value that other ops read too (one a training step saves for
    its backward pass, a second branch) becomes an intermediate result of
    the grown op, its value yielded after the result's: the GEMM output is
    written once with it, not read back, and nothing is computed twice.
    Ops that read an intermediate grow the op as well (adding one of their
    own), and a row operand that is one of the op's own matrices becomes
    that matrix's epilogue value. A 16-bit value that others read is stored
    rounded, so every reader reads it rounded, the last one absorbed too
    (by then no other reader is left); a value only one op reads stays f32
    until the result is rounded once. An op is left outside where no place
    suits the grown op: where its operands from elsewhere come after the
    fused value's other readers. Nothing is fused after a batch-norm stage
    here, since it depends on statistics over all rows; the GPU backends
    compute an elementwise op that alone reads its output in its
    normalizing pass.

    Two GEMMs of one input become one dual GEMM: where a fused op reads as
    a row operand the result of another fused op of the same input (weight
    type, layout and precision), which nothing else reads and which has no
    row operands, intermediates or batch norm of its own, that op's weight
    becomes the `dual_weight` and its alpha, bias and epilogue are applied
    to the dual accumulator in the reading op's epilogue (rounded to the
    element type, as the stored matrix was). A gated MLP's
    `act(x w_g^T) * (x w_u^T)` is then one GEMM that reads x once and writes
    neither product.

    Worked example (`fusion-opt --fusion-fuse-linear-epilogues`):

    ```mlir
    %0 = fusion.linear %x, %w, %b : ... -> tensor<?x8xf32>
    %1 = fusion.mul_scalar %0, 2.0 : tensor<?x8xf32>
    %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x8xf32>
    ```

    becomes

    ```mlir
    %2 = fusion.fused_linear %x, %w bias(%b) epilogue {
    ^bb0(%acc: f32):
      %c2 = arith.constant 2.0 : f32
      %0 = arith.mulf %acc, %c2 : f32
      %zero = arith.constant 0.0 : f32
      %slope = arith.constant 0.1 : f32
      %1 = arith.mulf %0, %slope : f32
      %2 = arith.cmpf ogt, %0, %zero : f32
      %3 = arith.select %2, %0, %1 : f32
      fusion.yield %3 : f32
    } : (...) -> tensor<?x8xf32>
    ```

    and a trailing batch norm becomes the stage:

    ```mlir
    %0 = fusion.linear %x, %w : ... -> tensor<?x4xf32>
    %1 = fusion.mul %0, %s : tensor<?x4xf32>, tensor<4xf32>
    %y, %mean, %var = fusion.batch_norm %1,
        <training, epsilon = 1.0e-05, momentum = 0.1>
        running_stats(%rm, %rv) : (...) -> (...)
    ```

    becomes

    ```mlir
    %y, %mean, %var = fusion.fused_linear %x, %w epilogue(%s) {
    ^bb0(%acc: f32, %col: f32):
      %0 = arith.mulf %acc, %col : f32
      fusion.yield %0 : f32
    } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1>
      running_stats(%rm, %rv) : (...) -> (...)
    ```
  }];
  let options = [
    Option<"f32Precision", "f32-precision", "::mlir::fusion::Precision",
           /*default=*/"::mlir::fusion::Precision::fp32",
           "GEMM precision of the fused ops made from f32 linears (fp32, "
           "their default, is left implicit)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::fusion::Precision::fp32, "fp32", "fp32"),
             clEnumValN(::mlir::fusion::Precision::tf32, "tf32", "tf32"),
             clEnumValN(::mlir::fusion::Precision::bf16, "bf16", "bf16"),
             clEnumValN(::mlir::fusion::Precision::f16, "f16", "f16"))}]>
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def Approximate16BitMath : Pass<"fusion-approximate-16-bit-math"> {
  let summary = "Let the erf, exp, sin, cos and divisions of fusion ops whose "
                "results are bf16 or f16, and the tanh of those whose "
                "results are bf16, be approximate (`fastmath<afn>`)";
  let description = [{
    A `fusion.fused_linear`, `fusion.elementwise` or `fusion.reduce` whose
    result is bf16 or f16 computes its region in f32 and rounds the result
    once to 16 bits, a relative error of up to 2^-9 (bf16) or 2^-12 (f16);
    PyTorch's own 16-bit model rounds every intermediate. The `erf`s,
    `exp`s, `sin`s, `cos`s and divisions of such a region are marked
    `fastmath<afn>`, which the GPU lowering reads:

    - gelu's `1 + erf(s)` takes a polynomial of degree 6 instead of 9
      (`fusion-expand-one-plus-erf`): relative error at most 6.3e-6 down
      to s = -4.5, absolute error at most 3.7e-6 (measured on an H200),
      three multiply-adds an element fewer;
    - `exp(x)` is `__nv_fast_expf`, `ex2.approx.f32(x log2(e))`, instead
      of libdevice's range-reduced `__nv_expf`: relative error at most
      3.8e-6 over the whole f32 range (measured on an H200; CUDA bounds
      `__expf` by (2 + 1.173 |x|) ulps), subnormal results kept; three
      instructions an element fewer in SASS;
    - a division (`fusion-expand-divisions`): by a constant, one product
      with its reciprocal (within 1.5 ulps); by a value that many divisions
      share, correctly rounded as before; any other quotient
      `div.full.f32` (within 2 ulps) and a reciprocal `rcp.approx.f32`
      (1 ulp), without the correctly rounded division's range check and
      slow-path branch an element;
    - `sin(x)` and `cos(x)` are `__nv_fast_sinf` and `__nv_fast_cosf`,
      `sin.approx.f32` and `cos.approx.f32`: within 2^-21 absolute on
      [-pi, pi], beyond it as much more as the argument's own f32 rounding
      already moves the result (an absolute bound: for results near zero
      about f16's own rounding), instead of libdevice's range reduction,
      whose branch to its slow path (arguments past 105615) an element
      serializes a GEMM epilogue.

    - `tanh(x)` of ops with bf16 results is `tanh.approx.f32`
      (`fusion-expand-tanh`): relative error at most 2^-11, 4 times below
      half a unit in the last place of bf16 (2^-9), one instruction for
      libdevice's 20; f16's half unit (2^-12 to 2^-11) is not above it, so
      f16 results keep libdevice's.

    erf, exp and the divisions stay over 35 times below f16's smallest
    rounding error (2.4e-4, half a unit in the last place). The CPU
    reference ignores the flag. Ops with f32 results are left alone: fp32
    and tf32 models keep f32-accurate functions. The decision is the
    flag: written by hand, or removed, it is what the lowering reads.
    `fusion-optimize` runs the pass unless its option
    `approximate-16-bit-math=false` says not to (`fusion-compile
    --math16=exact`, `math16="exact"` in Python).

    ```mlir
    %y = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      %e = math.erf %acc : f32
      fusion.yield %e : f32
    } : (tensor<?x8xbf16>, tensor<4x8xbf16>) -> tensor<?x4xbf16>
    // becomes
      %e = math.erf %acc fastmath<afn> : f32
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def InlineSpecialFunctions : Pass<"fusion-inline-special-functions"> {
  let summary = "Replace each fusion.special by its formula";
  let description = [{
    Each `fusion.special` with a formula becomes the ops of its body,
    computed where the op stood: the CPU reference's lowering
    (`fusion-lower-to-cpu`), whose math ops become libm calls, computes
    special functions by their formulas. Nested ones are inlined too. Those
    without one (the C library's functions, `libm`) stay for
    `fusion-math-to-libm`.

    ```mlir
    %g = fusion.special "twice"(%y) : (f32) -> f32 {
    ^bb0(%x: f32):
      %t = arith.addf %x, %x : f32
      fusion.yield %t : f32
    }
    // becomes
    %g = arith.addf %y, %y : f32
    ```
  }];
}

def SimplifyFusion : Pass<"fusion-simplify"> {
  let summary = "Algebraic simplifications of fusion ops that keep the meaning";
  let description = [{
    Applies the fusion ops' canonicalization patterns (scalar muls compose
    when that is exact, multiplying by one and leaky_relu with slope 1
    disappear) and the rewrites below. Every rewrite gives bit-identical
    results for every input, subnormals, infinities and NaNs included.

    **The composition rule.** `(x * a) * b` becomes `x * c` only when that
    holds for every `x`, with the intermediate rounded to the element type
    and the multipliers applied as f32. The rule (symmetric in `a`, `b`):

    - `a` or `b` is exactly `+1` or `-1` (`c = a * b`): negation is exact
      and round-to-nearest is symmetric; or
    - `a` and `b` are both powers of two of magnitude at least 1 and
      `|a * b|` is at most the largest f32: scaling by `2^p`, `p >= 0`,
      never rounds (a subnormal scaled up stays exact) and overflows to
      infinity exactly when the composed scaling does, since every
      intermediate is no larger than the final magnitude.

    Nothing else composes: `x * 1e38 * 1e38 * 1e-38 * 1e-38` is `inf` for
    every `|x| >= 1`, not `x`; factors below 1 round twice in the subnormal
    range (`x * 0.125 * 0.5` is `2^-148` but `x * 0.0625` is `2^-149` for
    `x = 21 * 2^-149`), and
    a power of two after an inexact factor scales a subnormal rounding error
    (`(2^-149 * 1.3) * 2` is `2^-148`, `2^-149 * 2.6` is `3 * 2^-149`).

    - `mul_scalar(leaky_relu(t, s), m)` with `m >= 1` becomes
      `leaky_relu(mul_scalar(t, m), s)` when `s` and `m` compose by the rule
      above (in practice: `s = -1`, or both are powers of two >= 1), which moves
      the multiplier towards the GEMM. `m >= 1` keeps the sign test exact: a
      negative `m` flips which elements the slope applies to, and an `m`
      below 1 can underflow a tiny positive `t` to zero, which then takes the
      slope. For negative `t` the two orders are `(t * s) * m` and
      `(t * m) * s`, equal exactly when the rule holds; with the usual
      slopes (0.01, 0.1, 0.2) nothing moves.
    - A `fused_linear` without bias whose epilogue starts by multiplying the
      accumulator by a constant `c` takes it into its GEMM `alpha` when
      `alpha` and `c` compose by the rule (always when `alpha` is 1). Every
      backend applies `alpha` as one f32 multiply of the finished f32 sum,
      so the epilogue's `round(round(sum * alpha) * c)` is
      `round(sum * alpha')` exactly when the rule holds. With a bias,
      `c * (sum + b) != c * sum + b`, so it stays.
    - A `fused_linear` whose batch-norm stage is in inference mode gets it as
      a per-column affine epilogue, `(e - mean) * rsqrt(var + eps) * gamma +
      beta`, with the running statistics and affine parameters as epilogue
      operands: no statistics are needed, so no separate stage remains. It
      is the same arithmetic, in the same order, as the stage.

    Not done, because it is not exact: a per-column scale in front of a
    training-mode batch norm does not cancel (`s * t` normalizes with
    `s^2 * var + eps`, not `s^2 * (var + eps)`).

    Worked examples (`fusion-opt --fusion-simplify`):

    ```mlir
    // Before: the multiplier comes after the nonlinearity.
    %0 = fusion.leaky_relu %t, negative_slope = -1.0 : tensor<?x4xf32>
    %1 = fusion.mul_scalar %0, 3.0 : tensor<?x4xf32>
    // After: it moves in front (3.0 >= 1, and the slope is -1); with a
    // multiplier of -3.0 or 0.5, or with a slope of 0.1, nothing changes.
    %0 = fusion.mul_scalar %t, 3.0 : tensor<?x4xf32>
    %1 = fusion.leaky_relu %0, negative_slope = -1.0 : tensor<?x4xf32>
    ```

    ```mlir
    // Before: no bias, the epilogue starts with acc * 2.
    %y = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      %c2 = arith.constant 2.0 : f32
      %0 = arith.mulf %acc, %c2 : f32
      fusion.yield %0 : f32
    } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    // After: the GEMM does it.
    %y = fusion.fused_linear %x, %w alpha 2.0 epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    ```

    ```mlir
    // Before: an inference batch-norm stage.
    %y = fusion.fused_linear %x, %w epilogue {
    ^bb0(%acc: f32):
      fusion.yield %acc : f32
    } batch_norm <inference, epsilon = 1.0e-05, momentum = 0.1>
      running_stats(%rm, %rv) : (...) -> tensor<?x4xf32>
    // After: a per-column affine epilogue.
    %y = fusion.fused_linear %x, %w epilogue(%rm, %rv) {
    ^bb0(%acc: f32, %mean: f32, %var: f32):
      %eps = arith.constant 1.0e-05 : f32
      %0 = arith.addf %var, %eps : f32
      %invstd = math.rsqrt %0 : f32
      %1 = arith.subf %acc, %mean : f32
      %2 = arith.mulf %1, %invstd : f32
      fusion.yield %2 : f32
    } : (...) -> tensor<?x4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def VerifyEntryPoints : Pass<"fusion-verify-entry-points", "::mlir::ModuleOp"> {
  let summary = "Check that a module can be compiled into a library: entry "
                "point types, tensor sizes and constant sizes";
  let description = [{
    What `fusion-compile` (and `fusion.compile` in Python) checks before
    lowering, for both targets, so that every input it cannot compile ends
    in a located diagnostic instead of a crash, an out-of-memory abort or a
    wrong signature file:

    - every argument and result of every public function with a body (an
      entry point of the library) is a ranked tensor without encoding whose
      element type is `f32`, `bf16` or `f16`, the types the signature file
      and the runtime describe;
    - no value or block argument anywhere in the module has a tensor,
      memref or vector type whose static dimensions make a byte size that
      overflows int64;
    - no elements attribute (e.g. a `dense<...>` `arith.constant`, splat or
      not) is larger than `max-constant-bytes`: it would be materialized as
      a global of that size.

    The pass changes nothing; it reports every violation, then fails.

    ```mlir
    // error: entry point argument #0 has type 'tensor<4xf64>'; entry-point
    // tensors must have an f32, bf16 or f16 element type
    func.func @f(%s: tensor<4xf64>) -> tensor<4xf64>
    ```
  }];
  let options = [
    Option<"maxConstantBytes", "max-constant-bytes", "int64_t",
           /*default=*/"int64_t(1) << 30",
           "the largest constant, in bytes, that may be materialized">
  ];
}

def CpuEntryAbi : Pass<"fusion-cpu-entry-abi", "::mlir::ModuleOp"> {
  let summary = "Give each public function the CPU library's "
                "destination-passing memref ABI";
  let description = [{
    Each public function with a body, `@name(tensor...) -> (tensor...)`,
    becomes a private `@name__tensors` and a new public `@name(memref
    input..., memref output...)` (identity layouts) that wraps its inputs
    with `bufferization.to_tensor` (`restrict`), calls it and writes each
    result into its output with `bufferization.materialize_in_destination`
    (`restrict writable`). After inlining and one-shot bufferization the
    results are computed straight into the caller's buffers: this is the ABI
    of `fusion-compile --target=cpu` libraries (memref descriptors, inputs
    then outputs).

    Only ranked tensors without encoding and with a memref element type can
    cross this ABI: any other argument or result type (a scalar, an
    unranked tensor, ...) is an error naming the type, located at the
    function, and the module is left unchanged. So is a function whose
    `@name__tensors` symbol is already taken.

    ```mlir
    func.func @f(%x: tensor<?x8xf32>) -> tensor<?x8xf32>
    ```

    becomes

    ```mlir
    func.func private @f__tensors(%x: tensor<?x8xf32>) -> tensor<?x8xf32>
    func.func @f(%in: memref<?x8xf32>, %out: memref<?x8xf32>) {
      %0 = bufferization.to_tensor %in restrict : memref<?x8xf32> to tensor<?x8xf32>
      %1 = call @f__tensors(%0) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      bufferization.materialize_in_destination %1 in restrict writable %out
          : (tensor<?x8xf32>, memref<?x8xf32>) -> ()
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_TD
