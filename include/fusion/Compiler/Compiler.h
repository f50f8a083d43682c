//===- Compiler.h - fusion module to GPU shared library ---------*- C++ -*-===//
//
// What fusion-compile does, as a library: fuse, lower to a backend, build the
// kernels' binary and the host code, and link a shared library with the C
// ABI of runtime/include/fusion_runtime.h plus its signature file.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_COMPILER_COMPILER_H
#define FUSION_COMPILER_COMPILER_H

#include "fusion/Codegen/Config/Passes.h"
#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
class DialectRegistry;
namespace fusion {

/// What compileModule produces.
enum class EmitKind {
  Library, ///< the shared library and its signature files
  MLIR,    ///< the lowered IR, before the kernels' binary is built
  PTX,     ///< the kernels' PTX
};

struct CompileOptions {
  /// The GPUs the kernels target (their PTX runs on newer GPUs too; with
  /// several, each entry point runs the variant of the newest target the
  /// device runs), or none: an x86-64 library through the CPU reference
  /// lowering, whose entry points take memref descriptors (inputs, then
  /// outputs).
  SmallVector<Chip, 2> chips = {Chip::sm_80};
  /// fusion-select-gemm-config's options: the backend, fp32 math, tiling
  /// overrides (empty, 0: the heuristic's), wgmma schedule and cluster
  /// (its `target` is set per chip).
  SelectGemmConfigOptions gemm;
  /// GEMM precision of f32 chains (none: fp32).
  std::optional<Precision> precision;
  /// Whether the erf and exp of ops with bf16/f16 results may be
  /// approximate (fusion-approximate-16-bit-math).
  bool approximate16BitMath = true;
  EmitKind emit = EmitKind::Library;
  /// The CUDA toolkit (ptxas, fatbinary, cudart, cuBLASLt); empty: the one
  /// fusion was built with.
  std::string cudaPath;
};

/// The options as text, as fusion-compile and the Python package spell them
/// (CompileOptions.def), with their defaults.
struct CompileOptionText {
#define FUSION_COMPILE_OPTION(field, name, value, python, description)        \
  std::string field = value;
#include "fusion/Compiler/CompileOptions.def"
#undef FUSION_COMPILE_OPTION
};

/// One entry of CompileOptions.def.
struct CompileOptionInfo {
  /// The Python keyword; fusion-compile's flag is getFlag().
  const char *name;
  const char *defaultValue;
  /// Whether the Python package's user API takes it.
  bool python;
  const char *description;
  std::string CompileOptionText::*field;

  /// The name with '-' for '_', as fusion-compile's flags and the errors of
  /// parseCompileOptions spell it.
  std::string getFlag() const;
};

/// The options of CompileOptions.def, in its order.
ArrayRef<CompileOptionInfo> getCompileOptionInfos();

/// Parses and checks textual options, the one place that does. On error,
/// `error` names the option and the value. Ranges are checked by the
/// #fusion.gemm_config verifier when the configs are made.
FailureOr<CompileOptions> parseCompileOptions(const CompileOptionText &text,
                                              std::string &error);

/// The dialects and translations compileModule needs.
void registerCompilerDialects(DialectRegistry &registry);

/// Compiles `module` (fusion ops, unfused or fused) as `options` say and
/// writes the result to `outputPath` (for "so", also `outputPath` with
/// `.json` and `.h` for `.so`). Errors are emitted as diagnostics.
LogicalResult compileModule(ModuleOp module, const CompileOptions &options,
                            StringRef outputPath);

} // namespace fusion
} // namespace mlir

#endif // FUSION_COMPILER_COMPILER_H
