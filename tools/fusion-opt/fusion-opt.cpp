//===- fusion-opt.cpp - fusion optimizer driver ---------------------------===//
//
// MlirOptMain with the fusion dialect and the upstream dialects and passes the
// project's pipelines use. Two additions to mlir-opt's behaviour:
//
// - inputs known to crash MLIR 22's parser are refused with a located error
//   (KnownParserCrashes.h, docs/known-issues.md);
// - --verify-output-roundtrip checks that the output (what the passes made,
//   not only the input, which upstream's --verify-roundtrip checks) parses
//   back and prints the same, and that its generic form and bytecode
//   round-trip.
//
//===----------------------------------------------------------------------===//

#include "fusion/Codegen/Config/Passes.h"
#include "fusion/Codegen/Math/Passes.h"
#include "fusion/Codegen/NVVM/Passes.h"
#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"
#include "fusion/Pipelines/Pipelines.h"
#include "TestPasses.h"
#include "fusion/Tools/KnownParserCrashes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

static llvm::cl::opt<bool> verifyOutputRoundtrip(
    "verify-output-roundtrip",
    llvm::cl::desc("Parse the output back (each split chunk on its own) and "
                   "check that it prints the same in the custom form, and "
                   "that its generic form and bytecode round-trip too"),
    llvm::cl::init(false));

/// Separates the output of split-input chunks while it is checked.
static constexpr llvm::StringLiteral kChunkMarker =
    "// ----- fusion-opt output chunk -----";

/// `text` without blank lines and trailing blanks.
static std::string normalize(StringRef text) {
  std::string result;
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (StringRef line : lines) {
    line = line.rtrim();
    if (line.empty())
      continue;
    result += line;
    result += '\n';
  }
  return result;
}

using TopLevelOps = SmallVector<OwningOpRef<Operation *>>;

/// The ops of `block`, taken out of it so that each prints as a top-level
/// op (with its attribute aliases) as fusion-opt prints its output.
static TopLevelOps takeOps(Block &block) {
  TopLevelOps ops;
  while (!block.empty()) {
    Operation *op = &block.front();
    op->remove();
    ops.emplace_back(op);
  }
  return ops;
}

static std::string print(const TopLevelOps &ops, OpPrintingFlags flags) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const OwningOpRef<Operation *> &op : ops) {
    op.get()->print(os, flags);
    os << "\n";
  }
  return text;
}

/// A tee: what fusion-opt writes goes to its output as usual (interleaved
/// with its diagnostics as without the check) and is kept for the check.
class TeeStream : public llvm::raw_ostream {
public:
  TeeStream(llvm::raw_ostream &out, std::string &copy)
      : out(out), copy(copy) {
    SetUnbuffered();
  }

private:
  void write_impl(const char *ptr, size_t size) override {
    out.write(ptr, size);
    copy.append(ptr, size);
  }
  uint64_t current_pos() const override { return copy.size(); }

  llvm::raw_ostream &out;
  std::string &copy;
};

/// Reports `what` with the first line where `expected` and `actual` differ.
static LogicalResult reportDifference(StringRef what, StringRef expected,
                                      StringRef actual) {
  SmallVector<StringRef> expectedLines, actualLines;
  expected.split(expectedLines, '\n');
  actual.split(actualLines, '\n');
  size_t line = 0;
  while (line < expectedLines.size() && line < actualLines.size() &&
         expectedLines[line] == actualLines[line])
    ++line;
  llvm::errs() << "error: --verify-output-roundtrip: " << what
               << "; first difference:\n  "
               << (line < expectedLines.size() ? expectedLines[line] : "")
               << "\nbecomes\n  "
               << (line < actualLines.size() ? actualLines[line] : "")
               << "\n";
  return failure();
}

/// Checks one chunk of fusion-opt's textual output: it parses (in a fresh
/// context), prints the same again, and its generic form and bytecode
/// round-trip.
static LogicalResult checkOutputRoundtrip(StringRef text,
                                          DialectRegistry &registry,
                                          const MlirOptMainConfig &config) {
  if (StringRef(text).trim().empty())
    return success();
  MLIRContext context(registry);
  context.allowUnregisteredDialects(config.shouldAllowUnregisteredDialects());
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "<fusion-opt output>"),
      llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
  ParserConfig parserConfig(&context);
  Block block;
  if (failed(parseSourceFile(sourceMgr, &block, parserConfig))) {
    llvm::errs() << "error: --verify-output-roundtrip: the output does not "
                    "parse back\n";
    return failure();
  }
  TopLevelOps parsed = takeOps(block);
  std::string custom = print(parsed, OpPrintingFlags());
  if (normalize(text) != normalize(custom))
    return reportDifference("the output prints differently once parsed back",
                            normalize(text), normalize(custom));

  OpPrintingFlags genericFlags;
  genericFlags.printGenericOpForm();
  std::string generic = print(parsed, genericFlags);
  Block genericBlock;
  if (failed(parseSourceString(generic, &genericBlock, parserConfig))) {
    llvm::errs() << "error: --verify-output-roundtrip: the generic form of "
                    "the output does not parse back\n";
    return failure();
  }
  std::string genericAgain = print(takeOps(genericBlock), genericFlags);
  if (generic != genericAgain)
    return reportDifference("the generic form does not round-trip", generic,
                            genericAgain);

  // One bytecode file per top-level op.
  std::string reread;
  for (const OwningOpRef<Operation *> &op : parsed) {
    std::string bytecode;
    llvm::raw_string_ostream bytecodeStream(bytecode);
    if (failed(writeBytecodeToFile(op.get(), bytecodeStream)))
      return failure();
    Block bytecodeBlock;
    if (failed(readBytecodeFile(llvm::MemoryBufferRef(bytecode, "bytecode"),
                                &bytecodeBlock, parserConfig))) {
      llvm::errs() << "error: --verify-output-roundtrip: the bytecode of the "
                      "output does not read back\n";
      return failure();
    }
    reread += print(takeOps(bytecodeBlock), genericFlags);
  }
  if (generic != reread)
    return reportDifference("the bytecode does not round-trip", generic,
                            reread);
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAllPasses();
  fusion::registerFusionTransformsPasses();
  fusion::registerFusionConversionPasses();
  fusion::registerFusionConfigPasses();
  fusion::registerFusionMathPasses();
  fusion::registerFusionNVVMPasses();
  fusion::registerFusionPipelines();
  fusion::test::registerFusionTestPasses();

  DialectRegistry registry;
  registry.insert<fusion::FusionDialect, fusion_rt::FusionRuntimeDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "fusion optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (fusion::reportKnownParserCrash(*input))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (!verifyOutputRoundtrip || config.shouldEmitBytecode()) {
    if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
      return 1;
    output->keep();
    return 0;
  }
  std::string text;
  LogicalResult result = failure();
  SmallVector<StringRef> chunks;
  if (static_cast<const MlirOptMainConfig &>(config)
          .inputSplitMarker()
          .empty()) {
    TeeStream tee(output->os(), text);
    result = MlirOptMain(tee, std::move(input), registry, config);
    chunks.push_back(text);
  } else {
    // Split-input chunks are printed separately (attribute aliases are per
    // chunk), so they are checked separately: mark where they end, and
    // write the output with the user's marker.
    std::string userMarker =
        static_cast<const MlirOptMainConfig &>(config).outputSplitMarker().str();
    config.outputSplitMarker(kChunkMarker.str());
    llvm::raw_string_ostream os(text);
    result = MlirOptMain(os, std::move(input), registry, config);
    StringRef(text).split(chunks, (kChunkMarker + "\n").str());
    llvm::interleave(
        chunks, output->os(), [&](StringRef chunk) { output->os() << chunk; },
        userMarker + "\n");
  }
  output->keep();
  if (failed(result))
    return 1;
  for (StringRef chunk : chunks)
    if (failed(checkOutputRoundtrip(chunk, registry, config)))
      return 1;
  return 0;
}
