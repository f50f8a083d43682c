//===- FusionToGPU.h - GPU backend 1 -------------------------*- C++ -*-===//

#ifndef FUSION_CONVERSION_FUSIONTOGPU_FUSIONTOGPU_H
#define FUSION_CONVERSION_FUSIONTOGPU_FUSIONTOGPU_H

#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fusion {

#define GEN_PASS_DECL_CONVERTFUSIONTOGPU
#define GEN_PASS_DECL_EMBEDKERNELIMAGE
#define GEN_PASS_DECL_EXPANDDIVISIONS
#define GEN_PASS_DECL_EXPANDONEPLUSERF
#define GEN_PASS_DECL_EXPANDONEPLUSEXP
#define GEN_PASS_DECL_EXPANDREMAINDERS
#define GEN_PASS_DECL_EXPANDTRIGONOMETRY
#define GEN_PASS_DECL_EXTERNDYNAMICSHAREDMEMORY
#define GEN_PASS_DECL_LOWERTENSORMAPARGS
#define GEN_PASS_DECL_OUTLINEPOWERS
#define GEN_PASS_DECL_OUTLINESPECIALFUNCTIONS
#include "fusion/Conversion/Passes.h.inc"

/// The symbol of the kernels' gpu.module and of the global holding their
/// binary.
inline constexpr llvm::StringLiteral kKernelModuleName = "fusion_kernels";
inline constexpr llvm::StringLiteral kKernelImageName =
    "__fusion_kernels_image";

} // namespace mlir::fusion

#endif // FUSION_CONVERSION_FUSIONTOGPU_FUSIONTOGPU_H
