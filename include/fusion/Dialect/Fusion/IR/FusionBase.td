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
  // fusion.target on modules, fusion.lowering on fused_linear ops.
  let hasOperationAttrVerify = 1;
}

class Fusion_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fusion_Dialect, mnemonic, traits>;

// Matrices [M, K] / [M, N] and per-column vectors [N].
def Fusion_FloatElement : AnyTypeOf<[F32, BF16, F16]>;
def Fusion_Matrix : TensorRankOf<[F32, BF16, F16], [2]>;
def Fusion_Vector : TensorRankOf<[F32, BF16, F16], [1]>;

#endif // FUSION_DIALECT_FUSION_IR_FUSIONBASE_TD
