//===- Compiler.cpp - fusion module to GPU shared library -----------------===//

#include "fusion/Compiler/Compiler.h"
#include "fusion/Compiler/PackedEntries.h"
#include "fusion/Compiler/TargetVariants.h"
#include "fusion/Dialect/Fusion/IR/EntryPoints.h"

#include "fusion/Codegen/Config/Chips.h"
#include "fusion/Codegen/NVVM/Passes.h"
#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/IR/GemmConfig.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"
#include "fusion/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

#include "fusion_runtime.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fusion;

void mlir::fusion::registerCompilerDialects(DialectRegistry &registry) {
  registry.insert<FusionDialect, fusion_rt::FusionRuntimeDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
}

namespace {

/// The dialect's name of an element type fusion-verify-entry-points let
/// through, as the signature files and the Python package spell it.
StringRef elementTypeName(Type type) {
  return stringifyElementType(*getElementTypeKind(type));
}

std::string cTypeComment(RankedTensorType type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << elementTypeName(type.getElementType());
  for (int64_t dim : type.getShape())
    os << "[" << (ShapedType::isDynamic(dim) ? "batch" : std::to_string(dim))
       << "]";
  return text;
}

llvm::json::Object tensorJson(unsigned index, RankedTensorType type) {
  llvm::json::Array shape;
  for (int64_t dim : type.getShape())
    shape.push_back(ShapedType::isDynamic(dim) ? llvm::json::Value(nullptr)
                                               : llvm::json::Value(dim));
  return llvm::json::Object{{"index", index},
                            {"shape", std::move(shape)},
                            {"dtype", elementTypeName(type.getElementType())}};
}

/// The C type holding one element of a tensor: 16-bit floats as their bits.
StringRef cElementType(Type type) {
  return type.isF32() ? "float" : "uint16_t";
}

/// The C prototype of an entry point of a CPU library: the tensor function
/// wrapped in destination-passing style (fusion-cpu-entry-abi) and lowered
/// by func-to-llvm, so each memref (inputs, then outputs) is its expanded
/// descriptor: allocated and aligned pointer, offset, sizes, strides.
std::string cpuPrototype(func::FuncOp func) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "void " << func.getName() << "(";
  bool first = true;
  auto descriptor = [&](StringRef name, RankedTensorType type, bool input) {
    StringRef element = cElementType(type.getElementType());
    os << (first ? "" : ", ") << (input ? "const " : "") << element << " *"
       << name << "_allocated /* " << cTypeComment(type) << " */, "
       << (input ? "const " : "") << element << " *" << name
       << "_aligned, int64_t " << name << "_offset";
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      os << ", int64_t " << name << "_size" << dim;
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      os << ", int64_t " << name << "_stride" << dim;
    first = false;
  };
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
    descriptor(("input" + Twine(index)).str(), cast<RankedTensorType>(type),
               true);
  for (auto [index, type] : llvm::enumerate(func.getResultTypes()))
    descriptor(("output" + Twine(index)).str(), cast<RankedTensorType>(type),
               false);
  os << ")";
  return text;
}

/// The C prototype of an entry point of a GPU library (see
/// fusion_runtime.h), naming the input each output may be written into.
std::string prototype(func::FuncOp func, bool batch) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "int32_t " << func.getName() << "(void *stream";
  if (batch)
    os << ", int64_t batch";
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
    os << ", const void *input" << index << " /* "
       << cTypeComment(cast<RankedTensorType>(type)) << " */";
  for (auto [index, type] : llvm::enumerate(func.getResultTypes())) {
    os << ", void *output" << index << " /* "
       << cTypeComment(cast<RankedTensorType>(type));
    if (std::optional<unsigned> input = getUpdatedArgument(func, index))
      os << ", may be input" << *input;
    os << " */";
  }
  os << ")";
  return text;
}

/// Writes `<stem>.json` and `<stem>.h` describing every entry point.
LogicalResult writeSignatures(ModuleOp module, StringRef libraryPath,
                              StringRef target) {
  llvm::json::Array entries;
  bool cpu = target == "cpu";
  std::string header =
      "/* Generated by fusion-compile: the entry points of " +
      llvm::sys::path::filename(libraryPath).str() +
      (cpu ? ".\n * A CPU library: each tensor is passed as an MLIR memref "
             "descriptor\n * (allocated and aligned pointer, offset, sizes, "
             "strides), inputs\n * first, outputs written in place. */\n"
           : ".\n * ABI and status codes: fusion_runtime.h. */\n") +
      "#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n" +
      (cpu ? "" : "const char *fusion_last_error_message(void);\n");
  for (func::FuncOp func : getEntryPoints(module)) {
    bool batch = llvm::any_of(
        llvm::concat<const Type>(func.getArgumentTypes(),
                                 func.getResultTypes()),
        [](Type t) { return !cast<RankedTensorType>(t).hasStaticShape(); });
    llvm::json::Array inputs, outputs;
    for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
      inputs.push_back(tensorJson(index, cast<RankedTensorType>(type)));
    for (auto [index, type] : llvm::enumerate(func.getResultTypes())) {
      llvm::json::Object output =
          tensorJson(index, cast<RankedTensorType>(type));
      if (std::optional<unsigned> input =
              cpu ? std::nullopt : getUpdatedArgument(func, index))
        output["updates_input"] = *input;
      outputs.push_back(std::move(output));
    }
    std::string signature = cpu ? cpuPrototype(func) : prototype(func, batch);
    entries.push_back(llvm::json::Object{{"name", func.getName()},
                                         {"batch", batch},
                                         {"inputs", std::move(inputs)},
                                         {"outputs", std::move(outputs)},
                                         {"c_prototype", signature}});
    header += signature + ";\n";
  }
  header += "\n#ifdef __cplusplus\n}\n#endif\n";

  SmallString<256> stem(libraryPath);
  llvm::sys::path::replace_extension(stem, "");
  std::string error;
  auto json = openOutputFile((stem + ".json").str(), &error);
  auto h = openOutputFile((stem + ".h").str(), &error);
  if (!json || !h)
    return module.emitError() << error;
  json->os() << llvm::formatv(
      "{0:2}\n", llvm::json::Value(llvm::json::Object{
                     {"library", llvm::sys::path::filename(libraryPath)},
                     {"target", target},
                     {"entry_points", std::move(entries)}}));
  h->os() << header;
  json->keep();
  h->keep();
  return success();
}

/// Defines `__truncsfbf2` (float to bfloat, rounded to nearest even, a NaN
/// kept quiet), hidden: the x86-64 code generator calls it to store a
/// bfloat it carried in a float register (a loaded value that crosses
/// blocks), and libgcc before GCC 13 lacks it, so the library would not
/// load. Added after the optimizer, which would drop it unused.
static void defineBfloatTruncation(llvm::Module &module) {
  constexpr llvm::StringLiteral name = "__truncsfbf2";
  if (module.getFunction(name))
    return;
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *bfloat = llvm::Type::getBFloatTy(context);
  auto *function = llvm::Function::Create(
      llvm::FunctionType::get(bfloat, {llvm::Type::getFloatTy(context)},
                              /*isVarArg=*/false),
      llvm::GlobalValue::ExternalLinkage, name, module);
  function->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "", function));
  llvm::Value *x = function->getArg(0);
  llvm::Value *bits = b.CreateBitCast(x, b.getInt32Ty());
  llvm::Value *high = b.CreateLShr(bits, 16);
  llvm::Value *rounded = b.CreateLShr(
      b.CreateAdd(b.CreateAdd(bits, b.getInt32(0x7fff)), b.CreateAnd(high, 1)),
      16);
  llvm::Value *quietNan = b.CreateOr(high, 0x40);
  llvm::Value *result =
      b.CreateSelect(b.CreateFCmpUNO(x, x), quietNan, rounded);
  b.CreateRet(b.CreateBitCast(b.CreateTrunc(result, b.getInt16Ty()), bfloat));
}

/// The host module as an x86-64 object file at `objectPath`.
LogicalResult emitHostObject(ModuleOp module, StringRef objectPath) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "fusion");
  if (!llvmModule)
    return module.emitError("LLVM IR translation failed");
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError() << error;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  if (llvm::Error err =
          makeOptimizingTransformer(2, 0, machine.get())(llvmModule.get()))
    return module.emitError() << llvm::toString(std::move(err));
  defineBfloatTruncation(*llvmModule);
  std::error_code ec;
  llvm::raw_fd_ostream os(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return module.emitError() << ec.message();
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return module.emitError("cannot emit an object file");
  codegen.run(*llvmModule);
  return success();
}

/// Links the host object into a shared library: with the GPU runtime for
/// the GPU, alone (and libm) for the CPU.
LogicalResult link(ModuleOp module, StringRef objectPath, StringRef libraryPath,
                   StringRef cudaPath, bool gpu) {
  llvm::ErrorOr<std::string> cxx = llvm::sys::findProgramByName("c++");
  if (!cxx)
    return module.emitError("no c++ on PATH to link with");
  SmallVector<std::string> args{
      *cxx, "-shared", "-o", libraryPath.str(), objectPath.str(), "-lm"};
  if (gpu) {
#ifdef FUSION_RUNTIME_ARCHIVE
    std::string cudaLib = (cudaPath + "/lib64").str();
    args.append({FUSION_RUNTIME_ARCHIVE, cudaLib + "/libcudart_static.a",
                 "-L" + cudaLib, "-lcublasLt", "-ldl", "-lpthread", "-lrt",
                 // Calls inside the library bind to its own runtime, and the
                 // static CUDA runtime stays private, whatever else the
                 // process loads.
                 "-Wl,-Bsymbolic", "-Wl,--exclude-libs,libcudart_static.a",
                 "-Wl,-rpath," + cudaLib});
#else
    return module.emitError("built without the CUDA "
                            "toolkit; only --target=cpu is available");
#endif
  }
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string error;
  int code =
      llvm::sys::ExecuteAndWait(*cxx, argRefs, std::nullopt, {}, 0, 0, &error);
  if (code != 0)
    return module.emitError() << "linking failed (" << code << ") " << error;
  return success();
}

/// The host object, linked (with the GPU runtime for `gpu`) into the shared
/// library at `outputPath`.
LogicalResult buildLibrary(ModuleOp module, StringRef outputPath,
                           StringRef cudaPath, bool gpu) {
  SmallString<128> objectPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("fusion-host", "o", objectPath))
    return module.emitError() << ec.message();
  llvm::FileRemover removeObject(objectPath);
  if (failed(emitHostObject(module, objectPath)))
    return failure();
  return link(module, objectPath, outputPath, cudaPath, gpu);
}

LogicalResult writeText(ModuleOp module, StringRef path, StringRef text) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file)
    return module.emitError() << error;
  file->os() << text;
  file->keep();
  return success();
}

LogicalResult writeModule(ModuleOp module, StringRef path) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return writeText(module, path, text);
}

} // namespace

namespace {
/// --target: "cpu" or distinct chips separated by commas; false if invalid.
bool setTarget(CompileOptions &options, StringRef value) {
  options.chips.clear();
  if (value == "cpu")
    return true;
  SmallVector<StringRef> names;
  value.split(names, ',');
  for (StringRef chipName : names) {
    std::optional<Chip> chip = symbolizeChip(chipName);
    if (!chip || llvm::is_contained(options.chips, *chip))
      return false;
    options.chips.push_back(*chip);
  }
  return true;
}

/// --tile: BMxBN,WMxWN,STAGES (five positive integers), or "" for the
/// selection's own; false if invalid.
bool setTile(SelectGemmConfigOptions &gemm, StringRef value) {
  gemm.tile.clear();
  gemm.warps.clear();
  gemm.stages = 0;
  if (value.empty())
    return true;
  SmallVector<StringRef, 3> parts;
  value.split(parts, ',');
  SmallVector<int64_t, 5> numbers;
  auto parseExtents = [&](StringRef part, unsigned count) {
    SmallVector<StringRef, 2> extents;
    part.split(extents, 'x');
    if (extents.size() != count)
      return false;
    for (StringRef extent : extents) {
      int64_t number;
      if (extent.getAsInteger(10, number) || number <= 0)
        return false;
      numbers.push_back(number);
    }
    return true;
  };
  if (parts.size() != 3 || !parseExtents(parts[0], 2) ||
      !parseExtents(parts[1], 2) || !parseExtents(parts[2], 1))
    return false;
  gemm.tile = {numbers[0], numbers[1]};
  gemm.warps = {numbers[2], numbers[3]};
  gemm.stages = numbers[4];
  return true;
}

/// Sets the option `name` of `options` from its textual form; returns an
/// error message naming the option and the value, or "".
std::string setCompileOption(CompileOptions &options, StringRef name,
                             StringRef value) {
  auto invalid = [&](StringRef expected) {
    return ("invalid --" + name + "='" + value + "' (expected " + expected +
            ")")
        .str();
  };
  if (name == "target")
    return setTarget(options, value)
               ? ""
               : invalid("cpu, or one or more different supported GPUs "
                         "separated by commas: " +
                         getSupportedChipList());
  if (name == "strategy") {
    if (std::optional<GemmStrategy> strategy = symbolizeGemmStrategy(value)) {
      options.gemm.strategy = *strategy;
      return "";
    }
    return invalid("cublas, tiled, wgmma or auto");
  }
  if (name == "fp32-math") {
    if (std::optional<Fp32Math> math = symbolizeFp32Math(value)) {
      options.gemm.fp32Math = *math;
      return "";
    }
    return invalid("tf32x3 or simt");
  }
  if (name == "cluster") {
    if (value == "1" || value == "2") {
      options.gemm.cluster = value[0] - '0';
      return "";
    }
    return invalid("1 or 2");
  }
  if (name == "math16") {
    if (value == "approximate" || value == "exact") {
      options.approximate16BitMath = value == "approximate";
      return "";
    }
    return invalid("approximate or exact");
  }
  if (name == "schedule") {
    if (std::optional<WgmmaSchedule> schedule = symbolizeWgmmaSchedule(value)) {
      options.gemm.schedule = *schedule;
      return "";
    }
    return invalid("cooperative or pingpong");
  }
  if (name == "tile-scheduler") {
    if (std::optional<TileScheduler> scheduler =
            symbolizeTileScheduler(value)) {
      options.gemm.tileScheduler = *scheduler;
      return "";
    }
    return invalid("persistent or per_block");
  }
  if (name == "precision") {
    if (value.empty()) {
      options.precision = std::nullopt;
      return "";
    }
    if (std::optional<Precision> precision = symbolizePrecision(value)) {
      options.precision = precision;
      return "";
    }
    return invalid("fp32, tf32, bf16 or f16");
  }
  if (name == "emit") {
    std::optional<EmitKind> kind =
        llvm::StringSwitch<std::optional<EmitKind>>(value)
            .Case("so", EmitKind::Library)
            .Case("mlir", EmitKind::MLIR)
            .Case("ptx", EmitKind::PTX)
            .Default(std::nullopt);
    if (!kind)
      return invalid("so, mlir or ptx");
    options.emit = *kind;
    return "";
  }
  if (name == "tile")
    return setTile(options.gemm, value)
               ? ""
               : invalid("BMxBN,WMxWN,STAGES of positive integers, e.g. "
                         "128x256,2x4,3");
  if (name == "cuda-path") {
    options.cudaPath = value.str();
    return "";
  }
  return ("unknown option '" + name + "'").str();
}
/// Lowers the fused `module` for `chip`: host code calling the runtime,
/// beside the kernels' gpu.module.
LogicalResult lowerToGpu(ModuleOp module, Chip chip,
                         const CompileOptions &options) {
  PassManager lower(module.getContext());
  SelectGemmConfigOptions select = options.gemm;
  select.target = chip;
  lower.addPass(createSelectGemmConfig(select));
  lower.addPass(createConvertFusionToGPU());
  lower.addPass(createLowerFusionRuntimeToLLVM());
  buildKernelsToNVVMPipeline(lower);
  return lower.run(module);
}

/// Whether a lowered module's kernels are built for an arch-specific
/// target (sm_90a), whose code runs on that chip alone.
bool targetsArchSpecificChip(ModuleOp module) {
  auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
  if (!kernels || !kernels.getTargets())
    return false;
  return llvm::any_of(*kernels.getTargets(), [](Attribute target) {
    auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target);
    return nvvm && nvvm.getChip().ends_with("a");
  });
}

/// Compiles a lowered module's kernels into a fatbin (or PTX).
LogicalResult buildKernelBinary(ModuleOp module, StringRef cudaPath, bool ptx) {
  PassManager binary(module.getContext());
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.toolkitPath = cudaPath.str();
  toBinary.compilationTarget = ptx ? "isa" : "fatbin";
  binary.addPass(createGpuModuleToBinaryPass(toBinary));
  return binary.run(module);
}

/// Puts the kernels' binary into the host code as a constant.
LogicalResult embedKernels(ModuleOp module) {
  PassManager host(module.getContext());
  host.addPass(createEmbedKernelImage());
  host.addPass(createCanonicalizerPass());
  host.addPass(createCSEPass());
  return host.run(module);
}
} // namespace

std::string mlir::fusion::CompileOptionInfo::getFlag() const {
  std::string flag = name;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

ArrayRef<CompileOptionInfo> mlir::fusion::getCompileOptionInfos() {
  static const CompileOptionInfo infos[] = {
#define FUSION_COMPILE_OPTION(field, name, value, python, description)         \
  {name, value, python != 0, description, &CompileOptionText::field},
#include "fusion/Compiler/CompileOptions.def"
#undef FUSION_COMPILE_OPTION
  };
  return infos;
}

FailureOr<CompileOptions>
mlir::fusion::parseCompileOptions(const CompileOptionText &text,
                                  std::string &error) {
  CompileOptions options;
  for (const CompileOptionInfo &info : getCompileOptionInfos()) {
    error = setCompileOption(options, info.getFlag(), text.*info.field);
    if (!error.empty())
      return failure();
  }
  return options;
}

/// The checks of the entry points (types, tensor and constant sizes:
/// refused here, with a located diagnostic, rather than crashing a
/// lowering), then fusion-optimize.
static LogicalResult verifyAndFuse(ModuleOp module,
                                   const CompileOptions &options) {
  MLIRContext *context = module.getContext();
  PassManager verify(context);
  verify.addPass(createVerifyEntryPoints());
  if (failed(verify.run(module)))
    return failure();
  PassManager fuse(context);
  OptimizePipelineOptions optimize;
  if (options.precision)
    optimize.f32Precision = *options.precision;
  optimize.approximate16BitMath = options.approximate16BitMath;
  buildOptimizePipeline(fuse, optimize);
  return fuse.run(module);
}

/// The fused `module` for the CPU: its IR, or its library and signatures.
static LogicalResult compileForCpu(ModuleOp module, ModuleOp signatures,
                                   const CompileOptions &options,
                                   StringRef cudaPath, StringRef outputPath) {
  if (options.emit == EmitKind::PTX)
    return module.emitError("--emit=ptx needs a GPU target");
  PassManager reference(module.getContext());
  reference.addPass(createCpuEntryAbi());
  reference.addPass(createInlinerPass());
  reference.addPass(createSymbolDCEPass());
  buildLowerToCpuPipeline(reference);
  if (failed(reference.run(module)) ||
      failed(addPackedCpuEntries(module, signatures)))
    return failure();
  if (options.emit == EmitKind::MLIR)
    return writeModule(module, outputPath);
  if (failed(buildLibrary(module, outputPath, cudaPath, /*gpu=*/false)))
    return failure();
  return writeSignatures(signatures, outputPath, "cpu");
}

/// The fused `module` for one GPU: its IR, its kernels' PTX, or its
/// library and signatures.
static LogicalResult compileForGpu(ModuleOp module, ModuleOp signatures,
                                   const CompileOptions &options,
                                   StringRef cudaPath, StringRef outputPath,
                                   StringRef targetNames) {
  if (failed(lowerToGpu(module, options.chips.front(), options)))
    return failure();
  if (options.emit == EmitKind::MLIR)
    return writeModule(module, outputPath);
  bool ptx = options.emit == EmitKind::PTX;
  if (failed(buildKernelBinary(module, cudaPath, ptx)))
    return failure();
  if (ptx) {
    auto gpuBinary = module.lookupSymbol<gpu::BinaryOp>(kKernelModuleName);
    auto object = cast<gpu::ObjectAttr>(gpuBinary.getObjects()[0]);
    return writeText(module, outputPath, object.getObject().getValue());
  }
  if (failed(embedKernels(module)) ||
      failed(buildLibrary(module, outputPath, cudaPath, /*gpu=*/true)))
    return failure();
  return writeSignatures(signatures, outputPath, targetNames);
}

/// The fused `module` for several GPUs: each entry point's host code and
/// kernels once per target, and an entry point that picks one per call.
static LogicalResult compileForGpus(ModuleOp module, ModuleOp signatures,
                                    const CompileOptions &options,
                                    StringRef cudaPath, StringRef outputPath,
                                    StringRef targetNames) {
  if (options.emit != EmitKind::Library)
    return module.emitError("--emit=mlir and --emit=ptx take one --target");
  OwningOpRef<ModuleOp> library = ModuleOp::create(module.getLoc());
  SmallVector<TargetVariant> targets;
  for (Chip chip : options.chips) {
    OwningOpRef<ModuleOp> variant = cast<ModuleOp>(module->clone());
    if (failed(lowerToGpu(*variant, chip, options)))
      return failure();
    // Chip's enum values are the capabilities (FusionAttrs.td).
    TargetVariant target{stringifyChip(chip).str(), static_cast<int32_t>(chip),
                         targetsArchSpecificChip(*variant)};
    if (failed(buildKernelBinary(*variant, cudaPath, /*ptx=*/false)) ||
        failed(embedKernels(*variant)) ||
        failed(addTargetVariant(*library, *variant, target)))
      return failure();
    targets.push_back(target);
  }
  SmallVector<std::string> entries;
  for (func::FuncOp func : getEntryPoints(signatures)) {
    entries.push_back(func.getName().str());
    entries.push_back((func.getName() + FUSION_PACKED_ENTRY_SUFFIX).str());
  }
  if (failed(buildVariantDispatchers(*library, entries, targets)) ||
      failed(buildLibrary(*library, outputPath, cudaPath, /*gpu=*/true)))
    return failure();
  return writeSignatures(signatures, outputPath, targetNames);
}

LogicalResult mlir::fusion::compileModule(ModuleOp module,
                                          const CompileOptions &options,
                                          StringRef outputPath) {
#ifdef FUSION_DEFAULT_CUDA_PATH
  std::string cudaPath =
      options.cudaPath.empty() ? FUSION_DEFAULT_CUDA_PATH : options.cudaPath;
#else
  std::string cudaPath = options.cudaPath;
#endif
  if (failed(verifyAndFuse(module, options)))
    return failure();
  // The signatures come from the functions before they are lowered.
  OwningOpRef<ModuleOp> signatures = cast<ModuleOp>(module->clone());
  if (options.chips.empty())
    return compileForCpu(module, *signatures, options, cudaPath, outputPath);

  // A module that names its target keeps it; one that names another than
  // the options' (or several) is refused rather than compiled for either.
  std::string targetNames =
      llvm::join(llvm::map_range(options.chips,
                                 [](Chip chip) { return stringifyChip(chip); }),
                 ",");
  if (auto target = TargetAttr::lookup(module);
      target &&
      (options.chips.size() != 1 || target.getChip() != options.chips.front()))
    return module.emitError()
           << "the module targets " << stringifyChip(target.getChip())
           << ", --target says " << targetNames;
  if (options.chips.size() == 1)
    return compileForGpu(module, *signatures, options, cudaPath, outputPath,
                         targetNames);
  return compileForGpus(module, *signatures, options, cudaPath, outputPath,
                        targetNames);
}
