//===- FusionInterfaces.td - fusion op interfaces ----------*- tablegen -*-===//

#ifndef FUSION_DIALECT_FUSION_IR_FUSIONINTERFACES_TD
#define FUSION_DIALECT_FUSION_IR_FUSIONINTERFACES_TD

include "mlir/IR/OpBase.td"

def Fusion_ElementwiseOpInterface : OpInterface<"ElementwiseOpInterface"> {
  let cppNamespace = "::mlir::fusion";
  let description = [{
    An op on an [M, N] matrix that computes each output element from the
    matching input element and, optionally, one element per column of some
    per-column vectors and one element of some row operands: [M, G]
    matrices whose element (m, g) covers the N/G contiguous columns of
    group g of row m (G = 1: one value per row, G = N: a whole matrix). A
    column operand of one element is a single value that every column
    reads (a scalar parameter). Such an op is a scalar function, which lets the
    fusion patterns append it to a `fused_linear` epilogue and lets every
    lowering apply it per element, all from the one `buildScalar` method.
  }];
  let methods = [
    InterfaceMethod<"The [M, N] matrix operand.",
      "::mlir::Value", "getMatrixInput", (ins), [{
        return $_op.getInput();
      }]>,
    InterfaceMethod<"The per-column [N] (or single-value [1]) vector "
                    "operands, in the order "
                    "`buildScalar` takes their elements.",
      "::mlir::ValueRange", "getColumnOperands", (ins), [{}], [{
        return ::mlir::ValueRange();
      }]>,
    InterfaceMethod<"The [M, G] row operands, in the order `buildScalar` "
                    "takes their elements.",
      "::mlir::ValueRange", "getRowOperands", (ins), [{}], [{
        return ::mlir::ValueRange();
      }]>,
    InterfaceMethod<[{
        Emits the op's scalar form on f32 values: `x` is the input element,
        `columns` one element of each column operand, `rows` one of each row
        operand; returns the result.
      }],
      "::mlir::Value", "buildScalar",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::Value":$x, "::mlir::ValueRange":$columns,
           "::mlir::ValueRange":$rows)>,
  ];
}

#endif // FUSION_DIALECT_FUSION_IR_FUSIONINTERFACES_TD
