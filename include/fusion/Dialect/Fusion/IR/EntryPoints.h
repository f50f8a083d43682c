//===- EntryPoints.h - the functions a compiled library exports -*- C++ -*-===//

#ifndef FUSION_DIALECT_FUSION_IR_ENTRYPOINTS_H
#define FUSION_DIALECT_FUSION_IR_ENTRYPOINTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace mlir::fusion {

/// The entry points of `module`: its public functions with a body, each an
/// exported function of the compiled library.
inline SmallVector<func::FuncOp> getEntryPoints(ModuleOp module) {
  SmallVector<func::FuncOp> entries;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      entries.push_back(func);
  return entries;
}

/// The argument of entry point `func` whose buffer its result `index` may
/// be written into, the caller passing that one buffer as both, or none.
/// That is the updated running statistic of a training batch norm (alone
/// or in a fused linear's epilogue) whose running statistic is the
/// argument, which nothing else reads, and which the function returns once
/// and uses for nothing else: the kernels that finish the norm read each
/// element of the argument, and only there, before the same thread writes
/// that element of the result. GPU libraries only: a CPU library's buffers
/// are `restrict` (fusion-cpu-entry-abi).
std::optional<unsigned> getUpdatedArgument(func::FuncOp func, unsigned index);

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_IR_ENTRYPOINTS_H
