//===- TorchOperator.cpp - fusion::run, PyTorch's call of a library -------===//
//
// The operator `fusion::run(str key, Tensor[] args) -> Tensor[]` that
// torch.compile's graphs and fusion.compile's modules call: it checks the
// tensors against the entry point's signature (what PyTorch knows: device,
// dtype, sizes, contiguity, alignment), allocates the outputs and calls the
// entry point's packed form (fusion_runtime.h) on the current stream, with
// no Python on the way. `fusion::run_updating(str key, Tensor[] args,
// Tensor(a!)[] state) -> Tensor[]` is the same call with the outputs that
// the signature lets update an input (a training batch norm's running
// statistics) written into that input, the `state` tensors, in place; it
// takes the other inputs as `args` and returns the other outputs. The Python
// package registers each entry point it loads under a key
// (fusion_torch_register, through ctypes), and torch.library's fake kernel
// (fusion/dynamo.py) gives the outputs' shapes to tracing.
//
//===----------------------------------------------------------------------===//

#include "TorchOperator.h"
#include "fusion_runtime.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/record_function.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <shared_mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using PackedEntry = int32_t (*)(void *stream, int64_t batch,
                                void *const *buffers, uint32_t flags);
using LastErrorMessage = const char *(*)();

/// A tensor of an entry point's signature; a size of -1 is the batch.
struct TensorSpec {
  c10::ScalarType dtype;
  std::vector<int64_t> sizes;
  /// For an output, the input it may be written into, else -1.
  int64_t updates = -1;
};

/// One registered entry point of a loaded library.
struct Entry {
  std::string name, library;
  void *handle = nullptr;
  PackedEntry packed = nullptr;
  LastErrorMessage lastError = nullptr;
  bool gpu = false, batch = false;
  std::vector<TensorSpec> inputs, outputs;
  /// The inputs that outputs may be written into, ascending: run_updating's
  /// `state`.
  std::vector<size_t> stateInputs;

  ~Entry() {
    if (handle)
      dlclose(handle);
  }
};

std::shared_mutex registryMutex;
std::unordered_map<std::string, std::shared_ptr<Entry>> registry;
thread_local std::string registerError;

std::shared_ptr<Entry> lookup(const std::string &key) {
  std::shared_lock<std::shared_mutex> lock(registryMutex);
  auto found = registry.find(key);
  TORCH_CHECK(found != registry.end(), "fusion::run: no library is loaded as ",
              key);
  return found->second;
}

/// The element types by the names every layer spells them with (the
/// dialect's ElementType, the signature files', fusion/dtypes.py's).
c10::ScalarType toScalarType(const std::string &name) {
  if (name == "f32")
    return c10::ScalarType::Float;
  if (name == "bf16")
    return c10::ScalarType::BFloat16;
  if (name == "f16")
    return c10::ScalarType::Half;
  throw std::invalid_argument("unknown element type " + name);
}

/// Python's spelling of a dtype and a shape, as the errors of the Python
/// package's checks read.
std::string dtypeName(c10::ScalarType type) {
  return "torch." + c10::getDtypeNames(type).first;
}
std::string shapeName(c10::IntArrayRef sizes) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < sizes.size(); ++i)
    os << (i ? ", " : "") << sizes[i];
  os << (sizes.size() == 1 ? ",)" : ")");
  return os.str();
}

/// The specs of `text`: "TYPE:SIZE,SIZE[@INPUT];..." a tensor each (a size
/// of -1 is the batch; an output's INPUT, the input it may be written
/// into).
std::vector<TensorSpec> readSpecs(const std::string &text) {
  std::vector<TensorSpec> specs;
  std::istringstream tensors(text);
  std::string tensor, size;
  while (std::getline(tensors, tensor, ';')) {
    int64_t updates = -1;
    if (size_t at = tensor.find('@'); at != std::string::npos) {
      updates = std::stoll(tensor.substr(at + 1));
      tensor.resize(at);
    }
    size_t colon = tensor.find(':');
    if (colon == std::string::npos)
      throw std::invalid_argument("bad tensor spec " + tensor);
    TensorSpec spec{toScalarType(tensor.substr(0, colon)), {}, updates};
    std::istringstream sizes(tensor.substr(colon + 1));
    while (std::getline(sizes, size, ','))
      spec.sizes.push_back(std::stoll(size));
    specs.push_back(std::move(spec));
  }
  return specs;
}

/// The batch size of `args`, after checking each against its spec and the
/// device, where every input matches; else throws what does not.
int64_t checkInputs(const Entry &entry, const at::TensorList &args,
                    c10::Device device) {
  const std::string &name = entry.name;
  int64_t batch = -1;
  for (size_t index = 0; index < args.size(); ++index) {
    const at::Tensor &tensor = args[index];
    const TensorSpec &spec = entry.inputs[index];
    TORCH_CHECK(tensor.device() == device, name,
                ": all tensors must be on one device, got ", device, " and ",
                tensor.device());
    TORCH_CHECK(tensor.scalar_type() == spec.dtype, name, ": input ", index,
                " must be ", dtypeName(spec.dtype), ", got ",
                dtypeName(tensor.scalar_type()));
    c10::IntArrayRef sizes = tensor.sizes();
    // A vector (a column operand) may come as (1, ..., 1, N), a parameter
    // that PyTorch broadcasts over the rows: the same elements in order.
    if (spec.sizes.size() == 1)
      while (sizes.size() > 1 && sizes.front() == 1)
        sizes = sizes.slice(1);
    // A single value (a [1] column operand) may be a 0-d tensor.
    bool scalar =
        sizes.empty() && spec.sizes.size() == 1 && spec.sizes[0] == 1;
    TORCH_CHECK(scalar || sizes.size() == spec.sizes.size(), name, ": input ",
                index, " must have ", spec.sizes.size(),
                " dimensions, got shape ", shapeName(tensor.sizes()));
    for (size_t dim = 0; dim < sizes.size(); ++dim) {
      if (spec.sizes[dim] >= 0) {
        TORCH_CHECK(sizes[dim] == spec.sizes[dim], name, ": input ", index,
                    " must have size ", spec.sizes[dim], " in dimension ", dim,
                    ", got shape ", shapeName(tensor.sizes()));
        continue;
      }
      TORCH_CHECK(batch < 0 || sizes[dim] == batch, name, ": input ", index,
                  " has batch size ", sizes[dim], ", other inputs ", batch);
      batch = sizes[dim];
    }
    TORCH_CHECK(tensor.is_contiguous(), name, ": input ", index,
                " must be contiguous");
  }
  TORCH_CHECK(!entry.batch || batch >= 0, name,
              ": no input gives the batch size");
  return batch;
}

/// The entry point's outputs for batch `batch` on `inputs`, but for those
/// that `inPlace` writes into their inputs; for a batch of no rows (nothing
/// to run: the GPU entry points refuse it), the outputs of static size are
/// NaN, as the statistics of an empty batch are, and an updated input is
/// unchanged, as PyTorch leaves running statistics on an empty batch.
std::vector<at::Tensor> allocateOutputs(const Entry &entry, int64_t batch,
                                        c10::Device device,
                                        const std::vector<at::Tensor> &inputs,
                                        bool inPlace) {
  std::vector<at::Tensor> outputs;
  outputs.reserve(entry.outputs.size());
  for (const TensorSpec &spec : entry.outputs) {
    if (spec.updates >= 0 && inPlace)
      continue;
    if (spec.updates >= 0 && batch == 0) {
      outputs.push_back(inputs[spec.updates].clone());
      continue;
    }
    std::vector<int64_t> sizes(spec.sizes);
    bool dynamic = false;
    for (int64_t &size : sizes)
      if (size < 0) {
        size = batch;
        dynamic = true;
      }
    at::Tensor output =
        at::empty(sizes, at::TensorOptions().dtype(spec.dtype).device(device));
    if (batch == 0 && !dynamic)
      output.fill_(NAN);
    outputs.push_back(std::move(output));
  }
  return outputs;
}

/// Calls the entry point's packed form on `buffers` for `batch` on the
/// current stream of `device`.
void callEntry(const Entry &entry, int64_t batch, c10::Device device,
               const std::vector<void *> &buffers) {
  if (!entry.gpu) {
    entry.packed(nullptr, batch, buffers.data(), FUSION_CALL_BUFFERS_CHECKED);
    return;
  }
  for (size_t index = 0; index < buffers.size(); ++index)
    TORCH_CHECK(
        reinterpret_cast<uintptr_t>(buffers[index]) % 16 == 0, entry.name, ": ",
        index < entry.inputs.size() ? "input " : "output ",
        index < entry.inputs.size() ? index : index - entry.inputs.size(),
        " is not 16-byte aligned");
  // The library runs on its stream's device, which must be current for
  // the legacy default stream.
  c10::cuda::CUDAGuard guard(device);
  void *stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
  int32_t status =
      entry.packed(stream, batch, buffers.data(), FUSION_CALL_BUFFERS_CHECKED);
  TORCH_CHECK(status == FUSION_SUCCESS, entry.name, ": status ", status, ": ",
              entry.lastError ? entry.lastError() : "");
}

/// Checks that no state tensor of `inputs` (contiguous: checkInputs) shares
/// memory with another input, which the kernels read while they write the
/// state.
void checkStateApart(const Entry &entry,
                     const std::vector<at::Tensor> &inputs) {
  for (size_t position = 0; position < entry.stateInputs.size(); ++position) {
    size_t state = entry.stateInputs[position];
    for (size_t index = 0; index < inputs.size(); ++index)
      TORCH_CHECK(index == state ||
                      at::get_overlap_status(inputs[state], inputs[index]) ==
                          at::MemOverlapStatus::No,
                  entry.name, ": state tensor ", position,
                  " shares memory with input ", index);
  }
}

/// Whether a GPU entry point reads input `index` of `inputs` at an address
/// that is not 16-byte aligned (its kernels' vector loads) and may read it
/// from a copy instead: not a state tensor written in place (callEntry
/// refuses that one).
bool readFromCopy(const Entry &entry, const std::vector<at::Tensor> &inputs,
                  size_t index, bool inPlace) {
  bool writtenInPlace =
      inPlace && std::find(entry.stateInputs.begin(), entry.stateInputs.end(),
                           index) != entry.stateInputs.end();
  return entry.gpu && !writtenInPlace &&
         reinterpret_cast<uintptr_t>(inputs[index].const_data_ptr()) % 16 != 0;
}

/// `inputs`, or, where some are read from a copy (readFromCopy), `copies`
/// filled with them and those copies: the graphs copy the rows of a weight
/// that would start unaligned, but inductor removes such a copy as a no-op.
const std::vector<at::Tensor> &
alignedInputs(const Entry &entry, const std::vector<at::Tensor> &inputs,
              bool inPlace, std::vector<at::Tensor> &copies) {
  for (size_t index = 0; index < inputs.size(); ++index) {
    if (!readFromCopy(entry, inputs, index, inPlace))
      continue;
    if (copies.empty())
      copies = inputs;
    copies[index] = inputs[index].clone();
  }
  return copies.empty() ? inputs : copies;
}

/// Checks `inputs` and calls the entry point, with the outputs that
/// update an input written into it if `inPlace`; returns the other
/// outputs (all of them if not `inPlace`).
std::vector<at::Tensor> runChecked(const Entry &entry,
                                   const std::vector<at::Tensor> &given,
                                   bool inPlace) {
  TORCH_CHECK(!given.empty(), entry.name, ": no input gives the device");
  c10::Device device = given[0].device();
  TORCH_CHECK(device.is_cuda() == entry.gpu, entry.name, ": ", entry.library,
              " runs on ", entry.gpu ? "cuda" : "cpu", " tensors, got ",
              device);
  int64_t batch = checkInputs(entry, given, device);
  std::vector<at::Tensor> copies;
  const std::vector<at::Tensor> &inputs =
      alignedInputs(entry, given, inPlace, copies);
  if (inPlace)
    checkStateApart(entry, inputs);
  std::vector<at::Tensor> outputs =
      allocateOutputs(entry, batch, device, inputs, inPlace);
  if (batch == 0)
    return outputs;
  // A profiler's scope of the call with its tensors' shapes, which it
  // records of no tensor list (the operator's); built only when profiling.
  RECORD_FUNCTION("fusion::call",
                  std::vector<c10::IValue>(inputs.begin(), inputs.end()));
  std::vector<void *> buffers;
  buffers.reserve(inputs.size() + entry.outputs.size());
  for (const at::Tensor &tensor : inputs)
    buffers.push_back(const_cast<void *>(tensor.const_data_ptr()));
  auto allocated = outputs.begin();
  for (const TensorSpec &spec : entry.outputs)
    buffers.push_back(spec.updates >= 0 && inPlace
                          ? inputs[spec.updates].data_ptr()
                          : (allocated++)->mutable_data_ptr());
  callEntry(entry, batch < 0 ? 0 : batch, device, buffers);
  return outputs;
}

std::vector<at::Tensor> run(c10::string_view key, at::TensorList args) {
  return fusion::torch_ops::runEntry(std::string(key), args.vec());
}

/// `args` with `state` at the entry point's updated inputs.
std::vector<at::Tensor> joinInputs(const Entry &entry, at::TensorList args,
                                   at::TensorList state) {
  TORCH_CHECK(!entry.stateInputs.empty(), entry.name,
              " updates no input in place: call fusion::run");
  TORCH_CHECK(state.size() == entry.stateInputs.size(), entry.name, " updates ",
              entry.stateInputs.size(), " inputs in place, got ", state.size(),
              " state tensors");
  TORCH_CHECK(args.size() + state.size() == entry.inputs.size(), entry.name,
              " takes ", entry.inputs.size() - state.size(),
              " tensors besides its state, got ", args.size());
  std::vector<at::Tensor> inputs;
  inputs.reserve(entry.inputs.size());
  auto nextArg = args.begin(), nextState = state.begin();
  auto stateInput = entry.stateInputs.begin();
  for (size_t index = 0; index < entry.inputs.size(); ++index) {
    bool isState =
        stateInput != entry.stateInputs.end() && *stateInput == index;
    inputs.push_back(isState ? *nextState++ : *nextArg++);
    stateInput += isState;
  }
  return inputs;
}

std::vector<at::Tensor> runUpdating(c10::string_view key, at::TensorList args,
                                    at::TensorList state) {
  std::shared_ptr<Entry> entry = lookup(std::string(key));
  return runChecked(*entry, joinInputs(*entry, args, state),
                    /*inPlace=*/true);
}

} // namespace

std::vector<at::Tensor>
fusion::torch_ops::runEntry(const std::string &key,
                            const std::vector<at::Tensor> &inputs) {
  std::shared_ptr<Entry> entry = lookup(key);
  TORCH_CHECK(inputs.size() == entry->inputs.size(), entry->name, " takes ",
              entry->inputs.size(), " tensors, got ", inputs.size());
  return runChecked(*entry, inputs, /*inPlace=*/false);
}

// needs_contiguous_strides: inductor, which calls the operator as an extern
// kernel, hands it its inputs contiguous (the layouts it picks for its own
// buffers may differ from the traced ones).
TORCH_LIBRARY(fusion, m) {
  m.def("run(str key, Tensor[] args) -> Tensor[]",
        {at::Tag::needs_contiguous_strides});
  m.def("run_updating(str key, Tensor[] args, Tensor(a!)[] state) -> "
        "Tensor[]",
        {at::Tag::needs_contiguous_strides});
}

TORCH_LIBRARY_IMPL(fusion, CPU, m) {
  m.impl("run", &run);
  m.impl("run_updating", &runUpdating);
}
TORCH_LIBRARY_IMPL(fusion, CUDA, m) {
  m.impl("run", &run);
  m.impl("run_updating", &runUpdating);
}

/// The package's registration of entry point `entry` of the library at
/// `path` as `key` (ctypes): whether it is a GPU library, whether a batch
/// size is passed, and its inputs' and outputs' specs (readSpecs). Null,
/// or why it failed.
extern "C" const char *fusion_torch_register(const char *key, const char *path,
                                             const char *entry, int32_t gpu,
                                             int32_t batch, const char *inputs,
                                             const char *outputs) {
  try {
    auto registered = std::make_shared<Entry>();
    registered->name = entry;
    std::string library = path;
    registered->library = library.substr(library.rfind('/') + 1);
    registered->gpu = gpu != 0;
    registered->batch = batch != 0;
    registered->inputs = readSpecs(inputs);
    registered->outputs = readSpecs(outputs);
    for (const TensorSpec &output : registered->outputs) {
      if (output.updates < 0)
        continue;
      size_t input = output.updates;
      if (input >= registered->inputs.size() ||
          registered->inputs[input].dtype != output.dtype ||
          registered->inputs[input].sizes != output.sizes ||
          std::find(registered->stateInputs.begin(),
                    registered->stateInputs.end(),
                    input) != registered->stateInputs.end())
        throw std::invalid_argument("bad in-place output of " +
                                    std::string(entry));
      registered->stateInputs.push_back(input);
    }
    std::sort(registered->stateInputs.begin(), registered->stateInputs.end());
    registered->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!registered->handle)
      throw std::runtime_error(dlerror());
    std::string symbol = std::string(entry) + FUSION_PACKED_ENTRY_SUFFIX;
    registered->packed = reinterpret_cast<PackedEntry>(
        dlsym(registered->handle, symbol.c_str()));
    if (!registered->packed)
      throw std::runtime_error(std::string(path) + " has no " + symbol +
                               " (compiled by an older fusion?)");
    registered->lastError = reinterpret_cast<LastErrorMessage>(
        dlsym(registered->handle, "fusion_last_error_message"));
    std::unique_lock<std::shared_mutex> lock(registryMutex);
    registry[key] = std::move(registered);
    return nullptr;
  } catch (const std::exception &error) {
    registerError = error.what();
    return registerError.c_str();
  }
}

/// Forgets `key`; the library is unloaded once no call holds it.
extern "C" void fusion_torch_unregister(const char *key) {
  std::unique_lock<std::shared_mutex> lock(registryMutex);
  registry.erase(key);
}
