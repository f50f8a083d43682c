//===- ModuleCall.cpp - a fusion.compile'd module's call in C++ -----------===//
//
// `fusion._torch_ops`: the Python extension behind a fusion.compile'd
// module's forward in its common case (no gradient to record, no running
// statistics to write back, arguments the library takes as they are).
// `module_plan(...)` captures what the forward checks and reads at every
// call: the module's submodules and constants as compiled, its batch norms'
// and dropouts' mode, where each library argument comes from (an input, or a
// parameter or buffer read from its owner now) and the outputs' shapes.
// `call(plan, *inputs)` does the forward's work with no Python frame and
// calls the entry point through fusion::run's checks (TorchOperator.h)
// without the dispatcher. Whatever is not the common case (a changed module,
// mixed modes, a tensor subclass, an active mode or transform, a failed
// check) returns NotImplemented, and the Python forward, which explains
// every refusal, runs instead.
//
// Built against Python's limited API, so that one binary serves every
// Python from 3.11 on. libtorch_python's headers need the full API, so the
// three of its symbols used here are declared below; module_plan checks
// their layout against a probe tensor and refuses a plan if it differs.
//
//===----------------------------------------------------------------------===//

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "TorchOperator.h"

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/randint.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>

#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// libtorch_python's (torch/csrc/autograd/python_variable.h).
extern PyObject *THPVariableClass;
extern PyObject *ParameterClass;
PyObject *THPVariable_Wrap(const at::TensorBase &var);

namespace {

/// torch.Tensor's object: PyTorch's THPVariable up to its tensor.
struct TensorObject {
  PyObject head;
  at::Tensor tensor;
};

/// A strong reference.
class Ref {
public:
  Ref() = default;
  explicit Ref(PyObject *borrowed) : object(borrowed) { Py_XINCREF(object); }
  static Ref steal(PyObject *owned) {
    Ref ref;
    ref.object = owned;
    return ref;
  }
  Ref(const Ref &other) : Ref(other.object) {}
  Ref(Ref &&other) noexcept : object(std::exchange(other.object, nullptr)) {}
  Ref &operator=(Ref other) {
    std::swap(object, other.object);
    return *this;
  }
  ~Ref() { Py_XDECREF(object); }
  PyObject *get() const { return object; }
  PyObject *release() { return std::exchange(object, nullptr); }
  explicit operator bool() const { return object != nullptr; }

private:
  PyObject *object = nullptr;
};

/// Thrown while building a plan: the Python exception is set.
struct PythonError {};

Ref check(PyObject *owned) {
  if (!owned)
    throw PythonError();
  return Ref::steal(owned);
}

/// Item `index` of a Python sequence.
Ref item(PyObject *sequence, Py_ssize_t index) {
  return check(PySequence_GetItem(sequence, index));
}

Py_ssize_t length(PyObject *sequence) {
  Py_ssize_t size = PySequence_Size(sequence);
  if (size < 0)
    throw PythonError();
  return size;
}

int64_t integer(PyObject *value) {
  long long result = PyLong_AsLongLong(value);
  if (result == -1 && PyErr_Occurred())
    throw PythonError();
  return result;
}

/// Where a library argument comes from: input `input`; or, if it is -1, the
/// parameter or buffer `name` of the module whose `__dict__` is `owner`; or,
/// where `seedBits` is set, the seed of the library's draws, drawn now as
/// fusion.random.draw_seed draws it (two int32 from PyTorch's generator in
/// [low, high), viewed as f32).
struct ArgumentSource {
  Py_ssize_t input = -1;
  Ref owner, name;
  std::optional<std::pair<int64_t, int64_t>> seedBits;
};

/// The entry point of a mode and its arguments' sources.
struct EntryPlan {
  std::string key;
  std::vector<ArgumentSource> arguments;
};

/// `children[name] is child`: a submodule as compiled.
struct ChildCheck {
  Ref children, name, child;
};

/// A module's `__dict__` holds `count` attributes, `constants` among them.
struct ConstantsCheck {
  Ref attributes;
  Py_ssize_t count;
  std::vector<std::pair<Ref, Ref>> constants;
};

enum class OutputStructure { Tensor, Tuple, List };

struct ModulePlan {
  Py_ssize_t inputs = 0;
  std::vector<ChildCheck> children;
  std::vector<ConstantsCheck> constants;
  std::vector<Ref> modeModules;
  std::optional<EntryPlan> train, eval;
  std::vector<std::vector<int64_t>> outputTails;
  bool plainOutputs = true;
  OutputStructure structure = OutputStructure::Tensor;
};

const char *const planName = "fusion.ModulePlan";

//===----------------------------------------------------------------------===//
// The call
//===----------------------------------------------------------------------===//

/// Why the common case does not apply; the Python forward takes over.
struct NotCommon {};

/// The tensor of `object` if it is a torch.Tensor or nn.Parameter itself (a
/// subclass may override what the call does) of plain dense storage.
const at::Tensor &plainTensor(PyObject *object) {
  PyTypeObject *type = Py_TYPE(object);
  if (type != reinterpret_cast<PyTypeObject *>(THPVariableClass) &&
      type != reinterpret_cast<PyTypeObject *>(ParameterClass))
    throw NotCommon();
  const at::Tensor &tensor = reinterpret_cast<TensorObject *>(object)->tensor;
  static const c10::DispatchKeySet wrapped{
      c10::DispatchKey::Python,
      c10::DispatchKey::PythonTLSSnapshot,
      c10::DispatchKey::Functionalize,
      c10::DispatchKey::FuncTorchBatched,
      c10::DispatchKey::FuncTorchGradWrapper,
      c10::DispatchKey::Conjugate,
      c10::DispatchKey::Negative,
      c10::DispatchKey::ZeroTensor};
  if (!tensor.defined() || tensor.key_set().has_any(wrapped))
    throw NotCommon();
  return tensor;
}

/// No mode, transform or tracing that the Python forward's ops would pass
/// through is active.
bool plainDispatch() {
  static const c10::DispatchKeySet usual{c10::DispatchKey::BackendSelect,
                                         c10::DispatchKey::ADInplaceOrView};
  return (c10::impl::tls_local_dispatch_key_set().included_ - usual).empty() &&
         !c10::impl::TorchDispatchModeTLS::any_modes_set() &&
         !at::impl::torch_function_mode_enabled();
}

/// `_unchanged()` of fusion/module.py.
bool unchanged(const ModulePlan &plan) {
  for (const ChildCheck &check : plan.children)
    if (PyDict_GetItem(check.children.get(), check.name.get()) !=
        check.child.get())
      return false;
  for (const ConstantsCheck &check : plan.constants) {
    if (PyDict_Size(check.attributes.get()) != check.count)
      return false;
    for (const auto &[key, value] : check.constants) {
      PyObject *now = PyDict_GetItem(check.attributes.get(), key.get());
      if (!now)
        return false;
      int equal = PyObject_RichCompareBool(now, value.get(), Py_EQ);
      if (equal != 1) {
        PyErr_Clear();
        return false;
      }
    }
  }
  return true;
}

/// The entry of the batch norms' and dropouts' mode now (`_mode()`).
const std::optional<EntryPlan> &entryOfMode(const ModulePlan &plan) {
  bool anyTraining = false, anyEval = false;
  for (const Ref &module : plan.modeModules) {
    Ref training = Ref::steal(PyObject_GetAttrString(module.get(), "training"));
    if (training.get() == Py_True)
      anyTraining = true;
    else if (training.get() == Py_False)
      anyEval = true;
    else
      throw NotCommon(); // Mixed with a non-bool, or no attribute.
  }
  if (anyTraining && anyEval)
    throw NotCommon();
  return anyEval ? plan.eval : plan.train;
}

/// A parameter or buffer as `getattr(owner, name)` reads it now, where
/// nothing in the owner's `__dict__` shadows it.
PyObject *attribute(const ArgumentSource &source) {
  PyObject *owner = source.owner.get();
  if (PyDict_GetItem(owner, source.name.get()))
    throw NotCommon();
  for (const char *table : {"_parameters", "_buffers"}) {
    PyObject *values = PyDict_GetItemString(owner, table);
    if (!values || !PyDict_Check(values))
      throw NotCommon();
    if (PyObject *value = PyDict_GetItem(values, source.name.get()))
      return value;
  }
  throw NotCommon();
}

PyObject *wrapOutputs(const ModulePlan &plan,
                      const std::vector<at::Tensor> &values) {
  if (plan.structure == OutputStructure::Tensor)
    return THPVariable_Wrap(values.at(0));
  bool tuple = plan.structure == OutputStructure::Tuple;
  Ref result = Ref::steal(tuple ? PyTuple_New(values.size())
                                : PyList_New(values.size()));
  if (!result)
    throw PythonError();
  for (size_t index = 0; index < values.size(); ++index) {
    PyObject *value = THPVariable_Wrap(values[index]);
    if (!value)
      throw PythonError();
    if ((tuple ? PyTuple_SetItem(result.get(), index, value)
               : PyList_SetItem(result.get(), index, value)) != 0)
      throw PythonError();
  }
  return result.release();
}

/// The forward of `plan` on `inputs`, or NotCommon.
PyObject *callPlan(const ModulePlan &plan, PyObject *const *inputs,
                   Py_ssize_t count) {
  if (count != plan.inputs || count == 0 || !plainDispatch() ||
      !unchanged(plan))
    throw NotCommon();
  const std::optional<EntryPlan> &entry = entryOfMode(plan);
  if (!entry)
    throw NotCommon();
  std::vector<at::Tensor> flat;
  flat.reserve(count);
  std::vector<int64_t> leading; // The first input's, which outputs take.
  bool recordsGradient = c10::GradMode::is_enabled();
  for (Py_ssize_t index = 0; index < count; ++index) {
    const at::Tensor &input = plainTensor(inputs[index]);
    if (input.dim() == 0 || (recordsGradient && input.requires_grad()))
      throw NotCommon();
    if (index == 0)
      leading.assign(input.sizes().begin(), input.sizes().end() - 1);
    flat.push_back(input.dim() > 2 ? input.reshape({-1, input.size(-1)})
                                   : input);
  }
  std::vector<at::Tensor> arguments;
  arguments.reserve(entry->arguments.size());
  for (const ArgumentSource &source : entry->arguments) {
    if (source.input >= 0) {
      arguments.push_back(flat.at(source.input));
      continue;
    }
    if (source.seedBits) {
      arguments.push_back(
          at::randint(source.seedBits->first, source.seedBits->second, {2},
                      at::TensorOptions(at::kInt).device(flat.at(0).device()))
              .view(at::kFloat));
      continue;
    }
    const at::Tensor &value = plainTensor(attribute(source));
    if (recordsGradient && value.requires_grad())
      throw NotCommon();
    arguments.push_back(value);
  }
  RECORD_FUNCTION("fusion::run", std::vector<c10::IValue>());
  std::vector<at::Tensor> values =
      fusion::torch_ops::runEntry(entry->key, arguments);
  if (values.size() != plan.outputTails.size())
    throw NotCommon();
  if (leading.size() != 1 || !plan.plainOutputs)
    for (size_t index = 0; index < values.size(); ++index) {
      std::vector<int64_t> shape(leading);
      shape.insert(shape.end(), plan.outputTails[index].begin(),
                   plan.outputTails[index].end());
      values[index] = values[index].view(shape);
    }
  return wrapOutputs(plan, values);
}

PyObject *call(PyObject *, PyObject *const *args, Py_ssize_t count) {
  if (count < 1) {
    PyErr_SetString(PyExc_TypeError, "call(plan, *inputs)");
    return nullptr;
  }
  auto *plan =
      static_cast<ModulePlan *>(PyCapsule_GetPointer(args[0], planName));
  if (!plan)
    return nullptr;
  try {
    return callPlan(*plan, args + 1, count - 1);
  } catch (const NotCommon &) {
  } catch (const PythonError &) {
  } catch (const std::exception &) {
    // A failed check: the Python forward raises it with its context.
  }
  PyErr_Clear(); // Of a lookup that found nothing, say.
  Py_INCREF(Py_NotImplemented);
  return Py_NotImplemented;
}

//===----------------------------------------------------------------------===//
// The plan
//===----------------------------------------------------------------------===//

std::optional<EntryPlan> readEntry(PyObject *description) {
  if (description == Py_None)
    return std::nullopt;
  EntryPlan entry;
  Ref key = item(description, 0);
  const char *text = PyUnicode_AsUTF8AndSize(key.get(), nullptr);
  if (!text)
    throw PythonError();
  entry.key = text;
  Ref sources = item(description, 1);
  for (Py_ssize_t index = 0, size = length(sources.get()); index < size;
       ++index) {
    Ref source = item(sources.get(), index);
    ArgumentSource argument;
    if (PyLong_Check(source.get())) {
      argument.input = integer(source.get());
    } else if (Ref first = item(source.get(), 0); PyLong_Check(first.get())) {
      argument.seedBits = {integer(first.get()),
                           integer(item(source.get(), 1).get())};
    } else {
      argument.owner = item(source.get(), 0);
      argument.name = item(source.get(), 1);
      if (!PyDict_Check(argument.owner.get()) ||
          !PyUnicode_Check(argument.name.get())) {
        PyErr_SetString(PyExc_TypeError,
                        "an argument's source is an input's index, "
                        "(owner's __dict__, name) or a seed's (low, high)");
        throw PythonError();
      }
    }
    entry.arguments.push_back(std::move(argument));
  }
  return entry;
}

/// Whether the tensor layout declared above is PyTorch's: `probe`'s tensor
/// has the data pointer and size Python reads, and wraps back to `probe`.
bool layoutMatches(PyObject *probe, PyObject *dataPointer, PyObject *size) {
  if (!PyObject_TypeCheck(probe,
                          reinterpret_cast<PyTypeObject *>(THPVariableClass)))
    return false;
  const at::Tensor &tensor = reinterpret_cast<TensorObject *>(probe)->tensor;
  if (!tensor.defined() ||
      reinterpret_cast<intptr_t>(tensor.const_data_ptr()) !=
          PyLong_AsSsize_t(dataPointer) ||
      tensor.numel() != PyLong_AsSsize_t(size))
    return false;
  Ref wrapped = Ref::steal(THPVariable_Wrap(tensor));
  return wrapped.get() == probe;
}

void destroyPlan(PyObject *capsule) {
  delete static_cast<ModulePlan *>(PyCapsule_GetPointer(capsule, planName));
}

/// module_plan(inputs, children, constants, mode_modules, train, eval,
///             output_tails, structure, probe, probe_data_ptr, probe_numel)
PyObject *modulePlan(PyObject *, PyObject *args) {
  Py_ssize_t inputs;
  PyObject *children, *constants, *modeModules, *train, *eval, *tails, *probe,
      *probeData, *probeSize;
  const char *structure;
  if (!PyArg_ParseTuple(args, "nOOOOOOsOOO", &inputs, &children, &constants,
                        &modeModules, &train, &eval, &tails, &structure, &probe,
                        &probeData, &probeSize))
    return nullptr;
  if (!layoutMatches(probe, probeData, probeSize)) {
    PyErr_Clear();
    Py_RETURN_NONE;
  }
  auto plan = std::make_unique<ModulePlan>();
  try {
    plan->inputs = inputs;
    for (Py_ssize_t i = 0, n = length(children); i < n; ++i) {
      Ref check = item(children, i);
      plan->children.push_back(
          {item(check.get(), 0), item(check.get(), 1), item(check.get(), 2)});
    }
    for (Py_ssize_t i = 0, n = length(constants); i < n; ++i) {
      Ref check = item(constants, i);
      ConstantsCheck read{
          item(check.get(), 0), integer(item(check.get(), 1).get()), {}};
      Ref pairs = item(check.get(), 2);
      for (Py_ssize_t j = 0, m = length(pairs.get()); j < m; ++j) {
        Ref pair = item(pairs.get(), j);
        read.constants.emplace_back(item(pair.get(), 0), item(pair.get(), 1));
      }
      plan->constants.push_back(std::move(read));
    }
    for (Py_ssize_t i = 0, n = length(modeModules); i < n; ++i)
      plan->modeModules.push_back(item(modeModules, i));
    plan->train = readEntry(train);
    plan->eval = readEntry(eval);
    for (Py_ssize_t i = 0, n = length(tails); i < n; ++i) {
      Ref tail = item(tails, i);
      std::vector<int64_t> sizes;
      for (Py_ssize_t j = 0, m = length(tail.get()); j < m; ++j)
        sizes.push_back(integer(item(tail.get(), j).get()));
      plan->plainOutputs &= sizes.size() == 1;
      plan->outputTails.push_back(std::move(sizes));
    }
  } catch (const PythonError &) {
    return nullptr;
  }
  std::string kind = structure;
  if (kind == "tensor" && plan->outputTails.size() == 1)
    plan->structure = OutputStructure::Tensor;
  else if (kind == "tuple")
    plan->structure = OutputStructure::Tuple;
  else if (kind == "list")
    plan->structure = OutputStructure::List;
  else
    Py_RETURN_NONE; // A structure the Python forward alone builds.
  PyObject *capsule = PyCapsule_New(plan.get(), planName, destroyPlan);
  if (capsule)
    plan.release();
  return capsule;
}

PyMethodDef methods[] = {
    {"module_plan", modulePlan, METH_VARARGS,
     "The plan of a fusion.compile'd module's call (None where its layout "
     "of tensors or its output structure is not the plan's)."},
    {"call", reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(call)),
     METH_FASTCALL,
     "call(plan, *inputs): the module's outputs, or NotImplemented where the "
     "Python forward must run."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDefinition = {PyModuleDef_HEAD_INIT,
                                "_torch_ops",
                                "fusion.compile'd modules' call in C++.",
                                -1,
                                methods,
                                nullptr,
                                nullptr,
                                nullptr,
                                nullptr};

} // namespace

PyMODINIT_FUNC PyInit__torch_ops() {
  return PyModule_Create(&moduleDefinition);
}
