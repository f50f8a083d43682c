//===- FuseLinearEpilogues.cpp - chains into one fused_linear -------------===//

#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSELINEAREPILOGUES
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// linear -> fused_linear with an identity epilogue.
struct ConvertLinearToFusedLinear : OpRewritePattern<LinearOp> {
  ConvertLinearToFusedLinear(MLIRContext *context,
                             std::optional<Precision> f32Precision)
      : OpRewritePattern(context), f32Precision(f32Precision) {}

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    auto fused = FusedLinearOp::create(rewriter, op.getLoc(), op.getInput(),
                                       op.getWeight(), op.getBias(),
                                       op.getWeightLayout());
    if (f32Precision && op.getType().getElementType().isF32())
      fused.setPrecision(f32Precision);
    rewriter.replaceOp(op, fused.getResult());
    return success();
  }

  std::optional<Precision> f32Precision;
};

/// Whether `value` is available where `op` is: a block argument of its
/// block or the result of an op before it there.
static bool isAvailableAt(Value value, Operation *op) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == op->getBlock();
  Operation *def = value.getDefiningOp();
  return def->getBlock() == op->getBlock() && def->isBeforeInBlock(op);
}

/// The fused op producing `value` (its result or an intermediate result),
/// claimed for `consumer` to grow into: a fused_linear without batch-norm
/// stage, moved where the grown op can stand. Where every user of its
/// results comes after `consumer`, it moves down to the consumer; else it
/// stays, and the consumer's operands from elsewhere must be available
/// there.
static FailureOr<FusedLinearOp> claimProducer(Value value, Operation *consumer,
                                              PatternRewriter &rewriter) {
  auto producer = value.getDefiningOp<FusedLinearOp>();
  if (!producer)
    return rewriter.notifyMatchFailure(consumer,
                                       "input is not a fused_linear matrix");
  if (producer.getBatchNormAttr())
    return rewriter.notifyMatchFailure(consumer,
                                       "input comes out of a batch-norm stage");
  if (producer->getBlock() != consumer->getBlock())
    return rewriter.notifyMatchFailure(consumer,
                                       "input comes from another block");
  // The producer's matrices that the consumer reads besides (as row
  // operands) become the epilogue's values.
  SmallVector<Value> others;
  for (Value operand : consumer->getOperands())
    if (operand.getDefiningOp() != producer)
      others.push_back(operand);
  // A user nested in an op of the block (an scf.if) is where that op is.
  auto laterUsers = [&](Value result) {
    return llvm::all_of(result.getUsers(), [&](Operation *user) {
      Operation *inBlock = consumer->getBlock()->findAncestorOpInBlock(*user);
      return inBlock &&
             (inBlock == consumer || consumer->isBeforeInBlock(inBlock));
    });
  };
  if (llvm::all_of(producer->getResults(), laterUsers)) {
    rewriter.moveOpBefore(producer, consumer);
    return producer;
  }
  if (llvm::all_of(others, [&](Value operand) {
        return isAvailableAt(operand, producer);
      }))
    return producer;
  return rewriter.notifyMatchFailure(
      consumer, "its other operands come after the input's other users");
}

/// `value` (f32) as a matrix of `element` holds it: rounded to 16 bits and
/// back where `element` is bf16 or f16 (storing and loading it).
static Value roundAsStored(PatternRewriter &rewriter, Location loc, Value value,
                           Type element) {
  if (!element.isBF16() && !element.isF16())
    return value;
  Value rounded = arith::TruncFOp::create(rewriter, loc, element, value);
  return arith::ExtFOp::create(rewriter, loc, value.getType(), rounded);
}

/// `value` rounded as stored for an earlier reader (by `roundAsStored`, or
/// the importer's rounding), or null.
static Value findRoundedAsStored(Value value, Type element) {
  for (Operation *user : value.getUsers()) {
    auto trunc = dyn_cast<arith::TruncFOp>(user);
    if (!trunc || trunc.getType() != element)
      continue;
    for (Operation *widening : trunc->getUsers())
      if (auto ext = dyn_cast<arith::ExtFOp>(widening);
          ext && ext.getType() == value.getType())
        return ext;
  }
  return Value();
}

/// A batch-norm stage's operands, config and statistics results' types.
struct BatchNormStage {
  Value weight, bias, runningMean, runningVar;
  BatchNormConfigAttr config;
  TypeRange updatedRunningStats, batchStats;
};

/// Replaces `producer` by the op it grows into for `consumer`, which reads
/// its matrix `consumed` and computes `newValue` (built in the producer's
/// epilogue) of the consumer's result. The epilogue yields the values of the
/// producer's matrices that ops other than the consumer read, and
/// `newValue`: the result where the consumer read the result or where `bn`
/// is a batch-norm stage (which normalizes the result), else an
/// intermediate. The consumer's results are replaced by the new op's (its
/// statistics last).
static void growProducer(FusedLinearOp producer, Operation *consumer,
                         Value consumed, Value newValue,
                         const BatchNormStage &bn, PatternRewriter &rewriter) {
  YieldOp yield = producer.getEpilogueYield();
  // Each value yielded, and the matrix it becomes (null for the new one).
  SmallVector<std::pair<Value, Value>> kept;
  for (auto [value, matrix] :
       llvm::zip(yield.getValues(),
                 producer->getResults().take_front(yield.getNumOperands())))
    if (llvm::any_of(matrix.getUsers(),
                     [&](Operation *user) { return user != consumer; }))
      kept.push_back({value, matrix});
  std::pair<Value, Value> added{newValue, Value()};
  if (bn.config || consumed == producer.getResult())
    kept.insert(kept.begin(), added);
  else
    kept.push_back(added);
  SmallVector<Value> yielded =
      llvm::map_to_vector(kept, [](const auto &entry) { return entry.first; });
  Type matrixType = consumer->getResult(0).getType();
  SmallVector<Type> intermediateTypes(kept.size() - 1, matrixType);
  rewriter.setInsertionPoint(producer);
  auto grown = FusedLinearOp::create(
      rewriter, rewriter.getFusedLoc({producer.getLoc(), consumer->getLoc()}),
      matrixType, intermediateTypes, bn.updatedRunningStats, bn.batchStats,
      producer.getInput(), producer.getWeight(), producer.getBias(),
      producer.getDualWeight(), producer.getEpilogueOperands(),
      producer.getEpilogueRows(), bn.weight, bn.bias, bn.runningMean,
      bn.runningVar, producer.getPrecisionAttr(), producer.getAlphaAttr(),
      bn.config, producer.getWeightLayoutAttr());
  rewriter.inlineRegionBefore(producer.getEpilogue(), grown.getEpilogue(),
                              grown.getEpilogue().end());
  rewriter.setInsertionPoint(yield);
  rewriter.replaceOpWithNewOp<YieldOp>(yield, yielded);
  SmallVector<Value> consumerResults;
  for (auto [entry, matrix] : llvm::zip(kept, grown->getResults())) {
    if (entry.second)
      rewriter.replaceUsesWithIf(entry.second, matrix, [&](OpOperand &use) {
        return use.getOwner() != consumer;
      });
    else
      consumerResults.push_back(matrix);
  }
  llvm::append_range(consumerResults, grown.getUpdatedRunningStats());
  llvm::append_range(consumerResults, grown.getBatchStats());
  rewriter.replaceOp(consumer, consumerResults);
  rewriter.eraseOp(producer);
}

/// elementwise(fused_linear) -> fused_linear with the op appended to the
/// epilogue region and its column and row operands appended to the
/// epilogue's.
struct AbsorbElementwiseIntoEpilogue
    : OpInterfaceRewritePattern<ElementwiseOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(ElementwiseOpInterface op,
                                PatternRewriter &rewriter) const override {
    Value input = op.getMatrixInput();
    FailureOr<FusedLinearOp> claimed = claimProducer(input, op, rewriter);
    if (failed(claimed))
      return failure();
    FusedLinearOp producer = *claimed;
    Value result;
    rewriter.modifyOpInPlace(producer, [&] {
      YieldOp yield = producer.getEpilogueYield();
      auto yieldedFor = [&](Value matrix) {
        return yield.getValues()[cast<OpResult>(matrix).getResultNumber()];
      };
      // A matrix that others read as well is stored, so the op reads it as
      // stored: one value for every reader (eager's identities, such as
      // h == max(h) somewhere in each row, hold). So does the last reader
      // where readers absorbed before it read it rounded.
      auto readFor = [&](Value matrix) {
        Value value = yieldedFor(matrix);
        Type element = cast<ShapedType>(matrix.getType()).getElementType();
        bool stored = llvm::any_of(matrix.getUsers(), [&](Operation *user) {
          return user != op.getOperation();
        });
        if (Value readRounded = findRoundedAsStored(value, element))
          return readRounded;
        return stored ? roundAsStored(rewriter, op.getLoc(), value, element)
                      : value;
      };
      SmallVector<Value> columns, rows;
      for (Value operand : op.getColumnOperands())
        columns.push_back(producer.addEpilogueColumn(operand));
      rewriter.setInsertionPoint(yield);
      for (Value operand : op.getRowOperands())
        rows.push_back(operand.getDefiningOp() == producer
                           ? readFor(operand)
                           : Value(producer.addEpilogueRow(operand)));
      result =
          op.buildScalar(rewriter, op.getLoc(), readFor(input), columns, rows);
    });
    growProducer(producer, op, input, result, BatchNormStage{}, rewriter);
    return success();
  }
};

/// batch_norm(fused_linear) -> fused_linear with a batch-norm stage.
struct AbsorbBatchNormIntoStage : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    Value input = op.getInput();
    auto reads = input.getDefiningOp<FusedLinearOp>();
    if (reads && !reads.getEpilogueRows().empty())
      return rewriter.notifyMatchFailure(
          op, "the statistics kernels read no row operands");
    if (reads && reads.getDualWeight())
      return rewriter.notifyMatchFailure(op,
                                         "a dual GEMM has no batch-norm stage");
    FailureOr<FusedLinearOp> claimed = claimProducer(input, op, rewriter);
    if (failed(claimed))
      return failure();
    FusedLinearOp producer = *claimed;
    unsigned index = cast<OpResult>(input).getResultNumber();
    Value normalized = producer.getEpilogueYield().getValues()[index];
    BatchNormStage stage{op.getWeight(),
                         op.getBias(),
                         op.getRunningMean(),
                         op.getRunningVar(),
                         op.getConfig(),
                         op.getUpdatedRunningStats().getTypes(),
                         op.getBatchStats().getTypes()};
    growProducer(producer, op, input, normalized, stage, rewriter);
    return success();
  }
};

/// fused_linear(x, w) reading as a row operand the result of another
/// fused_linear(x, w2) of the same input, weight type, layout and precision
/// that nothing else reads -> one dual GEMM (dual_weight w2), which reads x
/// once: the other's alpha, bias and epilogue apply to the dual
/// accumulator inside this epilogue, the result rounded to the element type
/// as storing it would have.
struct AbsorbSharedInputGemmAsDual : OpRewritePattern<FusedLinearOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Whether `other` can become `op`'s dual GEMM.
  static bool isDualCandidate(FusedLinearOp op, FusedLinearOp other) {
    return other && other != op && other.getInput() == op.getInput() &&
           other.getWeight().getType() == op.getWeight().getType() &&
           other.getWeightLayout() == op.getWeightLayout() &&
           other.getComputePrecision() == op.getComputePrecision() &&
           !other.getDualWeight() && !other.getBatchNormAttr() &&
           other.getEpilogueRows().empty() &&
           other.getIntermediates().empty() && other.getResult().hasOneUse();
  }

  LogicalResult matchAndRewrite(FusedLinearOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getDualWeight() || op.getBatchNormAttr())
      return rewriter.notifyMatchFailure(op, "has a dual GEMM or batch norm");
    auto rows = op.getEpilogueRows();
    auto found = llvm::find_if(rows, [&](Value row) {
      return isDualCandidate(op, row.getDefiningOp<FusedLinearOp>());
    });
    if (found == rows.end())
      return rewriter.notifyMatchFailure(
          op, "no row operand is a GEMM of the same input read only here");
    unsigned index = std::distance(rows.begin(), found);
    auto other = (*found).getDefiningOp<FusedLinearOp>();
    Block &body = op.getEpilogueBlock();
    BlockArgument rowArg =
        body.getArgument(1 + op.getEpilogueOperands().size() + index);
    rewriter.modifyOpInPlace(op, [&] {
      op.getDualWeightMutable().assign(other.getWeight());
      SmallVector<Value> columns;
      if (Value bias = other.getBias())
        columns.push_back(op.addEpilogueColumn(bias));
      for (Value column : other.getEpilogueOperands())
        columns.push_back(op.addEpilogueColumn(column));
      Value dual = body.addArgument(rewriter.getF32Type(), other.getLoc());
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&body);
      Location loc = other.getLoc();
      Value value = dual;
      double alpha = other.getAlpha().convertToDouble();
      if (alpha != 1.0)
        value = arith::MulFOp::create(
            rewriter, loc, value,
            arith::ConstantOp::create(rewriter, loc,
                                      rewriter.getF32FloatAttr(alpha)));
      ArrayRef<Value> operands(columns);
      if (other.getBias()) {
        value = arith::AddFOp::create(rewriter, loc, value, operands.front());
        operands = operands.drop_front();
      }
      value = other.cloneEpilogue(rewriter, value, operands);
      rowArg.replaceAllUsesWith(roundAsStored(
          rewriter, loc, value, other.getResult().getType().getElementType()));
      body.eraseArgument(rowArg.getArgNumber());
      op.getEpilogueRowsMutable().erase(index);
    });
    rewriter.eraseOp(other);
    return success();
  }
};

struct FuseLinearEpiloguesPass
    : fusion::impl::FuseLinearEpiloguesBase<FuseLinearEpiloguesPass> {
  using FuseLinearEpiloguesBase::FuseLinearEpiloguesBase;

  LogicalResult initialize(MLIRContext *context) override {
    std::optional<Precision> precision;
    if (f32Precision != Precision::fp32)
      precision = f32Precision.getValue();
    RewritePatternSet set(context);
    populateFuseLinearEpiloguesPatterns(set, precision);
    patterns = std::move(set);
    return success();
  }

  void runOnOperation() override {
    if (failed(applyPatternsGreedily(getOperation(), patterns)))
      signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
};

} // namespace

void mlir::fusion::populateFuseLinearEpiloguesPatterns(
    RewritePatternSet &patterns, std::optional<Precision> f32Precision) {
  patterns.add<ConvertLinearToFusedLinear>(patterns.getContext(), f32Precision);
  patterns.add<AbsorbElementwiseIntoEpilogue, AbsorbBatchNormIntoStage,
               AbsorbSharedInputGemmAsDual>(patterns.getContext());
}
