//===- Passes.h - lowering configs of fused ops -----------------*- C++ -*-===//

#ifndef FUSION_CODEGEN_CONFIG_PASSES_H
#define FUSION_CODEGEN_CONFIG_PASSES_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fusion {

#define GEN_PASS_DECL
#include "fusion/Codegen/Config/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fusion/Codegen/Config/Passes.h.inc"

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_CONFIG_PASSES_H
