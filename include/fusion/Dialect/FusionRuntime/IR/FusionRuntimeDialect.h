//===- FusionRuntimeDialect.h - host side of the GPU backends ---*- C++ -*-===//

#ifndef FUSION_DIALECT_FUSIONRUNTIME_IR_FUSIONRUNTIMEDIALECT_H
#define FUSION_DIALECT_FUSIONRUNTIME_IR_FUSIONRUNTIMEDIALECT_H

#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h.inc"

#define GET_OP_CLASSES
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeOps.h.inc"

#endif // FUSION_DIALECT_FUSIONRUNTIME_IR_FUSIONRUNTIMEDIALECT_H
