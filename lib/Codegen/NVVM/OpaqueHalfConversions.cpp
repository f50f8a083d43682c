//===- OpaqueHalfConversions.cpp - 16-bit conversions of wgmma kernels --===//

#include "fusion/Codegen/NVVM/Passes.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_OPAQUEHALFCONVERSIONS
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

/// The f32 result of inline PTX `text` on `value` (its register
/// constraint `operand`), which LLVM keeps as it is.
Value inlinePtx(OpBuilder &b, Location loc, StringRef text, StringRef operand,
                Value value) {
  return LLVM::InlineAsmOp::create(
             b, loc, b.getF32Type(), ValueRange{value}, text,
             ("=f," + operand).str(), /*has_side_effects=*/false,
             /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
             /*asm_dialect=*/LLVM::AsmDialectAttr(),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

/// `fn` applied to each lane of `value` (or to `value`, a scalar), its
/// results f32.
Value eachLane(OpBuilder &b, Location loc, Value value,
               function_ref<Value(Value)> fn) {
  auto vector = dyn_cast<VectorType>(value.getType());
  if (!vector)
    return fn(value);
  Value result = LLVM::PoisonOp::create(b, loc, vector.clone(b.getF32Type()));
  for (int64_t lane = 0; lane < vector.getNumElements(); ++lane) {
    Value index = LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                           b.getI32IntegerAttr(lane));
    Value laneValue = LLVM::ExtractElementOp::create(b, loc, value, index);
    result =
        LLVM::InsertElementOp::create(b, loc, result, fn(laneValue), index);
  }
  return result;
}

/// f16 `value` as f32 through PTX's cvt.f32.f16.
Value widenF16(OpBuilder &b, Location loc, Value value) {
  return eachLane(b, loc, value, [&](Value lane) {
    Value bits = LLVM::BitcastOp::create(b, loc, b.getI16Type(), lane);
    return inlinePtx(b, loc, "cvt.f32.f16 $0, $1;", "h", bits);
  });
}

/// f32 `value` plus -0.0 (exact: every value, zeros' signs and NaNs
/// unchanged) in inline PTX, which neither LLVM nor ptxas folds.
Value addNegativeZero(OpBuilder &b, Location loc, Value value) {
  return eachLane(b, loc, value, [&](Value lane) {
    return inlinePtx(b, loc, "add.rn.f32 $0, $1, 0f80000000;", "f", lane);
  });
}

struct OpaqueHalfConversionsPass
    : fusion::impl::OpaqueHalfConversionsBase<OpaqueHalfConversionsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      bool issuesWgmma = func.walk([](NVVM::WgmmaMmaAsyncOp) {
                               return WalkResult::interrupt();
                             })
                             .wasInterrupted();
      if (!issuesWgmma)
        continue;
      func.walk([](LLVM::FPExtOp ext) {
        Type source = getElementTypeOrSelf(ext.getArg().getType());
        if (!getElementTypeOrSelf(ext.getType()).isF32() ||
            !(source.isBF16() || source.isF16()))
          return;
        OpBuilder b(ext);
        ext.replaceAllUsesWith(source.isBF16()
                                   ? widenBf16(b, ext.getLoc(), ext.getArg())
                                   : widenF16(b, ext.getLoc(), ext.getArg()));
        ext.erase();
      });
      func.walk([](LLVM::FPTruncOp trunc) {
        if (!getElementTypeOrSelf(trunc.getArg().getType()).isF32() ||
            !getElementTypeOrSelf(trunc.getType()).isF16())
          return;
        OpBuilder b(trunc);
        trunc.getArgMutable().assign(
            addNegativeZero(b, trunc.getLoc(), trunc.getArg()));
      });
    }
  }
};

} // namespace
