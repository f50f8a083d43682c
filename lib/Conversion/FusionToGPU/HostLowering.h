//===- HostLowering.h - the host code of fusion-lower-to-gpu ----*- C++ -*-===//
//
// The host function of an entry point, built in layers, each a class with
// one job over the one below:
// - HostBuilder: LLVM host code (constants, index arithmetic, status checks,
//   the branch on the batch, kernel launches by their contracts);
// - HostContext: one entry point's state (its buffers, workspace plan,
//   batch-norm scratch and tile reductions; the kernels' module);
// - BatchNormLowering: training and inference batch norms (statistics,
//   finalize and normalizing kernels);
// - RowProgramLowering: row programs and the tile reductions a GEMM
//   computes for them;
// - GemmLowering: fused_linear ops by their paths (GemmPaths.h);
// - HostEmitter (FusionToGPU.cpp): the function, its checks and workspace,
//   the walk over its ops.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_HOSTLOWERING_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_HOSTLOWERING_H

#include "GemmPaths.h"

#include "fusion/Codegen/Kernels/BatchNormKernels.h"
#include "fusion/Codegen/Kernels/ElementwiseKernel.h"
#include "fusion/Codegen/Kernels/GemmKernelProblem.h"
#include "fusion/Codegen/Kernels/KernelModule.h"
#include "fusion/Codegen/Kernels/RowProgramKernel.h"
#include "fusion/Codegen/Kernels/TileReductionSteps.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::fusion::host {

inline RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// The epilogue region of `op` as a scalar function of the accumulator and
/// the epilogue operands' elements, then the row operands': of its yielded
/// value `index` (0: the result's, then the intermediates').
inline ScalarFn epilogueFn(FusedLinearOp op, unsigned index = 0) {
  return
      [op, index](OpBuilder &builder, Location, Value acc, ValueRange columns) {
        return FusedLinearOp(op).cloneEpilogue(builder, acc, columns, index);
      };
}

/// The matrices an elementwise kernel writes besides its output: each
/// `fns[i]` of the kernel's element and operands, stored at `ptrs[i]`.
struct ExtraOutputs {
  SmallVector<ScalarFn> fns;
  SmallVector<Value> ptrs;
};

inline ScalarFn identityFn() {
  return [](OpBuilder &, Location, Value x, ValueRange) { return x; };
}

inline GemmConfigAttr getConfig(FusedLinearOp op) {
  LoweringAttr lowering = LoweringAttr::of(op);
  return lowering ? lowering.getGemm() : GemmConfigAttr();
}


/// The shape of the [M, N] matrix `matrix`.
inline MatrixShape shapeOf(Value matrix) {
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

/// LLVM host code: constants and index arithmetic, status checks that
/// leave through the failure path, the branch on the batch, launches.
class HostBuilder {
public:
  HostBuilder(OpBuilder &builder, Location loc)
      : b(builder), loc(loc),
        ptrType(LLVM::LLVMPointerType::get(builder.getContext())),
        i64Type(builder.getI64Type()), i32Type(builder.getI32Type()) {}

protected:
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
  Value offsetPtr(Value base, Value offset) {
    return LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), base,
                               ValueRange{offset});
  }

  /// Launches `kernel` over `rows` rows with `operands`, as its contract
  /// says.
  void launch(Kernel kernel, Value rows, ArrayRef<Value> operands);
  Value materialize(const RowExpr &expr, Value rows, ArrayRef<Value> operands);

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

  OpBuilder &b;
  Location loc;
  Type ptrType, i64Type, i32Type;
  Value stream;
  /// Where a failed status goes (it frees the workspace).
  Block *failureBlock = nullptr;
};

/// One entry point's state: the device buffer of each value, the
/// workspace's plan, and the kernels' module.
class HostContext : public HostBuilder {
public:
  HostContext(func::FuncOp func, gpu::GPUModuleOp kernels, OpBuilder &builder)
      : HostBuilder(builder, func.getLoc()), func(func),
        entryName(func.getName().str()), kernels(kernels) {}

protected:
  Value rowsOf(Value tensor);
  Value bytesOf(Value tensor, Value rows);
  /// Reserves `bytes` (256-byte aligned) of the workspace.
  Value reserve(Value bytes);
  /// The device pointers of `tensors`.
  SmallVector<Value> bufferPtrs(ValueRange tensors);
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
  std::string kernelName(Operation *op, StringRef kind) {
    return (entryName + "_" + Twine(opIndex.lookup(op)) + "_" + kind).str();
  }

  func::FuncOp func;
  std::string entryName;
  gpu::GPUModuleOp kernels;
  LLVM::LLVMFuncOp host;
  Value batch, workspaceSlot, workspace;
  llvm::MapVector<Value, Buffer> buffers;
  DenseMap<Operation *, unsigned> opIndex;
  llvm::MapVector<Operation *, BatchNormScratch> scratch;
  llvm::MapVector<Value, TileReductions> tileReductions;
  Value workspaceBytes;
};

/// Batch norms: their scratch, statistics, finalize and normalizing
/// kernels.
class BatchNormLowering : public HostContext {
public:
  using HostContext::HostContext;

protected:
  /// Plans the scratch space of the batch norm of `op`: its statistics in
  /// chunks of block rows (a generated GEMM's) or statisticsChunkRows.
  void planBatchNorm(Operation *op);
  /// The statistics kernels' chunk of rows for a batch norm of `columns`.
  Value statisticsChunkRows(Value rows, int64_t columns, int64_t vectorWidth);
  /// The batch norm `bn` of `op` of `input` (after `fn` of `columns`) into
  /// `output`, or into the result of `after` computed on it; its normalizing
  /// pass also writes `extra` (of the input's elements and `columns`). With
  /// `statistics` false, the chunks' moments are already in the scratch
  /// space.
  void emitBatchNorm(Operation *op, Buffer input, Buffer output,
                     MatrixShape shape, ValueRange columns, const ScalarFn &fn,
                     const BatchNormValues &bn, ElementwiseOpInterface after,
                     const ExtraOutputs &extra = {}, bool statistics = true);
  /// Appends the batch norm's present operands in the order its kernels
  /// take them: weight, bias, running mean and variance, their updates, the
  /// batch statistics.
  void appendBatchNormOperands(SmallVectorImpl<Value> &operands,
                               const BatchNormValues &bn);
};

/// Row programs, and the tile reductions a GEMM computes for them.
class RowProgramLowering : public BatchNormLowering {
public:
  using BatchNormLowering::BatchNormLowering;

protected:
  /// The row program that starts with the reduction `first` and takes the
  /// ops after it (up to `end`) that can join it; returns the op after its
  /// last one. When a GEMM reduced its input's tiles, its reductions merge
  /// their partials in column order.
  Block::iterator emitRowProgram(ReduceOp first, Block::iterator end);
  /// Plans the tile reductions of `op`'s output that its
  /// #fusion.tile_reductions asks for; fails (after a diagnostic) where its
  /// readers are no such row program.
  LogicalResult planGemmTileReductions(FusedLinearOp op);

private:
  /// Launches the row program of `ops` (starting with `first`), whose
  /// reductions merge the partials of `tiles` where given; its kernel is
  /// named `kind`.
  void launchRowProgram(ReduceOp first, const RowProgramOps &ops,
                        const TileReductions *tiles, StringRef kind);
};

/// fused_linear ops, by their paths (planGemmPaths).
class GemmLowering : public RowProgramLowering {
public:
  using RowProgramLowering::RowProgramLowering;

protected:
  /// `op` by its paths (planGemmPaths), each for its batches. `after` (or
  /// null): an elementwise op of the batch-norm stage's output computed by
  /// its normalizing pass.
  void emitFusedLinear(FusedLinearOp op, ElementwiseOpInterface after);

private:
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
  /// The tensors `op` reads as its weight and as its bias (null without
  /// one): their parts where a concat joins them (a grouped GEMM, which
  /// reads them in place), else the one tensor.
  SmallVector<Value> getWeightParts(FusedLinearOp op);
  SmallVector<Value> getBiasParts(FusedLinearOp op);
  /// Launches `problem`'s kernel of the case of `kernels` the batch takes;
  /// the parts of a grouped GEMM's bias and weight past the first follow
  /// `operands`.
  void launchGemmKernels(FusedLinearOp op, GemmKernelProblem problem,
                         ArrayRef<GemmKernelCase> kernels,
                         ArrayRef<Value> operands);
};

} // namespace mlir::fusion::host

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_HOSTLOWERING_H
