//===- Passes.td - fusion dialect transformations ----------*- tablegen -*-===//

#ifndef FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_TD
#define FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseLinearEpilogues : Pass<"fusion-fuse-linear-epilogues"> {
  let summary = "Fuse each linear and the elementwise ops and batch_norm after "
                "it into one fusion.fused_linear";
  let description = [{
    Every `fusion.linear` becomes a `fusion.fused_linear` with an identity
    epilogue. Then, greedily, each op implementing `ElementwiseOpInterface`
    (`mul_scalar`, `mul`, `leaky_relu`, ...) whose input is a fused value is
    appended to that op's epilogue region, its per-column operands becoming
    epilogue operands; a `batch_norm` on a fused value becomes the fused op's
    batch-norm stage. Each chain ends up as exactly one fused op.

    Fusion stops at a value with several users: the fused op ends there and
    its result feeds every user, and the ops after it stay as they are (they
    are not recomputed, and the value is not lost). Nothing is fused after a
    batch-norm stage, since it depends on statistics over all rows.

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

def SimplifyFusion : Pass<"fusion-simplify"> {
  let summary = "Algebraic simplifications of fusion ops that keep the meaning";
  let description = [{
    Applies the fusion ops' canonicalization patterns (scalar muls compose,
    multiplying by one and leaky_relu with slope 1 disappear) and:

    - `mul_scalar(leaky_relu(t, s), m)` with `m >= 0` becomes
      `leaky_relu(mul_scalar(t, m), s)`, which moves the multiplier towards
      the GEMM. It holds only for `m >= 0`: for `t < 0`, `m * s * t` and
      `s * (m * t)` agree, but for `t > 0` and `m < 0`, `m * t < 0` would be
      scaled by `s`. Rounding may differ in the last bit unless `m` is a
      power of two.
    - A `fused_linear` without bias whose epilogue starts by multiplying the
      accumulator by a constant takes the constant into its GEMM `alpha`
      (`c * sum` is the same product either way). With a bias,
      `c * (sum + b) != c * sum + b`, so it stays.
    - A `fused_linear` whose batch-norm stage is in inference mode gets it as
      a per-column affine epilogue, `(e - mean) * rsqrt(var + eps) * gamma +
      beta`, with the running statistics and affine parameters as epilogue
      operands: no statistics are needed, so no separate stage remains.

    Not done, because it is not exact: a per-column scale in front of a
    training-mode batch norm does not cancel (`s * t` normalizes with
    `s^2 * var + eps`, not `s^2 * (var + eps)`).

    Worked examples (`fusion-opt --fusion-simplify`):

    ```mlir
    // Before: the multiplier comes after the nonlinearity.
    %0 = fusion.leaky_relu %t, negative_slope = 0.1 : tensor<?x4xf32>
    %1 = fusion.mul_scalar %0, 2.0 : tensor<?x4xf32>
    // After: it moves in front (2.0 >= 0); with -2.0 nothing changes.
    %0 = fusion.mul_scalar %t, 2.0 : tensor<?x4xf32>
    %1 = fusion.leaky_relu %0, negative_slope = 0.1 : tensor<?x4xf32>
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

def SelectGemmConfig : Pass<"fusion-select-gemm-config", "::mlir::ModuleOp"> {
  let summary = "Decide how each fused GEMM is lowered: set the module's "
                "#fusion.target and each fused_linear's #fusion.gemm_config";
  let description = [{
    The lowering decisions of the GPU backends, made once and kept in IR,
    where they can be printed, tested and overridden:

    - The module gets `fusion.target = #fusion.target<CHIP>` from `target`,
      unless it has one already; a module whose target differs from an
      explicit `target` is refused.
    - Each `fusion.fused_linear` without a `fusion.gemm_config` gets one; a
      config already there (written by hand) is kept as it is.

    `strategy` picks the backend: `cublas` (cuBLASLt + epilogue kernels),
    `tiled` (a generated kernel: `mma_sync` with the MMA kind the op's types
    and precision need, or `simt` for f32 in fp32 with `fp32-math=simt`), or
    `auto`, the measured rule of docs/architecture.md: the generated
    kernel for f32 GEMMs in fp32 with 3xTF32 (faster than cuBLAS's SGEMM on
    the H100, and more accurate), cuBLASLt for everything else (its sm_90
    GEMMs use wgmma and TMA, which sm_80 code cannot).

    The tiling of a generated kernel comes from a heuristic: 128x256 blocks
    of 2x4 warps (128x128 when N <= 128; 128x128 of 2x4 warps for 3xTF32,
    SIMT and K rows not 16-byte aligned), and as many pipeline stages (up to
    4) as the chip's shared memory holds. `tile`, `warps` and `stages`
    override it; the config's verifier range-checks the result.

    ```mlir
    // fusion-opt --fusion-select-gemm-config="target=sm_90 strategy=tiled"
    module attributes {fusion.target = #fusion.target<sm_90>} {
      ... = fusion.fused_linear %x, %w ... epilogue { ... }
          {fusion.gemm_config = #fusion.gemm_config<mma_sync, mma = tf32x3,
           tile = 128x128, warps = 2x4, stages = 4, group_m = 8>} : ...
    }
    ```
  }];
  let options = [
    Option<"target", "target", "::mlir::fusion::Chip",
           /*default=*/"::mlir::fusion::Chip::sm_80",
           "the GPU the kernels are generated for",
           [{::llvm::cl::values(
             clEnumValN(::mlir::fusion::Chip::sm_80, "sm_80", "A100"),
             clEnumValN(::mlir::fusion::Chip::sm_86, "sm_86", "RTX 30, A6000"),
             clEnumValN(::mlir::fusion::Chip::sm_89, "sm_89", "RTX 40, L40"),
             clEnumValN(::mlir::fusion::Chip::sm_90, "sm_90", "H100, H200"))}]>,
    Option<"strategy", "strategy", "::mlir::fusion::GemmStrategy",
           /*default=*/"::mlir::fusion::GemmStrategy::Auto",
           "how fused GEMMs run",
           [{::llvm::cl::values(
             clEnumValN(::mlir::fusion::GemmStrategy::cublas, "cublas",
                        "cuBLASLt GEMM + generated epilogue kernels"),
             clEnumValN(::mlir::fusion::GemmStrategy::tiled, "tiled",
                        "one generated kernel, epilogue in registers"),
             clEnumValN(::mlir::fusion::GemmStrategy::Auto, "auto",
                        "per op, by the measured rule"))}]>,
    Option<"fp32Math", "fp32-math", "::mlir::fusion::Fp32Math",
           /*default=*/"::mlir::fusion::Fp32Math::tf32x3",
           "generated kernels, f32 GEMMs in fp32",
           [{::llvm::cl::values(
             clEnumValN(::mlir::fusion::Fp32Math::tf32x3, "tf32x3",
                        "tensor cores, split operands"),
             clEnumValN(::mlir::fusion::Fp32Math::simt, "simt",
                        "f32 fma on the CUDA cores"))}]>,
    ListOption<"tile", "tile", "int64_t",
               "generated kernels: the block tile, BM,BN (default: heuristic)">,
    ListOption<"warps", "warps", "int64_t",
               "generated kernels: warps along M and N, WM,WN (default: "
               "heuristic)">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "generated kernels: cp.async pipeline depth (0: heuristic)">
  ];
  let dependentDialects = ["::mlir::fusion::FusionDialect"];
}

#endif // FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_TD
