"""Runs fusion-compiled libraries on PyTorch tensors.

Works on a machine with PyTorch (and CUDA, for GPU libraries) but without
the compiler. A library's signature file (`<library>.json`) gives each entry
point's inputs and outputs; `Library` registers each entry point with the
operator `fusion::run` (python_bindings/TorchOperator.cpp), which checks the
tensors against it, allocates the outputs, and runs the entry point on the
tensors' device and that device's current CUDA stream, in C++.
"""
import ctypes
import itertools
import json
import pathlib

import torch

from .errors import FusionRuntimeError


def _load_operator():
    """The operator fusion::run and the registry of the entry points it
    calls (python_bindings/TorchOperator.cpp), built beside this module;
    None in a source tree without the build (its options and importer
    still work there)."""
    path = pathlib.Path(__file__).with_name("_torch_ops.so")
    if not path.exists():
        return None
    operator = ctypes.CDLL(str(path))
    operator.fusion_torch_register.restype = ctypes.c_char_p
    operator.fusion_torch_register.argtypes = [
        ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32,
        ctypes.c_int32, ctypes.c_char_p, ctypes.c_char_p]
    operator.fusion_torch_unregister.argtypes = [ctypes.c_char_p]
    return operator


_OPERATOR = _load_operator()
HAS_OPERATOR = _OPERATOR is not None
# The same file as a Python extension (python_bindings/ModuleCall.cpp): the
# C++ call of fusion.compile'd modules.
if HAS_OPERATOR:
    from . import _torch_ops as MODULE_CALL
else:
    MODULE_CALL = None
_keys = itertools.count()
_dlclose = ctypes.CDLL(None).dlclose
_dlclose.argtypes = [ctypes.c_void_p]


def _specs(tensors):
    """The operator's text of signature tensors: "TYPE:SIZE,SIZE[@INPUT];..."
    (a size of -1: the batch; INPUT: the input an output may be written
    into, fusion::run_updating's state)."""
    return ";".join(
        spec["dtype"] + ":" +
        ",".join(str(-1 if d is None else d) for d in spec["shape"]) +
        (f"@{spec['updates_input']}" if "updates_input" in spec else "")
        for spec in tensors).encode()


def updated_inputs(entry):
    """{output: the input it may be written into} of a signature's entry
    point (a training batch norm's running statistics, GPU libraries)."""
    return {spec["index"]: spec["updates_input"] for spec in entry["outputs"]
            if "updates_input" in spec}


def entry_points(signature):
    """{name: entry point} of a library's signature (its JSON text)."""
    return {e["name"]: e for e in json.loads(signature)["entry_points"]}


class Library:
    """A compiled library's entry points, each registered with fusion::run
    under a key (`keys`: {entry point: key}, else unique ones)."""

    def __init__(self, path, keys=None):
        if not HAS_OPERATOR:
            raise FusionRuntimeError(
                "fusion::run (_torch_ops.so) is not beside fusion/runtime.py:"
                " build fusion (scripts/build.sh) to run its libraries")
        self.path = pathlib.Path(path)
        text = self.path.with_suffix(".json").read_text()
        self.target = json.loads(text)["target"]
        self.entries = entry_points(text)
        self._updates = {name: updated_inputs(entry)
                         for name, entry in self.entries.items()}
        # The C ABI through ctypes too: the floor a benchmark compares the
        # operator's path with, and the raw calls of the GPU checks.
        self._lib = ctypes.CDLL(str(self.path))
        if self.is_gpu:
            self._lib.fusion_last_error_message.restype = ctypes.c_char_p
        self._functions = {}
        self.keys = {}
        keys = keys or {}
        for name, entry in self.entries.items():
            key = keys.get(name) or \
                f"{self.path.name}:{name}:{next(_keys)}"
            error = _OPERATOR.fusion_torch_register(
                key.encode(), str(self.path).encode(), name.encode(),
                self.is_gpu, bool(entry["batch"]), _specs(entry["inputs"]),
                _specs(entry["outputs"]))
            if error is not None:
                self.close()
                raise OSError(error.decode())
            self.keys[name] = key

    def close(self):
        """Unloads the library (after the device finished what it runs);
        closing it again does nothing, calling an entry point raises."""
        if self._lib is None:
            return
        if self.is_gpu and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        for key in self.keys.values():
            _OPERATOR.fusion_torch_unregister(key.encode())
        self.keys = {}
        handle, self._lib, self._functions = self._lib._handle, None, {}
        _dlclose(handle)

    @property
    def is_gpu(self):
        return self.target != "cpu"

    def _function(self, name):
        """Entry point `name` of the C ABI (GPU: stream, batch if dynamic,
        then a pointer a tensor), through ctypes."""
        if name not in self._functions:
            fn = getattr(self._lib, name)
            fn.restype = ctypes.c_int32 if self.is_gpu else None
            if self.is_gpu:
                entry = self.entries[name]
                fn.argtypes = [ctypes.c_void_p] + \
                    [ctypes.c_int64] * bool(entry["batch"]) + \
                    [ctypes.c_void_p] * (len(entry["inputs"]) +
                                         len(entry["outputs"]))
            self._functions[name] = fn
        return self._functions[name]

    def call(self, name, inputs, in_place=False):
        """Runs entry point `name` on `inputs`; returns its output tensors.
        With `in_place`, the outputs that may update an input
        (updated_inputs: a training batch norm's running statistics) are
        written into it (fusion::run_updating), and that input is the
        output returned."""
        if self._lib is None:
            raise FusionRuntimeError(f"{self.path.name} was unloaded")
        if name not in self.entries:
            raise FusionRuntimeError(
                f"{self.path.name} has no entry point {name!r}")
        try:
            updates = in_place and self._updates[name]
            if not updates:
                return torch.ops.fusion.run.default(self.keys[name], inputs)
            state = [inputs[i] for i in sorted(updates.values())]
            rest = iter(torch.ops.fusion.run_updating.default(
                self.keys[name],
                [t for i, t in enumerate(inputs)
                 if i not in updates.values()], state))
            return [inputs[updates[i]] if i in updates else next(rest)
                    for i in range(len(self.entries[name]["outputs"]))]
        except RuntimeError as error:
            raise FusionRuntimeError(str(error)) from None
