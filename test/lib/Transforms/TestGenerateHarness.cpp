//===- TestGenerateHarness.cpp - main() on pseudo-random inputs -----------===//

#include "TestPasses.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fusion::test {
#define GEN_PASS_DEF_GENERATETESTHARNESS
#include "TestPasses.h.inc"
} // namespace mlir::fusion::test

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Whether the entry uses `arg` as a running variance, whose values must be
/// positive.
static bool isRunningVariance(BlockArgument arg) {
  return llvm::any_of(arg.getUsers(), [&](Operation *user) {
    if (auto bn = dyn_cast<BatchNormOp>(user))
      return bn.getRunningVar() == arg;
    if (auto fused = dyn_cast<FusedLinearOp>(user))
      return fused.getRunningVar() == arg;
    return false;
  });
}

/// A 32-bit integer hash (lowbias32) of `x`, in arith ops.
static Value hash32(OpBuilder &b, Location loc, Value x) {
  auto constant = [&](uint32_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  auto xorShift = [&](Value v, uint32_t shift) -> Value {
    return arith::XOrIOp::create(
        b, loc, v, arith::ShRUIOp::create(b, loc, v, constant(shift)));
  };
  x = xorShift(x, 16);
  x = arith::MulIOp::create(b, loc, x, constant(0x7feb352du));
  x = xorShift(x, 15);
  x = arith::MulIOp::create(b, loc, x, constant(0x846ca68bu));
  return xorShift(x, 16);
}

/// A tensor of `type` (dynamic dims set to `rows`) of values uniform in
/// [low, high), a hash of (`stream`, element index).
static Value buildRandomTensor(OpBuilder &b, Location loc,
                               RankedTensorType type, int64_t rows,
                               uint32_t stream, double low, double high) {
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t &dim : shape)
    if (ShapedType::isDynamic(dim))
      dim = rows;
  auto staticType = RankedTensorType::get(shape, type.getElementType());
  Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  unsigned rank = shape.size();
  auto map = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  auto generic = linalg::GenericOp::create(
      b, loc, staticType, ValueRange(), ValueRange{empty},
      ArrayRef<AffineMap>{map},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange) {
        // Linear element index, then hash(index ^ hash(stream)).
        Value index = linalg::IndexOp::create(nb, nloc, 0);
        for (unsigned d = 1; d < rank; ++d) {
          Value stride = arith::ConstantIndexOp::create(nb, nloc, shape[d]);
          index = arith::AddIOp::create(
              nb, nloc, arith::MulIOp::create(nb, nloc, index, stride),
              linalg::IndexOp::create(nb, nloc, d));
        }
        Value bits =
            arith::IndexCastOp::create(nb, nloc, nb.getI32Type(), index);
        Value streamBits = hash32(
            nb, nloc,
            arith::ConstantOp::create(nb, nloc, nb.getI32IntegerAttr(stream)));
        bits =
            hash32(nb, nloc, arith::XOrIOp::create(nb, nloc, bits, streamBits));
        // Top 24 bits -> [0, 1) exactly in f32, then to [low, high).
        Value top = arith::ShRUIOp::create(
            nb, nloc, bits,
            arith::ConstantOp::create(nb, nloc, nb.getI32IntegerAttr(8)));
        Value unit = arith::MulFOp::create(
            nb, nloc, arith::UIToFPOp::create(nb, nloc, nb.getF32Type(), top),
            arith::ConstantOp::create(nb, nloc,
                                      nb.getF32FloatAttr(1.0 / (1 << 24))));
        Value value = arith::AddFOp::create(
            nb, nloc,
            arith::MulFOp::create(
                nb, nloc, unit,
                arith::ConstantOp::create(nb, nloc,
                                          nb.getF32FloatAttr(high - low))),
            arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(low)));
        if (!type.getElementType().isF32())
          value =
              arith::TruncFOp::create(nb, nloc, type.getElementType(), value);
        linalg::YieldOp::create(nb, nloc, value);
      });
  Value result = generic.getResult(0);
  if (staticType != type)
    result = tensor::CastOp::create(b, loc, type, result);
  return result;
}

/// Prints `tensor` through printMemrefF32, widening it to f32 first.
static void buildPrint(OpBuilder &b, Location loc, Value tensor,
                       func::FuncOp printFn) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.getElementType().isF32()) {
    auto f32Type = type.clone(b.getF32Type());
    SmallVector<Value> dynamicSizes;
    for (unsigned d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynamicSizes.push_back(tensor::DimOp::create(b, loc, tensor, d));
    Value empty = tensor::EmptyOp::create(b, loc, f32Type, dynamicSizes);
    auto map =
        AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
    tensor = linalg::GenericOp::create(
                 b, loc, f32Type, ValueRange{tensor}, ValueRange{empty},
                 ArrayRef<AffineMap>{map, map},
                 SmallVector<utils::IteratorType>(
                     type.getRank(), utils::IteratorType::parallel),
                 [&](OpBuilder &nb, Location nloc, ValueRange args) {
                   Value wide = arith::ExtFOp::create(nb, nloc, nb.getF32Type(),
                                                      args[0]);
                   linalg::YieldOp::create(nb, nloc, wide);
                 })
                 .getResult(0);
    type = f32Type;
  }
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  Value buffer = bufferization::ToBufferOp::create(b, loc, memrefType, tensor);
  Value unranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(b.getF32Type(), 0), buffer);
  func::CallOp::create(b, loc, printFn, ValueRange{unranked});
}

struct GenerateTestHarnessPass
    : fusion::test::impl::GenerateTestHarnessBase<GenerateTestHarnessPass> {
  using GenerateTestHarnessBase::GenerateTestHarnessBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entryFn = module.lookupSymbol<func::FuncOp>(entry);
    if (!entryFn) {
      module.emitError() << "fusion-generate-test-harness: no function '"
                         << entry << "' to call";
      return signalPassFailure();
    }
    if (entryFn.isExternal()) {
      entryFn.emitError() << "fusion-generate-test-harness: '" << entry
                          << "' has no body to run";
      return signalPassFailure();
    }
    if (module.lookupSymbol("main")) {
      module.emitError("fusion-generate-test-harness: the module already "
                       "has a 'main'");
      return signalPassFailure();
    }
    if (rows <= 1) {
      module.emitError("fusion-generate-test-harness: rows must be > 1");
      return signalPassFailure();
    }
    for (Type type : llvm::concat<const Type>(entryFn.getArgumentTypes(),
                                              entryFn.getResultTypes())) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || !isa<FloatType>(tensor.getElementType())) {
        entryFn.emitError() << "fusion-generate-test-harness: cannot pass "
                            << type << "; only float tensors";
        return signalPassFailure();
      }
    }

    Location loc = entryFn.getLoc();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto unrankedF32 = UnrankedMemRefType::get(b.getF32Type(), 0);
    auto printFn = module.lookupSymbol<func::FuncOp>("printMemrefF32");
    if (!printFn) {
      printFn = func::FuncOp::create(b, loc, "printMemrefF32",
                                     b.getFunctionType({unrankedF32}, {}));
      printFn.setPrivate();
    }
    auto mainFn =
        func::FuncOp::create(b, loc, "main", b.getFunctionType({}, {}));
    b.setInsertionPointToStart(mainFn.addEntryBlock());
    SmallVector<Value> args;
    for (BlockArgument arg : entryFn.getArguments()) {
      bool positive = isRunningVariance(arg);
      uint32_t stream =
          static_cast<uint32_t>(seed) * 1000u + arg.getArgNumber();
      args.push_back(buildRandomTensor(
          b, loc, cast<RankedTensorType>(arg.getType()), rows, stream,
          positive ? 0.5 : -1.0, positive ? 1.5 : 1.0));
    }
    auto call = func::CallOp::create(b, loc, entryFn, args);
    for (Value result : call.getResults())
      buildPrint(b, loc, result, printFn);
    func::ReturnOp::create(b, loc);
  }
};

} // namespace
