//===- Compiler.h - fusion module to GPU shared library ---------*- C++ -*-===//
//
// What fusion-compile does, as a library: fuse, lower to a backend, build the
// kernels' binary and the host code, and link a shared library with the C
// ABI of runtime/include/fusion_runtime.h plus its signature file.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_COMPILER_COMPILER_H
#define FUSION_COMPILER_COMPILER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
class DialectRegistry;
namespace fusion {

struct CompileOptions {
  /// GPU architecture of the kernels (their PTX runs on newer GPUs too), or
  /// "cpu": an x86-64 library through the CPU reference lowering, whose
  /// entry points take memref descriptors (inputs, then outputs).
  std::string target = "sm_80";
  /// The backend of fused GEMMs: "cublas" (cuBLASLt GEMM + generated
  /// epilogue kernels), "tiled" (generated tensor-core GEMM kernels with the
  /// epilogue in registers) or "auto" (per op, docs/architecture.md).
  std::string strategy = "cublas";
  /// The tiled strategy's tiling, "BMxBN,WARPSMxWARPSN,STAGES" (e.g.
  /// "128x256,2x4,3"); empty: the heuristic per op.
  std::string tile;
  /// The tiled strategy's f32 GEMMs in fp32: "tf32x3" (tensor cores, split
  /// operands) or "simt" (fma on the CUDA cores).
  std::string fp32Math = "tf32x3";
  /// GEMM precision of f32 chains: fp32, tf32, bf16, f16 ("": fp32).
  std::string precision;
  /// What to produce: "so" (library + signature), "mlir" (lowered IR before
  /// the binary is built), "ptx" (the kernels' PTX).
  std::string emit = "so";
  /// The CUDA toolkit (ptxas, fatbinary, cudart, cuBLASLt); empty: the one
  /// fusion was built with.
  std::string cudaPath;
};

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
