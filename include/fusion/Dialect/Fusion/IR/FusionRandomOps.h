//===- FusionRandomOps.h - fusion ops that draw random numbers --*- C++ -*-===//

#ifndef FUSION_DIALECT_FUSION_IR_FUSIONRANDOMOPS_H
#define FUSION_DIALECT_FUSION_IR_FUSIONRANDOMOPS_H

#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionRandomOps.h.inc"

#endif // FUSION_DIALECT_FUSION_IR_FUSIONRANDOMOPS_H
