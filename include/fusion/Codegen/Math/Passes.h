//===- Passes.h - math expansions and outlining -----------------*- C++ -*-===//

#ifndef FUSION_CODEGEN_MATH_PASSES_H
#define FUSION_CODEGEN_MATH_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fusion {

#define GEN_PASS_DECL
#include "fusion/Codegen/Math/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fusion/Codegen/Math/Passes.h.inc"

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_MATH_PASSES_H
