"""Runs fusion-compiled libraries on PyTorch tensors, through ctypes.

Pure Python: works on a machine with PyTorch (and CUDA, for GPU libraries)
but without the compiler. A library's signature file (`<library>.json`)
gives each entry point's inputs and outputs; `Library.call` checks the
tensors against it, allocates the outputs, and runs the entry point on the
tensors' device and that device's current CUDA stream.
"""
import ctypes
import json
import math
import pathlib

import torch

from .errors import FusionRuntimeError

from .dtypes import TORCH_DTYPES


_INVALID = object()
_dlclose = ctypes.CDLL(None).dlclose
_dlclose.argtypes = [ctypes.c_void_p]


class Library:
    def __init__(self, path):
        self.path = pathlib.Path(path)
        signature = json.loads(self.path.with_suffix(".json").read_text())
        self.target = signature["target"]
        self.entries = {e["name"]: e for e in signature["entry_points"]}
        self._lib = ctypes.CDLL(str(self.path))
        if self.is_gpu:
            self._lib.fusion_last_error_message.restype = ctypes.c_char_p
        self._functions = {}
        self._inputs = {}
        self._outputs = {}

    def close(self):
        """Unloads the library (after the device finished what it runs);
        closing it again does nothing, calling an entry point raises."""
        if self._lib is None:
            return
        if self.is_gpu and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        handle, self._lib, self._functions = self._lib._handle, None, {}
        _dlclose(handle)

    @property
    def is_gpu(self):
        return self.target != "cpu"

    def _function(self, name):
        if name not in self._functions:
            fn = getattr(self._lib, name)
            fn.restype = ctypes.c_int32 if self.is_gpu else None
            if self.is_gpu:
                # Plain integers in: no ctypes objects built per call.
                entry = self.entries[name]
                fn.argtypes = [ctypes.c_void_p] + \
                    [ctypes.c_int64] * bool(entry["batch"]) + \
                    [ctypes.c_void_p] * (len(entry["inputs"]) +
                                         len(entry["outputs"]))
            self._functions[name] = fn
        return self._functions[name]

    def call(self, name, inputs):
        """Runs entry point `name` on `inputs`; returns its output tensors."""
        if self._lib is None:
            raise FusionRuntimeError(f"{self.path.name} was unloaded")
        if name not in self.entries:
            raise FusionRuntimeError(
                f"{self.path.name} has no entry point {name!r}")
        entry = self.entries[name]
        if len(inputs) != len(entry["inputs"]):
            raise FusionRuntimeError(
                f"{name} takes {len(entry['inputs'])} tensors, got "
                f"{len(inputs)}")
        batch = self._batch_if_valid(name, inputs)
        if batch is _INVALID:
            # The slow path says what is wrong.
            self._check_device(name, inputs)
            batch = None
            for spec, tensor in zip(entry["inputs"], inputs):
                batch = self._check_tensor(name, spec, tensor, batch)
            if entry["batch"] and batch is None:
                raise FusionRuntimeError(
                    f"{name}: no input gives the batch size")
        device = inputs[0].device
        outputs = [torch.empty([batch if d is None else d for d in shape],
                               dtype=dtype, device=device)
                   for shape, dtype in self._output_specs(name)]
        if batch == 0:
            # No rows, nothing to run (the GPU entry points refuse them);
            # statistics of the empty batch are NaN, as its mean is
            # (CompiledModule leaves running statistics alone, as PyTorch).
            for (shape, _), tensor in zip(self._output_specs(name), outputs):
                if None not in shape:
                    tensor.fill_(math.nan)
            return outputs
        if self.is_gpu:
            self._call_gpu(name, entry, batch, device, inputs, outputs)
        else:
            self._call_cpu(name, inputs, outputs)
        return outputs

    def _batch_if_valid(self, name, inputs):
        """The batch size when every tensor matches the signature (one
        device of the library's kind, dtypes, shapes, contiguity), else
        _INVALID: the per-call check, kept lean."""
        if not inputs:
            return _INVALID
        device = inputs[0].device
        if device.type != ("cuda" if self.is_gpu else "cpu"):
            return _INVALID
        batch = None
        for (dtype, shape), tensor in zip(self._input_specs(name), inputs):
            if tensor.dtype != dtype or tensor.device != device or \
                    not tensor.is_contiguous():
                return _INVALID
            sizes = tensor.shape
            if len(sizes) != len(shape):
                return _INVALID
            for want, got in zip(shape, sizes):
                if want is None:
                    if batch is None:
                        batch = got
                    elif got != batch:
                        return _INVALID
                elif want != got:
                    return _INVALID
        if batch is None and self.entries[name]["batch"]:
            return _INVALID
        return batch

    def _input_specs(self, name):
        if name not in self._inputs:
            self._inputs[name] = [
                (TORCH_DTYPES[spec["dtype"]], tuple(spec["shape"]))
                for spec in self.entries[name]["inputs"]]
        return self._inputs[name]

    def _output_specs(self, name):
        if name not in self._outputs:
            self._outputs[name] = [
                (tuple(spec["shape"]), TORCH_DTYPES[spec["dtype"]])
                for spec in self.entries[name]["outputs"]]
        return self._outputs[name]

    def _check_device(self, name, inputs):
        devices = {t.device for t in inputs}
        if len(devices) != 1:
            raise FusionRuntimeError(
                f"{name}: all tensors must be on one device, got "
                f"{sorted(map(str, devices))}")
        device = devices.pop()
        wanted = "cuda" if self.is_gpu else "cpu"
        if device.type != wanted:
            raise FusionRuntimeError(
                f"{name}: {self.path.name} runs on {wanted} tensors, got "
                f"{device}")
        return device

    @staticmethod
    def _check_tensor(name, spec, tensor, batch):
        where = f"{name}: input {spec['index']}"
        dtype = TORCH_DTYPES[spec["dtype"]]
        if tensor.dtype != dtype:
            raise FusionRuntimeError(
                f"{where} must be {dtype}, got {tensor.dtype}")
        if tensor.dim() != len(spec["shape"]):
            raise FusionRuntimeError(
                f"{where} must have {len(spec['shape'])} dimensions, got "
                f"shape {tuple(tensor.shape)}")
        for dim, (want, got) in enumerate(zip(spec["shape"], tensor.shape)):
            if want is None:
                if batch is not None and got != batch:
                    raise FusionRuntimeError(
                        f"{where} has batch size {got}, other inputs {batch}")
                batch = got
            elif want != got:
                raise FusionRuntimeError(
                    f"{where} must have size {want} in dimension {dim}, got "
                    f"shape {tuple(tensor.shape)}")
        if not tensor.is_contiguous():
            raise FusionRuntimeError(f"{where} must be contiguous")
        return batch

    def _call_gpu(self, name, entry, batch, device, inputs, outputs):
        # The raw stream and device queries are PyTorch's fast ones (as
        # inductor's generated code uses).
        stream = torch._C._cuda_getCurrentRawStream(device.index)
        args = [stream] + ([batch] if entry["batch"] else []) + \
            [t.data_ptr() for t in inputs + outputs]
        # The library runs on its stream's device; the default stream (NULL)
        # is the current device's, so that device must be current.
        if device.index == torch._C._cuda_getDevice():
            status = self._function(name)(*args)
        else:
            with torch.cuda.device(device):
                status = self._function(name)(*args)
        if status != 0:
            message = self._lib.fusion_last_error_message().decode()
            raise FusionRuntimeError(f"{name}: status {status}: {message}")

    def _call_cpu(self, name, inputs, outputs):
        # Each tensor as an MLIR memref descriptor: allocated and aligned
        # pointers, offset, sizes, strides.
        args = []
        for tensor in inputs + outputs:
            pointer = ctypes.c_void_p(tensor.data_ptr())
            args += [pointer, pointer, ctypes.c_int64(0)]
            args += [ctypes.c_int64(s) for s in tensor.shape]
            args += [ctypes.c_int64(s) for s in tensor.stride()]
        self._function(name)(*args)
