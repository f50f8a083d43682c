//===- OpaqueBf16Widening.cpp - bf16 widening LLVM keeps as it is --------===//

#include "fusion/Codegen/NVVM/Passes.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_OPAQUEBF16WIDENING
#include "fusion/Codegen/NVVM/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// `type` with its (vector's) element type replaced by `element`.
Type withElement(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

/// bf16 `value` (or a vector of them) as f32: its bits in the high half.
Value widenBf16(OpBuilder &b, Location loc, Value value) {
  Type type = value.getType();
  Type i16 = withElement(type, b.getI16Type());
  Type i32 = withElement(type, b.getI32Type());
  Value bits = LLVM::BitcastOp::create(b, loc, i16, value);
  Value wide = LLVM::ZExtOp::create(b, loc, i32, bits);
  Attribute sixteen = b.getI32IntegerAttr(16);
  if (auto vector = dyn_cast<VectorType>(i32))
    sixteen = SplatElementsAttr::get(vector, sixteen);
  Value shift = LLVM::ConstantOp::create(b, loc, i32, sixteen);
  Value high = LLVM::ShlOp::create(b, loc, wide, shift);
  return LLVM::BitcastOp::create(b, loc, withElement(type, b.getF32Type()),
                                 high);
}

struct OpaqueBf16WideningPass
    : fusion::impl::OpaqueBf16WideningBase<OpaqueBf16WideningPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      bool issuesWgmma = func.walk([](NVVM::WgmmaMmaAsyncOp) {
                               return WalkResult::interrupt();
                             })
                             .wasInterrupted();
      if (!issuesWgmma)
        continue;
      func.walk([](LLVM::FPExtOp ext) {
        if (!getElementTypeOrSelf(ext.getArg().getType()).isBF16() ||
            !getElementTypeOrSelf(ext.getType()).isF32())
          return;
        OpBuilder b(ext);
        ext.replaceAllUsesWith(widenBf16(b, ext.getLoc(), ext.getArg()));
        ext.erase();
      });
    }
  }
};

} // namespace
