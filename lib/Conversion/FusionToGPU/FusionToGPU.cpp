//===- FusionToGPU.cpp - host code of the GPU backends --------------------===//
//
// Lowers each function of fusion ops to an llvm.func that calls the fusion
// runtime (argument checks, cuBLASLt GEMMs, kernel launches) and builds the
// kernels it launches (epilogue kernels, tiled GEMM kernels) in gpu.module
// @fusion_kernels.
//
//===----------------------------------------------------------------------===//

#include "fusion/Conversion/FusionToGPU/FusionToGPU.h"
#include "fusion/Dialect/Fusion/IR/EntryPoints.h"

#include "fusion/Codegen/Config/Chips.h"
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

/// The op's epilogue batch norm, if any.
static EpilogueBatchNormAttr epilogueBatchNormOf(FusedLinearOp op) {
  LoweringAttr lowering = LoweringAttr::of(op);
  return lowering ? lowering.getEpilogueBatchNorm() : EpilogueBatchNormAttr();
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
  /// Whether one of its statistics results is among `values`.
  bool returnsAnyOf(ValueRange values) const {
    return llvm::any_of(values, [&](Value value) {
      return llvm::is_contained(updatedRunningStats, value) ||
             llvm::is_contained(batchStats, value);
    });
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
  HostEmitter(func::FuncOp func, gpu::GPUModuleOp kernels,
              OpBuilder &builder)
      : func(func), entryName(func.getName().str()), kernels(kernels),
        b(builder), loc(func.getLoc()),
        ptrType(LLVM::LLVMPointerType::get(builder.getContext())),
        i64Type(builder.getI64Type()), i32Type(builder.getI32Type()) {}

  LogicalResult emit();

private:
  // Functions of the runtime, declared on first use.
  LLVM::LLVMFuncOp runtimeFn(StringRef name, Type result, ArrayRef<Type> args);
  Value call(StringRef name, ArrayRef<Value> args);
  /// Calls a runtime function returning a status; on failure, frees the
  /// workspace and returns the status.
  void checked(StringRef name, ArrayRef<Value> args) {
    checkStatus(call(name, args));
  }
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
  Value string(StringRef text);

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
  /// Plans the scratch space of a batch norm whose statistics come in
  /// chunks of `rowsPerChunk` rows.
  void planBatchNorm(Operation *op, Value rows, int64_t columns,
                     Value rowsPerChunk);
  /// The statistics kernels' chunk of rows for a batch norm of `columns`.
  Value statisticsChunkRows(Value rows, int64_t columns, int64_t vectorWidth);
  /// `after` (or null): an elementwise op of the batch-norm stage's output
  /// computed by its normalizing pass.
  void emitFusedLinear(FusedLinearOp op, ElementwiseOpInterface after);
  /// `op` through a generated GEMM kernel: that of the first of
  /// `batchConfigs` the batch fits, else `config`'s.
  void emitTiledFusedLinear(FusedLinearOp op, GemmConfigAttr config,
                            ArrayRef<BatchGemmConfigAttr> batchConfigs,
                            ElementwiseOpInterface after);
  /// `op` through cuBLASLt's GEMM and the epilogue's kernels.
  void emitCublasFusedLinear(FusedLinearOp op, ElementwiseOpInterface after);
  /// Branches on `rows` <= `maxRows`: the insertion point moves to the
  /// block those batches take; returns the block of larger ones.
  Block *branchOnRows(Value rows, int64_t maxRows);
  /// A block at the function's end where branches join; the insertion
  /// point stays.
  Block *createJoinBlock() {
    OpBuilder::InsertionGuard guard(b);
    return b.createBlock(b.getBlock()->getParent());
  }
  /// The generated GEMM kernel of `problem` (its config's backend).
  Kernel buildGemmKernel(FusedLinearOp op, const GemmKernelProblem &problem,
                         StringRef kind);
  /// Launches `problem`'s kernel of the first of `entries` whose max_rows
  /// the batch `rows` fits (named `entryKind`_rows_le_N), else of `config`
  /// (named `kind`).
  void launchGemmForRows(FusedLinearOp op, GemmKernelProblem problem,
                         Value rows, ArrayRef<BatchGemmConfigAttr> entries,
                         GemmConfigAttr config, StringRef kind,
                         ArrayRef<Value> operands,
                         StringRef entryKind = "gemm");
  /// The problem of `op`'s GEMM kernel that finishes its training batch
  /// norm (and `after`, if any) for batches up to `epilogueBatchNorm`'s
  /// rows, from the `problem` of its general kernel; none where `after`
  /// reads the batch norm's statistics or the kernel would overflow the
  /// chip's shared memory (the general kernels then run for every batch).
  std::optional<GemmKernelProblem> getBatchNormFinishingProblem(
      FusedLinearOp op, EpilogueBatchNormAttr epilogueBatchNorm,
      GemmKernelProblem problem, ElementwiseOpInterface after);
  /// Its launch, through the finishing kernel of the batch's config:
  /// `operands` are those of the op's general kernel up to its row
  /// operands, the output at `outputOperand`.
  void emitBatchNormFinishingGemm(FusedLinearOp op,
                                  const GemmKernelProblem &problem,
                                  ElementwiseOpInterface after,
                                  SmallVector<Value> operands,
                                  size_t outputOperand);
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
  /// The elementwise op at `next` if the normalizing pass of the batch norm
  /// `op` (a batch_norm or a fused_linear with a batch-norm stage) can
  /// compute it: it reads only the normalized output, which nothing else
  /// reads. Advances `next` past it.
  ElementwiseOpInterface takeNormalizedEpilogue(Operation *op,
                                                Block::iterator &next,
                                                Block::iterator end);
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
  llvm::StringMap<LLVM::GlobalOp> strings;
  Value workspaceBytes;
};

LLVM::LLVMFuncOp HostEmitter::runtimeFn(StringRef name, Type result,
                                        ArrayRef<Type> args) {
  auto module = func->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(b, loc, name,
                                  LLVM::LLVMFunctionType::get(result, args));
}

Value HostEmitter::call(StringRef name, ArrayRef<Value> args) {
  SmallVector<Type> types;
  for (Value arg : args)
    types.push_back(arg.getType());
  LLVM::LLVMFuncOp callee = runtimeFn(name, i32Type, types);
  return LLVM::CallOp::create(b, loc, callee, args).getResult();
}

void HostEmitter::checkStatus(Value status) {
  Value bad =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, status, c32(0));
  Block *next = b.createBlock(b.getBlock()->getParent());
  b.setInsertionPointToEnd(bad.getParentBlock());
  LLVM::CondBrOp::create(b, loc, bad, failureBlock, ValueRange{status}, next,
                         ValueRange{});
  b.setInsertionPointToStart(next);
}

Value HostEmitter::string(StringRef text) {
  auto module = func->getParentOfType<ModuleOp>();
  LLVM::GlobalOp &global = strings[text];
  if (!global) {
    std::string name =
        ("__fusion_str_" + entryName + "_" + Twine(strings.size())).str();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    std::string data = text.str();
    data.push_back('\0');
    global = LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), data.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal, name,
        b.getStringAttr(data));
  }
  return LLVM::AddressOfOp::create(b, loc, global);
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

void HostEmitter::launch(Kernel kernel, Value rows,
                         ArrayRef<Value> operands) {
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
      int32_t type =
          static_cast<int32_t>(*getElementTypeKind(argument.elementType));
      Value elementType = c32(type);
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
      checked("__fusion_rt_tensor_map",
              {map, operands[argument.operand], elementType, rowCount,
               columnCount, boxRows, c32(argument.box[1])});
      args.push_back(LLVM::LoadOp::create(b, loc, mapType, map));
      break;
    }
    }
  }
  auto symbol = SymbolRefAttr::get(
      b.getStringAttr(kKernelModuleName),
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
      return emitError(where) << type
                              << " is not a 1-D or 2-D tensor of f32, bf16 or f16";
    // The fusion ops' verifiers refuse empty matrices; an empty argument
    // or result leaves a kernel no work to divide among its threads.
    if (llvm::is_contained(tensor.getShape(), 0))
      return emitError(where) << type
                              << " has a zero-sized dimension; the GPU "
                                 "kernels take no empty tensors";
    for (int64_t dim = 1; dim < tensor.getRank(); ++dim)
      if (tensor.isDynamicDim(dim))
        return emitError(where)
               << "only the row dimension of " << type
               << " may be dynamic";
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

void HostEmitter::planBatchNorm(Operation *op, Value rows, int64_t columns,
                                Value rowsPerChunk) {
  BatchNormScratch s;
  s.rowsPerChunk = rowsPerChunk;
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
  ValueRange afterColumns =
      after ? after.getColumnOperands() : ValueRange();
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

ElementwiseOpInterface
HostEmitter::takeNormalizedEpilogue(Operation *op, Block::iterator &next,
                                    Block::iterator end) {
  if (next == end)
    return {};
  auto after = dyn_cast<ElementwiseOpInterface>(*next);
  Value normalized = op->getResult(0);
  if (!after || after.getMatrixInput() != normalized ||
      !after.getRowOperands().empty() || !normalized.hasOneUse())
    return {};
  ++next;
  return after;
}

void HostEmitter::emitTiledFusedLinear(
    FusedLinearOp op, GemmConfigAttr config,
    ArrayRef<BatchGemmConfigAttr> batchConfigs, ElementwiseOpInterface after) {
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
  Buffer x = buffers.lookup(op.getInput());
  // The kernel's operands up to its row operands: the epilogue's output
  // stored (at `outputOperand`) to `output` where `storesOutput`, then the
  // `intermediates` (those of the problem).
  auto gemmOperands = [&](bool storesOutput, size_t &outputOperand,
                          Value output, ValueRange intermediates) {
    SmallVector<Value> operands{x.ptr, buffers.lookup(op.getWeight()).ptr};
    if (op.getBias())
      operands.push_back(buffers.lookup(op.getBias()).ptr);
    outputOperand = operands.size();
    if (storesOutput)
      operands.push_back(buffers.lookup(output).ptr);
    operands.append(bufferPtrs(intermediates));
    operands.append(bufferPtrs(op.getEpilogueOperands()));
    operands.append(bufferPtrs(op.getEpilogueRows()));
    return operands;
  };
  auto tiles = tileReductions.find(op.getResult());
  bool reducesTiles = tiles != tileReductions.end();
  // Batches below the tile reductions' min_rows write the output (their
  // batch configs', without tile reductions), which the row program then
  // reduces (emitRowProgram branches alike).
  Block *reduced = nullptr;
  if (reducesTiles && tiles->second.minRows > 1) {
    int64_t unreducedRows = tiles->second.minRows - 1;
    auto unreduced =
        llvm::partition_point(batchConfigs, [&](BatchGemmConfigAttr entry) {
          return entry.getMaxRows() < unreducedRows;
        });
    size_t outputOperand;
    SmallVector<Value> operands = gemmOperands(
        true, outputOperand, op.getResult(), op.getIntermediates());
    Block *larger = branchOnRows(x.rows, unreducedRows);
    reduced = createJoinBlock();
    launchGemmForRows(op, problem, x.rows,
                      ArrayRef(batchConfigs.begin(), unreduced),
                      unreduced->getConfig(),
                      ("gemm_rows_le_" + Twine(unreducedRows)).str(), operands);
    LLVM::BrOp::create(b, loc, ValueRange{}, reduced);
    b.setInsertionPointToStart(larger);
    batchConfigs = ArrayRef(std::next(unreduced), batchConfigs.end());
  }
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
  GemmKernelProblem general = problem;
  Value output = op.getResult();
  SmallVector<Value> generalIntermediates(op.getIntermediates());
  ValueRange yielded = op.getEpilogueYield().getValues();
  for (unsigned i = 1; batchNorm && i < yielded.size(); ++i) {
    if (yielded[i] != yielded[0])
      continue;
    output = op.getIntermediates()[i - 1];
    general.intermediates.erase(general.intermediates.begin() + (i - 1));
    generalIntermediates.erase(generalIntermediates.begin() + (i - 1));
    break;
  }
  // Where the output goes, which a kernel that finishes the batch norm
  // writes to the op after it.
  size_t outputOperand;
  SmallVector<Value> operands = gemmOperands(
      general.storesOutput, outputOperand, output, generalIntermediates);
  // A batch that one block row of tiles holds: the kernel finishes the
  // batch norm (#fusion.epilogue_batch_norm); larger ones take the kernels
  // below.
  Block *done = nullptr;
  EpilogueBatchNormAttr epilogueBatchNorm = epilogueBatchNormOf(op);
  if (std::optional<GemmKernelProblem> finishing =
          epilogueBatchNorm ? getBatchNormFinishingProblem(
                                  op, epilogueBatchNorm, problem, after)
                            : std::nullopt) {
    int64_t maxRows = epilogueBatchNorm.getMaxRows();
    int64_t staticRows = op.getInput().getType().getDimSize(0);
    SmallVector<Value> finishingOperands =
        gemmOperands(problem.storesOutput, outputOperand, op.getResult(),
                     op.getIntermediates());
    if (!ShapedType::isDynamic(staticRows) && staticRows <= maxRows)
      return emitBatchNormFinishingGemm(op, *finishing, after,
                                        finishingOperands, outputOperand);
    Block *larger = branchOnRows(x.rows, maxRows);
    done = createJoinBlock();
    emitBatchNormFinishingGemm(op, *finishing, after, finishingOperands,
                               outputOperand);
    LLVM::BrOp::create(b, loc, ValueRange{}, done);
    b.setInsertionPointToStart(larger);
  }
  if (problem.statistics) {
    const BatchNormScratch &s = scratch.at(op);
    operands.append({s.mean, s.m2});
  }
  if (reducesTiles)
    operands.append(tiles->second.partials);
  // Batches the kernel above finishes never come here.
  if (done)
    batchConfigs =
        ArrayRef(llvm::partition_point(batchConfigs,
                                       [&](BatchGemmConfigAttr entry) {
                                         return entry.getMaxRows() <=
                                                epilogueBatchNorm.getMaxRows();
                                       }),
                 batchConfigs.end());
  launchGemmForRows(op, general, x.rows, batchConfigs, config, "gemm",
                    operands);
  if (batchNorm) {
    // The kernel wrote the epilogue's output and its moments: what is left
    // is the finalize kernel and one normalizing pass.
    MatrixShape shape{problem.elementType, problem.n,
                      getVectorWidth(problem.elementType, problem.n)};
    emitBatchNorm(op, buffers.lookup(output), buffers.lookup(op.getResult()),
                  shape, ValueRange(), identityFn(), BatchNormValues::of(op),
                  after, /*extra=*/{}, /*statistics=*/false);
  }
  for (Block *join : {done, reduced}) {
    if (!join)
      continue;
    LLVM::BrOp::create(b, loc, ValueRange{}, join);
    b.setInsertionPointToStart(join);
  }
}

std::optional<GemmKernelProblem> HostEmitter::getBatchNormFinishingProblem(
    FusedLinearOp op, EpilogueBatchNormAttr epilogueBatchNorm,
    GemmKernelProblem problem, ElementwiseOpInterface after) {
  ValueRange afterColumns = after ? after.getColumnOperands() : ValueRange();
  // The kernel writes the batch norm's statistics after it stages the
  // columns of the op after the norm: one that reads them keeps the three
  // kernels.
  BatchNormValues values = BatchNormValues::of(op);
  if (values.returnsAnyOf(afterColumns))
    return std::nullopt;
  GemmBatchNorm &bn = problem.batchNorm.emplace();
  bn.config = values.config;
  bn.operands = values.present(problem.elementType);
  if (after) {
    bn.afterColumnTypes.assign(afterColumns.size(), problem.elementType);
    bn.after = [after](OpBuilder &nb, Location nl, Value normalized,
                       ValueRange columns) mutable -> Value {
      return after.buildScalar(nb, nl, normalized, columns, ValueRange());
    };
  }
  problem.config = getGemmConfigForRows(getConfig(op), batchGemmConfigsOf(op),
                                        epilogueBatchNorm.getMaxRows());
  // Nor where the after op's columns, which the selection could not count,
  // overflow the chip's shared memory in any kernel that finishes it.
  const ChipInfo &chip = getChipInfo(TargetAttr::lookup(op).getChip());
  GemmKernelProblem entryProblem = problem;
  for (BatchGemmConfigAttr entry : getFinishingBatchConfigs(
           batchGemmConfigsOf(op), epilogueBatchNorm.getMaxRows())) {
    entryProblem.config = entry.getConfig();
    if (entryProblem.sharedLayout().footprint() > chip.maxSharedBytesPerBlock)
      return std::nullopt;
  }
  if (problem.sharedLayout().footprint() > chip.maxSharedBytesPerBlock)
    return std::nullopt;
  return problem;
}

void HostEmitter::emitBatchNormFinishingGemm(FusedLinearOp op,
                                             const GemmKernelProblem &problem,
                                             ElementwiseOpInterface after,
                                             SmallVector<Value> operands,
                                             size_t outputOperand) {
  // The normalized output (or the op's after it) is what the kernel writes.
  Value result = after ? after->getResult(0) : Value(op.getResult());
  operands[outputOperand] = buffers.lookup(result).ptr;
  appendBatchNormOperands(operands, BatchNormValues::of(op));
  if (after)
    operands.append(bufferPtrs(after.getColumnOperands()));
  EpilogueBatchNormAttr epilogueBatchNorm = epilogueBatchNormOf(op);
  launchGemmForRows(op, problem, buffers.lookup(op.getInput()).rows,
                    getFinishingBatchConfigs(batchGemmConfigsOf(op),
                                             epilogueBatchNorm.getMaxRows()),
                    problem.config, "gemm_batch_norm", operands,
                    "gemm_batch_norm");
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

void HostEmitter::launchGemmForRows(FusedLinearOp op, GemmKernelProblem problem,
                                    Value rows,
                                    ArrayRef<BatchGemmConfigAttr> entries,
                                    GemmConfigAttr config, StringRef kind,
                                    ArrayRef<Value> operands,
                                    StringRef entryKind) {
  Block *launched = entries.empty() ? nullptr : createJoinBlock();
  for (BatchGemmConfigAttr entry : entries) {
    Block *larger = branchOnRows(rows, entry.getMaxRows());
    problem.config = entry.getConfig();
    launch(buildGemmKernel(
               op, problem,
               (entryKind + "_rows_le_" + Twine(entry.getMaxRows())).str()),
           rows, operands);
    LLVM::BrOp::create(b, loc, ValueRange{}, launched);
    b.setInsertionPointToStart(larger);
  }
  problem.config = config;
  launch(buildGemmKernel(op, problem, kind), rows, operands);
  if (launched) {
    LLVM::BrOp::create(b, loc, ValueRange{}, launched);
    b.setInsertionPointToStart(launched);
  }
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
  GemmConfigAttr config = getConfig(op);
  SmallVector<BatchGemmConfigAttr> batchConfigs = batchGemmConfigsOf(op);
  if (config.isGenerated())
    return emitTiledFusedLinear(op, config, batchConfigs, after);
  if (batchConfigs.empty())
    return emitCublasFusedLinear(op, after);
  // Batches up to the last batch config's rows take the generated kernels,
  // larger ones cuBLASLt's GEMM: both write the op's output.
  Block *cublas = branchOnRows(buffers.lookup(op.getInput()).rows,
                               batchConfigs.back().getMaxRows());
  Block *done = createJoinBlock();
  emitTiledFusedLinear(op, batchConfigs.back().getConfig(),
                       ArrayRef(batchConfigs).drop_back(), after);
  LLVM::BrOp::create(b, loc, ValueRange{}, done);
  b.setInsertionPointToStart(cublas);
  emitCublasFusedLinear(op, after);
  LLVM::BrOp::create(b, loc, ValueRange{}, done);
  b.setInsertionPointToStart(done);
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
  if (!tiles || tiles->minRows == 1) {
    launchRowProgram(first, ops, tiles, "rows");
    return ops.end;
  }
  // Batches below the tile reductions' min_rows reduce the output their
  // GEMM wrote (emitTiledFusedLinear branches alike).
  int64_t unreducedRows = tiles->minRows - 1;
  Block *reduced = branchOnRows(rowsOf(ops.input), unreducedRows);
  Block *join = createJoinBlock();
  launchRowProgram(first, ops, nullptr,
                   ("rows_le_" + Twine(unreducedRows)).str());
  LLVM::BrOp::create(b, loc, ValueRange{}, join);
  b.setInsertionPointToStart(reduced);
  launchRowProgram(first, ops, tiles, "rows");
  LLVM::BrOp::create(b, loc, ValueRange{}, join);
  b.setInsertionPointToStart(join);
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

LogicalResult HostEmitter::emit() {
  if (failed(checkSupported()))
    return failure();
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
  unsigned firstInput = dynamic ? 2 : 1;
  workspaceSlot = LLVM::AllocaOp::create(b, loc, ptrType, ptrType, c64(1), 8);
  LLVM::StoreOp::create(b, loc, nullPtr(), workspaceSlot);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(failureBlock);
    Value pending = LLVM::LoadOp::create(b, loc, ptrType, workspaceSlot);
    call("__fusion_rt_free", {stream, pending});
    LLVM::ReturnOp::create(b, loc, failureStatus);
  }

  // Arguments: batch size, then every buffer.
  Block &body = func.getBody().front();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  bool needsTwoRows = llvm::any_of(body, [](Operation &op) {
    BatchNormConfigAttr config;
    if (auto bn = dyn_cast<BatchNormOp>(op))
      config = bn.getConfig();
    else if (auto fused = dyn_cast<FusedLinearOp>(op))
      config = fused.getBatchNormAttr();
    return config && config.isTraining();
  });
  if (dynamic)
    checked("__fusion_rt_check_size",
            {batch, c64(needsTwoRows ? 2 : 1), string("batch")});
  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    Value ptr = entry->getArgument(firstInput + index);
    buffers[arg] = {ptr, rowsOf(arg)};
    checked("__fusion_rt_check_buffer",
            {stream, ptr, bytesOf(arg, rowsOf(arg)),
             string(("input #" + Twine(index)).str())});
  }
  SmallVector<Value> outputs;
  for (auto [index, result] : llvm::enumerate(returnOp.getOperands())) {
    Value ptr = entry->getArgument(firstInput + func.getNumArguments() + index);
    outputs.push_back(ptr);
    checked("__fusion_rt_check_buffer",
            {stream, ptr, bytesOf(result, rowsOf(result)),
             string(("output #" + Twine(index)).str())});
    // An op result returned here is computed straight into the output.
    if (!isa<BlockArgument>(result) && !buffers.count(result))
      buffers[result] = {ptr, rowsOf(result)};
  }

  // Plan the workspace: intermediates and batch-norm statistics.
  workspaceBytes = c64(0);
  unsigned index = 0;
  SmallVector<std::pair<Value, Value>> intermediates; // (tensor, offset)
  for (Operation &op : body.without_terminator()) {
    opIndex[&op] = index++;
    auto fused = dyn_cast<FusedLinearOp>(op);
    if (fused && failed(planGemmTileReductions(fused)))
      return failure();
    for (Value result : op.getResults()) {
      if (buffers.count(result))
        continue;
      Value rows = rowsOf(result);
      Value bytes = bytesOf(result, rows);
      // An output that tile reductions leave unwritten, but for the
      // batches below their min_rows.
      auto tiles = tileReductions.find(result);
      if (tiles != tileReductions.end() && !tiles->second.writesOutput) {
        if (tiles->second.minRows == 1)
          continue;
        Value unreduced = LLVM::ICmpOp::create(
            b, loc, LLVM::ICmpPredicate::slt, rows, c64(tiles->second.minRows));
        bytes = LLVM::SelectOp::create(b, loc, unreduced, bytes, c64(0));
      }
      intermediates.push_back({result, reserve(bytes)});
    }
    if (!isa<BatchNormOp>(op) && !(fused && fused.getBatchNormAttr()))
      continue;
    Value result = op.getResult(0);
    int64_t n = tensorType(result).getDimSize(1);
    // A generated GEMM kernel writes the moments of each block row; the
    // statistics kernel those of its chunks.
    GemmConfigAttr config = fused ? getConfig(fused) : GemmConfigAttr();
    Value rowsPerChunk =
        config && config.isGenerated()
            ? c64(config.getBlockM())
            : statisticsChunkRows(
                  rowsOf(result), n,
                  getVectorWidth(tensorType(result).getElementType(), n));
    planBatchNorm(&op, rowsOf(result), n, rowsPerChunk);
  }
  checked("__fusion_rt_alloc", {stream, workspaceBytes, workspaceSlot});
  workspace = LLVM::LoadOp::create(b, loc, ptrType, workspaceSlot);
  for (auto [tensor, offset] : intermediates)
    buffers[tensor] = {offsetPtr(workspace, offset), rowsOf(tensor)};
  for (auto &entry : tileReductions)
    for (Value &partial : entry.second.partials)
      partial = offsetPtr(workspace, partial);
  for (auto &entry : scratch)
    for (Value *slice : {&entry.second.mean, &entry.second.m2,
                         &entry.second.center, &entry.second.scale,
                         &entry.second.shift})
      *slice = offsetPtr(workspace, *slice);

  for (auto it = body.begin(), end = body.without_terminator().end();
       it != end;) {
    Operation &op = *it++;
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      it = emitRowProgram(reduce, end);
      continue;
    }
    if (auto fused = dyn_cast<FusedLinearOp>(op)) {
      ElementwiseOpInterface after;
      if (fused.getBatchNormAttr())
        after = takeNormalizedEpilogue(fused, it, end);
      emitFusedLinear(fused, after);
    } else if (auto bn = dyn_cast<BatchNormOp>(op)) {
      RankedTensorType type = tensorType(bn.getInput());
      int64_t n = type.getDimSize(1);
      MatrixShape shape{type.getElementType(), n,
                        getVectorWidth(type.getElementType(), n)};
      emitBatchNorm(&op, buffers.lookup(bn.getInput()),
                    buffers.lookup(bn.getResult()), shape, ValueRange(),
                    identityFn(), BatchNormValues::of(bn),
                    takeNormalizedEpilogue(bn, it, end));
    } else {
      emitElementwise(cast<ElementwiseOpInterface>(op));
    }
  }

  // Results not computed in place: arguments returned as they are, or a
  // value returned twice.
  for (auto [index, result] : llvm::enumerate(returnOp.getOperands())) {
    Buffer source = buffers.lookup(result);
    if (source.ptr != outputs[index])
      checked("__fusion_rt_copy", {stream, outputs[index], source.ptr,
                                   bytesOf(result, rowsOf(result))});
  }
  // Cleared first: should the free fail, the failure path frees nothing.
  LLVM::StoreOp::create(b, loc, nullPtr(), workspaceSlot);
  checked("__fusion_rt_free", {stream, workspace});
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
