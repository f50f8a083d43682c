//===- PackedEntries.h - the packed form of a CPU library's entries -*- C++
//-*-===//
//
// Every library's entry point NAME has a packed form NAME_packed
// (fusion_runtime.h), which callers with a runtime number of buffers use
// (PyTorch's fusion::run operator). The GPU host code is built packed
// (fusion-convert-to-gpu); a CPU entry point takes MLIR's memref
// descriptors, which its packed form builds from the buffer table.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_COMPILER_PACKEDENTRIES_H
#define FUSION_COMPILER_PACKEDENTRIES_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace fusion {

/// Adds to `library` (a CPU library's host code, LLVM dialect) the packed
/// form of each entry point of `signatures` (the tensor functions before
/// lowering): the descriptors of dense row-major buffers, whose `?`
/// dimensions are the batch.
LogicalResult addPackedCpuEntries(ModuleOp library, ModuleOp signatures);

} // namespace fusion
} // namespace mlir

#endif // FUSION_COMPILER_PACKEDENTRIES_H
