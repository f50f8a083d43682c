//===- HostBuilder.cpp - host code: checks, branches, launches ------------===//

#include "HostLowering.h"

#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::host;

void HostBuilder::checkStatus(Value status) {
  Value bad =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, status, c32(0));
  Block *next = b.createBlock(b.getBlock()->getParent());
  b.setInsertionPointToEnd(bad.getParentBlock());
  LLVM::CondBrOp::create(b, loc, bad, failureBlock, ValueRange{status}, next,
                         ValueRange{});
  b.setInsertionPointToStart(next);
}

Value HostBuilder::materialize(const RowExpr &expr, Value rows,
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

void HostBuilder::launch(Kernel kernel, Value rows, ArrayRef<Value> operands) {
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

void HostBuilder::emitForRows(Value rows, ArrayRef<int64_t> maxRows,
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

Block *HostBuilder::branchOnRows(Value rows, int64_t maxRows) {
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

Value HostContext::rowsOf(Value tensor) {
  RankedTensorType type = tensorType(tensor);
  if (type.isDynamicDim(0))
    return batch;
  return c64(type.getDimSize(0));
}

Value HostContext::bytesOf(Value tensor, Value rows) {
  RankedTensorType type = tensorType(tensor);
  int64_t perRow = elementBytes(type.getElementType());
  for (int64_t dim : type.getShape().drop_front())
    perRow *= dim;
  return mul(rows, c64(perRow));
}

Value HostContext::reserve(Value bytes) {
  Value offset = workspaceBytes;
  workspaceBytes = add(offset, mul(ceilDiv(bytes, 256), c64(256)));
  return offset;
}

gpu::GPUFuncOp HostContext::findIdenticalKernel(gpu::GPUFuncOp kernel) {
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

SmallVector<Value> HostContext::bufferPtrs(ValueRange tensors) {
  return llvm::map_to_vector(tensors,
                             [&](Value v) { return buffers.lookup(v).ptr; });
}
