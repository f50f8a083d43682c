//===- EntryPoints.h - the functions a compiled library exports -*- C++ -*-===//

#ifndef FUSION_DIALECT_FUSION_IR_ENTRYPOINTS_H
#define FUSION_DIALECT_FUSION_IR_ENTRYPOINTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

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

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_IR_ENTRYPOINTS_H
