//===- FusionRuntimeToLLVM.h - fusion_rt ops to runtime calls ---*- C++ -*-===//

#ifndef FUSION_CONVERSION_FUSIONRUNTIMETOLLVM_FUSIONRUNTIMETOLLVM_H
#define FUSION_CONVERSION_FUSIONRUNTIMETOLLVM_FUSIONRUNTIMETOLLVM_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace fusion {

#define GEN_PASS_DECL_LOWERFUSIONRUNTIMETOLLVM
#include "fusion/Conversion/Passes.h.inc"

/// The patterns of `fusion-lower-runtime-to-llvm`.
void populateFusionRuntimeToLLVMPatterns(RewritePatternSet &patterns);

} // namespace fusion
} // namespace mlir

#endif // FUSION_CONVERSION_FUSIONRUNTIMETOLLVM_FUSIONRUNTIMETOLLVM_H
