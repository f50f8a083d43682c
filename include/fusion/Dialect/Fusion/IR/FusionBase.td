//===- FusionBase.td - fusion dialect definition -----------*- tablegen -*-===//

#ifndef FUSION_DIALECT_FUSION_IR_FUSIONBASE_TD
#define FUSION_DIALECT_FUSION_IR_FUSIONBASE_TD

include "mlir/IR/OpBase.td"

def Fusion_Dialect : Dialect {
  let name = "fusion";
  let cppNamespace = "::mlir::fusion";
  let summary = "Graph-level ops for linear layers and their cheap epilogues";
  let description = [{
    The `fusion` dialect captures the hot path of ML models whose work is a
    linear layer followed by cheap ops (`mul`, `leaky_relu`, `batch_norm`,
    any scalar function as a `fusion.elementwise` body), and the single
    `fusion.fused_linear` op those chains are rewritten into.
    All ops have value semantics on ranked tensors of `f32`, `bf16` or `f16`.
    Matrices are `[M, K]`/`[M, N]` with the row dimension `M` possibly
    dynamic; `K` and `N` are static. Semantics follow PyTorch exactly.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let useDefaultAttributePrinterParser = 1;
  // fusion.target on modules, fusion.gemm_config, fusion.batch_gemm_configs,
  // fusion.tile_reductions and fusion.epilogue_batch_norm on fused_linear
  // ops.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The discardable attribute holding a fused_linear's GEMM config.
    static ::llvm::StringRef getGemmConfigAttrName() {
      return "fusion.gemm_config";
    }
    /// The discardable attribute saying that a fused_linear's GEMM computes
    /// its reader's reductions from its tiles.
    static ::llvm::StringRef getTileReductionsAttrName() {
      return "fusion.tile_reductions";
    }
    /// The discardable attribute holding a fused_linear's GEMM configs for
    /// small batches (an array of #fusion.batch_gemm_config).
    static ::llvm::StringRef getBatchGemmConfigsAttrName() {
      return "fusion.batch_gemm_configs";
    }
    /// The discardable attribute saying up to which batch a fused_linear's
    /// GEMM kernel finishes its training batch norm.
    static ::llvm::StringRef getEpilogueBatchNormAttrName() {
      return "fusion.epilogue_batch_norm";
    }
  }];
}

class Fusion_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fusion_Dialect, mnemonic, traits>;

// Matrices [M, K] / [M, N] and per-column vectors [N].
def Fusion_FloatElement : AnyTypeOf<[F32, BF16, F16]>;
def Fusion_Matrix : TensorRankOf<[F32, BF16, F16], [2]>;
def Fusion_Vector : TensorRankOf<[F32, BF16, F16], [1]>;

#endif // FUSION_DIALECT_FUSION_IR_FUSIONBASE_TD
