//===- fusion-compile.cpp - fusion models to GPU shared libraries ---------===//
//
//   fusion-compile model.mlir -o model.so [--target=sm_80] [--strategy=auto|cublas|tiled|wgmma]
//                  [--precision=fp32|tf32|bf16|f16] [--emit=so|mlir|ptx]
//
// Writes model.so, whose entry points follow runtime/include/fusion_runtime.h,
// and their signatures in model.json and model.h.
//
//===----------------------------------------------------------------------===//

#include "fusion/Compiler/Compiler.h"
#include "fusion/Tools/KnownParserCrashes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
namespace cl = llvm::cl;

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::opt<std::string> input(cl::Positional, cl::desc("<model.mlir>"),
                             cl::Required);
  cl::opt<std::string> output("o", cl::desc("output file"), cl::Required);
  // Textual options, parsed and checked by fusion::parseCompileOptions.
  const fusion::CompileOptionText defaults;
  cl::opt<std::string> target(
      "target",
      cl::desc("GPU architecture (sm_80, sm_86, sm_89, sm_90), several "
               "separated by commas (the library runs each call on the "
               "newest its device supports), or cpu"),
      cl::init(defaults.target));
  cl::opt<std::string> strategy(
      "strategy",
      cl::desc("backend of fused GEMMs: auto (the measured rule), cublas, "
               "tiled (sm_80 instructions) or wgmma (Hopper, sm_90)"),
      cl::init(defaults.strategy));
  cl::opt<std::string> precision(
      "precision",
      cl::desc("GEMM precision of f32 chains: fp32, tf32, bf16, "
               "f16 (default fp32)"),
      cl::init(defaults.precision));
  cl::opt<std::string> emit("emit", cl::desc("so, mlir or ptx"),
                            cl::init(defaults.emit));
  cl::opt<std::string> tile(
      "tile",
      cl::desc("generated kernels: BMxBN,WARPSMxWARPSN,STAGES (default: "
               "heuristic per op)"),
      cl::init(defaults.tile));
  cl::opt<std::string> fp32Math(
      "fp32-math",
      cl::desc("generated kernels, f32 GEMMs in fp32: tf32x3 (tensor cores, "
               "split operands) or simt (fma on the CUDA cores)"),
      cl::init(defaults.fp32Math));
  cl::opt<std::string> schedule(
      "schedule",
      cl::desc("wgmma kernels: cooperative (two consumer warpgroups share "
               "each tile) or pingpong (they take whole tiles in turn)"),
      cl::init(defaults.schedule));
  cl::opt<std::string> cluster(
      "cluster",
      cl::desc("wgmma kernels: blocks a cluster, which share w's tiles by "
               "multicast (1 or 2)"),
      cl::init(defaults.cluster));
  cl::opt<std::string> math16(
      "math16",
      cl::desc("the erf and exp of ops with bf16/f16 results: approximate "
               "(within 16-bit rounding) or exact (as f32 results')"),
      cl::init(defaults.math16));
  cl::opt<std::string> cudaPath(
      "cuda-path", cl::desc("CUDA toolkit (default: the one of the build)"),
      cl::init(""));
  cl::ParseCommandLineOptions(argc, argv, "fusion GPU compiler\n");

  fusion::CompileOptionText text;
  text.target = target;
  text.strategy = strategy;
  text.precision = precision;
  text.emit = emit;
  text.tile = tile;
  text.fp32Math = fp32Math;
  text.schedule = schedule;
  text.cluster = cluster;
  text.math16 = math16;
  text.cudaPath = cudaPath;
  std::string error;
  FailureOr<fusion::CompileOptions> options =
      fusion::parseCompileOptions(text, error);
  if (failed(options)) {
    llvm::errs() << "fusion-compile: " << error << "\n";
    return 1;
  }

  DialectRegistry registry;
  fusion::registerCompilerDialects(registry);
  MLIRContext context(registry);
  // Diagnostics are located; the whole module printed after each (its
  // embedded kernel binaries included) would bury them.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  auto file = openInputFile(input, &error);
  if (!file) {
    llvm::errs() << "fusion-compile: " << error << "\n";
    return 1;
  }
  if (fusion::reportKnownParserCrash(*file))
    return 1;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  return failed(fusion::compileModule(*module, *options, output)) ? 1 : 0;
}
