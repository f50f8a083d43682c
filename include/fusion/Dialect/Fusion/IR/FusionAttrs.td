//===- FusionAttrs.td - fusion enums and attributes --------*- tablegen -*-===//

#ifndef FUSION_DIALECT_FUSION_IR_FUSIONATTRS_TD
#define FUSION_DIALECT_FUSION_IR_FUSIONATTRS_TD

include "fusion/Dialect/Fusion/IR/FusionBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Fusion_Precision : I32EnumAttr<"Precision",
    "arithmetic the GEMM of a fused linear is computed in", [
      I32EnumAttrCase<"fp32", 0>,
      I32EnumAttrCase<"tf32", 1>,
      I32EnumAttrCase<"bf16", 2>,
      I32EnumAttrCase<"f16", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

def Fusion_PrecisionAttr : EnumAttr<Fusion_Dialect, Fusion_Precision,
                                    "precision"> {
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    The multiply precision of the GEMM; accumulation is always f32.
    `fp32`: full fp32 products. `tf32`: operands rounded to tf32 (10-bit
    mantissa). `bf16`/`f16`: operands rounded to that 16-bit type.
  }];
}

def Fusion_BatchNormMode : I32EnumAttr<"BatchNormMode",
    "whether batch normalization uses batch or running statistics", [
      I32EnumAttrCase<"training", 0>,
      I32EnumAttrCase<"inference", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

// A double, written as a plain float literal.
def Fusion_DoubleParameter : APFloatParameter<""> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
    double value;
    if ($_parser.parseFloat(value))
      return ::mlir::failure();
    return ::llvm::APFloat(value);
  }() }];
  let printer = [{ $_printer.printFloat($_self) }];
}

def Fusion_BatchNormConfigAttr : AttrDef<Fusion_Dialect, "BatchNormConfig"> {
  let mnemonic = "batch_norm";
  let summary = "BatchNorm1d configuration: mode, epsilon and momentum";
  let description = [{
    `training`: normalize with the biased batch variance and update the
    running statistics as `running = (1 - momentum) * running + momentum *
    batch_stat`, where the running variance takes the unbiased batch variance
    `M / (M - 1) * var`. `inference`: normalize with the running statistics.
    Shared by `fusion.batch_norm` and the batch-norm stage of
    `fusion.fused_linear`.

    Example: `#fusion.batch_norm<training, epsilon = 1.0e-05, momentum = 0.1>`
  }];
  let parameters = (ins "BatchNormMode":$mode,
                        Fusion_DoubleParameter:$epsilon,
                        Fusion_DoubleParameter:$momentum);
  let assemblyFormat =
      "`<` $mode `,` `epsilon` `=` $epsilon `,` `momentum` `=` $momentum `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isTraining() const { return getMode() == BatchNormMode::training; }
    double getEpsilonValue() const { return getEpsilon().convertToDouble(); }
    double getMomentumValue() const { return getMomentum().convertToDouble(); }
  }];
}

#endif // FUSION_DIALECT_FUSION_IR_FUSIONATTRS_TD
