//===- Passes.h - fix-ups of NVVM kernels -----------------------*- C++ -*-===//

#ifndef FUSION_CODEGEN_NVVM_PASSES_H
#define FUSION_CODEGEN_NVVM_PASSES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fusion {

#define GEN_PASS_DECL
#include "fusion/Codegen/NVVM/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fusion/Codegen/NVVM/Passes.h.inc"

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_NVVM_PASSES_H
