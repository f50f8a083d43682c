//===- EmbedKernelImage.cpp - the kernels' binary as an LLVM global -------===//

#include "fusion/Codegen/NVVM/Passes.h"
#include "fusion/Codegen/Kernels/KernelModule.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_EMBEDKERNELIMAGE
#include "fusion/Codegen/NVVM/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

struct EmbedKernelImagePass
    : fusion::impl::EmbedKernelImageBase<EmbedKernelImagePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto binary = module.lookupSymbol<gpu::BinaryOp>(kKernelModuleName);
    if (!binary) {
      module.emitError() << "no gpu.binary @"
                         << kKernelModuleName
                         << " (run gpu-module-to-binary first)";
      return signalPassFailure();
    }
    if (binary.getObjects().size() != 1) {
      binary.emitOpError("must hold exactly one object to embed");
      return signalPassFailure();
    }
    auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    StringRef bytes = object.getObject().getValue();

    OpBuilder builder(binary);
    if (auto declaration =
            module.lookupSymbol<LLVM::GlobalOp>(kKernelImageName))
      declaration.erase();
    LLVM::GlobalOp::create(
        builder, binary.getLoc(),
        LLVM::LLVMArrayType::get(builder.getI8Type(), bytes.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal, kKernelImageName,
        builder.getStringAttr(bytes), /*alignment=*/16);
    binary.erase();
    // Nothing of the GPU dialect is left for the host translation.
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
