//===- FusionToGPU.h - GPU backend 1 -------------------------*- C++ -*-===//

#ifndef FUSION_CONVERSION_FUSIONTOGPU_FUSIONTOGPU_H
#define FUSION_CONVERSION_FUSIONTOGPU_FUSIONTOGPU_H

#include "fusion/Codegen/Kernels/KernelModule.h"
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
#include "fusion/Conversion/Passes.h.inc"

} // namespace mlir::fusion

#endif // FUSION_CONVERSION_FUSIONTOGPU_FUSIONTOGPU_H
