//===- FusionOps.h - fusion dialect ops -------------------------*- C++ -*-===//

#ifndef FUSION_DIALECT_FUSION_IR_FUSIONOPS_H
#define FUSION_DIALECT_FUSION_IR_FUSIONOPS_H

#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "fusion/Dialect/Fusion/IR/FusionInterfaces.h.inc"

#define GET_OP_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionOps.h.inc"

namespace mlir::fusion {
/// Whether `op` may appear in a scalar region (a fused_linear epilogue, an
/// elementwise body): the one allow-list both verifiers apply, exposed so
/// that IR builders can refuse an op where it is created.
bool isAllowedScalarOp(Operation &op);
/// The allow-list in words, for diagnostics.
StringRef getAllowedScalarOpsDescription();
} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_IR_FUSIONOPS_H
