//===- FusionRuntimeToLLVM.cpp - fusion_rt ops to runtime calls -----------===//

#include "fusion/Conversion/FusionRuntimeToLLVM/FusionRuntimeToLLVM.h"

#include "fusion/Conversion/FusionToGPU/FusionToGPU.h"
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"
#include "fusion_runtime.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_LOWERFUSIONRUNTIMETOLLVM
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

// The runtime's C ABI numbers element types and precisions as the dialect
// does.
static_assert(FUSION_F32 == static_cast<int>(ElementType::f32) &&
              FUSION_BF16 == static_cast<int>(ElementType::bf16) &&
              FUSION_F16 == static_cast<int>(ElementType::f16));
static_assert(FUSION_PRECISION_FP32 == static_cast<int>(Precision::fp32) &&
              FUSION_PRECISION_TF32 == static_cast<int>(Precision::tf32) &&
              FUSION_PRECISION_BF16 == static_cast<int>(Precision::bf16) &&
              FUSION_PRECISION_F16 == static_cast<int>(Precision::f16));
static_assert(FUSION_WEIGHT_OUT_IN == static_cast<int>(WeightLayout::out_in) &&
              FUSION_WEIGHT_IN_OUT == static_cast<int>(WeightLayout::in_out));

/// The declaration of the runtime function `name`, added on first use.
LLVM::LLVMFuncOp lookupOrDeclare(Operation *from, RewriterBase &rewriter,
                                 StringRef name, TypeRange args) {
  auto module = from->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(
      rewriter, module.getLoc(), name,
      LLVM::LLVMFunctionType::get(rewriter.getI32Type(),
                                  SmallVector<Type>(args)));
}

Value i64Constant(RewriterBase &rewriter, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(rewriter, loc, rewriter.getI64Type(),
                                  rewriter.getI64IntegerAttr(value));
}

Value i32Constant(RewriterBase &rewriter, Location loc, int32_t value) {
  return LLVM::ConstantOp::create(rewriter, loc, rewriter.getI32Type(),
                                  rewriter.getI32IntegerAttr(value));
}

/// The address of a NUL-terminated constant holding `text`: one global per
/// text, named `prefix` and the text's letters and digits.
Value stringConstant(Operation *from, RewriterBase &rewriter, StringRef prefix,
                     StringRef text) {
  auto module = from->getParentOfType<ModuleOp>();
  std::string data = text.str();
  data.push_back('\0');
  std::string base = prefix.str();
  for (char c : text)
    base.push_back(llvm::isAlnum(c) ? c : '_');
  std::string name = base;
  LLVM::GlobalOp global;
  // Texts of one name but for their punctuation take numbered names.
  for (unsigned suffix = 1;; ++suffix) {
    global = module.lookupSymbol<LLVM::GlobalOp>(name);
    auto value = global ? dyn_cast_or_null<StringAttr>(global.getValueOrNull())
                        : StringAttr();
    if (!global || (value && value.getValue() == data))
      break;
    name = base + "_" + std::to_string(suffix);
  }
  if (!global) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(module.getBody());
    global = LLVM::GlobalOp::create(
        rewriter, module.getLoc(),
        LLVM::LLVMArrayType::get(rewriter.getI8Type(), data.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal, name,
        rewriter.getStringAttr(data));
  }
  return LLVM::AddressOfOp::create(rewriter, from->getLoc(), global);
}

/// Replaces `op` by the call of the runtime function `name` on `operands`,
/// whose status is the op's.
void replaceWithRuntimeCall(Operation *op, PatternRewriter &rewriter,
                            StringRef name, ArrayRef<Value> operands) {
  LLVM::LLVMFuncOp callee =
      lookupOrDeclare(op, rewriter, name, ValueRange(operands).getTypes());
  rewriter.replaceOpWithNewOp<LLVM::CallOp>(op, callee, operands);
}

/// `fusion_rt.launch` -> the kernel parameter array (a pointer to each
/// argument) and `__fusion_rt_launch`, the op's unit attributes its flags.
struct LowerLaunch : OpRewritePattern<fusion_rt::LaunchOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fusion_rt::LaunchOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type ptr = LLVM::LLVMPointerType::get(rewriter.getContext());
    ValueRange args = op.getArgs();
    Value pointers = LLVM::AllocaOp::create(
        rewriter, loc, ptr, ptr, i64Constant(rewriter, loc, args.size()), 8);
    for (auto [index, arg] : llvm::enumerate(args)) {
      Value slot = LLVM::AllocaOp::create(rewriter, loc, ptr, arg.getType(),
                                          i64Constant(rewriter, loc, 1), 8);
      LLVM::StoreOp::create(rewriter, loc, arg, slot);
      Value entry =
          LLVM::GEPOp::create(rewriter, loc, ptr, ptr, pointers,
                              ValueRange{i64Constant(rewriter, loc, index)});
      LLVM::StoreOp::create(rewriter, loc, slot, entry);
    }
    SmallVector<Value> operands{
        LLVM::AddressOfOp::create(rewriter, loc, ptr, kKernelImageName),
        stringConstant(op, rewriter, "__fusion_kernel_name_",
                       op.getKernel().getLeafReference()),
        op.getGridX(),
        op.getGridY(),
        i32Constant(rewriter, loc, op.getBlock()),
        i32Constant(rewriter, loc, op.getShared()),
        i32Constant(rewriter, loc,
                    (op.getPersistent() ? FUSION_LAUNCH_PERSISTENT : 0) |
                        (op.getOverlapPredecessor()
                             ? FUSION_LAUNCH_OVERLAP_PREDECESSOR
                             : 0)),
        op.getStream(),
        pointers};
    replaceWithRuntimeCall(op, rewriter, "__fusion_rt_launch", operands);
    return success();
  }
};

/// `fusion_rt.cublaslt_gemm` -> `__fusion_rt_gemm` with the runtime's codes
/// (fusion_runtime.h numbers them as the dialect's enums).
struct LowerGemm : OpRewritePattern<fusion_rt::GemmOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fusion_rt::GemmOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> operands{
        op.getStream(),
        i32Constant(rewriter, loc, static_cast<int32_t>(op.getElementType())),
        i32Constant(rewriter, loc, static_cast<int32_t>(op.getPrecision())),
        i32Constant(rewriter, loc, static_cast<int32_t>(op.getWeightLayout())),
        op.getRows(),
        i64Constant(rewriter, loc, op.getN()),
        i64Constant(rewriter, loc, op.getK()),
        op.getX(),
        op.getW(),
        op.getBias(),
        LLVM::ConstantOp::create(rewriter, loc, rewriter.getF32Type(),
                                 op.getAlphaAttr()),
        op.getOut(),
        i64Constant(rewriter, loc, op.getOutStride().value_or(op.getN()))};
    replaceWithRuntimeCall(op, rewriter, "__fusion_rt_gemm", operands);
    return success();
  }
};

/// A fusion_rt op that is one call of the runtime function `callee` on
/// the operands `operandsOf` gives: the host code's argument checks (their
/// labels string constants), workspace, copies and tensor maps.
template <typename Op> struct LowerToRuntimeCall : OpRewritePattern<Op> {
  using OperandsFn = SmallVector<Value> (*)(Op, PatternRewriter &);

  LowerToRuntimeCall(MLIRContext *context, StringRef callee,
                     OperandsFn operandsOf)
      : OpRewritePattern<Op>(context), callee(callee), operandsOf(operandsOf) {}

  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    replaceWithRuntimeCall(op, rewriter, callee, operandsOf(op, rewriter));
    return success();
  }

  StringRef callee;
  OperandsFn operandsOf;
};

template <typename Op>
void addRuntimeCall(RewritePatternSet &patterns, StringRef callee,
                    typename LowerToRuntimeCall<Op>::OperandsFn operandsOf) {
  patterns.add(std::make_unique<LowerToRuntimeCall<Op>>(patterns.getContext(),
                                                        callee, operandsOf));
}

void addHostCallPatterns(RewritePatternSet &patterns) {
  using namespace fusion_rt;
  addRuntimeCall<CheckSizeOp>(
      patterns, "__fusion_rt_check_size",
      [](CheckSizeOp op, PatternRewriter &rewriter) -> SmallVector<Value> {
        return {op.getValue(),
                i64Constant(rewriter, op.getLoc(), op.getMinimum()),
                stringConstant(op, rewriter, "__fusion_label_", op.getWhat())};
      });
  addRuntimeCall<CheckBufferOp>(
      patterns, "__fusion_rt_check_buffer",
      [](CheckBufferOp op, PatternRewriter &rewriter) -> SmallVector<Value> {
        return {op.getStream(), op.getPtr(), op.getBytes(),
                stringConstant(op, rewriter, "__fusion_label_", op.getWhat())};
      });
  addRuntimeCall<AllocOp>(
      patterns, "__fusion_rt_alloc",
      [](AllocOp op, PatternRewriter &) -> SmallVector<Value> {
        return {op.getStream(), op.getBytes(), op.getSlot()};
      });
  addRuntimeCall<FreeOp>(
      patterns, "__fusion_rt_free",
      [](FreeOp op, PatternRewriter &) -> SmallVector<Value> {
        return {op.getStream(), op.getPtr()};
      });
  // The copy's target first, as memcpy's.
  addRuntimeCall<CopyOp>(
      patterns, "__fusion_rt_copy",
      [](CopyOp op, PatternRewriter &) -> SmallVector<Value> {
        return {op.getStream(), op.getTarget(), op.getSource(), op.getBytes()};
      });
  addRuntimeCall<EncodeTensorMapOp>(
      patterns, "__fusion_rt_tensor_map",
      [](EncodeTensorMapOp op,
         PatternRewriter &rewriter) -> SmallVector<Value> {
        Location loc = op.getLoc();
        return {op.getMap(),
                op.getBase(),
                i32Constant(rewriter, loc,
                            static_cast<int32_t>(op.getElementType())),
                op.getRows(),
                op.getColumns(),
                op.getBoxRows(),
                i32Constant(rewriter, loc, op.getBoxColumns())};
      });
}

struct LowerFusionRuntimeToLLVMPass
    : fusion::impl::LowerFusionRuntimeToLLVMBase<LowerFusionRuntimeToLLVMPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFusionRuntimeToLLVMPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::fusion::populateFusionRuntimeToLLVMPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerLaunch, LowerGemm>(patterns.getContext());
  addHostCallPatterns(patterns);
}
