//===- TargetVariants.h - one library for several GPU targets ---*- C++ -*-===//
//
// A library compiled for several targets holds each entry point's host code
// once per target, renamed NAME__TARGET and internal, and an exported NAME
// that asks the runtime (__fusion_rt_select_variant) which one runs on the
// stream's device and calls it.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_COMPILER_TARGETVARIANTS_H
#define FUSION_COMPILER_TARGETVARIANTS_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace fusion {

/// What the runtime needs to know of a variant's target.
struct TargetVariant {
  std::string name;   ///< e.g. sm_90, the suffix of its functions
  int32_t capability; ///< major * 10 + minor
  bool archSpecific;  ///< sm_90a code: runs on that capability alone
};

/// Moves the host code of `variant` (LLVM dialect, kernels embedded) into
/// `library`: its definitions renamed NAME__TARGET and internal, its
/// runtime declarations shared with the variants before it.
LogicalResult addTargetVariant(ModuleOp library, ModuleOp variant,
                               const TargetVariant &target);

/// Adds to `library` the exported entry point `entry` of each name in
/// `entries`, dispatching to `entry`__TARGET of each of `targets`.
LogicalResult buildVariantDispatchers(ModuleOp library,
                                      ArrayRef<std::string> entries,
                                      ArrayRef<TargetVariant> targets);

} // namespace fusion
} // namespace mlir

#endif // FUSION_COMPILER_TARGETVARIANTS_H
