//===- FusionToLinalg.cpp - fusion ops to linalg, the CPU reference -------===//

#include "fusion/Conversion/FusionToLinalg/FusionToLinalg.h"

#include "fusion/Codegen/Math/Philox.h"
#include "fusion/Codegen/Math/Tf32.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/IR/FusionRandomOps.h"
#include "fusion/Dialect/Fusion/IR/ScalarBuilders.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_CONVERTFUSIONTOLINALG
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// A scalar function of an element and one element per column vector.
using ElementFn =
    function_ref<Value(OpBuilder &, Location, Value element, ValueRange)>;
/// A scalar function of one element of each vector.
using VectorFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

static Value widenToF32(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isF32())
    return value;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), value);
}

/// Rounds an f32 GEMM operand to what the tensor cores of `precision` see.
static Value roundToPrecision(OpBuilder &b, Location loc, Value value,
                              Precision precision) {
  switch (precision) {
  case Precision::fp32:
    return value;
  case Precision::tf32:
    return roundToTf32(b, loc, value);
  case Precision::bf16:
  case Precision::f16: {
    Type narrow = precision == Precision::bf16 ? Type(b.getBF16Type())
                                               : Type(b.getF16Type());
    Value rounded = arith::TruncFOp::create(b, loc, narrow, value);
    return arith::ExtFOp::create(b, loc, b.getF32Type(), rounded);
  }
  }
  llvm_unreachable("unknown precision");
}

/// Emits the linalg form of the fusion ops at one location. Intermediate
/// values are f32 tensors.
class ReferenceEmitter {
public:
  ReferenceEmitter(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  struct BatchNormResults {
    Value output, runningMean, runningVar;
    /// f32; null in inference mode.
    Value batchMean, batchInvStd;
  };

  /// [M, N] f32: `fn` of each element of `matrix`, the matching elements
  /// of the [N] (or single-value) `columns` and those of the [M, G] `rows`
  /// (in that order).
  Value mapMatrix(Value matrix, ValueRange columns, ElementFn fn,
                  ValueRange rows = {}) {
    int64_t width = getType(matrix).getDimSize(1);
    Value init = emptyMatrix(matrix, width);
    SmallVector<AffineMap> maps{identity(2)};
    for (Value column : columns)
      maps.push_back(isSingle(column) ? firstOf(2) : columnOf(2));
    AffineExpr m = getAffineDimExpr(0, b.getContext());
    AffineExpr n = getAffineDimExpr(1, b.getContext());
    for (Value row : rows)
      maps.push_back(AffineMap::get(2, 0, {m, groupOf(n, row, width)},
                                    b.getContext()));
    maps.push_back(identity(2));
    SmallVector<Value> inputs{matrix};
    llvm::append_range(inputs, columns);
    llvm::append_range(inputs, rows);
    return genericOp(
        inputs, init, maps, {parallel(), parallel()},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          SmallVector<Value> wide = widenAll(nb, nl, args.drop_back());
          return fn(nb, nl, wide.front(), ArrayRef(wide).drop_front());
        });
  }

  /// [M, G] f32: each group of N/G contiguous columns of each row of
  /// `matrix` reduced by `kind`, after `fn` of each element, the matching
  /// elements of the [N] `columns` and those of the [M, R] `rows`.
  Value reduceGroups(Value matrix, int64_t groups, ReductionKind kind,
                     ValueRange columns, ValueRange rows, ElementFn fn) {
    MLIRContext *ctx = b.getContext();
    int64_t width = getType(matrix).getDimSize(1);
    int64_t groupSize = width / groups;
    Value init =
        linalg::FillOp::create(
            b, loc, buildF32Constant(b, loc, getReductionIdentity(kind)),
            emptyMatrix(matrix, groups))
            .getResult(0);
    // (m, g, s): row m, element s of group g, column g * N/G + s; the
    // matrix and the columns seen as [M, G, N/G] and [G, N/G].
    AffineExpr m = getAffineDimExpr(0, ctx), g = getAffineDimExpr(1, ctx),
               s = getAffineDimExpr(2, ctx);
    AffineExpr n = g * groupSize + s;
    SmallVector<AffineMap> maps{AffineMap::get(3, 0, {m, g, s}, ctx)};
    for (Value column : columns)
      maps.push_back(isSingle(column) ? firstOf(3)
                                      : AffineMap::get(3, 0, {g, s}, ctx));
    for (Value row : rows)
      maps.push_back(AffineMap::get(3, 0, {m, groupOf(n, row, width)}, ctx));
    maps.push_back(AffineMap::get(3, 0, {m, g}, ctx));
    RankedTensorType type = getType(matrix);
    SmallVector<Value> inputs{tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get({type.getDimSize(0), groups, groupSize},
                              type.getElementType()),
        matrix, ArrayRef<ReassociationIndices>{{0}, {1, 2}})};
    for (Value column : columns)
      inputs.push_back(
          isSingle(column)
              ? column
              : tensor::ExpandShapeOp::create(
                    b, loc,
                    RankedTensorType::get({groups, groupSize},
                                          getType(column).getElementType()),
                    column, ArrayRef<ReassociationIndices>{{0, 1}}));
    llvm::append_range(inputs, rows);
    return genericOp(
        inputs, init, maps,
        {parallel(), parallel(), utils::IteratorType::reduction},
        [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          SmallVector<Value> wide = widenAll(nb, nl, args.drop_back());
          Value term = fn(nb, nl, wide.front(), ArrayRef(wide).drop_front());
          return buildReductionCombine(nb, nl, kind, args.back(), term);
        });
  }

  /// [M, `width`] f32, M the rows of `rowsOf`: `fn` of nothing but the
  /// element's place (linalg.index 0 and 1 in its body).
  Value generateMatrix(Value rowsOf, int64_t width,
                       function_ref<Value(OpBuilder &, Location)> fn) {
    return genericOp(ValueRange{}, emptyMatrix(rowsOf, width), {identity(2)},
                     {parallel(), parallel()},
                     [&](OpBuilder &nb, Location nl, ValueRange) {
                       return fn(nb, nl);
                     });
  }

  /// [N] f32: `fn` of the matching elements of the [N] `vectors`.
  Value mapVectors(ValueRange vectors, VectorFn fn) {
    Value init = emptyVector(getType(vectors.front()).getDimSize(0));
    SmallVector<AffineMap> maps(vectors.size() + 1, identity(1));
    return genericOp(vectors, init, maps, {parallel()},
                     [&](OpBuilder &nb, Location nl, ValueRange args) {
                       return fn(nb, nl, widenAll(nb, nl, args.drop_back()));
                     });
  }

  /// [N] f32: the sum over the rows of `fn(matrix[m, n], columns[n]...)`.
  Value sumColumns(Value matrix, ValueRange columns, ElementFn fn) {
    Value init = zeros(emptyVector(getType(matrix).getDimSize(1)));
    SmallVector<AffineMap> maps{identity(2)};
    maps.append(columns.size() + 1, columnOf(2));
    SmallVector<Value> inputs{matrix};
    llvm::append_range(inputs, columns);
    return genericOp(
        inputs, init, maps, {utils::IteratorType::reduction, parallel()},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          SmallVector<Value> wide = widenAll(nb, nl, args.drop_back());
          Value term = fn(nb, nl, wide.front(), ArrayRef(wide).drop_front());
          return arith::AddFOp::create(nb, nl, args.back(), term).getResult();
        });
  }

  /// `tensor` with its elements converted to `elementType`.
  Value convert(Value tensor, Type elementType) {
    RankedTensorType type = getType(tensor);
    if (type.getElementType() == elementType)
      return tensor;
    Value init = tensor::EmptyOp::create(b, loc, type.clone(elementType),
                                         dynamicSizes(tensor));
    unsigned rank = type.getRank();
    SmallVector<utils::IteratorType> iterators(rank, parallel());
    return genericOp(
        tensor, init, {identity(rank), identity(rank)}, iterators,
        [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          Value element = args.front();
          if (cast<FloatType>(elementType).getWidth() >
              cast<FloatType>(element.getType()).getWidth())
            return arith::ExtFOp::create(nb, nl, elementType, element);
          return arith::TruncFOp::create(nb, nl, elementType, element);
        });
  }

  /// [M, N] f32: x * w^T, accumulated in f32, f32 operands rounded to
  /// `precision` (half-precision operands are exact in every precision the
  /// verifier allows them). The products are summed in kGemmLanes
  /// interleaved partial sums, added at the end, as vectorized BLAS and the
  /// tensor cores do: the error of one running sum over K grows with K, an
  /// fp32 GEMM's does not as fast. A weight of layout `in_out` is read
  /// through its transpose.
  Value gemm(Value x, Value w, WeightLayout layout, Precision precision) {
    if (layout == WeightLayout::in_out)
      w = transpose(w);
    RankedTensorType xType = getType(x);
    int64_t chunks = llvm::divideCeil(xType.getDimSize(1), kGemmLanes);
    Value lanesOfX = toLanes(x, chunks), lanesOfW = toLanes(w, chunks);
    int64_t outFeatures = getType(w).getDimSize(0);
    Value partialInit = zeros(tensor::EmptyOp::create(
        b, loc,
        RankedTensorType::get({xType.getDimSize(0), outFeatures, kGemmLanes},
                              b.getF32Type()),
        dynamicSizes(x)));
    MLIRContext *ctx = b.getContext();
    AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
               j = getAffineDimExpr(2, ctx), r = getAffineDimExpr(3, ctx);
    bool round = xType.getElementType().isF32();
    Value partials = genericOp(
        ValueRange{lanesOfX, lanesOfW}, partialInit,
        {AffineMap::get(4, 0, {m, j, r}, ctx),
         AffineMap::get(4, 0, {n, j, r}, ctx),
         AffineMap::get(4, 0, {m, n, r}, ctx)},
        {parallel(), parallel(), utils::IteratorType::reduction, parallel()},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value lhs = widenToF32(nb, nl, args[0]);
          Value rhs = widenToF32(nb, nl, args[1]);
          if (round) {
            lhs = roundToPrecision(nb, nl, lhs, precision);
            rhs = roundToPrecision(nb, nl, rhs, precision);
          }
          Value product = arith::MulFOp::create(nb, nl, lhs, rhs);
          return arith::AddFOp::create(nb, nl, args[2], product).getResult();
        });
    Value init = zeros(emptyMatrix(x, outFeatures));
    return genericOp(
        partials, init,
        {AffineMap::get(3, 0, {m, n, j}, ctx),
         AffineMap::get(3, 0, {m, n}, ctx)},
        {parallel(), parallel(), utils::IteratorType::reduction},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return arith::AddFOp::create(nb, nl, args[1], args[0]).getResult();
        });
  }

  /// The [K, N] matrix `w` as [N, K].
  Value transpose(Value w) {
    RankedTensorType type = getType(w);
    auto transposedType = RankedTensorType::get(
        {type.getDimSize(1), type.getDimSize(0)}, type.getElementType());
    Value empty = tensor::EmptyOp::create(b, loc, transposedType, ValueRange());
    return linalg::TransposeOp::create(b, loc, w, empty,
                                       ArrayRef<int64_t>{1, 0})
        .getResult()
        .front();
  }

  /// The [rows, K] matrix `matrix` as [rows, chunks, kGemmLanes], K padded
  /// with zeros (whose products add nothing) to chunks * kGemmLanes.
  Value toLanes(Value matrix, int64_t chunks) {
    RankedTensorType type = getType(matrix);
    int64_t padded = chunks * kGemmLanes;
    if (padded != type.getDimSize(1)) {
      // matrix[i, min(k, K - 1)] where k < K, else 0.
      auto paddedType = RankedTensorType::get({type.getDimSize(0), padded},
                                              type.getElementType());
      Value empty = tensor::EmptyOp::create(b, loc, paddedType,
                                            dynamicSizes(matrix));
      int64_t depth = type.getDimSize(1);
      matrix = genericOp(
          ValueRange{}, empty, {identity(2)}, {parallel(), parallel()},
          [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
            Value row = linalg::IndexOp::create(nb, nl, 0);
            Value k = linalg::IndexOp::create(nb, nl, 1);
            Value last = arith::ConstantIndexOp::create(nb, nl, depth - 1);
            Value inside = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::ule, k, last);
            Value column = arith::MinUIOp::create(nb, nl, k, last);
            Value element = tensor::ExtractOp::create(
                nb, nl, matrix, ValueRange{row, column});
            Value zero = arith::ConstantOp::create(
                nb, nl, nb.getZeroAttr(type.getElementType()));
            return arith::SelectOp::create(nb, nl, inside, element, zero);
          });
      type = paddedType;
    }
    auto lanesType = RankedTensorType::get(
        {type.getDimSize(0), chunks, kGemmLanes}, type.getElementType());
    SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc, matrix);
    shape = {shape[0], b.getIndexAttr(chunks), b.getIndexAttr(kGemmLanes)};
    return tensor::ExpandShapeOp::create(b, loc, lanesType, matrix,
                                         {{0}, {1, 2}}, shape);
  }

  static constexpr int64_t kGemmLanes = 16;

  /// BatchNorm1d of the f32 matrix `x` with PyTorch's semantics. The updated
  /// running statistics are null unless training with running statistics.
  BatchNormResults batchNorm(Value x, BatchNormConfigAttr config, Value weight,
                             Value bias, Value runningMean, Value runningVar) {
    double epsilon = config.getEpsilonValue();
    auto invStd = [&](OpBuilder &nb, Location nl, ValueRange v) {
      return buildInvStd(nb, nl, v[0], epsilon);
    };
    if (!config.isTraining()) {
      Value invstd = mapVectors(runningVar, invStd);
      return {normalize(x, runningMean, invstd, weight, bias), {}, {}};
    }

    Value rowCount = arith::SIToFPOp::create(
        b, loc, b.getF32Type(),
        arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                   tensor::DimOp::create(b, loc, x, 0)));
    auto divideByRows = [&](OpBuilder &nb, Location nl, ValueRange v) {
      return arith::DivFOp::create(nb, nl, v[0], rowCount).getResult();
    };
    Value sum =
        sumColumns(x, {}, [](OpBuilder &, Location, Value element, ValueRange) {
          return element;
        });
    Value mean = mapVectors(sum, divideByRows);
    Value squaredDeviations = sumColumns(
        x, mean, [](OpBuilder &nb, Location nl, Value e, ValueRange mu) {
          Value d = arith::SubFOp::create(nb, nl, e, mu[0]);
          return arith::MulFOp::create(nb, nl, d, d).getResult();
        });
    Value variance = mapVectors(squaredDeviations, divideByRows);
    Value invstd = mapVectors(variance, invStd);
    BatchNormResults results{
        normalize(x, mean, invstd, weight, bias), {}, {}, mean, invstd};
    if (!runningMean)
      return results;

    // running = (1 - momentum) * running + momentum * batch statistic, with
    // the unbiased variance for running_var.
    double momentum = config.getMomentumValue();
    Value rowsMinusOne =
        arith::SubFOp::create(b, loc, rowCount, buildF32Constant(b, loc, 1.0));
    Value besselFactor = arith::DivFOp::create(b, loc, rowCount, rowsMinusOne);
    auto update = [&](Value statistic, Value factor) {
      return [=](OpBuilder &nb, Location nl, ValueRange v) -> Value {
        Value batch = v[1];
        if (factor)
          batch = arith::MulFOp::create(nb, nl, batch, factor);
        Value kept = arith::MulFOp::create(
            nb, nl, v[0], buildF32Constant(nb, nl, 1.0 - momentum));
        Value added = arith::MulFOp::create(nb, nl, batch,
                                            buildF32Constant(nb, nl, momentum));
        return arith::AddFOp::create(nb, nl, kept, added);
      };
    };
    Type statType = getType(runningMean).getElementType();
    results.runningMean = convert(
        mapVectors({runningMean, mean}, update(mean, Value())), statType);
    results.runningVar = convert(
        mapVectors({runningVar, variance}, update(variance, besselFactor)),
        statType);
    return results;
  }

private:
  /// (x - mean) * invstd (* weight) (+ bias), per column.
  Value normalize(Value x, Value mean, Value invstd, Value weight, Value bias) {
    SmallVector<Value> columns{mean, invstd};
    if (weight)
      columns.push_back(weight);
    if (bias)
      columns.push_back(bias);
    return mapMatrix(
        x, columns,
        [&](OpBuilder &nb, Location nl, Value element, ValueRange c) {
          Value w = weight ? c[2] : Value();
          Value bb = bias ? c.back() : Value();
          return buildBatchNormNormalize(nb, nl, element, c[0], c[1], w, bb);
        });
  }

  Value genericOp(ValueRange inputs, Value init, ArrayRef<AffineMap> maps,
                  ArrayRef<utils::IteratorType> iterators,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    return linalg::GenericOp::create(
               b, loc, init.getType(), inputs, init, maps, iterators,
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(nb, nl, body(nb, nl, args));
               })
        .getResult(0);
  }

  static SmallVector<Value> widenAll(OpBuilder &nb, Location nl,
                                     ValueRange values) {
    return llvm::map_to_vector(values,
                               [&](Value v) { return widenToF32(nb, nl, v); });
  }

  static RankedTensorType getType(Value tensor) {
    return cast<RankedTensorType>(tensor.getType());
  }
  static utils::IteratorType parallel() {
    return utils::IteratorType::parallel;
  }
  AffineMap identity(unsigned rank) {
    return AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  }
  /// The column of the [M, R] row operand `row` that covers column `n` of
  /// an [M, width] matrix.
  static AffineExpr groupOf(AffineExpr n, Value row, int64_t width) {
    return n.floorDiv(width / getType(row).getDimSize(1));
  }
  /// (m, n) -> (n): a per-column vector broadcast over the rows.
  AffineMap columnOf(unsigned rank) {
    return AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, b.getContext()));
  }
  /// (m, n) -> (0): a single value broadcast over the matrix.
  AffineMap firstOf(unsigned rank) {
    return AffineMap::get(rank, 0, getAffineConstantExpr(0, b.getContext()));
  }
  /// Whether column operand `vector` is a single value (tensor<1xT>).
  static bool isSingle(Value vector) {
    return getType(vector).getDimSize(0) == 1;
  }

  SmallVector<Value> dynamicSizes(Value tensor) {
    SmallVector<Value> sizes;
    RankedTensorType type = getType(tensor);
    for (unsigned d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(b, loc, tensor, d));
    return sizes;
  }
  /// An f32 [M, width] tensor with the rows of `rowsOf`.
  Value emptyMatrix(Value rowsOf, int64_t width) {
    RankedTensorType type = getType(rowsOf);
    SmallVector<Value> sizes;
    if (type.isDynamicDim(0))
      sizes.push_back(tensor::DimOp::create(b, loc, rowsOf, 0));
    return tensor::EmptyOp::create(
        b, loc,
        RankedTensorType::get({type.getDimSize(0), width}, b.getF32Type()),
        sizes);
  }
  Value emptyVector(int64_t size) {
    return tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{size},
                                   b.getF32Type());
  }
  Value zeros(Value empty) {
    return linalg::FillOp::create(b, loc, buildF32Constant(b, loc, 0.0), empty)
        .getResult(0);
  }

  OpBuilder &b;
  Location loc;
};

struct LowerLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    ReferenceEmitter emit(rewriter, op.getLoc());
    Type elementType = op.getType().getElementType();
    Value result =
        emit.gemm(op.getInput(), op.getWeight(), op.getWeightLayout(),
                  FusedLinearOp::getDefaultPrecision(elementType));
    if (Value bias = op.getBias())
      result = emit.mapMatrix(
          result, bias,
          [](OpBuilder &nb, Location nl, Value acc, ValueRange columns) {
            return arith::AddFOp::create(nb, nl, acc, columns[0]).getResult();
          });
    rewriter.replaceOp(op, emit.convert(result, elementType));
    return success();
  }
};

/// The inputs copied one after another into their slices of an empty
/// tensor (static shapes, which the verifier asks for). A linalg.copy into
/// the slice, not an insert_slice of the input: bufferized in place, that
/// is a loop nest, where a strided slot's memref.copy would call the
/// runner utilities' memrefCopy, which the libraries do not link.
struct LowerConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    Value joined = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                           type.getElementType());
    int64_t rank = type.getRank(), dim = op.getDim(), offset = 0;
    for (Value input : op.getInputs()) {
      auto inputType = cast<RankedTensorType>(input.getType());
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes,
          strides(rank, rewriter.getIndexAttr(1));
      offsets[dim] = rewriter.getIndexAttr(offset);
      for (int64_t size : inputType.getShape())
        sizes.push_back(rewriter.getIndexAttr(size));
      Value slot = tensor::ExtractSliceOp::create(rewriter, loc, joined,
                                                  offsets, sizes, strides);
      Value copied =
          linalg::CopyOp::create(rewriter, loc, input, slot).getResult(0);
      joined = tensor::InsertSliceOp::create(rewriter, loc, copied, joined,
                                             offsets, sizes, strides);
      offset += inputType.getDimSize(dim);
    }
    rewriter.replaceOp(op, joined);
    return success();
  }
};

struct LowerElementwise : OpInterfaceRewritePattern<ElementwiseOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(ElementwiseOpInterface op,
                                PatternRewriter &rewriter) const override {
    ReferenceEmitter emit(rewriter, op.getLoc());
    size_t columnCount = op.getColumnOperands().size();
    Value result = emit.mapMatrix(
        op.getMatrixInput(), op.getColumnOperands(),
        [&](OpBuilder &nb, Location nl, Value element, ValueRange operands) {
          return op.buildScalar(nb, nl, element,
                                operands.take_front(columnCount),
                                operands.drop_front(columnCount));
        },
        op.getRowOperands());
    Type elementType =
        cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
    rewriter.replaceOp(op, emit.convert(result, elementType));
    return success();
  }
};

/// Each element computed from its index (the draw's definition, shared
/// with the GPU kernels that compute it where they read it).
struct LowerRandomUniform : OpRewritePattern<RandomUniformOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RandomUniformOp op,
                                PatternRewriter &rewriter) const override {
    ReferenceEmitter emit(rewriter, op.getLoc());
    Location loc = op.getLoc();
    auto word = [&](int64_t index) {
      return tensor::ExtractOp::create(
          rewriter, loc, op.getSeed(),
          ValueRange{arith::ConstantIndexOp::create(rewriter, loc, index)});
    };
    std::pair<Value, Value> key = philoxKey(rewriter, loc, word(0), word(1));
    int64_t columns = op.getType().getDimSize(1);
    int64_t stream = op.getStream();
    Value draw = emit.generateMatrix(
        op.getRowsOf(), columns, [&](OpBuilder &nb, Location nl) {
          Type i64 = nb.getI64Type();
          auto index = [&](unsigned dim) {
            return arith::IndexCastUIOp::create(
                nb, nl, i64, linalg::IndexOp::create(nb, nl, dim));
          };
          Value element = arith::AddIOp::create(
              nb, nl,
              arith::MulIOp::create(
                  nb, nl, index(0),
                  arith::ConstantOp::create(nb, nl,
                                            nb.getI64IntegerAttr(columns))),
              index(1));
          return buildUniformDraw(nb, nl, key, element, stream);
        });
    rewriter.replaceOp(op, emit.convert(draw, op.getType().getElementType()));
    return success();
  }
};

struct LowerReduce : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    ReferenceEmitter emit(rewriter, op.getLoc());
    size_t columnCount = op.getColumnOperands().size();
    Value result = emit.reduceGroups(
        op.getInput(), op.getGroups(), op.getKind(), op.getColumnOperands(),
        op.getRowOperands(),
        [&](OpBuilder &nb, Location, Value element, ValueRange operands) {
          return op.buildMap(nb, element, operands.take_front(columnCount),
                             operands.drop_front(columnCount));
        });
    rewriter.replaceOp(
        op, emit.convert(result, op.getResult().getType().getElementType()));
    return success();
  }
};

/// The results of `batchNorm` in the op's result order, with the batch
/// statistics where the op returns them (`batchStats`).
static SmallVector<Value>
batchNormResults(ReferenceEmitter &emit,
                 ReferenceEmitter::BatchNormResults results, Type elementType,
                 ValueRange batchStats) {
  SmallVector<Value> values{emit.convert(results.output, elementType)};
  if (results.runningMean)
    values.append({results.runningMean, results.runningVar});
  if (!batchStats.empty()) {
    Type statType =
        cast<RankedTensorType>(batchStats[0].getType()).getElementType();
    values.append({emit.convert(results.batchMean, statType),
                   emit.convert(results.batchInvStd, statType)});
  }
  return values;
}

struct LowerBatchNorm : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    ReferenceEmitter emit(rewriter, op.getLoc());
    Value input = emit.convert(op.getInput(), rewriter.getF32Type());
    auto results =
        emit.batchNorm(input, op.getConfig(), op.getWeight(), op.getBias(),
                       op.getRunningMean(), op.getRunningVar());
    rewriter.replaceOp(
        op, batchNormResults(emit, results,
                             op.getResult().getType().getElementType(),
                             op.getBatchStats()));
    return success();
  }
};

struct LowerFusedLinear : OpRewritePattern<FusedLinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedLinearOp op,
                                PatternRewriter &rewriter) const override {
    ReferenceEmitter emit(rewriter, op.getLoc());
    Value acc = emit.gemm(op.getInput(), op.getWeight(), op.getWeightLayout(),
                          op.getComputePrecision());

    SmallVector<Value> columns;
    Value bias = op.getBias();
    if (bias)
      columns.push_back(bias);
    llvm::append_range(columns, op.getEpilogueOperands());
    double alpha = op.getAlpha().convertToDouble();
    // The dual GEMM's accumulators, an f32 matrix the epilogue reads as its
    // last row operand.
    SmallVector<Value> rows(op.getEpilogueRows());
    if (Value dual = op.getDualWeight())
      rows.push_back(emit.gemm(op.getInput(), dual, op.getWeightLayout(),
                               op.getComputePrecision()));
    // The epilogue's yielded value `index` over the matrix (a generic op
    // each: the reference favours plain IR over sharing the epilogue).
    auto epilogueValue = [&](unsigned index) {
      return emit.mapMatrix(
          acc, columns,
          [&](OpBuilder &nb, Location nl, Value sum, ValueRange operands) {
            Value value = sum;
            if (alpha != 1.0)
              value = arith::MulFOp::create(nb, nl, value,
                                            buildF32Constant(nb, nl, alpha));
            if (bias)
              value = arith::AddFOp::create(nb, nl, value, operands.front());
            return op.cloneEpilogue(nb, value,
                                    operands.drop_front(bias ? 1 : 0), index);
          },
          rows);
    };
    Value result = epilogueValue(0);
    Type elementType = op.getResult().getType().getElementType();
    SmallVector<Value> intermediates;
    for (unsigned index = 1; index <= op.getIntermediates().size(); ++index)
      intermediates.push_back(emit.convert(epilogueValue(index), elementType));

    SmallVector<Value> results;
    BatchNormConfigAttr config = op.getBatchNormAttr();
    if (!config) {
      results.push_back(emit.convert(result, elementType));
      llvm::append_range(results, intermediates);
      rewriter.replaceOp(op, results);
      return success();
    }
    auto normalized =
        emit.batchNorm(result, config, op.getBnWeight(), op.getBnBias(),
                       op.getRunningMean(), op.getRunningVar());
    results =
        batchNormResults(emit, normalized, elementType, op.getBatchStats());
    results.insert(std::next(results.begin()), intermediates.begin(),
                   intermediates.end());
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct ConvertFusionToLinalgPass
    : fusion::impl::ConvertFusionToLinalgBase<ConvertFusionToLinalgPass> {
  void runOnOperation() override {
    WalkResult formulas = getOperation()->walk([](SpecialOp special) {
      if (!special.hasFormula())
        return WalkResult::advance();
      special.emitOpError()
          << "has a formula, which fusion-inline-special-functions inlines "
             "before the lowering to linalg";
      return WalkResult::interrupt();
    });
    if (formulas.wasInterrupted())
      return signalPassFailure();
    ConversionTarget target(getContext());
    target.addIllegalDialect<FusionDialect>();
    // Special functions that the C library computes, called in
    // fusion-math-to-libm (those with a formula are refused above).
    target.addLegalOp<SpecialOp>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    RewritePatternSet patterns(&getContext());
    populateFusionToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::fusion::populateFusionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerLinear, LowerConcat, LowerElementwise, LowerReduce,
               LowerBatchNorm, LowerFusedLinear, LowerRandomUniform>(
      patterns.getContext());
}
