//===- TensorMapArgs.cpp - tensor maps as byval grid constants ------------===//

#include "fusion/Codegen/NVVM/Passes.h"
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_LOWERTENSORMAPARGS
#include "fusion/Codegen/NVVM/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

struct LowerTensorMapArgsPass
    : fusion::impl::LowerTensorMapArgsBase<LowerTensorMapArgsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    StringRef name =
        fusion_rt::FusionRuntimeDialect::getTensorMapArgsAttrName();
    Type tensorMap = fusion_rt::FusionRuntimeDialect::getTensorMapType(context);
    for (auto kernel : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      auto indices = kernel->getAttrOfType<DenseI64ArrayAttr>(name);
      if (!indices)
        continue;
      for (int64_t index : indices.asArrayRef()) {
        kernel.setArgAttr(index, LLVM::LLVMDialect::getByValAttrName(),
                          TypeAttr::get(tensorMap));
        kernel.setArgAttr(index, LLVM::LLVMDialect::getAlignAttrName(),
                          IntegerAttr::get(IntegerType::get(context, 32), 64));
        kernel.setArgAttr(index, NVVM::NVVMDialect::getGridConstantAttrName(),
                          UnitAttr::get(context));
      }
      kernel->removeAttr(name);
    }
  }
};

} // namespace
