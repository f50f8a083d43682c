//===- fusion-opt-fuzzer.cpp - libFuzzer target over fusion-opt's path ----===//
//
// One input: parse it as a module, verify it, check it as fusion-compile does
// (fusion-verify-entry-points), run --fusion-optimize, then every lowering on
// its own copy: --fusion-lower-to-cpu, and the GPU path (config selection
// with the cublas and the tiled strategy, fusion-lower-to-gpu,
// fusion-lower-runtime-to-llvm, the kernels to NVVM), all in process. Diagnostics are dropped: a located
// error is a fine outcome; a crash, an abort, a sanitizer report, a hang
// (-timeout, 60 s in scripts/fuzz.sh) or runaway memory (-rss_limit_mb) is a finding. See
// docs/fuzzing.md and scripts/fuzz.sh.
//
//===----------------------------------------------------------------------===//

#include "fusion/Codegen/Config/Passes.h"
#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"
#include "fusion/Pipelines/Pipelines.h"
#include "fusion/Tools/KnownParserCrashes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace mlir;

static DialectRegistry *registry;


// Only this binary is instrumented, libMLIR.so is not, and the two share
// MLIR's bump allocators: an instrumented inline Allocate poisons a slab the
// uninstrumented library then writes to, a false report. User poisoning off
// keeps every real ASan check.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  registry = new DialectRegistry();
  registry->insert<fusion::FusionDialect, fusion_rt::FusionRuntimeDialect>();
  registerAllDialects(*registry);
  registerAllExtensions(*registry);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The parser reads up to a terminating NUL, as files and strings have.
  std::string text(reinterpret_cast<const char *>(data), size);
  // Known upstream parser crashes are refused by the tools; skip them here.
  if (fusion::findDenseIndexArray(text) != StringRef::npos)
    return 0;
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler silence(&context,
                                  [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context));
  if (!module || failed(verify(*module)))
    return 0;
  PassManager optimize(&context);
  optimize.addPass(fusion::createVerifyEntryPoints());
  fusion::buildOptimizePipeline(optimize, fusion::OptimizePipelineOptions());
  if (failed(optimize.run(*module)))
    return 0;

  OwningOpRef<ModuleOp> cpu = module->clone();
  PassManager reference(&context);
  reference.addPass(fusion::createCpuEntryAbi());
  fusion::buildLowerToCpuPipeline(reference);
  (void)reference.run(*cpu);

  for (fusion::GemmStrategy strategy :
       {fusion::GemmStrategy::cublas, fusion::GemmStrategy::tiled}) {
    OwningOpRef<ModuleOp> gpu = module->clone();
    PassManager lower(&context);
    fusion::SelectGemmConfigOptions select;
    select.strategy = strategy;
    lower.addPass(fusion::createSelectGemmConfig(select));
    lower.addPass(fusion::createConvertFusionToGPU());
    lower.addPass(fusion::createLowerFusionRuntimeToLLVM());
    fusion::buildKernelsToNVVMPipeline(lower);
    (void)lower.run(*gpu);
  }
  return 0;
}
