//===- Bindings.h - what the extension's translation units share -*- C++
//-*-===//
//
// The objects behind `fusion._fusion`'s Context and Module, and the error
// type every MLIR failure becomes. FusionBindings.cpp defines the module's
// text interface (parse, print, pipelines, compile); IRBuilders.cpp the op
// builders. Kept apart so that neither translation unit grows with the other.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_PYTHON_BINDINGS_H
#define FUSION_PYTHON_BINDINGS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace mlir::fusion::python {

/// Thrown with the collected diagnostics; Python sees fusion.MLIRError.
struct MLIRError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An MLIR context with the fusion dialect and everything the compiler uses.
struct Context {
  Context();
  std::unique_ptr<mlir::MLIRContext> context;
};

/// Collects every diagnostic emitted while it lives, with its location.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *context);
  [[noreturn]] void raise(const std::string &what);

private:
  void record(mlir::Diagnostic &diagnostic);

  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

/// Held by shared pointer: the builders' values keep their module alive.
struct Module {
  std::shared_ptr<Context> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// Bumped whenever a pass pipeline may have rewritten the IR, which
  /// invalidates the builders' handles into it.
  uint64_t generation = 0;

  static std::shared_ptr<Module> parse(std::shared_ptr<Context> context,
                                       const std::string &source,
                                       const std::string &name);
  std::string str();
  void verify();
  void runPipeline(const std::string &pipeline);
  /// Compiles as fusion-compile does; `options` are keywords of
  /// CompileOptions.def.
  void compile(const std::string &output, const pybind11::kwargs &options);
};

using ModuleClass = pybind11::class_<Module, std::shared_ptr<Module>>;

/// Adds Module.create, Module.add_function and the builder classes.
void bindIRBuilders(pybind11::module_ &m, ModuleClass &module);

} // namespace mlir::fusion::python

#endif // FUSION_PYTHON_BINDINGS_H
