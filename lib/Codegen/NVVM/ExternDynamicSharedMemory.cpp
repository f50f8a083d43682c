//===- ExternDynamicSharedMemory.cpp - dynamic shared memory as .extern ---===//

#include "fusion/Codegen/NVVM/Passes.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_EXTERNDYNAMICSHAREDMEMORY
#include "fusion/Codegen/NVVM/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// NVVM's shared address space.
constexpr unsigned kSharedAddressSpace = 3;

struct ExternDynamicSharedMemoryPass
    : fusion::impl::ExternDynamicSharedMemoryBase<
          ExternDynamicSharedMemoryPass> {
  void runOnOperation() override {
    for (auto global : getOperation().getOps<LLVM::GlobalOp>()) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() != kSharedAddressSpace || !array ||
          array.getNumElements() != 0)
        continue;
      global.setLinkage(LLVM::Linkage::External);
    }
  }
};

} // namespace
