//===- FusionToGPU.cpp - host code of the GPU backends --------------------===//
//
// Lowers each function of fusion ops to an llvm.func that calls the fusion
// runtime (argument checks, cuBLASLt GEMMs, kernel launches) and builds the
// kernels it launches (epilogue kernels, tiled GEMM kernels) in gpu.module
// @fusion_kernels. The host code's layers are in HostLowering.h; this file
// holds the entry point's function, checks and workspace, and the pass.
//
//===----------------------------------------------------------------------===//

#include "fusion/Conversion/FusionToGPU/FusionToGPU.h"
#include "HostLowering.h"

#include "fusion/Codegen/Config/GemmKernelRules.h"
#include "fusion/Codegen/Config/Verifiers.h"
#include "fusion/Dialect/Fusion/IR/EntryPoints.h"
#include "fusion/Dialect/Fusion/IR/FusionRandomOps.h"
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "fusion_runtime.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_CONVERTFUSIONTOGPU
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::host;

namespace {

/// Emits the host function of one entry point.
class HostEmitter : public GemmLowering {
public:
  using GemmLowering::GemmLowering;

  LogicalResult emit();

private:
  LogicalResult checkSupported();
  /// Whether every use of `concat` reads its parts in place (a grouped
  /// GEMM's weight and bias); a located error otherwise.
  LogicalResult checkReadInPlace(ConcatOp concat);
  /// Whether the kernels compute `draw` where they read it (every use a
  /// row operand); a located error otherwise.
  LogicalResult checkComputedWhereRead(RandomUniformOp draw);
  /// The host function of the entry point, its failure path (which frees
  /// the workspace) and the insertion point in its entry block.
  void createHostFunction();
  /// The bodies of the entry point's two forms, which call `host`: the
  /// unpacked form's with no flags (every buffer checked), the packed
  /// form's with its buffers from the table.
  void emitUnpackedEntry(LLVM::LLVMFuncOp unpacked);
  void emitPackedEntry(LLVM::LLVMFuncOp packed, bool dynamic);
  /// Checks the batch, and every buffer unless the call's flags say its
  /// caller did; returns the outputs' pointers.
  SmallVector<Value> checkArguments();
  /// Each buffer's check_buffer of `checks` ((name, bytes) a pointer of
  /// `pointers`), skipped where the call's flags vouch for them.
  void emitBufferChecks(ArrayRef<std::pair<std::string, Value>> checks,
                        ValueRange pointers);
  /// Plans the workspace (intermediates, tile reductions' partials, batch
  /// norms' scratch) and allocates it.
  LogicalResult planWorkspace();
  /// The workspace an op result takes; none where tile reductions leave it
  /// unwritten.
  std::optional<Value> getWorkspaceBytes(Value result);
  /// Emits the ops of the function's body.
  void emitBody();
  void emitElementwise(ElementwiseOpInterface op);
};

LogicalResult HostEmitter::checkReadInPlace(ConcatOp concat) {
  for (OpOperand &use : concat->getUses()) {
    auto fused = dyn_cast<FusedLinearOp>(use.getOwner());
    bool read = false;
    if (fused && use.get() == fused.getWeight())
      read = fused.getWeightConcat() == concat && !fused.getDualWeight();
    else if (fused && use.get() == fused.getBias() && fused.getWeightConcat())
      read = getWeightPartWidths(fused) ==
             SmallVector<int64_t>(
                 llvm::map_range(concat.getInputs(), [](Value part) {
                   return cast<RankedTensorType>(part.getType()).getDimSize(0);
                 }));
    if (!read)
      return concat.emitOpError(
          "is compiled by the GPU backends only as the weight of a "
          "fused_linear joined along N (not of a dual GEMM), or as its bias "
          "joined of parts of the weight's widths: the GEMM reads the parts "
          "in place");
  }
  return success();
}

LogicalResult HostEmitter::checkComputedWhereRead(RandomUniformOp draw) {
  for (OpOperand &use : draw->getUses()) {
    Operation *user = use.getOwner();
    ValueRange rows;
    if (auto fused = dyn_cast<FusedLinearOp>(user))
      rows = fused.getEpilogueRows();
    else if (auto reduce = dyn_cast<ReduceOp>(user))
      rows = reduce.getRowOperands();
    else if (auto elementwise = dyn_cast<ElementwiseOpInterface>(user))
      rows = elementwise.getRowOperands();
    if (!llvm::is_contained(rows, draw.getResult()))
      return draw.emitOpError(
          "is compiled by the GPU backends only as a row operand of "
          "elementwise, reduce or fused_linear ops, which compute it where "
          "they read it; it is not stored");
  }
  return success();
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
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      if (succeeded(checkReadInPlace(concat)))
        return WalkResult::advance();
      return WalkResult::interrupt();
    }
    if (auto draw = dyn_cast<RandomUniformOp>(op)) {
      if (succeeded(checkComputedWhereRead(draw)))
        return WalkResult::advance();
      return WalkResult::interrupt();
    }
    op->emitOpError("cannot be compiled by the GPU backends (run "
                    "--fusion-optimize first; only fused_linear, "
                    "elementwise fusion ops, reduce, batch_norm and a "
                    "grouped GEMM's concat are supported)");
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("must have a single block");
  return success();
}

void HostEmitter::emitElementwise(ElementwiseOpInterface op) {
  Value input = op.getMatrixInput();
  Buffer in = buffers.lookup(input), out = buffers.lookup(op->getResult(0));
  MatrixShape shape = shapeOf(input);
  SmallVector<ColumnOperand> columns = columnOperandsOf(op.getColumnOperands());
  size_t columnCount = columns.size();
  Kernel kernel = buildKernel([&] {
    return buildElementwiseKernel(
        b, loc, kernelName(op, "elementwise"), shape, columns,
        [op, columnCount](OpBuilder &nb, Location nl, Value x,
                          ValueRange operands) {
          ElementwiseOpInterface elementwise = op;
          return elementwise.buildScalar(nb, nl, x,
                                         operands.take_front(columnCount),
                                         operands.drop_front(columnCount));
        },
        rowOperandSourcesOf(op.getRowOperands()));
  });
  SmallVector<Value> operands{in.ptr, out.ptr};
  operands.append(bufferPtrs(op.getColumnOperands()));
  operands.append(bufferPtrs(op.getRowOperands()));
  launch(kernel, in.rows, operands);
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
    // The C ABI's two forms first (fusion_runtime.h), then the body they
    // call, whose parameters are the unpacked form's and the call's flags.
    auto unpacked = LLVM::LLVMFuncOp::create(
        b, loc, entryName, LLVM::LLVMFunctionType::get(i32Type, params));
    auto packed = LLVM::LLVMFuncOp::create(
        b, loc, entryName + FUSION_PACKED_ENTRY_SUFFIX,
        LLVM::LLVMFunctionType::get(i32Type,
                                    {ptrType, i64Type, ptrType, i32Type}));
    params.push_back(i32Type);
    host = LLVM::LLVMFuncOp::create(
        b, loc, "__fusion_body_" + entryName,
        LLVM::LLVMFunctionType::get(i32Type, params), LLVM::Linkage::Internal);
    emitUnpackedEntry(unpacked);
    emitPackedEntry(packed, dynamic);
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

void HostEmitter::emitUnpackedEntry(LLVM::LLVMFuncOp unpacked) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(unpacked.addEntryBlock(b));
  SmallVector<Value> args(unpacked.getArguments());
  args.push_back(c32(0));
  LLVM::ReturnOp::create(b, loc,
                         LLVM::CallOp::create(b, loc, host, args).getResult());
}

void HostEmitter::emitPackedEntry(LLVM::LLVMFuncOp packed, bool dynamic) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(packed.addEntryBlock(b));
  SmallVector<Value> args{packed.getArgument(0)};
  if (dynamic)
    args.push_back(packed.getArgument(1));
  Value table = packed.getArgument(2);
  for (int32_t index = 0, count = func.getNumArguments() + func.getNumResults();
       index < count; ++index) {
    Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType, table,
                                     ArrayRef<LLVM::GEPArg>{index});
    args.push_back(LLVM::LoadOp::create(b, loc, ptrType, slot));
  }
  args.push_back(packed.getArgument(3));
  LLVM::ReturnOp::create(b, loc,
                         LLVM::CallOp::create(b, loc, host, args).getResult());
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
  ValueRange pointers =
      host.getArguments().drop_front(batch ? 2 : 1).drop_back();
  SmallVector<std::pair<std::string, Value>> checks; // (name, bytes)
  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    buffers[arg] = {pointers[index], rowsOf(arg)};
    checks.push_back(
        {("input #" + Twine(index)).str(), bytesOf(arg, rowsOf(arg))});
  }
  SmallVector<Value> outputs;
  for (auto [index, result] :
       llvm::enumerate(body.getTerminator()->getOperands())) {
    Value ptr = pointers[func.getNumArguments() + index];
    outputs.push_back(ptr);
    checks.push_back(
        {("output #" + Twine(index)).str(), bytesOf(result, rowsOf(result))});
    // An op result returned here is computed straight into the output.
    if (!isa<BlockArgument>(result) && !buffers.count(result))
      buffers[result] = {ptr, rowsOf(result)};
  }
  emitBufferChecks(checks, pointers);
  return outputs;
}

void HostEmitter::emitBufferChecks(
    ArrayRef<std::pair<std::string, Value>> checks, ValueRange pointers) {
  // The driver's queries of each buffer, unless the caller vouches for them
  // (FUSION_CALL_BUFFERS_CHECKED: PyTorch's tensors, checked against the
  // signature before the call).
  Value flags = host.getArguments().back();
  Value vouched = LLVM::ICmpOp::create(
      b, loc, LLVM::ICmpPredicate::ne,
      LLVM::AndOp::create(b, loc, flags, c32(FUSION_CALL_BUFFERS_CHECKED)),
      c32(0));
  Block *start = b.getBlock();
  b.setInsertionPointToStart(createJoinBlock());
  Block *checking = b.getBlock();
  for (auto [check, ptr] : llvm::zip_equal(checks, pointers))
    checkStatus(fusion_rt::CheckBufferOp::create(b, loc, i32Type, check.first,
                                                 ptr, check.second, stream));
  Block *checked = createJoinBlock();
  LLVM::BrOp::create(b, loc, checked);
  b.setInsertionPointToEnd(start);
  LLVM::CondBrOp::create(b, loc, vouched, checked, checking);
  b.setInsertionPointToStart(checked);
}

LogicalResult HostEmitter::planWorkspace() {
  workspaceBytes = c64(0);
  unsigned index = 0;
  SmallVector<std::pair<Value, Value>> intermediates; // (tensor, offset)
  for (Operation &op : func.getBody().front().without_terminator()) {
    opIndex[&op] = index++;
    if (isa<ConcatOp>(op))
      continue; // Read in place (checkReadInPlace).
    if (auto draw = dyn_cast<RandomUniformOp>(op)) {
      // Computed where read (checkComputedWhereRead): its readers' kernels
      // take the seed in its place.
      buffers[draw.getResult()] = {buffers.lookup(draw.getSeed()).ptr,
                                   rowsOf(draw.getResult())};
      continue;
    }
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
    if (isa<ConcatOp, RandomUniformOp>(op))
      continue;
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
      LoweringAttr lowering = LoweringAttr::of(op);
      if (!lowering)
        return;
      archSpecific |= lowering.getGemm().isWgmma();
      for (BatchGemmConfigAttr entry : lowering.getBatches())
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
