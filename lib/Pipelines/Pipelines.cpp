//===- Pipelines.cpp - fusion pass pipelines ------------------------------===//

#include "fusion/Pipelines/Pipelines.h"

#include "fusion/Codegen/Math/Passes.h"
#include "fusion/Codegen/NVVM/Passes.h"
#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void fusion::buildOptimizePipeline(OpPassManager &pm,
                                   const OptimizePipelineOptions &options) {
  pm.addPass(createSimplifyFusion());
  FuseLinearEpiloguesOptions fuseOptions;
  fuseOptions.f32Precision = options.f32Precision;
  pm.addPass(createFuseLinearEpilogues(fuseOptions));
  // Before the producers' bodies move into their readers: an elementwise
  // op's 16-bit result is what justifies its approximate functions.
  if (options.approximate16BitMath)
    pm.addPass(createApproximate16BitMath());
  pm.addPass(createFuseElementwiseProducers());
  pm.addPass(createSimplifyFusion());
  pm.addPass(createCSEPass());
}

void fusion::buildLowerToCpuPipeline(OpPassManager &pm) {
  pm.addPass(createInlineSpecialFunctions());
  pm.addPass(createConvertFusionToLinalg());
  pm.addPass(createCanonicalizerPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::buildBufferDeallocationPipeline(pm);
  // Returning an argument leaves a bufferization.clone: alloc + copy.
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createSCFToControlFlowPass());
  // bf16 has no native x86 conversions: expand them to integer ops.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // The math of epilogues becomes libm calls (the CPU library links -lm,
  // mlir-runner has libm loaded); see fusion-math-to-libm. libm has no
  // rsqrtf: rsqrt becomes 1 / sqrt first, as the LLVM lowering did.
  math::MathExpandOpsPassOptions expandMath;
  expandMath.opMnemonics = {"rsqrt"};
  pm.addPass(math::createMathExpandOpsPass(expandMath));
  pm.addPass(fusion::createMathToLibmCalls());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void fusion::buildKernelsToNVVMPipeline(OpPassManager &pm) {
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  // The steps of a row program that compute the same expression of an
  // element (a norm's gelu for softmax's maximum, sum and output) become
  // one, before math ops turn into libdevice calls.
  kernels.addPass(createCSEPass());
  // Before the passes that expand what their formulas hold.
  kernels.addPass(fusion::createOutlineSpecialFunctions());
  // Before the divisions take the remainders' approximate quotients.
  kernels.addPass(fusion::createExpandRemainders());
  kernels.addPass(fusion::createExpandTrigonometry());
  kernels.addPass(fusion::createOutlinePowers());
  // Before the divisions take mish's quotient.
  kernels.addPass(fusion::createExpandTanh());
  // While loops are scf ops: a divisor defined outside a loop is the
  // loop's invariant.
  kernels.addPass(fusion::createExpandDivisions());
  kernels.addPass(createConvertNVGPUToNVVMPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  // Before libdevice takes math.erf and math.exp.
  kernels.addPass(fusion::createExpandOnePlusErf());
  kernels.addPass(fusion::createExpandOnePlusExp());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createConvertVectorToLLVMPass());
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createArithToLLVMConversionPass());
  kernels.addPass(createConvertIndexToLLVMPass());
  // While the wgmma ops are NVVM ops, not yet inline PTX.
  kernels.addPass(fusion::createOpaqueHalfConversions());
  // NVVM ops built as inline PTX (wgmma, mbarrier waits).
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(fusion::createLowerTensorMapArgs());
  kernels.addPass(fusion::createExternDynamicSharedMemory());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
}

void fusion::registerFusionPipelines() {
  PassPipelineRegistration<OptimizePipelineOptions>(
      "fusion-optimize",
      "Simplify, fuse each linear chain into one fusion.fused_linear, "
      "simplify the fused ops",
      buildOptimizePipeline);
  PassPipelineRegistration<>(
      "fusion-lower-to-cpu",
      "Lower fusion ops through linalg to the LLVM dialect for the CPU "
      "reference (runs under mlir-runner)",
      buildLowerToCpuPipeline);
  PassPipelineRegistration<>(
      "fusion-lower-kernels-to-nvvm",
      "Lower the kernels of gpu.modules to the NVVM and LLVM dialects, "
      "ready for gpu-module-to-binary",
      buildKernelsToNVVMPipeline);
}
