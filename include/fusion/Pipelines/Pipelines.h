//===- Pipelines.h - fusion pass pipelines ----------------------*- C++ -*-===//

#ifndef FUSION_PIPELINES_PIPELINES_H
#define FUSION_PIPELINES_PIPELINES_H

#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
namespace fusion {

struct OptimizePipelineOptions
    : public PassPipelineOptions<OptimizePipelineOptions> {
  PassOptions::Option<Precision> f32Precision{
      *this, "f32-precision",
      llvm::cl::desc("GEMM precision of fused ops on f32 tensors"),
      llvm::cl::init(Precision::fp32),
      llvm::cl::values(clEnumValN(Precision::fp32, "fp32", "fp32 (default)"),
                       clEnumValN(Precision::tf32, "tf32", "tf32"),
                       clEnumValN(Precision::bf16, "bf16", "bf16"),
                       clEnumValN(Precision::f16, "f16", "f16"))};
  PassOptions::Option<bool> approximate16BitMath{
      *this, "approximate-16-bit-math",
      llvm::cl::desc("let the erf and exp of ops with bf16/f16 results be "
                     "approximate (fusion-approximate-16-bit-math)"),
      llvm::cl::init(true)};
};

/// Graph-level optimization: simplify, fuse every chain into one
/// fused_linear, simplify the fused ops.
void buildOptimizePipeline(OpPassManager &pm,
                           const OptimizePipelineOptions &options);

/// The CPU reference: fusion ops to linalg, bufferization, LLVM dialect; the
/// result runs under mlir-runner.
void buildLowerToCpuPipeline(OpPassManager &pm);

/// The generated kernels of `gpu.module`s, lowered to the NVVM/LLVM
/// dialects for gpu-module-to-binary.
void buildKernelsToNVVMPipeline(OpPassManager &pm);

/// Registers `fusion-optimize`, `fusion-lower-to-cpu` and
/// `fusion-lower-kernels-to-nvvm`.
void registerFusionPipelines();

} // namespace fusion
} // namespace mlir

#endif // FUSION_PIPELINES_PIPELINES_H
