//===- FusionBindings.cpp - the fusion compiler as a Python module --------===//
//
// `fusion._fusion`: an MLIR context with the fusion dialect and everything the
// compiler uses, modules parsed from text, printed, verified, transformed by
// pass pipelines, and compiled into libraries as fusion-compile does; or
// built op by op (IRBuilders.cpp). MLIR diagnostics become `MLIRError`
// exceptions carrying their locations.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "fusion/Codegen/Config/Passes.h"
#include "fusion/Codegen/Math/Passes.h"
#include "fusion/Codegen/NVVM/Passes.h"
#include "fusion/Compiler/Compiler.h"
#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"
#include "fusion/Pipelines/Pipelines.h"
#include "fusion/Tools/KnownParserCrashes.h"

#include "mlir/IR/Verifier.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <pybind11/stl.h>

namespace py = pybind11;
using namespace mlir;
using namespace mlir::fusion::python;

Context::Context() {
  static bool registered = [] {
    registerAllPasses();
    fusion::registerFusionTransformsPasses();
    fusion::registerFusionConversionPasses();
    fusion::registerFusionConfigPasses();
    fusion::registerFusionMathPasses();
    fusion::registerFusionNVVMPasses();
    fusion::registerFusionPipelines();
    return true;
  }();
  (void)registered;
  DialectRegistry registry;
  fusion::registerCompilerDialects(registry);
  context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  // Diagnostics are located; the whole module printed after each would
  // bury them.
  context->printOpOnDiagnostic(false);
}

DiagnosticCollector::DiagnosticCollector(MLIRContext *context)
    : handler(context, [this](Diagnostic &diagnostic) {
        record(diagnostic);
        for (Diagnostic &note : diagnostic.getNotes())
          record(note);
        return success();
      }) {}

void DiagnosticCollector::raise(const std::string &what) {
  throw MLIRError(text.empty() ? what : what + ":\n" + text);
}

void DiagnosticCollector::record(Diagnostic &diagnostic) {
  std::string line;
  llvm::raw_string_ostream os(line);
  os << diagnostic.getLocation() << ": ";
  switch (diagnostic.getSeverity()) {
  case DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  case DiagnosticSeverity::Note:
    os << "note: ";
    break;
  case DiagnosticSeverity::Remark:
    os << "remark: ";
    break;
  }
  os << diagnostic.str();
  text += line + "\n";
}

std::shared_ptr<Module> Module::parse(std::shared_ptr<Context> context,
                                      const std::string &source,
                                      const std::string &name) {
  DiagnosticCollector diagnostics(context->context.get());
  if (size_t at = fusion::findDenseIndexArray(source);
      at != llvm::StringRef::npos) {
    StringRef before = StringRef(source).take_front(at);
    unsigned line = before.count('\n') + 1;
    unsigned column = at - (before.rfind('\n') + 1) + 1;
    emitError(FileLineColLoc::get(context->context.get(), name, line, column))
        << "dense arrays of 'index' are not supported (elements must be "
           "i1 to i64, f32 or f64): MLIR 22's parser crashes on them, so "
           "the input is refused before parsing (docs/known-issues.md)";
    diagnostics.raise("cannot parse " + name);
  }
  ParserConfig config(context->context.get());
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, config, name);
  if (!module)
    diagnostics.raise("cannot parse " + name);
  auto parsed = std::make_shared<Module>();
  parsed->context = std::move(context);
  parsed->module = std::move(module);
  return parsed;
}

std::string Module::str() {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

void Module::verify() {
  DiagnosticCollector diagnostics(context->context.get());
  if (failed(mlir::verify(*module)))
    diagnostics.raise("the module is invalid");
}

/// `pipeline` is anchored on the module, e.g. 'builtin.module(cse)'.
void Module::runPipeline(const std::string &pipeline) {
  DiagnosticCollector diagnostics(context->context.get());
  std::string error;
  llvm::raw_string_ostream os(error);
  FailureOr<OpPassManager> parsed = parsePassPipeline(pipeline, os);
  if (failed(parsed) || parsed->getOpAnchorName() != "builtin.module")
    throw MLIRError("invalid pass pipeline '" + pipeline +
                    "' (expected builtin.module(...)): " + error);
  // Passes assume valid IR: a function still being built (no terminator
  // yet, an elementwise body being filled) could crash them.
  if (failed(mlir::verify(*module)))
    diagnostics.raise("the module is invalid; pass pipeline '" + pipeline +
                      "' not run");
  PassManager pm(context->context.get());
  static_cast<OpPassManager &>(pm) = *parsed;
  // Whatever the outcome, the passes may have rewritten what the builders
  // point into.
  ++generation;
  if (failed(pm.run(*module)))
    diagnostics.raise("pass pipeline '" + pipeline + "' failed");
}

namespace {
/// The compile options of `keywords` (names of CompileOptions.def, values
/// strings; the rest their defaults), parsed; raises TypeError for an
/// unknown name and MLIRError naming a bad value.
fusion::CompileOptions parseOptions(const py::kwargs &keywords) {
  fusion::CompileOptionText text;
  ArrayRef<fusion::CompileOptionInfo> infos = fusion::getCompileOptionInfos();
  for (auto [key, value] : keywords) {
    std::string name = py::cast<std::string>(key);
    const auto *info = llvm::find_if(infos, [&](const auto &info) {
      return name == info.name;
    });
    if (info == infos.end())
      throw py::type_error("unknown compile option '" + name + "'");
    if (!py::isinstance<py::str>(value))
      throw py::type_error("compile option '" + name + "' takes a string");
    text.*info->field = py::cast<std::string>(value);
  }
  std::string error;
  FailureOr<fusion::CompileOptions> options =
      fusion::parseCompileOptions(text, error);
  if (failed(options))
    throw MLIRError(error);
  return *options;
}
} // namespace

/// Compiles a copy: the module itself stays as it is.
void Module::compile(const std::string &output, const py::kwargs &keywords) {
  fusion::CompileOptions options = parseOptions(keywords);
  DiagnosticCollector diagnostics(context->context.get());
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>((*module)->clone());
  if (failed(fusion::compileModule(*copy, options, output)))
    diagnostics.raise("compilation failed");
}

PYBIND11_MODULE(_fusion, m) {
  m.doc() = "The fusion compiler: parse, verify, transform and compile "
            "fusion-dialect modules.";
  py::register_exception<MLIRError>(m, "MLIRError", PyExc_ValueError);

  py::class_<Context, std::shared_ptr<Context>>(m, "Context").def(py::init<>());

  // The dialect's enums, by code, for the package's tables to be checked
  // against (fusion/dtypes.py).
  m.def(
      "element_types",
      [] {
        std::vector<std::string> names;
        for (uint32_t code = 0; std::optional<fusion::ElementType> type =
                                    fusion::symbolizeElementType(code);
             ++code)
          names.push_back(fusion::stringifyElementType(*type).str());
        return names;
      },
      "The names of the element types fusion computes on, in the order of "
      "their codes in the runtime's C ABI.");

  m.def(
      "check_compile_options",
      [](const py::kwargs &keywords) { parseOptions(keywords); },
      "Raises MLIRError naming the first invalid option, as compile would "
      "(the options of CompileOptions.def, as strings).");
  m.def(
      "compile_option_defaults",
      [] {
        py::dict defaults;
        for (const fusion::CompileOptionInfo &info :
             fusion::getCompileOptionInfos())
          defaults[info.name] = info.defaultValue;
        return defaults;
      },
      "{name: default} of every compile option, as the compiler was built "
      "with them.");

  ModuleClass module(m, "Module");
  module
      .def_static("parse", &Module::parse, py::arg("context"),
                  py::arg("source"), py::arg("name") = "<string>",
                  "Parses and verifies a module; raises MLIRError.")
      .def("__str__", &Module::str)
      .def("verify", &Module::verify)
      .def("run_pipeline", &Module::runPipeline, py::arg("pipeline"),
           "Runs a textual pass pipeline, e.g. "
           "'builtin.module(fusion-optimize)'.")
      .def("compile", &Module::compile, py::arg("output"),
           "Compiles as fusion-compile does, writing `output` (and its "
           ".json/.h signature files); keywords are the compile options of "
           "CompileOptions.def, as strings.");
  bindIRBuilders(m, module);
}
