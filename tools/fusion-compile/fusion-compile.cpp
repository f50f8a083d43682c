//===- fusion-compile.cpp - fusion models to GPU shared libraries ---------===//
//
//   fusion-compile model.mlir -o model.so [--target=sm_80] [--strategy=auto|cublas|tiled|wgmma]
//                  [--precision=fp32|tf32|bf16|f16] [--emit=so|mlir|ptx] ...
//
// (the options of include/fusion/Compiler/CompileOptions.def).
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

#include <deque>
#include <memory>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::opt<std::string> input(cl::Positional, cl::desc("<model.mlir>"),
                             cl::Required);
  cl::opt<std::string> output("o", cl::desc("output file"), cl::Required);
  // The flags of CompileOptions.def, parsed and checked by
  // fusion::parseCompileOptions. cl::opt keeps its name by reference.
  ArrayRef<fusion::CompileOptionInfo> infos = fusion::getCompileOptionInfos();
  std::deque<std::string> flagNames;
  std::vector<std::unique_ptr<cl::opt<std::string>>> flags;
  for (const fusion::CompileOptionInfo &info : infos)
    flags.push_back(std::make_unique<cl::opt<std::string>>(
        StringRef(flagNames.emplace_back(info.getFlag())),
        cl::desc(info.description),
        cl::init(info.defaultValue)));
  cl::ParseCommandLineOptions(argc, argv, "fusion GPU compiler\n");

  fusion::CompileOptionText text;
  for (auto [info, flag] : llvm::zip_equal(infos, flags))
    text.*info.field = *flag;
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
