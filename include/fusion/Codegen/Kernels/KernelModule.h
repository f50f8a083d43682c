//===- KernelModule.h - where the generated kernels live --------*- C++ -*-===//

#ifndef FUSION_CODEGEN_KERNELS_KERNELMODULE_H
#define FUSION_CODEGEN_KERNELS_KERNELMODULE_H

#include "llvm/ADT/StringRef.h"

namespace mlir::fusion {

/// The symbol of the kernels' gpu.module and of the global holding their
/// binary.
inline constexpr llvm::StringLiteral kKernelModuleName = "fusion_kernels";
inline constexpr llvm::StringLiteral kKernelImageName =
    "__fusion_kernels_image";

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_KERNELS_KERNELMODULE_H
