//===- fusion-compile.cpp - fusion models to GPU shared libraries ---------===//
//
//   fusion-compile model.mlir -o model.so [--target=sm_80] [--strategy=auto|cublas|tiled]
//                  [--precision=fp32|tf32|bf16|f16] [--emit=so|mlir|ptx]
//
// Writes model.so, whose entry points follow runtime/include/fusion_runtime.h,
// and their signatures in model.json and model.h.
//
//===----------------------------------------------------------------------===//

#include "fusion/Compiler/Compiler.h"

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
  // Textual options, parsed and checked by fusion::setCompileOption.
  cl::opt<std::string> target(
      "target", cl::desc("GPU architecture (sm_80, sm_86, sm_89, sm_90) or cpu"),
      cl::init("sm_80"));
  cl::opt<std::string> strategy(
      "strategy",
      cl::desc("backend of fused GEMMs: cublas, tiled or auto (default: auto, "
               "the measured rule)"),
      cl::init("auto"));
  cl::opt<std::string> precision(
      "precision",
      cl::desc("GEMM precision of f32 chains: fp32, tf32, bf16, "
               "f16 (default fp32)"),
      cl::init(""));
  cl::opt<std::string> emit("emit", cl::desc("so, mlir or ptx"),
                            cl::init("so"));
  cl::opt<std::string> tile(
      "tile",
      cl::desc("generated kernels: BMxBN,WARPSMxWARPSN,STAGES (default: "
               "heuristic per op)"),
      cl::init(""));
  cl::opt<std::string> fp32Math(
      "fp32-math",
      cl::desc("generated kernels, f32 GEMMs in fp32: tf32x3 (tensor cores, "
               "split operands) or simt (fma on the CUDA cores)"),
      cl::init("tf32x3"));
  cl::opt<std::string> cudaPath(
      "cuda-path", cl::desc("CUDA toolkit (default: the one of the build)"),
      cl::init(""));
  cl::ParseCommandLineOptions(argc, argv, "fusion GPU compiler\n");

  DialectRegistry registry;
  fusion::registerCompilerDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  std::string error;
  auto file = openInputFile(input, &error);
  if (!file) {
    llvm::errs() << "fusion-compile: " << error << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  fusion::CompileOptions options;
  for (auto [name, value] :
       {std::pair<StringRef, StringRef>{"target", target},
        {"strategy", strategy},
        {"precision", precision},
        {"emit", emit},
        {"tile", tile},
        {"fp32-math", fp32Math}}) {
    std::string error = fusion::setCompileOption(options, name, value);
    if (!error.empty()) {
      llvm::errs() << "fusion-compile: " << error << "\n";
      return 1;
    }
  }
  options.cudaPath = cudaPath;
  return failed(fusion::compileModule(*module, options, output)) ? 1 : 0;
}
