//===- FusionOps.td - fusion dialect ops -------------------*- tablegen -*-===//

#ifndef FUSION_DIALECT_FUSION_IR_FUSIONOPS_TD
#define FUSION_DIALECT_FUSION_IR_FUSIONOPS_TD

include "fusion/Dialect/Fusion/IR/FusionAttrs.td"
include "fusion/Dialect/Fusion/IR/FusionInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

def Fusion_LinearOp : Fusion_Op<"linear", [Pure]> {
  let summary = "y = x * w^T (+ b), as torch.nn.Linear";
  let description = [{
    `y[m, n] = sum_k x[m, k] * w[n, k] (+ b[n])`. The weight has
    `torch.nn.Linear`'s layout `[out_features, in_features]`. For `bf16`/`f16`
    tensors the sum is accumulated in f32 and rounded once.

    ```mlir
    %y = fusion.linear %x, %w, %b
        : tensor<?x512xf32>, tensor<256x512xf32>, tensor<256xf32>
        -> tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Fusion_Matrix:$input, Fusion_Matrix:$weight,
                       Optional<Fusion_Vector>:$bias);
  let results = (outs Fusion_Matrix:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict
    `:` type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

def Fusion_MulScalarOp : Fusion_Op<"mul_scalar",
    [Pure, AllTypesMatch<["input", "result"]>,
     DeclareOpInterfaceMethods<Fusion_ElementwiseOpInterface>]> {
  let summary = "product with a compile-time scalar";
  let description = [{
    `y = x * multiplier`, the multiplier a compile-time float (torch's
    `x * 2.0`).

    ```mlir
    %y = fusion.mul_scalar %x, 2.0 : tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Fusion_Matrix:$input, F64Attr:$multiplier);
  let results = (outs Fusion_Matrix:$result);
  let assemblyFormat = "$input `,` $multiplier attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Fusion_MulOp : Fusion_Op<"mul",
    [Pure, AllTypesMatch<["input", "result"]>,
     DeclareOpInterfaceMethods<Fusion_ElementwiseOpInterface,
                               ["getColumnOperands"]>]> {
  let summary = "product with a per-column vector broadcast over the rows";
  let description = [{
    `y[m, n] = x[m, n] * scale[n]` (torch's `x * self.scale` with `scale` of
    shape `(N,)`).

    ```mlir
    %y = fusion.mul %x, %scale : tensor<?x256xf32>, tensor<256xf32>
    ```
  }];
  let arguments = (ins Fusion_Matrix:$input, Fusion_Vector:$scale);
  let results = (outs Fusion_Matrix:$result);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` type($input) `,` type($scale)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fusion_LeakyReluOp : Fusion_Op<"leaky_relu",
    [Pure, AllTypesMatch<["input", "result"]>,
     DeclareOpInterfaceMethods<Fusion_ElementwiseOpInterface>]> {
  let summary = "x if x >= 0 else negative_slope * x";
  let description = [{
    Any finite slope: 0 is ReLU, a slope above 1 is legal.

    ```mlir
    %y = fusion.leaky_relu %x, negative_slope = 0.1 : tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Fusion_Matrix:$input, F64Attr:$negative_slope);
  let results = (outs Fusion_Matrix:$result);
  let assemblyFormat = [{
    $input `,` `negative_slope` `=` $negative_slope attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fusion_ReluOp : Fusion_Op<"relu",
    [Pure, AllTypesMatch<["input", "result"]>,
     DeclareOpInterfaceMethods<Fusion_ElementwiseOpInterface>]> {
  let summary = "max(x, 0), as torch.relu";
  let description = [{
    PyTorch's ReLU: `relu(-inf) = 0` and `relu(NaN) = NaN`. It is not
    `leaky_relu` with slope 0, which computes `-inf * 0 = NaN` for `-inf`, as
    `F.leaky_relu(x, 0.0)` does.

    ```mlir
    %y = fusion.relu %x : tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Fusion_Matrix:$input);
  let results = (outs Fusion_Matrix:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Fusion_ElementwiseOp : Fusion_Op<"elementwise",
    [Pure, IsolatedFromAbove, AllTypesMatch<["input", "result"]>,
     // The ODS accessor of $column_operands is the interface's
     // getColumnOperands.
     DeclareOpInterfaceMethods<Fusion_ElementwiseOpInterface>,
     DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "an arbitrary scalar function applied to every element";
  let description = [{
    `y[m, n] = body(x[m, n], c_0[n], ..., c_j[n])`: the region is a scalar
    function of one input element and one element of each per-column
    operand (broadcast over the rows), as `linalg.map` carries its body, so
    that a new activation (gelu, silu, clamp, ...) needs a new body, not a
    new op. The body computes in f32 and its result is rounded once to the
    element type. It may hold exactly the ops of a `fused_linear` epilogue
    (see there), which is what lets the fusion patterns append it to one.

    ```mlir
    %y = fusion.elementwise %x columns(%c) : tensor<?x256xf32>, tensor<256xf32> {
    ^bb0(%a: f32, %b: f32):
      %half = arith.constant 0.5 : f32
      %0 = arith.mulf %a, %half : f32
      %1 = arith.addf %0, %b : f32
      fusion.yield %1 : f32
    }
    ```
  }];
  let arguments = (ins Fusion_Matrix:$input,
                       Variadic<Fusion_Vector>:$column_operands);
  let results = (outs Fusion_Matrix:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $input (`columns` `(` $column_operands^ `)`)? attr-dict
    `:` type($input) (`,` type($column_operands)^)? $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    YieldOp getBodyYield();
  }];
}

//===----------------------------------------------------------------------===//
// batch_norm
//===----------------------------------------------------------------------===//

def Fusion_BatchNormOp : Fusion_Op<"batch_norm",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "BatchNorm1d over an [M, N] input";
  let description = [{
    Statistics are taken per column over the `M` rows. `weight`/`bias` are
    the optional affine parameters (gamma, beta). `running_stats(mean, var)`
    are the optional running statistics; in training mode with running stats
    the op also returns the updated running mean and variance (see
    `#fusion.batch_norm`). Inference mode requires running statistics.

    ```mlir
    %y, %mean, %var = fusion.batch_norm %x,
        <training, epsilon = 1.0e-05, momentum = 0.1>
        weight(%g) bias(%b) running_stats(%rm, %rv)
        : (tensor<?x256xf32>, tensor<256xf32>, tensor<256xf32>,
           tensor<256xf32>, tensor<256xf32>)
        -> (tensor<?x256xf32>, tensor<256xf32>, tensor<256xf32>)
    ```
  }];
  let arguments = (ins Fusion_Matrix:$input,
                       Optional<Fusion_Vector>:$weight,
                       Optional<Fusion_Vector>:$bias,
                       Optional<Fusion_Vector>:$running_mean,
                       Optional<Fusion_Vector>:$running_var,
                       Fusion_BatchNormConfigAttr:$config);
  let results = (outs Fusion_Matrix:$result,
                      Variadic<Fusion_Vector>:$updated_running_stats);
  let assemblyFormat = [{
    $input `,` $config
    (`weight` `(` $weight^ `)`)?
    (`bias` `(` $bias^ `)`)?
    (`running_stats` `(` $running_mean^ `,` $running_var `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The running mean/variance after a training step, or null.
    ::mlir::Value getUpdatedRunningMean();
    ::mlir::Value getUpdatedRunningVar();
  }];
}

//===----------------------------------------------------------------------===//
// fused_linear
//===----------------------------------------------------------------------===//

def Fusion_FusedLinearOp : Fusion_Op<"fused_linear",
    [Pure, AttrSizedOperandSegments, IsolatedFromAbove,
     DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "linear (+ bias), an elementwise epilogue, optional batch norm";
  let description = [{
    The single op that a fused chain becomes. Semantics, per element:

    1. `acc[m, n] = alpha * sum_k x[m, k] * w[n, k] (+ bias[n])`, products
       in the GEMM `precision`, accumulation in f32; `alpha` (default 1) is
       the GEMM's scalar multiplier, as in cuBLAS.
    2. `e[m, n] = epilogue(acc[m, n], c_0[n], ..., c_j[n])`: the region is a
       scalar function of the accumulator and one element of each per-column
       `epilogue` operand, made of `arith`/`math` ops on f32 values (the way
       `linalg.generic` carries its body). New elementwise ops (relu, gelu,
       clamp, ...) need no new op, only new region bodies: a
       `fusion.elementwise` body is appended as it is. The region may
       hold exactly the ops every backend lowers: `arith.constant`, `addf`,
       `subf`, `mulf`, `divf`, `negf`, `maximumf`, `minimumf`, `maxnumf`,
       `minnumf`, `cmpf`, `select`, `andi`, `ori`, `xori` and `math.absf`,
       `ceil`, `floor`, `erf`, `exp`, `exp2`, `expm1`, `fma`,
       `log`, `log1p`, `log2`, `powf`, `rsqrt`, `sqrt`, `tanh`, on f32
       values (i1 for comparison results, conditions and their logic);
       anything else is a verifier error naming the op.
    3. If a `batch_norm` stage is present, `e` is batch-normalized exactly as
       `fusion.batch_norm` with the stage's config, `bn_weight`, `bn_bias`
       and `running_stats` do; in training mode with running stats the op
       also returns the updated running mean and variance.
    4. The result is `e` (or its normalized form) rounded once to the element
       type.

    The epilogue, the batch-norm stage and the final rounding are computed in
    f32. `precision` defaults to the element type's own: `fp32` for `f32`
    (PyTorch's default, TF32 off), `bf16` for `bf16`, `f16` for `f16`.
    Half-precision tensors may also be computed in `fp32` or `tf32`, which
    hold them exactly, but not in the other 16-bit format.

    ```mlir
    %y = fusion.fused_linear %x, %w bias(%b) precision tf32
        epilogue {
        ^bb0(%acc: f32):
          %c2 = arith.constant 2.0 : f32
          %0 = arith.mulf %acc, %c2 : f32
          fusion.yield %0 : f32
        } : (tensor<?x512xf32>, tensor<256x512xf32>, tensor<256xf32>)
          -> tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Fusion_Matrix:$input,
                       Fusion_Matrix:$weight,
                       Optional<Fusion_Vector>:$bias,
                       Variadic<Fusion_Vector>:$epilogue_operands,
                       Optional<Fusion_Vector>:$bn_weight,
                       Optional<Fusion_Vector>:$bn_bias,
                       Optional<Fusion_Vector>:$running_mean,
                       Optional<Fusion_Vector>:$running_var,
                       OptionalAttr<Fusion_PrecisionAttr>:$precision,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha,
                       OptionalAttr<Fusion_BatchNormConfigAttr>:$batch_norm);
  let results = (outs Fusion_Matrix:$result,
                      Variadic<Fusion_Vector>:$updated_running_stats);
  let regions = (region SizedRegion<1>:$epilogue);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `)`)?
    (`precision` custom<PrecisionKeyword>($precision)^)?
    (`alpha` $alpha^)?
    `epilogue` (`(` $epilogue_operands^ `)`)? $epilogue
    (`batch_norm` $batch_norm^)?
    (`bn_weight` `(` $bn_weight^ `)`)?
    (`bn_bias` `(` $bn_bias^ `)`)?
    (`running_stats` `(` $running_mean^ `,` $running_var `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasCanonicalizer = 1;
  let builders = [
    // A fused linear with an identity epilogue and no batch-norm stage.
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight,
                   "::mlir::Value":$bias)>
  ];
  let extraClassDeclaration = [{
    /// The precision the GEMM must be computed in, the default applied.
    Precision getComputePrecision();
    /// The element-type default of `getComputePrecision`.
    static Precision getDefaultPrecision(::mlir::Type elementType);
    ::mlir::Block &getEpilogueBlock() { return getEpilogue().front(); }
    YieldOp getEpilogueYield();
    ::mlir::Value getUpdatedRunningMean();
    ::mlir::Value getUpdatedRunningVar();
  }];
}

def Fusion_YieldOp : Fusion_Op<"yield",
    [Pure, Terminator, ReturnLike,
     ParentOneOf<["FusedLinearOp", "ElementwiseOp"]>]> {
  let summary = "yields the f32 value of an epilogue or elementwise body";
  let arguments = (ins F32:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // FUSION_DIALECT_FUSION_IR_FUSIONOPS_TD
