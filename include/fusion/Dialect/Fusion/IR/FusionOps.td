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
    `torch.nn.Linear`'s layout `[out_features, in_features]`, or with
    `weight_layout in_out` the layout `[in_features, out_features]` of a
    weight multiplied as it is stored (`x @ w`, GPT-2's `Conv1D`):
    `y[m, n] = sum_k x[m, k] * w[k, n]`. For `bf16`/`f16` tensors the sum is
    accumulated in f32 and rounded once.

    ```mlir
    %y = fusion.linear %x, %w, %b
        : tensor<?x512xf32>, tensor<256x512xf32>, tensor<256xf32>
        -> tensor<?x256xf32>
    %z = fusion.linear %x, %v weight_layout in_out
        : tensor<?x512xf32>, tensor<512x256xf32> -> tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Fusion_Matrix:$input, Fusion_Matrix:$weight,
                       Optional<Fusion_Vector>:$bias,
                       DefaultValuedAttr<Fusion_WeightLayoutAttr,
                                         "WeightLayout::out_in">:$weight_layout);
  let results = (outs Fusion_Matrix:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)?
    (`weight_layout` custom<WeightLayoutKeyword>($weight_layout)^)? attr-dict
    `:` type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// N and K, as the weight's layout says.
    int64_t getOutFeatures();
    int64_t getInFeatures();
  }];
}

//===----------------------------------------------------------------------===//
// concat
//===----------------------------------------------------------------------===//

def Fusion_ConcatOp : Fusion_Op<"concat", [Pure]> {
  let summary = "tensors joined along one dimension, as torch.cat";
  let description = [{
    The inputs, in order, joined along dimension `dim`: all of one element
    type and rank (1 or 2), static, and equal in every other dimension.

    Its use is to make projections of one input one GEMM (a grouped GEMM:
    q, k and v; or gate and up): a `fused_linear`'s weight concatenated
    along N (`dim` 0 for `out_in`, 1 for `in_out`) and its bias (`dim` 0).
    There the GPU backends read the parts in place, never the joined tensor:
    the wgmma kernel takes a TMA map of each part, cuBLASLt multiplies each
    part into its columns of the output. The GPU backends take no other
    concat (the CPU backend takes any).

    ```mlir
    %w = fusion.concat %wq, %wk, %wv dim 0
        : (tensor<64x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>)
        -> tensor<96x32xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $inputs `dim` $dim attr-dict `:` functional-type($inputs, $result)
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
    shape `(N,)`), or `x[m, n] * scale[0]` for a `scale` of one element.

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
    PyTorch's ReLU, `x < 0 ? 0 : x`: `relu(-inf) = 0`, `relu(NaN) = NaN`
    and `relu(-0.0) = -0.0` (not an IEEE maximum, which gives +0.0). It is not
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
    [Pure, IsolatedFromAbove, AttrSizedOperandSegments,
     AllTypesMatch<["input", "result"]>,
     // The ODS accessors of $column_operands and $row_operands are the
     // interface's getColumnOperands and getRowOperands.
     DeclareOpInterfaceMethods<Fusion_ElementwiseOpInterface,
                               ["getRowOperands"]>,
     DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "an arbitrary scalar function applied to every element";
  let description = [{
    `y[m, n] = body(x[m, n], c_0[n], ..., c_j[n], r_0[m, n / (N / G_0)],
    ...)`: the region is a scalar function of one input element, one
    element of each per-column operand (broadcast over the rows; an operand
    of one element, a single value, over the whole matrix: `c[0]`) and one
    element of each row operand, as `linalg.map` carries its body, so that
    a new activation (gelu, silu, clamp, ...) needs a new body, not a new
    op. A row operand is an [M, G] matrix, G dividing N, whose element
    (m, g) covers the N/G contiguous columns of group g: G = 1 broadcasts
    one value per row (a row statistic), G = N is a whole matrix (a
    residual), anything between a statistic per group of columns (group
    norm). The body computes in f32 and its result is rounded once to the
    element type. It may hold exactly the ops of a `fused_linear` epilogue
    (see there), which is what lets the fusion patterns append it to one.

    ```mlir
    %y = fusion.elementwise %x columns(%c : tensor<256xf32>)
        rows(%mean : tensor<?x1xf32>) : tensor<?x256xf32> {
    ^bb0(%a: f32, %b: f32, %m: f32):
      %0 = arith.subf %a, %m : f32
      %1 = arith.addf %0, %b : f32
      fusion.yield %1 : f32
    }
    ```
  }];
  let arguments = (ins Fusion_Matrix:$input,
                       Variadic<Fusion_Vector>:$column_operands,
                       Variadic<Fusion_Matrix>:$row_operands);
  let results = (outs Fusion_Matrix:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $input (`columns` `(` $column_operands^ `:` type($column_operands) `)`)?
    (`rows` `(` $row_operands^ `:` type($row_operands) `)`)?
    attr-dict `:` type($input) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    YieldOp getBodyYield();
  }];
}

//===----------------------------------------------------------------------===//
// reduce
//===----------------------------------------------------------------------===//

def Fusion_ReduceOp : Fusion_Op<"reduce",
    [Pure, IsolatedFromAbove, AttrSizedOperandSegments,
     DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "reduces each group of contiguous columns of every row";
  let description = [{
    `y[m, g] = combine_{n in group g} map(x[m, n], c_0[n], ..., r_0[m,
    n / (N / G_0)], ...)` for an [M, N] input and an [M, G] result, G
    dividing N: group g holds the N/G contiguous columns from g * N/G. G = 1
    reduces whole rows (`x.sum(dim=-1, keepdim=True)`), G > 1 the groups of
    a group norm or the windows of a pooling without overlap. The `map`
    region is the scalar function applied to each element before it is
    combined, with the operands and rules of a `fusion.elementwise` body,
    so that an elementwise producer (softmax's `exp(x - max)`) is computed
    on the fly instead of materialized. `combine` is the `kind`:
    `sum` (in f32), `max` or `min` (NaN propagating). The result is rounded
    once to the element type.

    Means, variances, norms, softmax and logsumexp are compositions: a
    variance is a `sum` of `(x - mean)^2`, the mean a row operand of its
    map (two passes, as stable as Welford's).

    ```mlir
    %max = fusion.reduce max %x : tensor<?x256xf32> -> tensor<?x1xf32> {
    ^bb0(%a: f32):
      fusion.yield %a : f32
    }
    ```
  }];
  let arguments = (ins Fusion_ReductionKind:$kind,
                       Fusion_Matrix:$input,
                       Variadic<Fusion_Vector>:$column_operands,
                       Variadic<Fusion_Matrix>:$row_operands);
  let results = (outs Fusion_Matrix:$result);
  let regions = (region SizedRegion<1>:$map);
  let assemblyFormat = [{
    $kind $input
    (`columns` `(` $column_operands^ `:` type($column_operands) `)`)?
    (`rows` `(` $row_operands^ `:` type($row_operands) `)`)?
    attr-dict `:` type($input) `->` type($result) $map
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getMapBlock() { return getMap().front(); }
    YieldOp getMapYield();
    /// The map region applied to `x`, `columns` and `rows` at the builder's
    /// insertion point; returns the mapped value.
    ::mlir::Value buildMap(::mlir::OpBuilder &builder, ::mlir::Value x,
                           ::mlir::ValueRange columns, ::mlir::ValueRange rows);
    /// The number of groups G of the result.
    int64_t getGroups() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType())
          .getDimSize(1);
    }
  }];
}

//===----------------------------------------------------------------------===//
// batch_norm
//===----------------------------------------------------------------------===//

def Fusion_BatchNormOp : Fusion_Op<"batch_norm",
    [Pure, AttrSizedOperandSegments, AttrSizedResultSegments]> {
  let summary = "BatchNorm1d over an [M, N] input";
  let description = [{
    Statistics are taken per column over the `M` rows. `weight`/`bias` are
    the optional affine parameters (gamma, beta). `running_stats(mean, var)`
    are the optional running statistics; in training mode with running stats
    the op also returns the updated running mean and variance (see
    `#fusion.batch_norm`). Inference mode requires running statistics.

    In training mode the op may also return its batch statistics
    (`batch_stats`, after the updated running statistics): the per-column
    batch mean and inverse standard deviation `1 / sqrt(var + epsilon)` of
    the biased variance, as PyTorch's `native_batch_norm` saves them for its
    backward pass. They are computed in f32 and returned in f32 (PyTorch's
    type on GPUs) or the input's element type (its type on CPUs).

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
                      Variadic<Fusion_Vector>:$updated_running_stats,
                      Variadic<Fusion_Vector>:$batch_stats);
  let assemblyFormat = [{
    $input `,` $config
    (`weight` `(` $weight^ `)`)?
    (`bias` `(` $bias^ `)`)?
    (`running_stats` `(` $running_mean^ `,` $running_var `)`)?
    attr-dict `:` `(` type(operands) `)` `->`
    custom<StatisticsResultTypes>(type($result), type($updated_running_stats),
                                  type($batch_stats), ref($config),
                                  ref($running_mean))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The running mean/variance after a training step, or null.
    ::mlir::Value getUpdatedRunningMean();
    ::mlir::Value getUpdatedRunningVar();
    /// The batch mean and inverse standard deviation, or null.
    ::mlir::Value getBatchMean();
    ::mlir::Value getBatchInvStd();
  }];
}

//===----------------------------------------------------------------------===//
// fused_linear
//===----------------------------------------------------------------------===//

def Fusion_FusedLinearOp : Fusion_Op<"fused_linear",
    [Pure, AttrSizedOperandSegments, AttrSizedResultSegments,
     IsolatedFromAbove,
     DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "linear (+ bias), an elementwise epilogue, optional batch norm";
  let description = [{
    The single op that a fused chain becomes. Semantics, per element:

    1. `acc[m, n] = alpha * sum_k x[m, k] * w[n, k] (+ bias[n])` (`w[k, n]`
       with `weight_layout in_out`, as `fusion.linear`'s), products
       in the GEMM `precision`, accumulation in f32; `alpha` (default 1) is
       the GEMM's scalar multiplier, as in cuBLAS.
    2. `e[m, n] = epilogue(acc[m, n], c_0[n], ..., c_j[n], r_0[m, n / (N /
       G_0)], ...)`: the region is a scalar function of the accumulator, one
       element of each per-column `epilogue` operand (or its one value, as
       `fusion.elementwise` reads a single value) and one element of each
       row operand (`rows`, [M, G] matrices as `fusion.elementwise` reads
       them: a residual matrix, a statistic per row), made of `arith`/`math`
       ops on f32 values (the way `linalg.generic` carries its body). New elementwise ops (relu, gelu,
       clamp, ...) need no new op, only new region bodies: a
       `fusion.elementwise` body is appended as it is. The region may
       hold exactly the ops every backend lowers: `arith.constant`, `addf`,
       `subf`, `mulf`, `divf`, `remf` (C's `fmod`, exact: libm's `fmodf`,
       libdevice's `__nv_fmodf`), `negf`, `maximumf`, `minimumf`, `maxnumf`,
       `minnumf`, `cmpf`, `select`, `andi`, `ori`, `xori` and `math.absf`,
       `acos`, `acosh`, `asin`, `asinh`, `atan`, `atan2`, `atanh`, `ceil`,
       `copysign`, `cos`, `cosh`, `erf`, `erfc`, `exp`, `exp2`, `expm1`,
       `floor`, `fma`,
       `log`, `log10`, `log1p`, `log2`, `powf`, `roundeven`, `rsqrt`,
       `sin`, `sinh`, `sqrt`, `tan`, `tanh`, `trunc`,
       `fusion.special` (a special function, its formula of these ops), on
       f32 values (i1 for comparison results, conditions and their logic),
       and `arith.extf (arith.truncf %v : f32 to bf16|f16)`: a value rounded
       to 16 bits, to nearest even, as storing and loading it would (the
       16-bit value is read by nothing else); anything else is a verifier
       error naming the op. No op carries
       `fastmath` flags but `arith.divf`, `math.erf`, `math.exp`,
       `math.sin` and `math.cos`, which may carry `afn`: approximate
       (sin and cos: `sin.approx.f32`, `cos.approx.f32`, without
       libdevice's range-reduction branch). A division then has no
       correctly rounded one's slow-path branch: on the GPUs a reciprocal
       (`arith.divf` of 1.0) is `rcp.approx.f32`, 1 ulp over the whole
       range, subnormals included, and a quotient `div.full.f32`, 2 ulps
       over the whole range (by a constant, one product with its
       reciprocal, 1.5 ulps; `fusion-expand-divisions`). The importer takes
       the approximate reciprocal for sigmoid's and silu's
       `1 / (1 + exp(-x))`. erf and exp are then within about 1e-5
       relative on the GPUs. `fusion-approximate-16-bit-math` marks erf,
       exp, sin, cos and every division where the result is 16-bit. The CPU
       reference ignores the flag.
    3. If a `batch_norm` stage is present (then without row operands), `e` is
       batch-normalized exactly as
       `fusion.batch_norm` with the stage's config, `bn_weight`, `bn_bias`
       and `running_stats` do; in training mode with running stats the op
       also returns the updated running mean and variance, and it may return
       the batch statistics (`batch_stats`) as `fusion.batch_norm` does.
    4. The result is `e` (or its normalized form) rounded once to the element
       type.
    5. The epilogue may yield more values after `e`: each is an
       `intermediates` result, rounded once to the element type, before any
       batch-norm stage. They are the chain's values that other ops read
       too, such as those a training step saves for its backward pass
       (yielding `e` again returns the batch norm's input), so that the GEMM
       output is not written for them and read back.

    6. With a `dual_weight` w2 (a dual GEMM, as CUTLASS's), the GEMM also
       computes `dual[m, n] = sum_k x[m, k] * w2[n, k]` (w2 of the weight's
       type and layout; no alpha, no bias: the epilogue adds those), in the
       same precision, and the epilogue takes it as its last argument: two
       projections of one input (a gated MLP's gate and up) become one GEMM
       that reads x once and writes neither product. No batch-norm stage.

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
                       Optional<Fusion_Matrix>:$dual_weight,
                       Variadic<Fusion_Vector>:$epilogue_operands,
                       Variadic<Fusion_Matrix>:$epilogue_rows,
                       Optional<Fusion_Vector>:$bn_weight,
                       Optional<Fusion_Vector>:$bn_bias,
                       Optional<Fusion_Vector>:$running_mean,
                       Optional<Fusion_Vector>:$running_var,
                       OptionalAttr<Fusion_PrecisionAttr>:$precision,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha,
                       OptionalAttr<Fusion_BatchNormConfigAttr>:$batch_norm,
                       DefaultValuedAttr<Fusion_WeightLayoutAttr,
                                         "WeightLayout::out_in">:$weight_layout);
  let results = (outs Fusion_Matrix:$result,
                      Variadic<Fusion_Matrix>:$intermediates,
                      Variadic<Fusion_Vector>:$updated_running_stats,
                      Variadic<Fusion_Vector>:$batch_stats);
  let regions = (region SizedRegion<1>:$epilogue);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `)`)?
    (`dual_weight` `(` $dual_weight^ `)`)?
    (`weight_layout` custom<WeightLayoutKeyword>($weight_layout)^)?
    (`precision` custom<PrecisionKeyword>($precision)^)?
    (`alpha` $alpha^)?
    `epilogue` (`(` $epilogue_operands^ `)`)?
    (`rows` `(` $epilogue_rows^ `)`)? $epilogue
    (`batch_norm` $batch_norm^)?
    (`bn_weight` `(` $bn_weight^ `)`)?
    (`bn_bias` `(` $bn_bias^ `)`)?
    (`running_stats` `(` $running_mean^ `,` $running_var `)`)?
    attr-dict `:` `(` type(operands) `)` `->`
    custom<FusedLinearResultTypes>(type($result), type($intermediates),
                                   type($updated_running_stats),
                                   type($batch_stats), ref($batch_norm),
                                   ref($running_mean))
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasCanonicalizer = 1;
  let builders = [
    // A fused linear with an identity epilogue and no batch-norm stage.
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight,
                   "::mlir::Value":$bias,
                   CArg<"WeightLayout", "WeightLayout::out_in">:$weightLayout)>
  ];
  let extraClassDeclaration = [{
    /// N and K, as the weight's layout says.
    int64_t getOutFeatures();
    int64_t getInFeatures();
    /// The concat that joins the weight's parts along N (a grouped GEMM:
    /// projections of one input), or null.
    ConcatOp getWeightConcat();
    /// The concat that joins the bias's parts, or null.
    ConcatOp getBiasConcat();
    /// The precision the GEMM must be computed in, the default applied.
    Precision getComputePrecision();
    /// The element-type default of `getComputePrecision`.
    static Precision getDefaultPrecision(::mlir::Type elementType);
    ::mlir::Block &getEpilogueBlock() { return getEpilogue().front(); }
    /// The epilogue's argument for the dual GEMM's accumulator (the last),
    /// or null without a dual weight.
    ::mlir::BlockArgument getDualAccumulator();
    /// Clones the epilogue's ops at `builder`'s insertion point, its
    /// accumulator bound to `acc` and its other arguments to `operands`
    /// (in order); returns the clone of yielded value `index`.
    ::mlir::Value cloneEpilogue(::mlir::OpBuilder &builder, ::mlir::Value acc,
                                ::mlir::ValueRange operands,
                                unsigned index = 0);
    YieldOp getEpilogueYield();
    /// Appends an epilogue (column) operand or a row operand and returns the
    /// epilogue's block argument for it, placed after those of its kind.
    ::mlir::BlockArgument addEpilogueColumn(::mlir::Value vector);
    ::mlir::BlockArgument addEpilogueRow(::mlir::Value matrix);
    ::mlir::Value getUpdatedRunningMean();
    ::mlir::Value getUpdatedRunningVar();
    ::mlir::Value getBatchMean();
    ::mlir::Value getBatchInvStd();
  }];
}

//===----------------------------------------------------------------------===//
// special
//===----------------------------------------------------------------------===//

def Fusion_SpecialOp : Fusion_Op<"special", [Pure, IsolatedFromAbove]> {
  let summary = "a special function of f32 scalars: its formula, or the GPU "
                "and C libraries' function of the same values";
  let description = [{
    A function the math dialect lacks (lgamma, erfinv, digamma, the Bessel
    functions), inside a scalar region (an epilogue, an elementwise body, a
    reduce map). `libdevice` names the function of CUDA's libdevice that
    computes it, where it has one (one of its f32 functions of one f32 that
    the math dialect lacks: `__nv_lgammaf`, `__nv_erfinvf`,
    `__nv_normcdfinvf`, `__nv_j0f`, ...). The body is its formula in the ops
    those regions allow, which every target can compute; where the C
    library has the function too (`libm`: `lgammaf`, `j0f`, `j1f`, `y0f`,
    `y1f`, `tgammaf`, each libdevice's `__nv_` function of the same name)
    the op names both and has no body. The function's name is an identifier
    (letters, digits, underscores). The CPU reference inlines the body
    (`fusion-inline-special-functions`) or calls the C library's function
    (`fusion-math-to-libm`); GPU kernels call it once a module, out of line,
    as libdevice's function where named (`fusion-outline-special-functions`):
    inlined for each of a GEMM epilogue's elements, a formula of hundreds of
    instructions costs ptxas minutes and the kernel its instruction cache.

    ```mlir
    %e = fusion.special "erfinv"(%y) libdevice "__nv_erfinvf"
        : (f32) -> f32 {
    ^bb0(%x: f32):
      ...
      fusion.yield %value : f32
    }
    %g = fusion.special "lgamma"(%y) libdevice "__nv_lgammaf" libm "lgammaf"
        : (f32) -> f32
    ```
  }];
  let arguments = (ins StrAttr:$function, Variadic<F32>:$inputs,
                       OptionalAttr<StrAttr>:$libdevice,
                       OptionalAttr<StrAttr>:$libm);
  let results = (outs F32:$result);
  let regions = (region MaxSizedRegion<1>:$body);
  let assemblyFormat = [{
    $function `(` $inputs `)` (`libdevice` $libdevice^)? (`libm` $libm^)?
    attr-dict `:` functional-type($inputs, $result) ($body^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the op has its formula (else both libraries compute it).
    bool hasFormula() { return !getBody().empty(); }
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    YieldOp getBodyYield();
  }];
}

def Fusion_YieldOp : Fusion_Op<"yield",
    [Pure, Terminator, ReturnLike,
     ParentOneOf<["FusedLinearOp", "ElementwiseOp", "ReduceOp", "SpecialOp"]>]> {
  let summary = "yields the f32 value of an epilogue, elementwise body, map "
                "or special function";
  let description = [{
    One value, but in a `fusion.fused_linear` epilogue: the result's value,
    then one per intermediate result.
  }];
  let arguments = (ins Variadic<F32>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The first value: the result's (the verifier requires one).
    ::mlir::Value getValue() { return getValues().front(); }
  }];
}

#endif // FUSION_DIALECT_FUSION_IR_FUSIONOPS_TD
