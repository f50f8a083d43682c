//===- FusionOps.cpp - fusion ops: verifiers, folders, builders -----------===//

#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/IR/EnumKeywords.h"
#include "fusion/Dialect/Fusion/IR/ScalarBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::fusion;

//===----------------------------------------------------------------------===//
// Shared verification
//===----------------------------------------------------------------------===//

static std::string dimToString(int64_t dim) {
  return ShapedType::isDynamic(dim) ? std::string("?") : std::to_string(dim);
}

/// Matrices have a static column dimension; only the row count M may vary.
static LogicalResult verifyMatrix(Operation *op, StringRef name, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  if (tensor.isDynamicDim(1))
    return op->emitOpError()
           << name << " " << type << " must have a static column dimension";
  // Nothing to compute (PyTorch's result is empty): no kernel, tile or
  // batch split has to divide by zero.
  if (llvm::is_contained(tensor.getShape(), 0))
    return op->emitOpError() << name << " " << type
                             << " has a zero-sized dimension";
  return success();
}

/// `vector` must be a tensor<N x elementType>, or, where `mayBeSingle`, a
/// tensor<1 x elementType> whose one value every column reads (a column
/// operand that is a single-value parameter).
static LogicalResult verifyColumnVector(Operation *op, StringRef name,
                                        Value vector, int64_t columns,
                                        Type elementType,
                                        bool mayBeSingle = false) {
  if (!vector)
    return success();
  auto type = cast<RankedTensorType>(vector.getType());
  if (type.getElementType() != elementType)
    return op->emitOpError()
           << name << " element type " << type.getElementType()
           << " does not match the input element type " << elementType;
  if (type.getDimSize(0) != columns &&
      !(mayBeSingle && type.getDimSize(0) == 1))
    return op->emitOpError()
           << name << " has " << dimToString(type.getDimSize(0))
           << " elements but there are " << columns << " columns"
           << (mayBeSingle ? " (or one value for all)" : "");
  return success();
}

/// A column operand of an [M, `columns`] matrix (see verifyColumnVector).
static LogicalResult verifyColumnOperand(Operation *op, StringRef name,
                                         Value operand, int64_t columns,
                                         Type elementType) {
  return verifyColumnVector(op, name, operand, columns, elementType,
                            /*mayBeSingle=*/true);
}

/// `operand` must be an [M, G] row operand of an [M, N] `input`: the same
/// rows and element type, and G dividing N.
static LogicalResult verifyRowOperand(Operation *op, StringRef name,
                                      Value operand, RankedTensorType input) {
  auto type = cast<RankedTensorType>(operand.getType());
  if (type.getElementType() != input.getElementType())
    return op->emitOpError()
           << name << " element type " << type.getElementType()
           << " does not match the input element type "
           << input.getElementType();
  if (type.getDimSize(0) != input.getDimSize(0))
    return op->emitOpError()
           << name << " has " << dimToString(type.getDimSize(0))
           << " rows but the input has " << dimToString(input.getDimSize(0));
  int64_t groups = type.getDimSize(1), columns = input.getDimSize(1);
  if (ShapedType::isDynamic(groups) || groups == 0 || columns % groups != 0)
    return op->emitOpError()
           << name << " has " << dimToString(groups)
           << " columns, which do not divide the input's " << columns
           << " into groups";
  return success();
}

/// The operand rules of an elementwise body or reduction map over `input`.
static LogicalResult verifyScalarOperands(Operation *op,
                                          RankedTensorType input,
                                          ValueRange columns,
                                          ValueRange rows) {
  if (failed(verifyMatrix(op, "input", input)))
    return failure();
  for (auto [index, operand] : llvm::enumerate(columns))
    if (failed(verifyColumnOperand(
            op, "column operand #" + std::to_string(index), operand,
            input.getDimSize(1), input.getElementType())))
      return failure();
  for (auto [index, operand] : llvm::enumerate(rows))
    if (failed(verifyRowOperand(op, "row operand #" + std::to_string(index),
                                operand, input)))
      return failure();
  return success();
}

/// Clones a scalar region (an elementwise body, a reduction map) at the
/// builder's insertion point with its arguments bound to `x`, `columns` and
/// `rows`; returns the yielded value. The cloned ops keep their own
/// locations (the front end's source lines); the regions are isolated from
/// above, so nothing else needs mapping.
static Value cloneScalarRegion(OpBuilder &builder, Block &body, Value x,
                               ValueRange columns, ValueRange rows) {
  IRMapping mapping;
  mapping.map(body.getArgument(0), x);
  mapping.map(body.getArguments().slice(1, columns.size()), columns);
  mapping.map(body.getArguments().drop_front(1 + columns.size()), rows);
  for (Operation &op : body.without_terminator())
    builder.clone(op, mapping);
  return mapping.lookup(cast<YieldOp>(body.getTerminator()).getValue());
}

/// Names the arguments of a scalar region: the input element, then one per
/// column operand and one per row operand.
static void nameScalarRegionArguments(Block &block, unsigned columns,
                                      OpAsmSetValueNameFn setNameFn) {
  for (BlockArgument arg : block.getArguments())
    setNameFn(arg, arg.getArgNumber() == 0          ? "in"
                   : arg.getArgNumber() <= columns ? "col"
                                                    : "row");
}

/// The shape rules shared by `linear` and `fused_linear`.
/// The weight's (out_features, in_features) as its layout stores them.
static std::pair<int64_t, int64_t> weightFeatures(Value weight,
                                                  WeightLayout layout) {
  auto type = cast<RankedTensorType>(weight.getType());
  if (layout == WeightLayout::in_out)
    return {type.getDimSize(1), type.getDimSize(0)};
  return {type.getDimSize(0), type.getDimSize(1)};
}

static LogicalResult verifyLinear(Operation *op, Value input, Value weight,
                                  WeightLayout layout, Value bias,
                                  Type resultType) {
  auto inputType = cast<RankedTensorType>(input.getType());
  auto weightType = cast<RankedTensorType>(weight.getType());
  auto outType = cast<RankedTensorType>(resultType);
  if (failed(verifyMatrix(op, "input", inputType)) ||
      failed(verifyMatrix(op, "result", outType)))
    return failure();
  if (!weightType.hasStaticShape())
    return op->emitOpError()
           << "weight " << weightType << " must have a static shape";
  Type elementType = inputType.getElementType();
  if (weightType.getElementType() != elementType)
    return op->emitOpError()
           << "weight element type " << weightType.getElementType()
           << " does not match the input element type " << elementType;
  auto [outFeatures, weightIn] = weightFeatures(weight, layout);
  int64_t inFeatures = inputType.getDimSize(1);
  if (weightIn != inFeatures) {
    InFlightDiagnostic diag = op->emitOpError()
                              << "weight in_features " << weightIn;
    if (layout == WeightLayout::in_out)
      diag << " (stored [in_features, out_features])";
    return diag << " does not match input K " << inFeatures;
  }
  if (failed(verifyColumnVector(op, "bias", bias, outFeatures, elementType)))
    return failure();
  if (outType.getElementType() != elementType)
    return op->emitOpError()
           << "result element type " << outType.getElementType()
           << " does not match the input element type " << elementType;
  if (outType.getDimSize(0) != inputType.getDimSize(0))
    return op->emitOpError()
           << "result has " << dimToString(outType.getDimSize(0))
           << " rows but the input has "
           << dimToString(inputType.getDimSize(0));
  if (outType.getDimSize(1) != outFeatures)
    return op->emitOpError()
           << "result has " << outType.getDimSize(1)
           << " columns but the weight has out_features " << outFeatures;
  return success();
}

/// The batch-norm rules shared by `batch_norm` and the batch-norm stage of
/// `fused_linear`. `normalized` is the [M, N] type being normalized.
static LogicalResult verifyBatchNorm(Operation *op, BatchNormConfigAttr config,
                                     RankedTensorType normalized, Value weight,
                                     Value bias, Value runningMean,
                                     Value runningVar,
                                     ValueRange updatedRunningStats,
                                     ValueRange batchStats,
                                     StringRef weightName, StringRef biasName) {
  int64_t columns = normalized.getDimSize(1);
  Type elementType = normalized.getElementType();
  if (failed(
          verifyColumnVector(op, weightName, weight, columns, elementType)) ||
      failed(verifyColumnVector(op, biasName, bias, columns, elementType)) ||
      failed(verifyColumnVector(op, "running_mean", runningMean, columns,
                                elementType)) ||
      failed(verifyColumnVector(op, "running_var", runningVar, columns,
                                elementType)))
    return failure();
  if (static_cast<bool>(runningMean) != static_cast<bool>(runningVar))
    return op->emitOpError(
        "running_mean and running_var must be given together");
  bool hasRunningStats = static_cast<bool>(runningMean);
  if (!config.isTraining() && !hasRunningStats)
    return op->emitOpError(
        "batch_norm in inference mode requires running statistics");
  if (config.isTraining() && normalized.getDimSize(0) == 1)
    return op->emitOpError("batch_norm in training mode needs more than one "
                           "row per column, got M = 1");
  size_t expectedUpdates = config.isTraining() && hasRunningStats ? 2 : 0;
  if (updatedRunningStats.size() != expectedUpdates)
    return op->emitOpError()
           << "expected " << expectedUpdates
           << " updated running statistics results ("
           << (expectedUpdates ? "training mode with running stats"
                               : "no running stats to update")
           << "), got " << updatedRunningStats.size();
  for (Value updated : updatedRunningStats)
    if (updated.getType() != runningMean.getType())
      return op->emitOpError()
             << "updated running statistic type " << updated.getType()
             << " does not match the running statistic type "
             << runningMean.getType();
  if (batchStats.empty())
    return success();
  if (!config.isTraining())
    return op->emitOpError("batch statistics require training mode");
  if (batchStats.size() != 2)
    return op->emitOpError()
           << "expected 2 batch statistics results (mean and inverse "
              "standard deviation), got "
           << batchStats.size();
  Type statType = getElementTypeOrSelf(batchStats[0]);
  if (getElementTypeOrSelf(batchStats[1]) != statType)
    return op->emitOpError()
           << "batch mean type " << statType
           << " and inverse standard deviation type "
           << getElementTypeOrSelf(batchStats[1]) << " differ";
  if (!statType.isF32() && statType != elementType)
    return op->emitOpError()
           << "batch statistics element type " << statType
           << " is neither f32 nor the input element type " << elementType;
  for (auto [index, stat] : llvm::enumerate(batchStats))
    if (int64_t length = cast<RankedTensorType>(stat.getType()).getDimSize(0);
        length != columns)
      return op->emitOpError()
             << "batch statistic #" << index << " has " << dimToString(length)
             << " elements but there are " << columns << " columns";
  return success();
}

/// The ops a scalar region (a fused_linear epilogue, an elementwise body)
/// may hold: exactly those that the CPU reference (arith/math to LLVM, libm)
/// and the GPU kernels (NVVM, libdevice) both lower on f32 scalars. Keep in
/// sync with the dialect documentation of fused_linear and with
/// test/Dialect/Fusion/epilogue-ops.mlir.
bool mlir::fusion::isAllowedScalarOp(Operation &op) {
  return isa<arith::ConstantOp, arith::AddFOp, arith::SubFOp, arith::MulFOp,
             arith::DivFOp, arith::RemFOp, arith::NegFOp, arith::MaximumFOp,
             arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp,
             arith::CmpFOp, arith::SelectOp, arith::AndIOp, arith::OrIOp,
             arith::XOrIOp, math::AbsFOp, math::AcosOp, math::AcoshOp,
             math::AsinOp, math::AsinhOp, math::AtanOp, math::Atan2Op,
             math::AtanhOp, math::CeilOp, math::CopySignOp, math::CosOp,
             math::CoshOp, math::ErfOp, math::ErfcOp, math::ExpOp, math::Exp2Op,
             math::ExpM1Op, math::FloorOp, math::FmaOp, math::LogOp,
             math::Log10Op, math::Log1pOp, math::Log2Op, math::PowFOp,
             math::RoundEvenOp, math::RsqrtOp, math::SinOp, math::SinhOp,
             math::SqrtOp, math::TanOp, math::TanhOp, math::TruncOp, SpecialOp,
             arith::TruncFOp, arith::ExtFOp>(op);
}

static constexpr const char *kAllowedScalarOps =
    "arith.constant, addf, subf, mulf, divf, remf, negf, maximumf, "
    "minimumf, maxnumf, minnumf, cmpf, select, andi, ori, xori; math.absf, "
    "acos, acosh, asin, asinh, atan, atan2, atanh, ceil, copysign, cos, "
    "cosh, erf, erfc, "
    "exp, exp2, expm1, floor, fma, log, log10, log1p, log2, powf, "
    "roundeven, rsqrt, sin, sinh, sqrt, tan, tanh, trunc; fusion.special; "
    "arith.truncf to bf16 or f16 read only by arith.extf back to f32 (a "
    "rounding to 16 bits)";

StringRef mlir::fusion::getAllowedScalarOpsDescription() {
  return kAllowedScalarOps;
}

/// Scalar region values are f32; i1 carries comparisons into selects.
static bool isScalarRegionType(Type type) {
  return type.isF32() || type.isSignlessInteger(1);
}

static bool is16BitFloat(Type type) { return type.isBF16() || type.isF16(); }

namespace {
/// How the diagnostics of `verifyScalarRegion` name the region.
struct ScalarRegionKind {
  StringRef name;       // "epilogue"
  StringRef phrase;     // "a fused_linear epilogue"
  StringRef valuesOf;   // "fused_linear epilogue"
  StringRef arguments;  // what the block arguments stand for
};
} // namespace

/// A scalar region rounds an f32 value to bf16 or f16 as `arith.extf
/// (arith.truncf x)`: the 16-bit value exists only between the two (what
/// storing and loading it would do), so every other value stays f32.
static LogicalResult verifyRoundingTo16Bits(Operation &op,
                                            const ScalarRegionKind &kind) {
  if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
    if (!trunc.getIn().getType().isF32() || !is16BitFloat(trunc.getType()))
      return op.emitOpError()
             << "rounds " << trunc.getIn().getType() << " to "
             << trunc.getType() << " but in " << kind.phrase
             << " arith.truncf rounds f32 to bf16 or f16";
    if (trunc.getRoundingmodeAttr())
      return op.emitOpError() << "has a rounding mode but in " << kind.phrase
                              << " arith.truncf rounds to nearest, ties to "
                                 "even";
    if (!llvm::all_of(trunc->getUsers(),
                      [](Operation *user) { return isa<arith::ExtFOp>(user); }))
      return op.emitOpError() << "is read by an op other than arith.extf but "
                                 "in "
                              << kind.phrase
                              << " a 16-bit value is only extended back to "
                                 "f32";
    return success();
  }
  auto ext = cast<arith::ExtFOp>(op);
  if (!ext.getIn().getDefiningOp<arith::TruncFOp>() || !ext.getType().isF32())
    return op.emitOpError() << "must extend the result of an arith.truncf to "
                               "f32 in "
                            << kind.phrase;
  return success();
}

/// The one set of rules for a region computing a scalar function of f32
/// block arguments, shared by fused_linear and elementwise, so that whatever
/// an elementwise body holds can be appended to an epilogue unchanged.
static LogicalResult verifyScalarRegion(Operation *owner, Block &body,
                                        size_t expectedArgs,
                                        const ScalarRegionKind &kind) {
  if (body.getNumArguments() != expectedArgs)
    return owner->emitOpError()
           << kind.name << " has " << body.getNumArguments()
           << " arguments but expects " << expectedArgs << " ("
           << kind.arguments << ")";
  for (BlockArgument arg : body.getArguments())
    if (!arg.getType().isF32())
      return owner->emitOpError()
             << kind.name << " argument #" << arg.getArgNumber()
             << " has type " << arg.getType() << " but " << kind.name
             << " arguments are f32";
  if (body.empty() || !isa<YieldOp>(body.back()))
    return owner->emitOpError() << kind.name << " must end with fusion.yield";
  for (Operation &op : body.without_terminator()) {
    if (!isAllowedScalarOp(op))
      return op.emitOpError() << "is not allowed in " << kind.phrase
                              << " (allowed: " << kAllowedScalarOps << ")";
    // Flags that let LLVM assume away NaNs, infinities or rounding would
    // change results silently. A division may be approximate (afn: on the
    // GPUs rcp.approx.f32 for a reciprocal, 1 ulp, and div.full.f32 for a
    // quotient, 2 ulps, both over the whole range), as sigmoid's reciprocal
    // is; erf and exp too, within about 1e-5 relative, and sin and cos
    // within 2^-21 absolute on [-pi, pi], tanh within 2^-11 relative (for
    // results rounded to 16 bits: fusion-approximate-16-bit-math).
    if (auto fastMath = dyn_cast<arith::ArithFastMathInterface>(op)) {
      // Ops built without the attribute (arith's builders leave it unset)
      // carry no flags.
      arith::FastMathFlagsAttr attr = fastMath.getFastMathFlagsAttr();
      arith::FastMathFlags flags =
          attr ? attr.getValue() : arith::FastMathFlags::none;
      arith::FastMathFlags allowed =
          isa<arith::DivFOp, math::ErfOp, math::ExpOp, math::SinOp, math::CosOp,
              math::TanhOp>(op)
              ? arith::FastMathFlags::afn
              : arith::FastMathFlags::none;
      if (arith::bitEnumContainsAny(flags, ~allowed))
        return op.emitOpError()
               << "has fastmath<" << arith::stringifyFastMathFlags(flags)
               << "> but in " << kind.phrase
               << " only arith.divf, math.erf, math.exp, math.sin, math.cos "
                  "and math.tanh may carry fastmath flags, and only afn";
    }
    if (isa<arith::TruncFOp, arith::ExtFOp>(op) &&
        failed(verifyRoundingTo16Bits(op, kind)))
      return failure();
    if (isa<arith::TruncFOp>(op))
      continue; // Its 16-bit result, which only extf reads (checked).
    // Operands are block arguments (f32, checked above) or results of
    // earlier ops (checked here), so results are all there is to check.
    for (auto [index, type] : llvm::enumerate(op.getResultTypes()))
      if (!isScalarRegionType(type))
        return op.emitOpError()
               << "result #" << index << " has type " << type << " but "
               << kind.valuesOf << " values are f32 (i1 for conditions)";
  }
  return success();
}

static Value firstOrNull(ValueRange values, unsigned index) {
  return index < values.size() ? values[index] : Value();
}

static bool isExactly(FloatAttr attr, double value) {
  return attr.getValueAsDouble() == value;
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  return verifyLinear(*this, getInput(), getWeight(), getWeightLayout(),
                      getBias(), getResult().getType());
}

int64_t LinearOp::getOutFeatures() {
  return weightFeatures(getWeight(), getWeightLayout()).first;
}

int64_t LinearOp::getInFeatures() {
  return weightFeatures(getWeight(), getWeightLayout()).second;
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::verify() {
  if (getInputs().size() < 2)
    return emitOpError("needs at least two inputs, got ") << getInputs().size();
  auto resultType = cast<RankedTensorType>(getResult().getType());
  int64_t rank = resultType.getRank();
  if (rank < 1 || rank > 2 || !resultType.hasStaticShape() ||
      !isa<Float32Type, BFloat16Type, Float16Type>(resultType.getElementType()))
    return emitOpError("result must be a static 1-D or 2-D tensor of f32, "
                       "bf16 or f16, got ")
           << resultType;
  int64_t dim = getDim();
  if (dim >= rank)
    return emitOpError("dim ") << dim << " is not a dimension of rank " << rank;
  int64_t joined = 0;
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getElementType() != resultType.getElementType() ||
        type.getRank() != rank || !type.hasStaticShape())
      return emitOpError("input ")
             << index << " must be a static tensor of the result's rank and "
             << "element type, got " << type;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim && type.getDimSize(d) != resultType.getDimSize(d))
        return emitOpError("input ")
               << index << " has " << type.getDimSize(d) << " in dimension "
               << d << ", the result " << resultType.getDimSize(d);
    joined += type.getDimSize(dim);
  }
  if (joined != resultType.getDimSize(dim))
    return emitOpError("the inputs join ")
           << joined << " in dimension " << dim << ", the result has "
           << resultType.getDimSize(dim);
  return success();
}

//===----------------------------------------------------------------------===//
// MulScalarOp
//===----------------------------------------------------------------------===//

LogicalResult MulScalarOp::verify() {
  if (!std::isfinite(getMultiplier().convertToDouble()))
    return emitOpError() << "multiplier must be finite, got "
                         << getMultiplierAttr();
  return verifyMatrix(*this, "input", getInput().getType());
}

OpFoldResult MulScalarOp::fold(FoldAdaptor) {
  if (isExactly(getMultiplierAttr(), 1.0))
    return getInput();
  return {};
}

Value MulScalarOp::buildScalar(OpBuilder &builder, Location loc, Value x,
                               ValueRange, ValueRange) {
  Value multiplier =
      buildF32Constant(builder, loc, getMultiplier().convertToDouble());
  return arith::MulFOp::create(builder, loc, x, multiplier);
}

namespace {
/// (x * a) * b -> x * c, only where composeScalarMultipliers says that
/// gives the same bits for every x (a or b is +-1, or both are powers of two
/// >= 1 with an f32 product); anything else may overflow, underflow or
/// round differently (x * 1e38 * 1e-38 is inf for large x, x * 1.0 is not).
struct ComposeScalarMuls : OpRewritePattern<MulScalarOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulScalarOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<MulScalarOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a scalar mul");
    std::optional<double> product =
        composeScalarMultipliers(inner.getMultiplier().convertToDouble(),
                                 op.getMultiplier().convertToDouble());
    if (!product)
      return rewriter.notifyMatchFailure(
          op, "the composed multiplier would round differently");
    rewriter.replaceOpWithNewOp<MulScalarOp>(op, op.getType(), inner.getInput(),
                                             rewriter.getF64FloatAttr(*product));
    return success();
  }
};
} // namespace

void MulScalarOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<ComposeScalarMuls>(context);
}

//===----------------------------------------------------------------------===//
// MulOp
//===----------------------------------------------------------------------===//

LogicalResult MulOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  if (failed(verifyMatrix(*this, "input", inputType)))
    return failure();
  return verifyColumnOperand(*this, "scale", getScale(),
                             inputType.getDimSize(1),
                             inputType.getElementType());
}

ValueRange MulOp::getColumnOperands() { return getODSOperands(1); }

Value MulOp::buildScalar(OpBuilder &builder, Location loc, Value x,
                         ValueRange columns, ValueRange) {
  return arith::MulFOp::create(builder, loc, x, columns.front());
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  auto scale = dyn_cast_if_present<SplatElementsAttr>(adaptor.getScale());
  if (scale && scale.getSplatValue<APFloat>().isExactlyValue(1.0))
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// LeakyReluOp
//===----------------------------------------------------------------------===//

LogicalResult LeakyReluOp::verify() {
  if (!std::isfinite(getNegativeSlope().convertToDouble()))
    return emitOpError() << "negative_slope must be finite, got "
                         << getNegativeSlopeAttr();
  return verifyMatrix(*this, "input", getInput().getType());
}

Value LeakyReluOp::buildScalar(OpBuilder &builder, Location loc, Value x,
                               ValueRange, ValueRange) {
  return buildLeakyRelu(builder, loc, x, getNegativeSlope().convertToDouble());
}

OpFoldResult LeakyReluOp::fold(FoldAdaptor) {
  if (isExactly(getNegativeSlopeAttr(), 1.0))
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// ReluOp
//===----------------------------------------------------------------------===//

LogicalResult ReluOp::verify() {
  return verifyMatrix(*this, "input", getInput().getType());
}

Value ReluOp::buildScalar(OpBuilder &builder, Location loc, Value x,
                          ValueRange, ValueRange) {
  // PyTorch's `x < 0 ? 0 : x`: NaN and -0.0 pass through unchanged (an IEEE
  // maximum would make -0.0 +0.0), -inf gives 0.
  Value zero = buildF32Constant(builder, loc, 0.0);
  Value negative = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OLT,
                                         x, zero);
  return arith::SelectOp::create(builder, loc, negative, zero, x);
}

//===----------------------------------------------------------------------===//
// ElementwiseOp
//===----------------------------------------------------------------------===//

LogicalResult ElementwiseOp::verify() {
  return verifyScalarOperands(*this,
                              cast<RankedTensorType>(getInput().getType()),
                              getColumnOperands(), getRowOperands());
}

LogicalResult ElementwiseOp::verifyRegions() {
  ScalarRegionKind kind{"body", "an elementwise body", "elementwise body",
                        "the input element, one per column operand and one "
                        "per row operand"};
  return verifyScalarRegion(
      *this, getBodyBlock(),
      1 + getColumnOperands().size() + getRowOperands().size(), kind);
}

YieldOp ElementwiseOp::getBodyYield() {
  return cast<YieldOp>(getBodyBlock().getTerminator());
}

Value ElementwiseOp::buildScalar(OpBuilder &builder, Location, Value x,
                                 ValueRange columns, ValueRange rows) {
  return cloneScalarRegion(builder, getBodyBlock(), x, columns, rows);
}

void ElementwiseOp::getAsmBlockArgumentNames(Region &region,
                                             OpAsmSetValueNameFn setNameFn) {
  nameScalarRegionArguments(region.front(), getColumnOperands().size(),
                            setNameFn);
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  if (failed(verifyScalarOperands(*this, inputType, getColumnOperands(),
                                  getRowOperands())))
    return failure();
  return verifyRowOperand(*this, "result", getResult(), inputType);
}

LogicalResult ReduceOp::verifyRegions() {
  ScalarRegionKind kind{"map", "a reduction map", "reduction map",
                        "the input element, one per column operand and one "
                        "per row operand"};
  return verifyScalarRegion(
      *this, getMapBlock(),
      1 + getColumnOperands().size() + getRowOperands().size(), kind);
}

YieldOp ReduceOp::getMapYield() {
  return cast<YieldOp>(getMapBlock().getTerminator());
}

Value ReduceOp::buildMap(OpBuilder &builder, Value x, ValueRange columns,
                         ValueRange rows) {
  return cloneScalarRegion(builder, getMapBlock(), x, columns, rows);
}

void ReduceOp::getAsmBlockArgumentNames(Region &region,
                                        OpAsmSetValueNameFn setNameFn) {
  nameScalarRegionArguments(region.front(), getColumnOperands().size(),
                            setNameFn);
}

//===----------------------------------------------------------------------===//
// SpecialOp
//===----------------------------------------------------------------------===//

/// libdevice's f32 functions of one f32 that the math dialect lacks: what
/// a fusion.special may name, declared so in GPU modules and resolved by
/// linking libdevice.
static constexpr llvm::StringLiteral kLibdeviceSpecialFunctions[] = {
    "__nv_cyl_bessel_i0f",
    "__nv_cyl_bessel_i1f",
    "__nv_erfcinvf",
    "__nv_erfcxf",
    "__nv_erfinvf",
    "__nv_j0f",
    "__nv_j1f",
    "__nv_lgammaf",
    "__nv_normcdff",
    "__nv_normcdfinvf",
    "__nv_tgammaf",
    "__nv_y0f",
    "__nv_y1f"};

/// The C library's f32 functions of one f32 of the same name as
/// libdevice's (without its `__nv_`): what a fusion.special without a
/// formula may name, for the CPU reference.
static constexpr llvm::StringLiteral kLibmSpecialFunctions[] = {
    "j0f", "j1f", "lgammaf", "tgammaf", "y0f", "y1f"};

LogicalResult SpecialOp::verify() {
  // The name becomes part of a GPU function's symbol.
  StringRef function = getFunction();
  if (function.empty() || !llvm::all_of(function, [](char c) {
        return llvm::isAlnum(c) || c == '_';
      }))
    return emitOpError() << "function name '" << function
                         << "' is not a nonempty identifier of letters, "
                            "digits and underscores";
  if (getInputs().empty())
    return emitOpError() << "'" << function << "' has no inputs";
  std::optional<StringRef> libdevice = getLibdevice();
  std::optional<StringRef> libm = getLibm();
  if (libm && !llvm::is_contained(kLibmSpecialFunctions, *libm)) {
    InFlightDiagnostic diagnostic =
        emitOpError() << "C library function '" << *libm << "' of '" << function
                      << "' is not one of its f32 special functions (";
    llvm::interleaveComma(kLibmSpecialFunctions, diagnostic);
    return diagnostic << ")";
  }
  // Every target computes the op: the GPU kernels libdevice's function or
  // the formula, the CPU reference the C library's or the formula.
  if (libm && (!libdevice || *libdevice != ("__nv_" + *libm).str()))
    return emitOpError() << "calls the C library's '" << *libm
                         << "' on the CPU but not libdevice's '__nv_" << *libm
                         << "' on GPUs";
  if (libm && hasFormula())
    return emitOpError() << "has a formula, which no target computes where "
                            "libdevice's and the C library's '"
                         << *libm << "' are named";
  if (!libm && !hasFormula())
    return emitOpError() << "'" << function
                         << "' has no formula, and names no C library "
                            "function for the CPU";
  if (!libdevice)
    return success();
  if (!llvm::is_contained(kLibdeviceSpecialFunctions, *libdevice)) {
    InFlightDiagnostic diagnostic =
        emitOpError() << "libdevice function '" << *libdevice << "' of '"
                      << function
                      << "' is not one of libdevice's f32 special functions (";
    llvm::interleaveComma(kLibdeviceSpecialFunctions, diagnostic);
    return diagnostic << ")";
  }
  if (getInputs().size() != 1)
    return emitOpError() << "calls libdevice's '" << *libdevice << "' with "
                         << getInputs().size()
                         << " inputs, but libdevice's special functions take "
                            "one";
  return success();
}

LogicalResult SpecialOp::verifyRegions() {
  if (!hasFormula())
    return success();
  ScalarRegionKind kind{"body", "a special function's body",
                        "special function body", "one per input"};
  return verifyScalarRegion(*this, getBodyBlock(), getInputs().size(), kind);
}

YieldOp SpecialOp::getBodyYield() {
  return cast<YieldOp>(getBodyBlock().getTerminator());
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

LogicalResult YieldOp::verify() {
  size_t expected = 1;
  if (auto fused = dyn_cast<FusedLinearOp>((*this)->getParentOp()))
    expected += fused.getIntermediates().size();
  if (getValues().size() != expected)
    return emitOpError() << "yields " << getValues().size()
                         << " values but its '"
                         << (*this)->getParentOp()->getName() << "' expects "
                         << expected
                         << (expected == 1 ? ""
                                           : " (the result's, then one per "
                                             "intermediate result)");
  return success();
}

//===----------------------------------------------------------------------===//
// BatchNormOp
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  if (failed(verifyMatrix(*this, "input", inputType)))
    return failure();
  if (getResult().getType() != inputType)
    return emitOpError() << "result type " << getResult().getType()
                         << " does not match the input type " << inputType;
  return verifyBatchNorm(*this, getConfig(), inputType, getWeight(), getBias(),
                         getRunningMean(), getRunningVar(),
                         getUpdatedRunningStats(), getBatchStats(), "weight",
                         "bias");
}

Value BatchNormOp::getUpdatedRunningMean() {
  return firstOrNull(getUpdatedRunningStats(), 0);
}
Value BatchNormOp::getUpdatedRunningVar() {
  return firstOrNull(getUpdatedRunningStats(), 1);
}
Value BatchNormOp::getBatchMean() { return firstOrNull(getBatchStats(), 0); }
Value BatchNormOp::getBatchInvStd() { return firstOrNull(getBatchStats(), 1); }

//===----------------------------------------------------------------------===//
// FusedLinearOp
//===----------------------------------------------------------------------===//

void FusedLinearOp::build(OpBuilder &builder, OperationState &state,
                          Value input, Value weight, Value bias,
                          WeightLayout weightLayout) {
  auto inputType = cast<RankedTensorType>(input.getType());
  auto resultType = RankedTensorType::get(
      {inputType.getDimSize(0), weightFeatures(weight, weightLayout).first},
      inputType.getElementType());
  build(builder, state, resultType, /*intermediates=*/TypeRange(),
        /*updated_running_stats=*/TypeRange(), /*batch_stats=*/TypeRange(),
        input, weight, bias, /*dual_weight=*/Value(),
        /*epilogue_operands=*/ValueRange(), /*epilogue_rows=*/ValueRange(),
        /*bn_weight=*/Value(),
        /*bn_bias=*/Value(), /*running_mean=*/Value(),
        /*running_var=*/Value(), /*precision=*/PrecisionAttr(),
        /*alpha=*/builder.getF64FloatAttr(1.0),
        /*batch_norm=*/BatchNormConfigAttr(),
        /*weight_layout=*/
        WeightLayoutAttr::get(builder.getContext(), weightLayout));
  OpBuilder::InsertionGuard guard(builder);
  Region *epilogue = state.regions.front().get();
  Block *body = builder.createBlock(epilogue, {}, {builder.getF32Type()},
                                    {state.location});
  YieldOp::create(builder, state.location, body->getArgument(0));
}

/// `precision tf32`, `weight_layout in_out`: the case as a bare keyword.
static ParseResult parsePrecisionKeyword(OpAsmParser &parser,
                                         PrecisionAttr &precision) {
  return parseEnumAttrKeyword(parser, precision, "precision",
                              "fp32, tf32, bf16 or f16");
}

static void printPrecisionKeyword(OpAsmPrinter &printer, Operation *,
                                  PrecisionAttr precision) {
  printer << stringifyPrecision(precision.getValue());
}

static ParseResult parseWeightLayoutKeyword(OpAsmParser &parser,
                                            WeightLayoutAttr &layout) {
  return parseEnumAttrKeyword(parser, layout, "weight layout",
                              "out_in or in_out");
}

static void printWeightLayoutKeyword(OpAsmPrinter &printer, Operation *,
                                     WeightLayoutAttr layout) {
  printer << stringifyWeightLayout(layout.getValue());
}

/// Splits the vector results `vectors` of a batch norm of `config` (null:
/// none): in training with running statistics the first two are their
/// updates, the rest are the batch statistics.
static void
splitStatisticsTypes(ArrayRef<Type> vectors, BatchNormConfigAttr config,
                     const std::optional<OpAsmParser::UnresolvedOperand> &mean,
                     SmallVectorImpl<Type> &updatedRunningStats,
                     SmallVectorImpl<Type> &batchStats) {
  bool updates = config && config.isTraining() && mean.has_value();
  size_t count = updates ? std::min<size_t>(2, vectors.size()) : 0;
  llvm::append_range(updatedRunningStats, vectors.take_front(count));
  llvm::append_range(batchStats, vectors.drop_front(count));
}

/// Parses `-> type` or `-> (type, type, ...)` into `types`.
static ParseResult parseResultTypeList(OpAsmParser &parser,
                                       SmallVectorImpl<Type> &types) {
  if (succeeded(parser.parseOptionalLParen()))
    return failure(parser.parseTypeList(types) || parser.parseRParen());
  return parser.parseType(types.emplace_back());
}

/// Prints the op's result types as a function type prints them.
static void printResultTypeList(OpAsmPrinter &printer, Operation *op) {
  TypeRange types = op->getResultTypes();
  if (types.size() == 1) {
    printer << types.front();
    return;
  }
  printer << '(';
  llvm::interleaveComma(types, printer);
  printer << ')';
}

/// `-> tensor<?x8xf32>` or `-> (tensor<?x8xf32>, tensor<8xf32>, ...)`: the
/// result, then the updated running statistics and the batch statistics.
static ParseResult parseStatisticsResultTypes(
    OpAsmParser &parser, Type &result,
    SmallVectorImpl<Type> &updatedRunningStats,
    SmallVectorImpl<Type> &batchStats, BatchNormConfigAttr config,
    const std::optional<OpAsmParser::UnresolvedOperand> &runningMean) {
  SmallVector<Type> types;
  if (parseResultTypeList(parser, types))
    return failure();
  result = types.front();
  splitStatisticsTypes(ArrayRef(types).drop_front(), config, runningMean,
                       updatedRunningStats, batchStats);
  return success();
}

static void printStatisticsResultTypes(OpAsmPrinter &printer, Operation *op,
                                       Type, TypeRange, TypeRange,
                                       BatchNormConfigAttr, Value) {
  printResultTypeList(printer, op);
}

/// `-> tensor<?x8xf32>` or `-> (tensor<?x8xf32>, tensor<?x8xf32>,
/// tensor<8xf32>, ...)`: the result, then the matrices are intermediates and
/// the vectors the updated running statistics and the batch statistics.
static ParseResult parseFusedLinearResultTypes(
    OpAsmParser &parser, Type &result, SmallVectorImpl<Type> &intermediates,
    SmallVectorImpl<Type> &updatedRunningStats,
    SmallVectorImpl<Type> &batchStats, BatchNormConfigAttr config,
    const std::optional<OpAsmParser::UnresolvedOperand> &runningMean) {
  SmallVector<Type> types;
  SMLoc loc = parser.getCurrentLocation();
  if (parseResultTypeList(parser, types))
    return failure();
  auto isMatrix = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.getRank() == 2;
  };
  result = types.front();
  ArrayRef<Type> rest = ArrayRef(types).drop_front();
  for (; !rest.empty() && isMatrix(rest.front()); rest = rest.drop_front())
    intermediates.push_back(rest.front());
  if (llvm::any_of(rest, isMatrix))
    return parser.emitError(loc, "intermediate results (matrices) come "
                                 "before the statistics");
  splitStatisticsTypes(rest, config, runningMean, updatedRunningStats,
                       batchStats);
  return success();
}

static void printFusedLinearResultTypes(OpAsmPrinter &printer, Operation *op,
                                        Type, TypeRange, TypeRange, TypeRange,
                                        BatchNormConfigAttr, Value) {
  printResultTypeList(printer, op);
}

Precision FusedLinearOp::getDefaultPrecision(Type elementType) {
  if (elementType.isBF16())
    return Precision::bf16;
  if (elementType.isF16())
    return Precision::f16;
  return Precision::fp32;
}

Precision FusedLinearOp::getComputePrecision() {
  if (std::optional<Precision> precision = getPrecision())
    return *precision;
  return getDefaultPrecision(getInput().getType().getElementType());
}

YieldOp FusedLinearOp::getEpilogueYield() {
  return cast<YieldOp>(getEpilogueBlock().getTerminator());
}

Value FusedLinearOp::getUpdatedRunningMean() {
  return firstOrNull(getUpdatedRunningStats(), 0);
}
Value FusedLinearOp::getUpdatedRunningVar() {
  return firstOrNull(getUpdatedRunningStats(), 1);
}
Value FusedLinearOp::getBatchMean() { return firstOrNull(getBatchStats(), 0); }
Value FusedLinearOp::getBatchInvStd() {
  return firstOrNull(getBatchStats(), 1);
}

void FusedLinearOp::getAsmBlockArgumentNames(Region &region,
                                             OpAsmSetValueNameFn setNameFn) {
  Block &block = region.front();
  if (block.getNumArguments() == 0)
    return;
  setNameFn(block.getArgument(0), "acc");
  unsigned columns = getEpilogueOperands().size();
  unsigned rows = getEpilogueRows().size();
  for (BlockArgument arg : block.getArguments().drop_front())
    setNameFn(arg, arg.getArgNumber() <= columns          ? "col"
                   : arg.getArgNumber() <= columns + rows ? "row"
                                                          : "dual");
}

/// Whether a half-precision tensor can be fed to a GEMM of `precision`
/// without losing information.
static bool holdsExactly(Precision precision, Type elementType) {
  if (elementType.isF32() || precision == Precision::fp32 ||
      precision == Precision::tf32)
    return true;
  return precision == FusedLinearOp::getDefaultPrecision(elementType);
}

int64_t FusedLinearOp::getOutFeatures() {
  return weightFeatures(getWeight(), getWeightLayout()).first;
}

int64_t FusedLinearOp::getInFeatures() {
  return weightFeatures(getWeight(), getWeightLayout()).second;
}

ConcatOp FusedLinearOp::getWeightConcat() {
  auto concat = getWeight().getDefiningOp<ConcatOp>();
  int64_t nDim = getWeightLayout() == WeightLayout::in_out ? 1 : 0;
  return concat && concat.getDim() == nDim ? concat : ConcatOp();
}

ConcatOp FusedLinearOp::getBiasConcat() {
  return getBias() ? getBias().getDefiningOp<ConcatOp>() : ConcatOp();
}

LogicalResult FusedLinearOp::verify() {
  if (failed(verifyLinear(*this, getInput(), getWeight(), getWeightLayout(),
                          getBias(), getResult().getType())))
    return failure();
  auto resultType = cast<RankedTensorType>(getResult().getType());
  Type elementType = resultType.getElementType();
  int64_t columns = resultType.getDimSize(1);
  for (auto [index, operand] : llvm::enumerate(getEpilogueOperands()))
    if (failed(verifyColumnOperand(*this,
                                   "epilogue operand #" + std::to_string(index),
                                   operand, columns, elementType)))
      return failure();
  for (auto [index, operand] : llvm::enumerate(getEpilogueRows()))
    if (failed(verifyRowOperand(*this, "row operand #" + std::to_string(index),
                                operand, resultType)))
      return failure();
  if (getBatchNormAttr() && !getEpilogueRows().empty())
    return emitOpError("a batch_norm stage needs an epilogue without row "
                       "operands");
  if (Value dual = getDualWeight()) {
    if (dual.getType() != getWeight().getType())
      return emitOpError() << "dual_weight has type " << dual.getType()
                           << " but must have the weight's type "
                           << getWeight().getType();
    if (getBatchNormAttr())
      return emitOpError("a dual GEMM has no batch_norm stage");
  }
  for (auto [index, intermediate] : llvm::enumerate(getIntermediates()))
    if (intermediate.getType() != resultType)
      return emitOpError() << "intermediate result #" << index << " has type "
                           << intermediate.getType()
                           << " but must have the result's type " << resultType;

  if (!std::isfinite(getAlpha().convertToDouble()))
    return emitOpError() << "alpha must be finite, got " << getAlphaAttr();
  if (std::optional<Precision> precision = getPrecision();
      precision && !holdsExactly(*precision, elementType))
    return emitOpError() << "precision " << stringifyPrecision(*precision)
                         << " cannot hold " << elementType
                         << " operands exactly";

  if (BatchNormConfigAttr config = getBatchNormAttr()) {
    if (failed(verifyBatchNorm(*this, config, resultType, getBnWeight(),
                               getBnBias(), getRunningMean(), getRunningVar(),
                               getUpdatedRunningStats(), getBatchStats(),
                               "bn_weight", "bn_bias")))
      return failure();
  } else if (getBnWeight() || getBnBias() || getRunningMean() ||
             getRunningVar()) {
    return emitOpError("batch-norm operands require a batch_norm stage");
  } else if (!getUpdatedRunningStats().empty() || !getBatchStats().empty()) {
    return emitOpError("statistics results require a training batch_norm "
                       "stage");
  }
  // The lowering attributes are checked against the kernels and the chip
  // by Codegen's lowering-config verifier (Codegen/Config/Verifiers.h).
  return success();
}

LogicalResult FusedLinearOp::verifyRegions() {
  ScalarRegionKind kind{"epilogue", "a fused_linear epilogue",
                        "fused_linear epilogue",
                        "the accumulator, one per epilogue operand, one "
                        "per row operand and the dual accumulator"};
  return verifyScalarRegion(*this, getEpilogueBlock(),
                            1 + getEpilogueOperands().size() +
                                getEpilogueRows().size() +
                                (getDualWeight() ? 1 : 0),
                            kind);
}

BlockArgument FusedLinearOp::addEpilogueColumn(Value vector) {
  unsigned position = 1 + getEpilogueOperands().size();
  getEpilogueOperandsMutable().append(vector);
  return getEpilogueBlock().insertArgument(
      position, Float32Type::get(getContext()), vector.getLoc());
}

BlockArgument FusedLinearOp::addEpilogueRow(Value matrix) {
  unsigned position =
      1 + getEpilogueOperands().size() + getEpilogueRows().size();
  getEpilogueRowsMutable().append(matrix);
  return getEpilogueBlock().insertArgument(
      position, Float32Type::get(getContext()), matrix.getLoc());
}

Value FusedLinearOp::cloneEpilogue(OpBuilder &builder, Value acc,
                                   ValueRange operands, unsigned index) {
  Block &body = getEpilogueBlock();
  IRMapping mapping;
  mapping.map(body.getArgument(0), acc);
  mapping.map(body.getArguments().drop_front(), operands);
  for (Operation &op : body.without_terminator())
    builder.clone(op, mapping);
  return mapping.lookupOrDefault(getEpilogueYield().getValues()[index]);
}

BlockArgument FusedLinearOp::getDualAccumulator() {
  if (!getDualWeight())
    return BlockArgument();
  Block &body = getEpilogueBlock();
  return body.getArgument(body.getNumArguments() - 1);
}

namespace {
/// Drops epilogue and row operands whose block argument the epilogue never
/// reads.
struct DropUnusedEpilogueOperands : OpRewritePattern<FusedLinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedLinearOp op,
                                PatternRewriter &rewriter) const override {
    Block &body = op.getEpilogueBlock();
    llvm::BitVector unused(body.getNumArguments());
    for (BlockArgument arg : body.getArguments().drop_front())
      if (arg.use_empty())
        unused.set(arg.getArgNumber());
    if (unused.none())
      return rewriter.notifyMatchFailure(op, "every epilogue operand is used");
    size_t columns = op.getEpilogueOperands().size();
    SmallVector<Value> keptColumns, keptRows;
    for (auto [index, operand] : llvm::enumerate(op.getEpilogueOperands()))
      if (!unused.test(index + 1))
        keptColumns.push_back(operand);
    for (auto [index, operand] : llvm::enumerate(op.getEpilogueRows()))
      if (!unused.test(index + 1 + columns))
        keptRows.push_back(operand);
    // An unread dual accumulator: the dual GEMM is not computed.
    BlockArgument dual = op.getDualAccumulator();
    bool dropsDual = dual && unused.test(dual.getArgNumber());
    rewriter.modifyOpInPlace(op, [&] {
      op.getEpilogueOperandsMutable().assign(keptColumns);
      op.getEpilogueRowsMutable().assign(keptRows);
      if (dropsDual)
        op.getDualWeightMutable().clear();
      body.eraseArguments(unused);
    });
    return success();
  }
};

/// Drops intermediate results that nothing reads, and their yielded values.
struct DropUnusedIntermediates : OpRewritePattern<FusedLinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedLinearOp op,
                                PatternRewriter &rewriter) const override {
    ValueRange intermediates = op.getIntermediates();
    if (llvm::all_of(intermediates, [](Value intermediate) {
          return !intermediate.use_empty();
        }))
      return rewriter.notifyMatchFailure(op, "every intermediate is read");
    YieldOp yield = op.getEpilogueYield();
    SmallVector<Value> yielded{yield.getValue()}, kept;
    for (auto [intermediate, value] :
         llvm::zip(intermediates, yield.getValues().drop_front()))
      if (!intermediate.use_empty()) {
        kept.push_back(intermediate);
        yielded.push_back(value);
      }
    SmallVector<Type> types{op.getResult().getType()};
    llvm::append_range(types, ValueRange(kept).getTypes());
    llvm::append_range(types, op.getUpdatedRunningStats().getTypes());
    llvm::append_range(types, op.getBatchStats().getTypes());
    FusedLinearOp::Properties properties = op.getProperties();
    properties.resultSegmentSizes = {
        1, static_cast<int32_t>(kept.size()),
        static_cast<int32_t>(op.getUpdatedRunningStats().size()),
        static_cast<int32_t>(op.getBatchStats().size())};
    auto pruned = FusedLinearOp::create(
        rewriter, op.getLoc(), types, op->getOperands(), properties,
        llvm::to_vector(op->getDiscardableAttrs()));
    rewriter.inlineRegionBefore(op.getEpilogue(), pruned.getEpilogue(),
                                pruned.getEpilogue().end());
    rewriter.setInsertionPoint(yield);
    rewriter.replaceOpWithNewOp<YieldOp>(yield, yielded);
    rewriter.replaceAllUsesWith(op.getResult(), pruned.getResult());
    rewriter.replaceAllUsesWith(kept, pruned.getIntermediates());
    rewriter.replaceAllUsesWith(op.getUpdatedRunningStats(),
                                pruned.getUpdatedRunningStats());
    rewriter.replaceAllUsesWith(op.getBatchStats(), pruned.getBatchStats());
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void FusedLinearOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                MLIRContext *context) {
  patterns.add<DropUnusedEpilogueOperands, DropUnusedIntermediates>(context);
}

#include "fusion/Dialect/Fusion/IR/FusionInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionOps.cpp.inc"
