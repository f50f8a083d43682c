//===- Passes.td - math expansions and outlining -----------*- tablegen -*-===//

#ifndef FUSION_CODEGEN_MATH_PASSES_TD
#define FUSION_CODEGEN_MATH_PASSES_TD

include "mlir/Pass/PassBase.td"

def MathToLibmCalls : Pass<"fusion-math-to-libm", "::mlir::ModuleOp"> {
  let summary = "Turn the math ops that libm computes into its calls, "
                "leaving the others to `convert-math-to-llvm`";
  let description = [{
    The CPU reference's math: upstream's `populateMathToLibmConversionPatterns`
    applied as rewrites. Upstream's `convert-math-to-libm` pass applies them
    as a partial conversion that marks every math op illegal, and fails on
    the ops that libm has no pattern for (`math.copysign`), which
    `convert-math-to-llvm` lowers (`llvm.intr.copysign`). libm computes
    erf, which has no LLVM intrinsic, and expm1 and log1p, which LLVM's
    lowering (`exp(x) - 1`, `log(1 + x)`) computes inexactly near 0.
    A `fusion.special` that names the C library's function (`libm`) becomes
    its call too, declared in the op's nearest symbol table; a symbol of
    that name there that is not a declaration of its f32 function of one
    f32 is an error.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def ExpandOnePlusErf
    : Pass<"fusion-expand-one-plus-erf", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Compute `1 + erf(s)` in kernels as one `ex2` of a "
                "polynomial";
  let description = [{
    `1 + erf(s)` is the normal CDF of gelu (`x / 2 * (1 + erf(x / sqrt 2))`,
    PyTorch's default). libdevice's `erff` costs 21 instructions: two
    polynomials whose coefficients are selected per element, an `ex2` and
    the selects around it; in a GEMM epilogue those instructions run with
    the tensor cores idle. The identity `1 + erf(s) = erfc(-s)` gives a
    form with one polynomial: with `t = |s|`, `erfc(t) = 2^(t q(t))`, where
    `t q(t) = -log2(e) t^2 + log2(erfc(t) exp(t^2))` and the second term is
    a polynomial without constant term fitted on `[0, 4.5]` (for absolute
    error, with relative error bounded below erfc(t) = 1e-3); `1 + erf(s)`
    is `erfc(t)` for `s <= 0`, else `2 - erfc(t)`. `t q(t)` falls for every
    `t >= 0` (checked in f32), so erfc falls to 0 past the fitted range with
    no clamp: `q` by Horner's rule, one multiply by `t`, `ex2.approx.ftz.f32`,
    a compare, `2 - e` and a select.

    gelu's two products fold in, an instruction an element each: an
    argument `s = x c` (a constant `c`) takes `q` in `|x|`, its
    coefficients times powers of `|c|` (where they stay normal f32 values),
    the compare on `x` (reversed for `c < 0`); and a sum whose one user
    multiplies it by `x' / 2` becomes `x'` times `(1 + erf(s)) / 2`, whose
    `e / 2` is the `ex2` of the exponent minus 1 (a multiply-add in place of
    the multiply by `t`) and whose upper branch is `1 - e / 2`: exact, as
    both halvings are.

    An erf without fastmath flags keeps f32 accuracy: `q` of degree 9.
    Accuracy on an H200 against float64 (16.8 million values of s,
    the retired `one_plus_erf_check.py`): absolute error at most
    1.8e-7, 1.5 units in the last place of results in [1, 2) (libdevice's
    `1 + erff(s)`: 1.2e-7, 1.0); relative error at most 1.4e-5 for `s` down
    to -4.5, where `1 + erff(s)` in f32 has no correct digit left, and a
    result that falls to 0 with `exp(-s^2)` beyond (0.13 relative error
    down to -6). An erf with `fastmath<afn>`
    (`fusion-approximate-16-bit-math` marks those whose results are
    rounded to bf16 or f16) takes `q` of degree 6, three multiply-adds
    fewer: absolute error at most 3.7e-6, relative error at most 6.3e-6
    down to -4.5 (half a unit in the last place of f16 is 2.4e-4 to 4.9e-4
    relative, of bf16 2e-3 to 3.9e-3). NaN stays NaN, `s = -inf` gives 0
    and `s = +inf` 2.

    Matched: an f32 `arith.addf` of 1.0 and a `math.erf` that has no other
    use (either order). Other uses of `erf` keep libdevice's.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def ExpandOnePlusExp
    : Pass<"fusion-expand-one-plus-exp", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Compute an approximate `exp` that is added to a constant "
                "(sigmoid's `1 + exp(-x)`) with a flushing `ex2`, and the "
                "sum's approximate reciprocal without a subnormal check";
  let description = [{
    An approximate `exp(a)` (`fastmath<afn>`, which
    `fusion-approximate-16-bit-math` sets where results are 16-bit) is
    libdevice's `__nv_fast_expf`: `ex2.approx.f32(a log2(e))`, whose
    results below 2^-126 ptxas keeps with a range check and two scalings
    an element around the `ex2`. Where every use of the `exp` adds it to
    a constant `c` with `|c| >= 2^-102` (sigmoid's and silu's
    `1 + exp(-x)`), the sum absorbs any such result (half an ulp of `c` is
    more than the largest subnormal), so the pass takes the same product
    and `ex2.approx.ftz.f32`, which flushes them to 0: the sums are the
    same bits, three SASS instructions an element fewer.

    An approximate reciprocal of such a sum, `1 / (c + exp(a))` with
    `c >= 2^-126` (sigmoid's, `afn` in every precision), is
    `rcp.approx.f32`, which ptxas makes a `MUFU.RCP` between two range
    checks and scalings: by 2^24 for subnormal divisors, by 1/4 for those
    past 2^126, whose reciprocals `MUFU.RCP` would flush. The sum is at
    least `c`, never subnormal, so the pass takes the second alone:
    `rcp.approx.ftz.f32(d s) s`, `s = 1/4` for `d > 2^126`, else 1. The
    same bits, two SASS instructions an element fewer (a compare and a
    select; silu's bf16 wgmma kernel 3016 -> 2376 SASS instructions with
    both rewrites).

    Matched: an f32 `math.exp` with `afn` whose every user is an
    `arith.addf` of it and such a constant (either order); an f32
    `arith.divf` of 1.0 with `afn` by an `arith.addf` of an exp and a
    constant of at least 2^-126. Other `exp`s keep libdevice's.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def ExpandTanh : Pass<"fusion-expand-tanh", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Compute mish's `tanh(softplus(x))` and gelu's `1 + tanh(y)` "
                "as rational functions of one `exp`, and an approximate "
                "`tanh` as `tanh.approx.f32`";
  let description = [{
    Mish is `x tanh(softplus(x))`, which PyTorch decomposes into an `exp`,
    a `log1p` and a `tanh`: three of libdevice's functions an element, in
    a GEMM epilogue with the tensor cores idle. With `e = exp(x)`,
    `tanh(log(1 + e)) = ((1 + e)^2 - 1) / ((1 + e)^2 + 1) = n / (n + 2)`,
    `n = e (e + 2)`: one `exp` and one division. For `x > 20`, where `n`
    would overflow, the result is 1, as `tanh` of softplus's threshold
    branch is in f32. The terms are positive, so the form loses nothing
    to cancellation: a few units in the last place in f32 across the
    range (NaN stays NaN, `-inf` gives 0, `+inf` gives 1). The `exp` keeps
    the `tanh`'s fastmath flags; the division is approximate with `afn`
    (where results are 16-bit), else the approximate reciprocal's
    quotient with Markstein's correction, `q0 = n r`,
    `q0 + fma(-q0, d, n) r` (within an ulp): the denominator lies in
    [2, 2.4e17] wherever the quotient is used, so `div.rn.f32`'s range
    check and the slow path it branches to, lane by lane, buy nothing
    (mish twice in a tf32 GEMM epilogue had added 11% to the GEMM:
    KernelBench 29, run 160).

    gelu's tanh form is `x / 2 (1 + tanh(y))`: `1 + tanh(y)` is
    `2 / (1 + exp(-2y))` (and `1 - tanh(y)` is `2 / (1 + exp(2y))`), which
    keeps every digit where the sum would cancel (tanh(y) near -1, gelu's
    negative side), with one exp and one division, computed as mish's,
    and 0 where the exp overflows (the correction is NaN there).

    An approximate f32 `tanh` (`fastmath<afn>`, which
    `fusion-approximate-16-bit-math` sets where results are bf16) is PTX's
    `tanh.approx.f32`, one instruction: maximum relative error 2^-11,
    4 times below half a unit in the last place of bf16 (libdevice's
    `tanhf` takes about 20 instructions an element). Not where a sum or a
    difference reads the `tanh`: its cancellation would magnify that
    error past bf16's.

    Matched: an f32 `math.tanh` of `math.log1p(math.exp(x))`, or of
    `select(x > T, x, log1p(exp(x)))` with a constant `T >= 10` (softplus's
    threshold, 20 by default); an f32 `math.tanh` whose one user adds it to
    1.0 or subtracts it from 1.0; an f32 `math.tanh` with `afn` that no
    `arith.addf` or `arith.subf` reads. Other `tanh`s keep libdevice's.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def ExpandRemainders : Pass<"fusion-expand-remainders"> {
  let summary = "Compute f32 remainders (C's fmod) of quotients below 2^20 "
                "without a branch an element";
  let description = [{
    libdevice's `__nv_fmodf`, which `convert-gpu-to-nvvm` calls for an
    `arith.remf`, is exact but branches an element (quotients below 1,
    below 2^23, beyond, with a loop), and LLVM inlines it: a GEMM
    epilogue then holds its code for each of a thread's elements (128 in
    the wgmma kernel), through which the instruction cache misses (bf16
    `remainder(y, -0.7)` at 16384 x 4096 -> 4096: 1.51 ms with the wgmma
    kernel against the raw GEMM's 0.78 on the H100).
    For `|x| = a`, `|y| = b`:

        q = trunc(a / b)  (approximate: within 2 ulps, so within 1 of the
                           integer quotient q0 where a / b < 2^20)
        r = fma(-q, b, a);  q += 1 where r >= b;  r = fma(-q, b, a)
        r += b where r < 0;  fmod(x, y) = copysign(r, x)

    exact: `a - q b` for q = q0 or q0 + 1 is representable (for q0 + 1,
    `r0 - b` is a multiple of b's ulp below b), so both multiply-adds are
    exact but the first where q = q0 - 1, which its result, at least b,
    tells; `r - b + b` is then `r0`. Quotients of 2^20 and more, infinite
    or NaN (x infinite or NaN, y 0 or NaN) and infinite y call, in an
    `scf.if`, `__fusion_fmodf`: the `arith.remf` in an `llvm.func` of its
    own marked `no_inline`, made once in the symbol table (the
    `gpu.module`), so that its code is once in the kernels' binary.

    Matched: every f32 `arith.remf` (the fusion ops allow no fastmath flag
    on them). The pass runs on an op that holds the symbol table it adds
    the function to (a module); scheduled on a function inside one, it
    refuses each remf with a located error. The pipeline applies it once,
    on the `gpu.module`, before
    `fusion-expand-divisions` takes the approximate quotient (by a
    constant: one product with its reciprocal).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def ExpandTrigonometry : Pass<"fusion-expand-trigonometry"> {
  let summary = "Compute accurate f32 sines, cosines and tangents of "
                "arguments up to 105615 inline, libdevice's functions out "
                "of line";
  let description = [{
    libdevice's `__nv_sinf`, `__nv_cosf` and `__nv_tanf`, which
    `convert-gpu-to-nvvm` calls for accurate (not `afn`) `math.sin`,
    `math.cos` and `math.tan`, reduce arguments past 105615 with
    Payne-Hanek's algorithm (a table, a loop, a local array), and LLVM
    inlines them: a GEMM epilogue then holds that code for each of a
    thread's elements (128 in the wgmma kernel), through which the
    instruction cache misses (tf32 `sin(y)` at 16384 x 4096 -> 4096: 2.25
    ms fused against the raw GEMM's 1.66 on the H100; `fmod` measured the
    same). The pass computes, for `a = |x|` up to 105615:

        j = roundeven(a 2/pi)
        r = a - j P1 - j P2 - j P3  (three multiply-adds; P1 + P2 + P3 is
                                     pi/2, each part the f32 truncation of
                                     what the ones before leave)
        s = r + r^3 S(r^2),  c = 1 + r^2 (-1/2 + r^2 C(r^2))  (Cephes'
                                     minimax polynomials on [-pi/4, pi/4])

    `a - j P1` is exact (P1's products are multiples of its ulp, and the
    difference is below 1), the other two round relative to their results,
    and below 105615 no f32 comes close enough to a multiple of pi/2 for
    those roundings to matter. By j's two low bits, `sin a` is `s`, `c`,
    `-s` or `-c`, `cos a` is `c`, `-s`, `-c` or `s`, and `tan a` is `s / c`
    or `-c / s`, from the denominator's approximate reciprocal `r`
    (`rcp.approx.f32`, 1 ulp) and Markstein's correction, `q = n r`,
    `q + fma(-q, d, n) r`: `div.rn.f32`'s range check and slow path cost
    bf16 `tan(y / 64)` 13% of the raw GEMM's time, and its quotient is no
    more accurate here. Sine and tangent take x's sign bit (`-0`
    included). Every f32 in [-105615, 105615], against the f64 functions:
    sine within 1.53 ulps, cosine within 1.54, tangent within 3.44 (CUDA
    documents 2 and 4 for libdevice's). Larger, infinite or NaN arguments
    call, in an `scf.if`, `__fusion_sinf`, `__fusion_cosf` or
    `__fusion_tanf`: the op in an `llvm.func` of its own marked
    `no_inline`, made once in the symbol table (the `gpu.module`), so that
    libdevice's code is once in the kernels' binary.

    Matched: f32 `math.sin`, `math.cos` and `math.tan` without `afn`
    (those with it are `sin.approx`, or libdevice's `__nv_fast_tanf`,
    without a slow path). Like `fusion-expand-remainders`, the pass runs
    on an op that holds the symbol table it adds the functions to (a
    module); scheduled on a function inside one, it refuses each op with a
    located error.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def OutlinePowers : Pass<"fusion-outline-powers"> {
  let summary = "Call f32 powers (libdevice's powf) in a function of their "
                "own";
  let description = [{
    libdevice's `__nv_powf`, which `convert-gpu-to-nvvm` calls for an
    accurate `math.powf`, is long (the logarithm and the exponential in
    extended precision, branches for special arguments), and LLVM inlines
    it: a GEMM epilogue then holds that code for each of a thread's
    elements (128 in the wgmma kernel), through which the instruction
    cache misses (`|y| ** 2.5` at 16384 x 4096 -> 4096 in the wgmma kernel:
    tf32 2.38 ms against the raw GEMM's 1.59, bf16 1.71 against 0.78, on
    the H100). The pass replaces each by a call of
    `__fusion_powf`: the `math.powf` in an `llvm.func` of its own marked
    `no_inline`, made once in the symbol table (the `gpu.module`), whose
    code the calls of a thread's elements share: tf32 1.77 ms, bf16 1.03.
    cuBLAS's GEMM and an epilogue kernel are faster still (1.67, 0.91),
    and `auto` keeps them for accurate powers
    (`fusion-select-gemm-config`).

    Matched: f32 `math.powf` without `afn` (those with it are libdevice's
    `__nv_fast_powf`, an exponential of a product with a logarithm). Like
    `fusion-expand-remainders`, the pass runs on an op that holds the
    symbol table it adds the function to (a module); scheduled on a
    function inside one, it refuses each power with a located error.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect"];
}

def OutlineSpecialFunctions : Pass<"fusion-outline-special-functions"> {
  let summary = "Call each special function (fusion.special) in a function "
                "of its own: libdevice's where named, else its formula";
  let description = [{
    A `fusion.special` in a GPU kernel becomes a call of an `llvm.func` of
    its own, internal and marked `no_inline`, made once in the symbol
    table (the `gpu.module`) for each distinct op (the same function,
    libdevice function, or the same formula), named
    `__fusion_special_<function>` (made unique).
    Its body calls libdevice's function where the op names one
    (`__nv_lgammaf`, which PyTorch's CUDA kernels call too), else computes
    the op's formula. Inlined for each of a GEMM epilogue's elements (128
    in the wgmma kernel), a formula of hundreds of instructions took ptxas
    minutes (the 27 libraries of `special_functions_check.py` build in 39 s
    out of line), and lgamma's and erfinv's formulas took 3-8x libdevice's
    time a pass in an epilogue kernel: cuBLAS's GEMM and that pass went
    from 1.13-1.50x eager's time to 0.88-0.92x.

    Like `fusion-outline-powers`, the pass runs on an op that holds the
    symbol table it adds the functions to (a module); scheduled on a
    function inside one, it refuses each op with a located error.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ExpandDivisions : Pass<"fusion-expand-divisions"> {
  let summary = "Divide f32 values by a constant, or by a value that many "
                "divisions share, with a multiply and two multiply-adds; "
                "approximate quotients without a branch";
  let description = [{
    A correctly rounded f32 division (`arith.divf` without fastmath flags)
    becomes `div.rn.f32` on the GPU, which ptxas expands into a reciprocal,
    its refinement and a range check that branches to a slow path for
    every element: in an epilogue or a row program, instructions the
    tensor cores or the memory wait for. From the divisor's correctly
    rounded reciprocal `r = RN(1/d)`, Markstein's correction gives the
    correctly rounded quotient:

        q0 = x r;  e = q0 |d| - sign(d) x  (exact);  q = q0 - e |r|

    (two multiply-adds), and `q0` itself where `q` is NaN (`x` or `q0`
    infinite, `d` 0 or infinite), as `x / d`'s special values are `x r`'s.
    With `|d|` and `|r|`, and the sign of `d` on `x`, a zero quotient keeps
    the sign of `x / d`.

    - **A constant divisor** `c`, finite and nonzero with a normal
      reciprocal: `r` is computed when compiling; a power of two becomes a
      multiply by its exact reciprocal.
    - **A computed divisor that many divisions share**, where one
      correctly rounded division for its reciprocal pays: at least four
      divisions by it, or one in a loop it is defined outside of (a row's
      sum divided into each of its elements). Once, after the divisor:
      `s`, a power of two that takes `|d|` into `[2^-64, 2^64]` (1 there),
      `d' = |d| s` and `r = 1 / d'`; each division then divides by `d'` as
      above and multiplies by `s` with `d`'s sign, exact but for
      quotients below 2^-126.

    Accuracy, against IEEE division (`test/Integration/CPU/divisions.mlir`):
    the quotient is correctly rounded wherever `|x|` and `|x / d|` are at
    least 2^-100; below, where the remainder can underflow, it was within
    1.22 units in the last place, over every f32 `x` for 19 constant
    divisors and for computed ones from the smallest subnormal to the
    largest f32, zeros, infinities and NaN. On the GPU, f32 epilogues
    matched `div.rn.f32` bit for bit.

    Matched: f32 `arith.divf`s without fastmath flags, as above, and
    approximate ones (`afn`, the only flag the fusion ops allow on them;
    `fusion-approximate-16-bit-math` marks the divisions of regions whose
    results are 16-bit):

    - by a constant whose reciprocal is normal, one product `x RN(1/c)`
      (within 1.5 ulps);
    - by a value that many divisions share, as above (correctly rounded);
    - any other quotient, `div.full.f32` (`llvm.nvvm.div.full`): within
      2 ulps over the whole range, without a branch. LLVM would lower it
      to `div.approx.f32`, which gives 0 for divisors past 2^126.
      Approximate reciprocals (`1 / d`) are left to LLVM's
      `rcp.approx.f32` (1 ulp over the whole range).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect"];
}

#endif // FUSION_CODEGEN_MATH_PASSES_TD
