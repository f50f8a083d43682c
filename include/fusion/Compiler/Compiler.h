//===- Compiler.h - fusion module to GPU shared library ---------*- C++ -*-===//
//
// What fusion-compile does, as a library: fuse, lower to a backend, build the
// kernels' binary and the host code, and link a shared library with the C
// ABI of runtime/include/fusion_runtime.h plus its signature file.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_COMPILER_COMPILER_H
#define FUSION_COMPILER_COMPILER_H

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
  /// The GPU the kernels target (their PTX runs on newer GPUs too), or none:
  /// an x86-64 library through the CPU reference lowering, whose entry
  /// points take memref descriptors (inputs, then outputs).
  std::optional<Chip> chip = Chip::sm_80;
  /// How fusion-select-gemm-config picks each fused GEMM's backend.
  GemmStrategy strategy = GemmStrategy::Auto;
  /// Generated kernels' f32 GEMMs in fp32.
  Fp32Math fp32Math = Fp32Math::tf32x3;
  /// GEMM precision of f32 chains (none: fp32).
  std::optional<Precision> precision;
  /// Overrides of the generated kernels' tiling, {BM, BN}, {WM, WN}, stages
  /// (empty, 0: the heuristic's).
  SmallVector<int64_t, 2> tile, warps;
  int64_t stages = 0;
  EmitKind emit = EmitKind::Library;
  /// The CUDA toolkit (ptxas, fatbinary, cudart, cuBLASLt); empty: the one
  /// fusion was built with.
  std::string cudaPath;
};

/// Sets the option `name` of `options` from its textual form, as
/// fusion-compile and the Python package spell it: `target` (sm_80, sm_86,
/// sm_89, sm_90 or cpu), `strategy` (cublas, tiled, auto), `fp32-math`
/// (tf32x3, simt), `precision` (fp32, tf32, bf16, f16), `tile`
/// (BMxBN,WMxWN,STAGES), `emit` (so, mlir, ptx). Returns an error message
/// naming the option and the value, or "" on success. Ranges are checked
/// by the #fusion.gemm_config verifier when the configs are made.
std::string setCompileOption(CompileOptions &options, StringRef name,
                             StringRef value);

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
