//===- FusionToGPU.cpp - host code of the GPU backends --------------------===//
//
// Lowers each function of fusion ops to an llvm.func that calls the fusion
// runtime (argument checks, cuBLASLt GEMMs, kernel launches) and builds the
// kernels it launches (epilogue kernels, tiled GEMM kernels) in gpu.module
// @fusion_kernels.
//
//===----------------------------------------------------------------------===//

#include "fusion/Conversion/FusionToGPU/FusionToGPU.h"
#include "GemmPaths.h"
#include "fusion/Dialect/Fusion/IR/EntryPoints.h"

#include "fusion/Codegen/Config/GemmKernelRules.h"
#include "fusion/Codegen/Config/Verifiers.h"
#include "fusion/Codegen/Kernels/BatchNormKernels.h"
#include "fusion/Codegen/Kernels/ElementwiseKernel.h"
#include "fusion/Codegen/Kernels/RowProgramKernel.h"
#include "fusion/Codegen/Kernels/TileReductionSteps.h"
#include "fusion/Codegen/Kernels/TiledGemmKernel.h"
#include "fusion/Codegen/Kernels/WgmmaGemmKernel.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/IR/GemmConfig.h"
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_CONVERTFUSIONTOGPU
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// The epilogue region of `op` as a scalar function of the accumulator and
/// the epilogue operands' elements, then the row operands': of its yielded
/// value `index` (0: the result's, then the intermediates').
ScalarFn epilogueFn(FusedLinearOp op, unsigned index = 0) {
  return
      [op, index](OpBuilder &builder, Location, Value acc, ValueRange columns) {
        FusedLinearOp fused = op;
        Block &body = fused.getEpilogueBlock();
        IRMapping mapping;
        mapping.map(body.getArgument(0), acc);
        mapping.map(body.getArguments().drop_front(), columns);
        for (Operation &bodyOp : body.without_terminator())
          builder.clone(bodyOp, mapping);
        return mapping.lookup(fused.getEpilogueYield().getValues()[index]);
      };
}

/// The matrices an elementwise kernel writes besides its output: each
/// `fns[i]` of the kernel's element and operands, stored at `ptrs[i]`.
struct ExtraOutputs {
  SmallVector<ScalarFn> fns;
  SmallVector<Value> ptrs;
};

ScalarFn identityFn() {
  return [](OpBuilder &, Location, Value x, ValueRange) { return x; };
}

GemmConfigAttr getConfig(FusedLinearOp op) {
  LoweringAttr lowering = LoweringAttr::of(op);
  return lowering ? lowering.getGemm() : GemmConfigAttr();
}

/// The columns of the [M, G] row operands `rows`.
static SmallVector<int64_t> rowGroupsOf(ValueRange rows) {
  return llvm::map_to_vector(
      rows, [](Value row) { return tensorType(row).getDimSize(1); });
}

/// The op's batch configs, in increasing max_rows.
static SmallVector<BatchGemmConfigAttr> batchGemmConfigsOf(FusedLinearOp op) {
  LoweringAttr lowering = LoweringAttr::of(op);
  return lowering ? llvm::to_vector(lowering.getBatches())
                  : SmallVector<BatchGemmConfigAttr>();
}

/// The shape of the [M, N] matrix `matrix`.
static MatrixShape shapeOf(Value matrix) {
  RankedTensorType type = tensorType(matrix);
  int64_t n = type.getDimSize(1);
  return {type.getElementType(), n, getVectorWidth(type.getElementType(), n)};
}

/// A device buffer and the row count of the tensor it holds.
struct Buffer {
  Value ptr;
  Value rows; ///< i64
};

/// More bytes than any GPU holds (1 TiB), for one buffer.
constexpr int64_t kMaxBufferBytes = int64_t(1) << 40;

/// The scratch space a batch norm needs, sized at run time: offsets into
/// the workspace until it is allocated, then pointers.
struct BatchNormScratch {
  Value rowsPerChunk, chunks;
  Value mean, m2, center, scale, shift;
};

/// The values of a batch norm: a fusion.batch_norm's or a fused_linear's
/// batch-norm stage's.
struct BatchNormValues {
  BatchNormConfigAttr config;
  Value weight, bias, runningMean, runningVar;
  ValueRange updatedRunningStats, batchStats;

  static BatchNormValues of(BatchNormOp op) {
    return {op.getConfig(),     op.getWeight(),
            op.getBias(),       op.getRunningMean(),
            op.getRunningVar(), op.getUpdatedRunningStats(),
            op.getBatchStats()};
  }
  static BatchNormValues of(FusedLinearOp op) {
    return {op.getBatchNormAttr(), op.getBnWeight(),
            op.getBnBias(),        op.getRunningMean(),
            op.getRunningVar(),    op.getUpdatedRunningStats(),
            op.getBatchStats()};
  }
  /// The operands its kernels take; `statType` is the element type of its
  /// weight, bias and running statistics.
  BatchNormOperands present(Type statType) const {
    Type batchStatType =
        batchStats.empty()
            ? Type()
            : cast<RankedTensorType>(batchStats[0].getType()).getElementType();
    return {static_cast<bool>(weight), static_cast<bool>(bias),
            static_cast<bool>(runningMean), statType, batchStatType};
  }
};

/// A GEMM output that only its row program reads: the generated GEMM
/// reduces the rows (groups) of its tiles for the program's reductions, and
/// writes the output only if elementwise steps of the program read it.
struct TileReductions {
  /// The program's reductions, in step order.
  SmallVector<TileReducedStep> steps;
  /// Whether elementwise steps of the program read the output.
  bool writesOutput;
  /// The columns each partial covers, and the partials of each row.
  int64_t span, partialColumns;
  /// The [M, partialColumns] f32 partial matrices, in the steps' order:
  /// offsets into the workspace until it is allocated, then pointers.
  SmallVector<Value> partials;
  /// The smallest batch that the GEMM reduces: smaller ones write the
  /// output, and the row program reduces it.
  int64_t minRows;
};

/// Emits the host function of one entry point.
class HostEmitter {
public:
  HostEmitter(func::FuncOp func, gpu::GPUModuleOp kernels, OpBuilder &builder)
      : func(func), entryName(func.getName().str()), kernels(kernels),
        b(builder), loc(func.getLoc()),
        ptrType(LLVM::LLVMPointerType::get(builder.getContext())),
        i64Type(builder.getI64Type()), i32Type(builder.getI32Type()) {}

  LogicalResult emit();

private:
  /// Continues when `status` is 0; else frees the workspace and returns it.
  void checkStatus(Value status);

  Value c64(int64_t value) {
    return LLVM::ConstantOp::create(b, loc, i64Type,
                                    b.getI64IntegerAttr(value));
  }
  Value c32(int32_t value) {
    return LLVM::ConstantOp::create(b, loc, i32Type,
                                    b.getI32IntegerAttr(value));
  }
  Value mul(Value l, Value r) { return LLVM::MulOp::create(b, loc, l, r); }
  Value add(Value l, Value r) { return LLVM::AddOp::create(b, loc, l, r); }
  Value ceilDiv(Value l, int64_t r) {
    return LLVM::UDivOp::create(b, loc, add(l, c64(r - 1)), c64(r));
  }
  Value ceilDiv(Value l, Value r) {
    return LLVM::UDivOp::create(
        b, loc, add(l, LLVM::SubOp::create(b, loc, r, c64(1))), r);
  }
  Value max(Value l, Value r) {
    Value less = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, l, r);
    return LLVM::SelectOp::create(b, loc, less, r, l);
  }
  Value nullPtr() { return LLVM::ZeroOp::create(b, loc, ptrType); }

  Value rowsOf(Value tensor);
  Value bytesOf(Value tensor, Value rows);
  Value offsetPtr(Value base, Value offset) {
    return LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), base,
                               ValueRange{offset});
  }

  /// Reserves `bytes` (256-byte aligned) of the workspace.
  Value reserve(Value bytes);
  /// Builds a kernel into the kernels' module, or reuses an identical one
  /// already there: ops of the same shape and epilogue (64 batch norms of one
  /// layer size) share one kernel, lowered and assembled once.
  template <typename Builder> Kernel buildKernel(Builder &&build) {
    Kernel kernel;
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(kernels.getBody());
      kernel = build();
    }
    if (gpu::GPUFuncOp same = findIdenticalKernel(kernel.func)) {
      kernel.func.erase();
      kernel.func = same;
    }
    return kernel;
  }
  /// A kernel of the module other than `kernel` that computes the same: the
  /// same signature, attributes (but its name) and body.
  gpu::GPUFuncOp findIdenticalKernel(gpu::GPUFuncOp kernel);
  /// Launches `kernel` over `rows` rows with `operands`, as its contract
  /// says.
  void launch(Kernel kernel, Value rows, ArrayRef<Value> operands);
  Value materialize(const RowExpr &expr, Value rows, ArrayRef<Value> operands);
  std::string kernelName(Operation *op, StringRef kind) {
    return (entryName + "_" + Twine(opIndex.lookup(op)) + "_" + kind).str();
  }

  LogicalResult checkSupported();
  /// The host function of the entry point, its failure path (which frees
  /// the workspace) and the insertion point in its entry block.
  void createHostFunction();
  /// Checks the batch and every buffer; returns the outputs' pointers.
  SmallVector<Value> checkArguments();
  /// Plans the workspace (intermediates, tile reductions' partials, batch
  /// norms' scratch) and allocates it.
  LogicalResult planWorkspace();
  /// The workspace an op result takes; none where tile reductions leave it
  /// unwritten.
  std::optional<Value> getWorkspaceBytes(Value result);
  /// Emits the ops of the function's body.
  void emitBody();
  /// Plans the scratch space of the batch norm of `op`: its statistics in
  /// chunks of block rows (a generated GEMM's) or statisticsChunkRows.
  void planBatchNorm(Operation *op);
  /// The statistics kernels' chunk of rows for a batch norm of `columns`.
  Value statisticsChunkRows(Value rows, int64_t columns, int64_t vectorWidth);
  /// `op` by its paths (planGemmPaths), each for its batches. `after` (or
  /// null): an elementwise op of the batch-norm stage's output computed by
  /// its normalizing pass.
  void emitFusedLinear(FusedLinearOp op, ElementwiseOpInterface after);
  /// `op` through cuBLASLt's GEMM and the epilogue's kernels.
  void emitCublasFusedLinear(FusedLinearOp op, ElementwiseOpInterface after);
  /// `op` through the generated GEMM kernels of `path`, which writes the
  /// output (and intermediates) for a row program to reduce.
  void emitOutputWritingGemm(FusedLinearOp op, const GemmPath &path);
  /// `op` through the generated GEMM kernels of `path`, which finish its
  /// training batch norm (and `after`, if any).
  void emitBatchNormFinishingGemm(FusedLinearOp op, const GemmPath &path,
                                  ElementwiseOpInterface after);
  /// `op` through the generated GEMM kernels of `path` with the op's tile
  /// reductions, or the moments of its batch norm, which a finalize kernel
  /// and a normalizing pass (computing `after`) then finish.
  void emitGeneralGemm(FusedLinearOp op, const GemmPath &path,
                       ElementwiseOpInterface after);
  /// Emits `emitCase(i)` for the batches of each case i: up to `maxRows[i]`
  /// rows past case i - 1's, the last case's for the rest. With one case,
  /// no branch.
  void emitForRows(Value rows, ArrayRef<int64_t> maxRows,
                   function_ref<void(unsigned)> emitCase);
  /// Branches on `rows` <= `maxRows`: the insertion point moves to the
  /// block those batches take; returns the block of larger ones.
  Block *branchOnRows(Value rows, int64_t maxRows);
  /// A block at the function's end where branches join; the insertion
  /// point stays.
  Block *createJoinBlock() {
    OpBuilder::InsertionGuard guard(b);
    return b.createBlock(b.getBlock()->getParent());
  }
  /// What every generated GEMM kernel of `op` computes: the GEMM, its
  /// epilogue and intermediates, the batch norm's moments where it trains.
  GemmKernelProblem getGemmProblem(FusedLinearOp op);
  /// The operands of `op`'s GEMM kernels up to their row operands: the
  /// epilogue's output stored (at `outputOperand`) to `output` where
  /// `storesOutput`, then `intermediates` (those of the problem).
  SmallVector<Value> getGemmOperands(FusedLinearOp op, bool storesOutput,
                                     size_t &outputOperand, Value output,
                                     ValueRange intermediates);
  /// The generated GEMM kernel of `problem` (its config's backend).
  Kernel buildGemmKernel(FusedLinearOp op, const GemmKernelProblem &problem,
                         StringRef kind);
  /// Launches `problem`'s kernel of the case of `kernels` the batch takes.
  void launchGemmKernels(FusedLinearOp op, GemmKernelProblem problem,
                         ArrayRef<GemmKernelCase> kernels,
                         ArrayRef<Value> operands);
  /// Appends the batch norm's present operands in the order its kernels
  /// take them: weight, bias, running mean and variance, their updates, the
  /// batch statistics.
  void appendBatchNormOperands(SmallVectorImpl<Value> &operands,
                               const BatchNormValues &bn) {
    for (Value parameter : {bn.weight, bn.bias, bn.runningMean, bn.runningVar})
      if (parameter)
        operands.push_back(buffers.lookup(parameter).ptr);
    operands.append(bufferPtrs(bn.updatedRunningStats));
    operands.append(bufferPtrs(bn.batchStats));
  }
  void emitElementwise(ElementwiseOpInterface op);
  /// The row program that starts with the reduction `first` and takes the
  /// ops after it (up to `end`) that can join it; returns the op after its
  /// last one. When a GEMM reduced its input's tiles, its reductions merge
  /// their partials in column order.
  Block::iterator emitRowProgram(ReduceOp first, Block::iterator end);
  /// Launches the row program of `ops` (starting with `first`), whose
  /// reductions merge the partials of `tiles` where given; its kernel is
  /// named `kind`.
  void launchRowProgram(ReduceOp first, const RowProgramOps &ops,
                        const TileReductions *tiles, StringRef kind);
  /// Plans the tile reductions of `op`'s output that its
  /// #fusion.tile_reductions asks for; fails (after a diagnostic) where its
  /// readers are no such row program.
  LogicalResult planGemmTileReductions(FusedLinearOp op);
  /// The batch norm `bn` of `op` of `input` (after `fn` of `columns`) into
  /// `output`, or into the result of `after` computed on it; its normalizing
  /// pass also writes `extra` (of the input's elements and `columns`). With
  /// `statistics` false, the chunks' moments are already in the scratch
  /// space.
  void emitBatchNorm(Operation *op, Buffer input, Buffer output,
                     MatrixShape shape, ValueRange columns, const ScalarFn &fn,
                     const BatchNormValues &bn, ElementwiseOpInterface after,
                     const ExtraOutputs &extra = {}, bool statistics = true);
  /// The device pointers of `tensors`.
  SmallVector<Value> bufferPtrs(ValueRange tensors);

  func::FuncOp func;
  std::string entryName;
  gpu::GPUModuleOp kernels;
  OpBuilder &b;
  Location loc;
  Type ptrType, i64Type, i32Type;

  LLVM::LLVMFuncOp host;
  Value stream, batch, workspaceSlot, workspace;
  Block *failureBlock = nullptr;
  llvm::MapVector<Value, Buffer> buffers;
  DenseMap<Operation *, unsigned> opIndex;
  llvm::MapVector<Operation *, BatchNormScratch> scratch;
  llvm::MapVector<Value, TileReductions> tileReductions;
  Value workspaceBytes;
};

void HostEmitter::checkStatus(Value status) {
  Value bad =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, status, c32(0));
  Block *next = b.createBlock(b.getBlock()->getParent());
  b.setInsertionPointToEnd(bad.getParentBlock());
  LLVM::CondBrOp::create(b, loc, bad, failureBlock, ValueRange{status}, next,
                         ValueRange{});
  b.setInsertionPointToStart(next);
}

Value HostEmitter::rowsOf(Value tensor) {
  RankedTensorType type = tensorType(tensor);
  if (type.isDynamicDim(0))
    return batch;
  return c64(type.getDimSize(0));
}

Value HostEmitter::bytesOf(Value tensor, Value rows) {
  RankedTensorType type = tensorType(tensor);
  int64_t perRow = elementBytes(type.getElementType());
  for (int64_t dim : type.getShape().drop_front())
    perRow *= dim;
  return mul(rows, c64(perRow));
}

Value HostEmitter::reserve(Value bytes) {
  Value offset = workspaceBytes;
  workspaceBytes = add(offset, mul(ceilDiv(bytes, 256), c64(256)));
  return offset;
}

gpu::GPUFuncOp HostEmitter::findIdenticalKernel(gpu::GPUFuncOp kernel) {
  auto attributesButName = [](gpu::GPUFuncOp func) {
    NamedAttrList attributes(func->getAttrDictionary());
    attributes.erase(SymbolTable::getSymbolAttrName());
    return attributes.getDictionary(func.getContext());
  };
  DictionaryAttr attributes = attributesButName(kernel);
  for (auto other : kernels.getOps<gpu::GPUFuncOp>())
    if (other != kernel &&
        other.getFunctionType() == kernel.getFunctionType() &&
        attributesButName(other) == attributes &&
        OperationEquivalence::isRegionEquivalentTo(
            &other.getBody(), &kernel.getBody(),
            OperationEquivalence::IgnoreLocations))
      return other;
  return {};
}

Value HostEmitter::materialize(const RowExpr &expr, Value rows,
                               ArrayRef<Value> operands) {
  if (!expr.rowScale)
    return c64(expr.factor);
  Value scaled = expr.rowScale == 1 ? rows : mul(rows, c64(expr.rowScale));
  Value quotient = expr.divisorOperand
                       ? ceilDiv(scaled, operands[*expr.divisorOperand])
                   : expr.divisor == 1 ? scaled
                                       : ceilDiv(scaled, expr.divisor);
  return expr.factor == 1 ? quotient : mul(quotient, c64(expr.factor));
}

void HostEmitter::launch(Kernel kernel, Value rows, ArrayRef<Value> operands) {
  const LaunchContract &contract = kernel.launch;
  SmallVector<Value> args;
  for (const KernelArgument &argument : contract.arguments) {
    switch (argument.kind) {
    case KernelArgument::Kind::Operand:
      args.push_back(operands[argument.operand]);
      break;
    case KernelArgument::Kind::Value:
      args.push_back(materialize(argument.value, rows, operands));
      break;
    case KernelArgument::Kind::Descriptor: {
      // The expanded descriptor of a dense row-major buffer: allocated and
      // aligned pointer, offset, sizes, strides.
      Value ptr = operands[argument.operand];
      args.append({ptr, ptr, c64(0)});
      for (const RowExpr &extent : argument.shape)
        args.push_back(materialize(extent, rows, operands));
      SmallVector<Value> strides;
      int64_t stride = 1;
      for (const RowExpr &extent : llvm::reverse(argument.shape)) {
        strides.push_back(c64(stride));
        if (!extent.rowScale)
          stride *= extent.factor;
      }
      args.append(strides.rbegin(), strides.rend());
      break;
    }
    case KernelArgument::Kind::TensorMap: {
      // Encoded on the host for this call's pointer and rows, passed by
      // value.
      Type mapType =
          fusion_rt::FusionRuntimeDialect::getTensorMapType(b.getContext());
      Value map = LLVM::AllocaOp::create(b, loc, ptrType, mapType, c64(1), 64);
      auto elementType = ElementTypeAttr::get(
          b.getContext(), *getElementTypeKind(argument.elementType));
      Value rowCount = materialize(argument.shape[0], rows, operands);
      Value columnCount = materialize(argument.shape[1], rows, operands);
      Value boxRows = c32(argument.box[0]);
      if (int64_t blockRows = argument.lastBlockRows) {
        // (M - 1) % blockRows + 1: a batch of no rows launches nothing.
        Value last = LLVM::AddOp::create(
            b, loc,
            LLVM::URemOp::create(b, loc,
                                 LLVM::SubOp::create(b, loc, rows, c64(1)),
                                 c64(blockRows)),
            c64(1));
        boxRows = LLVM::TruncOp::create(b, loc, i32Type, last);
      }
      checkStatus(fusion_rt::EncodeTensorMapOp::create(
          b, loc, i32Type, map, elementType, operands[argument.operand],
          rowCount, columnCount, boxRows,
          b.getI32IntegerAttr(argument.box[1])));
      args.push_back(LLVM::LoadOp::create(b, loc, mapType, map));
      break;
    }
    }
  }
  auto symbol =
      SymbolRefAttr::get(b.getStringAttr(kKernelModuleName),
                         {FlatSymbolRefAttr::get(kernel.func.getNameAttr())});
  checkStatus(fusion_rt::LaunchOp::create(
      b, loc, i32Type, symbol, materialize(contract.gridX, rows, operands),
      materialize(contract.gridY, rows, operands),
      b.getI32IntegerAttr(contract.blockSize),
      b.getI32IntegerAttr(contract.dynamicSharedBytes), stream, args,
      contract.persistent ? b.getUnitAttr() : UnitAttr(),
      contract.overlapsPredecessor ? b.getUnitAttr() : UnitAttr()));
}

SmallVector<Value> HostEmitter::bufferPtrs(ValueRange tensors) {
  return llvm::map_to_vector(tensors,
                             [&](Value v) { return buffers.lookup(v).ptr; });
}

LogicalResult HostEmitter::checkSupported() {
  auto checkType = [&](Type type, Location where) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !getElementTypeKind(tensor.getElementType()) ||
        tensor.getRank() < 1 || tensor.getRank() > 2)
      return emitError(where)
             << type << " is not a 1-D or 2-D tensor of f32, bf16 or f16";
    // The fusion ops' verifiers refuse empty matrices; an empty argument
    // or result leaves a kernel no work to divide among its threads.
    if (llvm::is_contained(tensor.getShape(), 0))
      return emitError(where) << type
                              << " has a zero-sized dimension; the GPU "
                                 "kernels take no empty tensors";
    for (int64_t dim = 1; dim < tensor.getRank(); ++dim)
      if (tensor.isDynamicDim(dim))
        return emitError(where)
               << "only the row dimension of " << type << " may be dynamic";
    // The kernels index a buffer with 64-bit arithmetic: a static part
    // larger than any GPU's memory is refused before it can overflow.
    int64_t bytes = elementBytes(tensor.getElementType());
    for (int64_t dim : tensor.getShape())
      if (!ShapedType::isDynamic(dim) &&
          (llvm::MulOverflow(bytes, dim, bytes) || bytes > kMaxBufferBytes))
        return emitError(where) << type << " is larger than any GPU's memory";
    return success();
  };
  for (Type type : func.getArgumentTypes())
    if (failed(checkType(type, func.getLoc())))
      return failure();
  for (Type type : func.getResultTypes())
    if (failed(checkType(type, func.getLoc())))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    // Ops nested in a fusion op (an epilogue, an elementwise body) are its
    // scalar function, which the op's own verifier restricts.
    if (op == func || op->getParentOp() != func)
      return WalkResult::advance();
    if (auto fused = dyn_cast<FusedLinearOp>(op)) {
      if (getConfig(fused))
        return WalkResult::advance();
      fused.emitOpError("has no #fusion.gemm_config (run "
                        "--fusion-select-gemm-config)");
      return WalkResult::interrupt();
    }
    if (isa<BatchNormOp, ElementwiseOpInterface, ReduceOp, func::ReturnOp>(op))
      return WalkResult::advance();
    op->emitOpError("cannot be compiled by the GPU backends (run "
                    "--fusion-optimize first; only fused_linear, "
                    "elementwise fusion ops, reduce and batch_norm are "
                    "supported)");
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("must have a single block");
  return success();
}

Value HostEmitter::statisticsChunkRows(Value rows, int64_t columns,
                                       int64_t vectorWidth) {
  // About 256 blocks of statistics (two per SM of an H100, each thread with
  // 8 rows of loads in flight), at least 64 rows each: few chunks keep the
  // partial statistics, and the finalize kernel's merges, small.
  int64_t columnBlocks = (columns / vectorWidth + kBlockSize - 1) / kBlockSize;
  return max(c64(64), ceilDiv(mul(rows, c64(columnBlocks)), 256));
}

void HostEmitter::planBatchNorm(Operation *op) {
  Value result = op->getResult(0);
  Value rows = rowsOf(result);
  int64_t columns = tensorType(result).getDimSize(1);
  // A generated GEMM kernel writes the moments of each block row; the
  // statistics kernel those of its chunks.
  auto fused = dyn_cast<FusedLinearOp>(op);
  GemmConfigAttr config = fused ? getConfig(fused) : GemmConfigAttr();
  BatchNormScratch s;
  s.rowsPerChunk =
      config && config.isGenerated()
          ? c64(config.getBlockM())
          : statisticsChunkRows(rows, columns, shapeOf(result).vectorWidth);
  s.chunks = ceilDiv(rows, s.rowsPerChunk);
  Value partialBytes = mul(mul(s.chunks, c64(columns)), c64(4));
  Value columnBytes = c64(columns * 4);
  s.mean = reserve(partialBytes);
  s.m2 = reserve(partialBytes);
  s.center = reserve(columnBytes);
  s.scale = reserve(columnBytes);
  s.shift = reserve(columnBytes);
  scratch[op] = s;
}

void HostEmitter::emitBatchNorm(Operation *op, Buffer input, Buffer output,
                                MatrixShape shape, ValueRange columns,
                                const ScalarFn &fn, const BatchNormValues &bn,
                                ElementwiseOpInterface after,
                                const ExtraOutputs &extra, bool statistics) {
  const BatchNormScratch &s = scratch.at(op);
  Type f32 = b.getF32Type();
  SmallVector<Type> columnTypes = llvm::map_to_vector(
      columns, [](Value v) { return tensorType(v).getElementType(); });
  SmallVector<Value> columnBuffers = bufferPtrs(columns);
  BatchNormConfigAttr config = bn.config;
  if (config.isTraining() && statistics) {
    Kernel stats = buildKernel([&] {
      return buildColumnStatsKernel(b, loc, kernelName(op, "stats"), shape,
                                    columnTypes, fn);
    });
    SmallVector<Value> operands{input.ptr, s.rowsPerChunk, s.mean, s.m2};
    operands.append(columnBuffers);
    launch(stats, input.rows, operands);
  }

  BatchNormOperands present = bn.present(shape.elementType);
  Kernel finalize = buildKernel([&] {
    return buildBatchNormFinalizeKernel(b, loc, kernelName(op, "finalize"),
                                        shape.columns, config, present);
  });
  SmallVector<Value> operands;
  if (config.isTraining())
    operands = {s.mean, s.m2, s.rowsPerChunk};
  else
    operands = {nullPtr(), nullPtr(), c64(0)};
  appendBatchNormOperands(operands, bn);
  operands.append({s.center, s.scale, s.shift});
  launch(finalize, input.rows, operands);

  SmallVector<Type> normalizeTypes(columnTypes);
  normalizeTypes.append(3, f32);
  unsigned userColumns = columnTypes.size();
  ValueRange afterColumns = after ? after.getColumnOperands() : ValueRange();
  normalizeTypes.append(afterColumns.size(), shape.elementType);
  // The extra outputs' functions read the user's columns alone.
  SmallVector<ScalarFn> extraFns =
      llvm::map_to_vector(extra.fns, [&](const ScalarFn &extraFn) -> ScalarFn {
        return [extraFn, userColumns](OpBuilder &nb, Location nl, Value x,
                                      ValueRange cols) {
          return extraFn(nb, nl, x, cols.take_front(userColumns));
        };
      });
  Kernel normalize = buildKernel([&] {
    return buildElementwiseKernel(
        b, loc, kernelName(op, "normalize"), shape, normalizeTypes,
        [&](OpBuilder &nb, Location nl, Value x, ValueRange cols) -> Value {
          Value value = fn(nb, nl, x, cols.take_front(userColumns));
          Value normalized = applyBatchNormCoefficients(
              nb, nl, value,
              {cols[userColumns], cols[userColumns + 1],
               cols[userColumns + 2]});
          if (!after)
            return normalized;
          return after.buildScalar(nb, nl, normalized,
                                   cols.drop_front(userColumns + 3),
                                   ValueRange());
        },
        /*rowGroups=*/{}, extraFns);
  });
  SmallVector<Value> normalizeOperands{
      input.ptr, after ? buffers.lookup(after->getResult(0)).ptr : output.ptr};
  normalizeOperands.append(columnBuffers);
  normalizeOperands.append({s.center, s.scale, s.shift});
  normalizeOperands.append(bufferPtrs(afterColumns));
  normalizeOperands.append(extra.ptrs);
  launch(normalize, input.rows, normalizeOperands);
}

GemmKernelProblem HostEmitter::getGemmProblem(FusedLinearOp op) {
  RankedTensorType weightType = tensorType(op.getWeight());
  GemmKernelProblem problem;
  problem.elementType = weightType.getElementType();
  problem.n = weightType.getDimSize(0);
  problem.k = weightType.getDimSize(1);
  problem.alpha = op.getAlpha().convertToDouble();
  problem.hasBias = static_cast<bool>(op.getBias());
  problem.columnTypes.assign(op.getEpilogueOperands().size(),
                             problem.elementType);
  problem.rowGroups = rowGroupsOf(op.getEpilogueRows());
  for (auto [i, row] : llvm::enumerate(op.getEpilogueRows()))
    if (row == op.getInput()) {
      problem.inputRowOperand = i;
      break;
    }
  problem.epilogue = epilogueFn(op);
  for (unsigned i = 1; i <= op.getIntermediates().size(); ++i)
    problem.intermediates.push_back(epilogueFn(op, i));
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  problem.statistics = batchNorm && batchNorm.isTraining();
  return problem;
}

SmallVector<Value> HostEmitter::getGemmOperands(FusedLinearOp op,
                                                bool storesOutput,
                                                size_t &outputOperand,
                                                Value output,
                                                ValueRange intermediates) {
  SmallVector<Value> operands{buffers.lookup(op.getInput()).ptr,
                              buffers.lookup(op.getWeight()).ptr};
  if (op.getBias())
    operands.push_back(buffers.lookup(op.getBias()).ptr);
  outputOperand = operands.size();
  if (storesOutput)
    operands.push_back(buffers.lookup(output).ptr);
  operands.append(bufferPtrs(intermediates));
  operands.append(bufferPtrs(op.getEpilogueOperands()));
  operands.append(bufferPtrs(op.getEpilogueRows()));
  return operands;
}

void HostEmitter::emitOutputWritingGemm(FusedLinearOp op,
                                        const GemmPath &path) {
  size_t outputOperand;
  SmallVector<Value> operands = getGemmOperands(
      op, true, outputOperand, op.getResult(), op.getIntermediates());
  launchGemmKernels(op, getGemmProblem(op), path.kernels, operands);
}

void HostEmitter::emitGeneralGemm(FusedLinearOp op, const GemmPath &path,
                                  ElementwiseOpInterface after) {
  GemmKernelProblem problem = getGemmProblem(op);
  auto tiles = tileReductions.find(op.getResult());
  bool reducesTiles = tiles != tileReductions.end();
  if (reducesTiles) {
    problem.storesOutput = tiles->second.writesOutput;
    problem.reductionSpan = tiles->second.span;
    for (const TileReducedStep &step : tiles->second.steps)
      problem.rowReductions.push_back(step.reduction);
  }
  // The general kernel of a batch norm writes the epilogue's output for
  // the normalizing pass: where an intermediate result is that value (the
  // batch norm's input, which a training step saves), it goes there, and
  // the pass reads it from there.
  BatchNormConfigAttr batchNorm = op.getBatchNormAttr();
  Value output = op.getResult();
  SmallVector<Value> intermediates(op.getIntermediates());
  ValueRange yielded = op.getEpilogueYield().getValues();
  for (unsigned i = 1; batchNorm && i < yielded.size(); ++i) {
    if (yielded[i] != yielded[0])
      continue;
    output = op.getIntermediates()[i - 1];
    problem.intermediates.erase(problem.intermediates.begin() + (i - 1));
    intermediates.erase(intermediates.begin() + (i - 1));
    break;
  }
  size_t outputOperand;
  SmallVector<Value> operands = getGemmOperands(
      op, problem.storesOutput, outputOperand, output, intermediates);
  if (problem.statistics) {
    const BatchNormScratch &s = scratch.at(op);
    operands.append({s.mean, s.m2});
  }
  if (reducesTiles)
    operands.append(tiles->second.partials);
  launchGemmKernels(op, problem, path.kernels, operands);
  if (!batchNorm)
    return;
  // The kernel wrote the epilogue's output and its moments: what is left
  // is the finalize kernel and one normalizing pass.
  MatrixShape shape{problem.elementType, problem.n,
                    getVectorWidth(problem.elementType, problem.n)};
  emitBatchNorm(op, buffers.lookup(output), buffers.lookup(op.getResult()),
                shape, ValueRange(), identityFn(), BatchNormValues::of(op),
                after, /*extra=*/{}, /*statistics=*/false);
}

void HostEmitter::emitBatchNormFinishingGemm(FusedLinearOp op,
                                             const GemmPath &path,
                                             ElementwiseOpInterface after) {
  GemmKernelProblem problem = getGemmProblem(op);
  GemmBatchNorm &bn = problem.batchNorm.emplace();
  BatchNormValues values = BatchNormValues::of(op);
  bn.config = values.config;
  bn.operands = values.present(problem.elementType);
  if (after) {
    bn.afterColumnTypes.assign(after.getColumnOperands().size(),
                               problem.elementType);
    bn.after = [after](OpBuilder &nb, Location nl, Value normalized,
                       ValueRange columns) mutable -> Value {
      return after.buildScalar(nb, nl, normalized, columns, ValueRange());
    };
  }
  // The normalized output (or the op's after it) is what the kernel writes.
  Value result = after ? after->getResult(0) : Value(op.getResult());
  size_t outputOperand;
  SmallVector<Value> operands =
      getGemmOperands(op, true, outputOperand, result, op.getIntermediates());
  appendBatchNormOperands(operands, values);
  if (after)
    operands.append(bufferPtrs(after.getColumnOperands()));
  launchGemmKernels(op, problem, path.kernels, operands);
}

void HostEmitter::emitForRows(Value rows, ArrayRef<int64_t> maxRows,
                              function_ref<void(unsigned)> emitCase) {
  if (maxRows.size() == 1)
    return emitCase(0);
  Block *join = createJoinBlock();
  for (unsigned i = 0; i + 1 < maxRows.size(); ++i) {
    Block *larger = branchOnRows(rows, maxRows[i]);
    emitCase(i);
    LLVM::BrOp::create(b, loc, ValueRange{}, join);
    b.setInsertionPointToStart(larger);
  }
  emitCase(maxRows.size() - 1);
  LLVM::BrOp::create(b, loc, ValueRange{}, join);
  b.setInsertionPointToStart(join);
}

Block *HostEmitter::branchOnRows(Value rows, int64_t maxRows) {
  Value fits = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ule, rows,
                                    c64(maxRows));
  Block *test = b.getBlock();
  Block *taken = b.createBlock(test->getParent());
  Block *larger = b.createBlock(test->getParent());
  b.setInsertionPointToEnd(test);
  LLVM::CondBrOp::create(b, loc, fits, taken, ValueRange{}, larger,
                         ValueRange{});
  b.setInsertionPointToStart(taken);
  return larger;
}

void HostEmitter::launchGemmKernels(FusedLinearOp op, GemmKernelProblem problem,
                                    ArrayRef<GemmKernelCase> kernels,
                                    ArrayRef<Value> operands) {
  Value rows = buffers.lookup(op.getInput()).rows;
  emitForRows(rows, maxRowsOf(kernels), [&](unsigned i) {
    problem.config = kernels[i].config;
    launch(buildGemmKernel(op, problem, kernels[i].kind), rows, operands);
  });
}

Kernel HostEmitter::buildGemmKernel(FusedLinearOp op,
                                    const GemmKernelProblem &problem,
                                    StringRef kind) {
  return buildKernel([&] {
    std::string name = kernelName(op, kind);
    return problem.config.isWgmma()
               ? buildWgmmaGemmKernel(b, loc, name, problem)
               : buildTiledGemmKernel(b, loc, name, problem);
  });
}

void HostEmitter::emitFusedLinear(FusedLinearOp op,
                                  ElementwiseOpInterface after) {
  SmallVector<GemmPath> paths = planGemmPaths(op);
  emitForRows(buffers.lookup(op.getInput()).rows, maxRowsOf(paths),
              [&](unsigned i) {
                switch (paths[i].kind) {
                case GemmPath::Kind::WritesOutput:
                  return emitOutputWritingGemm(op, paths[i]);
                case GemmPath::Kind::FinishesBatchNorm:
                  return emitBatchNormFinishingGemm(op, paths[i], after);
                case GemmPath::Kind::General:
                  return emitGeneralGemm(op, paths[i], after);
                case GemmPath::Kind::Cublas:
                  return emitCublasFusedLinear(op, after);
                }
              });
}

void HostEmitter::emitCublasFusedLinear(FusedLinearOp op,
                                        ElementwiseOpInterface after) {
  Buffer x = buffers.lookup(op.getInput());
  Buffer out = buffers.lookup(op.getResult());
  RankedTensorType weightType = tensorType(op.getWeight());
  Type elementType = weightType.getElementType();
  int64_t n = weightType.getDimSize(0), k = weightType.getDimSize(1);
  Value bias = op.getBias() ? buffers.lookup(op.getBias()).ptr : nullPtr();
  // cuBLASLt's GEMM (alpha x w^T + bias) writes the op's first matrix whose
  // epilogue value that is: an intermediate before the result, which a
  // batch norm normalizes. The epilogue kernels compute the others from it.
  SmallVector<Value> matrices{op.getResult()};
  llvm::append_range(matrices, op.getIntermediates());
  ValueRange yielded = op.getEpilogueYield().getValues();
  Value acc = op.getEpilogueBlock().getArgument(0);
  std::optional<unsigned> gemmMatrix;
  for (unsigned i = 1; i < matrices.size() && !gemmMatrix; ++i)
    if (yielded[i] == acc)
      gemmMatrix = i;
  if (!gemmMatrix && yielded[0] == acc)
    gemmMatrix = 0;
  Buffer gemmOut = gemmMatrix ? buffers.lookup(matrices[*gemmMatrix]) : out;
  MLIRContext *context = b.getContext();
  checkStatus(fusion_rt::GemmOp::create(
      b, loc, i32Type,
      ElementTypeAttr::get(context, *getElementTypeKind(elementType)),
      PrecisionAttr::get(context, op.getComputePrecision()), stream, x.ptr,
      buffers.lookup(op.getWeight()).ptr, bias, gemmOut.ptr, x.rows,
      b.getI64IntegerAttr(n), b.getI64IntegerAttr(k),
      b.getF32FloatAttr(op.getAlpha().convertToDouble())));

  ExtraOutputs extra;
  for (unsigned i = 1; i < matrices.size(); ++i) {
    if (gemmMatrix == i)
      continue;
    extra.fns.push_back(epilogueFn(op, i));
    extra.ptrs.push_back(buffers.lookup(matrices[i]).ptr);
  }
  MatrixShape shape{elementType, n, getVectorWidth(elementType, n)};
  ScalarFn fn = epilogueFn(op);
  if (op.getBatchNormAttr()) {
    emitBatchNorm(op, gemmOut, out, shape, op.getEpilogueOperands(), fn,
                  BatchNormValues::of(op), after, extra);
    return;
  }
  // The kernel's first output: the result's, unless the GEMM wrote it.
  Value first = out.ptr;
  if (gemmMatrix == 0u) {
    if (extra.fns.empty())
      return;
    fn = extra.fns.front();
    first = extra.ptrs.front();
    extra.fns.erase(extra.fns.begin());
    extra.ptrs.erase(extra.ptrs.begin());
  }
  SmallVector<Type> columnTypes(op.getEpilogueOperands().size(), elementType);
  Kernel epilogue = buildKernel([&] {
    return buildElementwiseKernel(b, loc, kernelName(op, "epilogue"), shape,
                                  columnTypes, fn,
                                  rowGroupsOf(op.getEpilogueRows()), extra.fns);
  });
  SmallVector<Value> operands{gemmOut.ptr, first};
  operands.append(bufferPtrs(op.getEpilogueOperands()));
  operands.append(bufferPtrs(op.getEpilogueRows()));
  operands.append(extra.ptrs);
  launch(epilogue, out.rows, operands);
}

void HostEmitter::emitElementwise(ElementwiseOpInterface op) {
  Value input = op.getMatrixInput();
  Buffer in = buffers.lookup(input), out = buffers.lookup(op->getResult(0));
  MatrixShape shape = shapeOf(input);
  SmallVector<Type> columnTypes(op.getColumnOperands().size(),
                                shape.elementType);
  size_t columnCount = columnTypes.size();
  Kernel kernel = buildKernel([&] {
    return buildElementwiseKernel(
        b, loc, kernelName(op, "elementwise"), shape, columnTypes,
        [op, columnCount](OpBuilder &nb, Location nl, Value x,
                          ValueRange operands) {
          ElementwiseOpInterface elementwise = op;
          return elementwise.buildScalar(nb, nl, x,
                                         operands.take_front(columnCount),
                                         operands.drop_front(columnCount));
        },
        rowGroupsOf(op.getRowOperands()));
  });
  SmallVector<Value> operands{in.ptr, out.ptr};
  operands.append(bufferPtrs(op.getColumnOperands()));
  operands.append(bufferPtrs(op.getRowOperands()));
  launch(kernel, in.rows, operands);
}

Block::iterator HostEmitter::emitRowProgram(ReduceOp first,
                                            Block::iterator end) {
  RowProgramOps ops = collectRowProgram(first, end);
  auto found = tileReductions.find(ops.input);
  const TileReductions *tiles =
      found != tileReductions.end() ? &found->second : nullptr;
  // Batches below the tile reductions' min_rows reduce the output their
  // GEMM wrote (planGemmPaths' WritesOutput path).
  SmallVector<RowProgramCase> cases =
      planRowProgramCases(tiles ? tiles->minRows : 1);
  emitForRows(rowsOf(ops.input), maxRowsOf(cases), [&](unsigned i) {
    launchRowProgram(first, ops, cases[i].mergesTiles ? tiles : nullptr,
                     cases[i].kind);
  });
  return ops.end;
}

void HostEmitter::launchRowProgram(ReduceOp first, const RowProgramOps &ops,
                                   const TileReductions *tiles,
                                   StringRef kind) {
  Value input = ops.input;
  bool mergesTiles = tiles != nullptr;
  // Whether the program reads its input matrix: not when a GEMM reduced
  // its tiles for all the program needs.
  bool readsInput = !mergesTiles || tiles->writesOutput;

  // The program's rows are the groups of the input's rows.
  RowProgram program;
  program.groups = first.getGroups();
  RankedTensorType inputType = tensorType(input);
  Type elementType = inputType.getElementType();
  int64_t groupColumns = inputType.getDimSize(1) / program.groups;
  program.resultType = elementType;
  program.shape = {elementType, groupColumns,
                   getVectorWidth(elementType, groupColumns)};
  // A merge's reductions read the [M, partials] f32 partial matrices;
  // without the input, the partials set the threads per row.
  if (mergesTiles) {
    int64_t partialsPerGroup = tiles->partialColumns / program.groups;
    MatrixShape partialShape{b.getF32Type(), partialsPerGroup,
                             getVectorWidth(b.getF32Type(), partialsPerGroup)};
    if (readsInput)
      program.sourceShape = partialShape;
    else
      program.shape = partialShape;
  }
  llvm::MapVector<Value, unsigned> pointers;
  auto pointerOf = [&](Value tensor) {
    return pointers.insert({tensor, pointers.size()}).first->second;
  };
  auto operandsOf = [&](ValueRange columns, ValueRange rows) {
    SmallVector<RowOperand> operands;
    for (Value column : columns)
      operands.push_back({RowOperand::Kind::Column, pointerOf(column),
                          tensorType(column).getElementType()});
    for (Value row : rows) {
      if (ops.isRowValue(row)) {
        operands.push_back({RowOperand::Kind::StepValue,
                            ops.steps.lookup(row.getDefiningOp()), Type()});
        continue;
      }
      RankedTensorType type = tensorType(row);
      operands.push_back({RowOperand::Kind::Rows, pointerOf(row),
                          type.getElementType(), type.getDimSize(1)});
    }
    return operands;
  };
  // The partials of the tile reductions, in order.
  unsigned nextPartial = 0;
  const TileReducedStep *nextTileStep =
      mergesTiles ? tiles->steps.begin() : nullptr;
  auto partialPointer = [&] {
    Value partial = tiles->partials[nextPartial++];
    return pointers.insert({partial, pointers.size()}).first->second;
  };
  for (auto [op, index] : ops.steps) {
    RowStep step;
    if (isa<ReduceOp>(op) && mergesTiles) {
      const TileReducedStep &tileStep = *nextTileStep++;
      SmallVector<unsigned> partials;
      for (unsigned i = 0; i < tileStep.reduction.partialCount(); ++i)
        partials.push_back(partialPointer());
      step = mergeTileReductionStep(tileStep, partials, tiles->partialColumns);
    } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
      step.kind = RowStep::Kind::Reduce;
      step.reduction = reduce.getKind();
      step.operands =
          operandsOf(reduce.getColumnOperands(), reduce.getRowOperands());
      size_t columnCount = reduce.getColumnOperands().size();
      step.fn = [reduce, columnCount](OpBuilder &nb, Location, Value x,
                                      ValueRange operands) {
        ReduceOp op = reduce;
        return op.buildMap(nb, x, operands.take_front(columnCount),
                           operands.drop_front(columnCount));
      };
    } else {
      auto elementwise = cast<ElementwiseOpInterface>(op);
      Value from = elementwise.getMatrixInput();
      step.kind = from == input ? RowStep::Kind::Map : RowStep::Kind::Scalar;
      if (step.kind == RowStep::Kind::Scalar)
        step.input = ops.steps.lookup(from.getDefiningOp());
      step.operands = operandsOf(elementwise.getColumnOperands(),
                                 elementwise.getRowOperands());
      size_t columnCount = elementwise.getColumnOperands().size();
      step.fn = [elementwise, columnCount](OpBuilder &nb, Location nl, Value x,
                                           ValueRange operands) {
        ElementwiseOpInterface op = elementwise;
        return op.buildScalar(nb, nl, x, operands.take_front(columnCount),
                              operands.drop_front(columnCount));
      };
    }
    // Stored if anything after the program reads it (or it is an [M, N]
    // output, which nothing in the program reads).
    Value result = op->getResult(0);
    if (step.kind == RowStep::Kind::Map ||
        llvm::any_of(result.getUsers(),
                     [&](Operation *user) { return !ops.steps.count(user); }))
      step.output = pointerOf(result);
    program.steps.push_back(std::move(step));
  }
  program.pointers = pointers.size();

  Kernel kernel = buildKernel([&] {
    return buildRowProgramKernel(b, loc, kernelName(first, kind), program);
  });
  // The reductions of a merge name their partial matrices; without the
  // input, its place holds the first.
  Value in = readsInput ? buffers.lookup(input).ptr : tiles->partials.front();
  SmallVector<Value> operands{in};
  for (auto &entry : pointers)
    operands.push_back(isa<LLVM::LLVMPointerType>(entry.first.getType())
                           ? entry.first
                           : buffers.lookup(entry.first).ptr);
  launch(kernel, rowsOf(input), operands);
}

LogicalResult HostEmitter::planGemmTileReductions(FusedLinearOp op) {
  LoweringAttr lowering = LoweringAttr::of(op);
  TileReductionsAttr attr =
      lowering ? lowering.getTileReductions() : TileReductionsAttr();
  if (!attr)
    return success();
  int64_t blockN = getConfig(op).getBlockN();
  if (!findGemmTileReductions(op, blockN))
    return op.emitOpError("has tile reductions, but its output is not read by "
                          "one row program whose reductions its tiles compute");
  std::optional<GemmTileReductions> found =
      findGemmTileReductions(op, blockN, attr.getSpan());
  if (!found)
    return op.emitOpError("has tile reductions over spans of ")
           << attr.getSpan() << " columns, which tiles " << blockN
           << " wide do not reduce: spans must divide the tiles and the "
              "reduction's groups";
  TileReductions tiles;
  for (const TileReduction &reduction : found->plan.reductions)
    tiles.steps.push_back(lowerTileReduction(reduction));
  tiles.writesOutput = found->plan.readsMatrix;
  tiles.span = found->span;
  tiles.minRows = attr.getMinRows();
  tiles.partialColumns =
      countPartialColumns(tensorType(op.getResult()).getDimSize(1), tiles.span);
  Value bytes = mul(rowsOf(op.getResult()), c64(tiles.partialColumns * 4));
  for (const TileReducedStep &step : tiles.steps)
    for (unsigned i = 0; i < step.reduction.partialCount(); ++i)
      tiles.partials.push_back(reserve(bytes));
  tileReductions[op.getResult()] = std::move(tiles);
  return success();
}

void HostEmitter::createHostFunction() {
  bool dynamic = llvm::any_of(
      llvm::concat<const Type>(func.getArgumentTypes(), func.getResultTypes()),
      [](Type t) { return !cast<RankedTensorType>(t).hasStaticShape(); });
  SmallVector<Type> params{ptrType};
  if (dynamic)
    params.push_back(i64Type);
  params.append(func.getNumArguments() + func.getNumResults(), ptrType);
  func.setName("__fusion_lowering_" + entryName);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(func);
    host = LLVM::LLVMFuncOp::create(
        b, loc, entryName, LLVM::LLVMFunctionType::get(i32Type, params));
  }
  Block *entry = host.addEntryBlock(b);
  failureBlock = new Block();
  host.getBody().push_back(failureBlock);
  Value failureStatus = failureBlock->addArgument(i32Type, loc);

  b.setInsertionPointToStart(entry);
  stream = entry->getArgument(0);
  batch = dynamic ? entry->getArgument(1) : Value();
  workspaceSlot = LLVM::AllocaOp::create(b, loc, ptrType, ptrType, c64(1), 8);
  LLVM::StoreOp::create(b, loc, nullPtr(), workspaceSlot);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(failureBlock);
  Value pending = LLVM::LoadOp::create(b, loc, ptrType, workspaceSlot);
  fusion_rt::FreeOp::create(b, loc, i32Type, pending, stream);
  LLVM::ReturnOp::create(b, loc, failureStatus);
}

SmallVector<Value> HostEmitter::checkArguments() {
  Block &body = func.getBody().front();
  bool needsTwoRows = llvm::any_of(body, [](Operation &op) {
    BatchNormConfigAttr config;
    if (auto bn = dyn_cast<BatchNormOp>(op))
      config = bn.getConfig();
    else if (auto fused = dyn_cast<FusedLinearOp>(op))
      config = fused.getBatchNormAttr();
    return config && config.isTraining();
  });
  if (batch)
    checkStatus(fusion_rt::CheckSizeOp::create(b, loc, i32Type, "batch", batch,
                                               needsTwoRows ? 2 : 1));
  ValueRange pointers = host.getArguments().drop_front(batch ? 2 : 1);
  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    Value ptr = pointers[index];
    buffers[arg] = {ptr, rowsOf(arg)};
    checkStatus(fusion_rt::CheckBufferOp::create(
        b, loc, i32Type, ("input #" + Twine(index)).str(), ptr,
        bytesOf(arg, rowsOf(arg)), stream));
  }
  SmallVector<Value> outputs;
  for (auto [index, result] :
       llvm::enumerate(body.getTerminator()->getOperands())) {
    Value ptr = pointers[func.getNumArguments() + index];
    outputs.push_back(ptr);
    checkStatus(fusion_rt::CheckBufferOp::create(
        b, loc, i32Type, ("output #" + Twine(index)).str(), ptr,
        bytesOf(result, rowsOf(result)), stream));
    // An op result returned here is computed straight into the output.
    if (!isa<BlockArgument>(result) && !buffers.count(result))
      buffers[result] = {ptr, rowsOf(result)};
  }
  return outputs;
}

LogicalResult HostEmitter::planWorkspace() {
  workspaceBytes = c64(0);
  unsigned index = 0;
  SmallVector<std::pair<Value, Value>> intermediates; // (tensor, offset)
  for (Operation &op : func.getBody().front().without_terminator()) {
    opIndex[&op] = index++;
    auto fused = dyn_cast<FusedLinearOp>(op);
    if (fused && failed(planGemmTileReductions(fused)))
      return failure();
    for (Value result : op.getResults())
      if (!buffers.count(result))
        if (std::optional<Value> bytes = getWorkspaceBytes(result))
          intermediates.push_back({result, reserve(*bytes)});
    if (isa<BatchNormOp>(op) || (fused && fused.getBatchNormAttr()))
      planBatchNorm(&op);
  }
  checkStatus(fusion_rt::AllocOp::create(b, loc, i32Type, workspaceBytes,
                                         workspaceSlot, stream));
  workspace = LLVM::LoadOp::create(b, loc, ptrType, workspaceSlot);
  for (auto [tensor, offset] : intermediates)
    buffers[tensor] = {offsetPtr(workspace, offset), rowsOf(tensor)};
  for (auto &entry : tileReductions)
    for (Value &partial : entry.second.partials)
      partial = offsetPtr(workspace, partial);
  for (auto &entry : scratch)
    for (Value *slice :
         {&entry.second.mean, &entry.second.m2, &entry.second.center,
          &entry.second.scale, &entry.second.shift})
      *slice = offsetPtr(workspace, *slice);
  return success();
}

std::optional<Value> HostEmitter::getWorkspaceBytes(Value result) {
  Value rows = rowsOf(result);
  Value bytes = bytesOf(result, rows);
  // An output that tile reductions leave unwritten, but for the batches
  // below their min_rows.
  auto tiles = tileReductions.find(result);
  if (tiles == tileReductions.end() || tiles->second.writesOutput)
    return bytes;
  if (tiles->second.minRows == 1)
    return std::nullopt;
  Value unreduced = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, rows,
                                         c64(tiles->second.minRows));
  return LLVM::SelectOp::create(b, loc, unreduced, bytes, c64(0)).getResult();
}

void HostEmitter::emitBody() {
  Block &body = func.getBody().front();
  for (auto it = body.begin(), end = body.without_terminator().end();
       it != end;) {
    Operation &op = *it++;
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      it = emitRowProgram(reduce, end);
      continue;
    }
    // A batch norm's normalizing pass computes the op after it too.
    ElementwiseOpInterface after;
    auto fused = dyn_cast<FusedLinearOp>(op);
    if (isa<BatchNormOp>(op) || (fused && fused.getBatchNormAttr()))
      if ((after = getNormalizedEpilogue(&op)))
        ++it;
    if (fused) {
      emitFusedLinear(fused, after);
    } else if (auto bn = dyn_cast<BatchNormOp>(op)) {
      MatrixShape shape = shapeOf(bn.getInput());
      emitBatchNorm(&op, buffers.lookup(bn.getInput()),
                    buffers.lookup(bn.getResult()), shape, ValueRange(),
                    identityFn(), BatchNormValues::of(bn), after);
    } else {
      emitElementwise(cast<ElementwiseOpInterface>(op));
    }
  }
}

LogicalResult HostEmitter::emit() {
  if (failed(checkSupported()))
    return failure();
  createHostFunction();
  SmallVector<Value> outputs = checkArguments();
  if (failed(planWorkspace()))
    return failure();
  emitBody();
  // Results not computed in place: arguments returned as they are, or a
  // value returned twice.
  Operation *returnOp = func.getBody().front().getTerminator();
  for (auto [index, result] : llvm::enumerate(returnOp->getOperands())) {
    Buffer source = buffers.lookup(result);
    if (source.ptr != outputs[index])
      checkStatus(fusion_rt::CopyOp::create(
          b, loc, i32Type, bytesOf(result, rowsOf(result)), source.ptr,
          outputs[index], stream));
  }
  // Cleared first: should the free fail, the failure path frees nothing.
  LLVM::StoreOp::create(b, loc, nullPtr(), workspaceSlot);
  checkStatus(fusion_rt::FreeOp::create(b, loc, i32Type, workspace, stream));
  LLVM::ReturnOp::create(b, loc, c32(0));
  return success();
}

struct ConvertFusionToGPUPass
    : fusion::impl::ConvertFusionToGPUBase<ConvertFusionToGPUPass> {
  using ConvertFusionToGPUBase::ConvertFusionToGPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries = getEntryPoints(module);
    if (entries.empty()) {
      module.emitError("no public function to compile");
      return signalPassFailure();
    }
    TargetAttr chip = TargetAttr::lookup(module);
    if (!chip) {
      module.emitError("the module has no #fusion.target (run "
                       "--fusion-select-gemm-config)");
      return signalPassFailure();
    }
    // Hand-written or overridden configs are refused here, not miscompiled.
    if (failed(verifyLowering(module)))
      return signalPassFailure();

    OpBuilder builder(module.getContext());
    builder.setInsertionPointToEnd(module.getBody());
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    builder.getUnitAttr());
    // wgmma and setmaxnreg exist only in the arch-specific sm_90a target
    // (PTX 8.0), whose code runs on sm_90 parts alone.
    bool archSpecific = false;
    module.walk([&](FusedLinearOp op) {
      if (GemmConfigAttr config = getConfig(op); config && config.isWgmma())
        archSpecific = true;
      for (BatchGemmConfigAttr entry : batchGemmConfigsOf(op))
        archSpecific |= entry.getConfig().isWgmma();
    });
    std::string chipName = stringifyChip(chip.getChip()).str();
    auto target = NVVM::NVVMTargetAttr::get(
        module.getContext(), /*O=*/3, /*triple=*/"nvptx64-nvidia-cuda",
        archSpecific ? chipName + "a" : chipName, archSpecific ? "+ptx80" : "");
    auto kernels =
        gpu::GPUModuleOp::create(builder, module.getLoc(), kKernelModuleName,
                                 builder.getArrayAttr({target}));
    // The binary's bytes come later; the host code only takes its address.
    LLVM::GlobalOp::create(builder, module.getLoc(), builder.getI8Type(),
                           /*isConstant=*/true, LLVM::Linkage::External,
                           kKernelImageName, Attribute());

    for (func::FuncOp func : entries) {
      HostEmitter emitter(func, kernels, builder);
      if (failed(emitter.emit()))
        return signalPassFailure();
      func.erase();
    }
    // What the host launches, against the chip.
    if (failed(verifyLowering(module)))
      signalPassFailure();
  }
};

} // namespace
