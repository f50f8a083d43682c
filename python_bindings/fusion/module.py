"""fusion.compile, fusion.load and the modules they return."""
import dataclasses
import json
import pathlib
import shutil
import tempfile

import torch

from . import runtime
from .errors import FusionRuntimeError
from .torch import Argument, Result, has_batch_norm, import_module

MANIFEST = "fusion_module.json"
LIBRARY = "model.so"


class CompiledModule(torch.nn.Module):
    """A drop-in replacement of the compiled module: the same forward
    signature and results, computed by the compiled library with the original
    module's parameters and buffers (shared, not copied), batch norms in
    training or eval mode as the module is, running statistics and
    num_batches_tracked updated in place as PyTorch does."""

    def __init__(self, original, directory, manifest):
        super().__init__()
        self.original = original
        self._directory = pathlib.Path(directory)
        self._manifest = manifest
        self._library = runtime.Library(self._directory / LIBRARY)
        self._entries = {
            mode: (entry["name"],
                   [Argument(**a) for a in entry["arguments"]],
                   [Result(**r) for r in entry["results"]])
            for mode, entry in manifest["entries"].items()}
        # (owning module, attribute) of each parameter and buffer argument,
        # read at every call, so that replaced parameters are seen.
        self._owners = {}
        for _, arguments, _ in self._entries.values():
            for argument in arguments:
                if argument.kind != "input":
                    path, _, leaf = argument.name.rpartition(".")
                    self._owners[argument.name] = (
                        original.get_submodule(path), leaf)

    def forward(self, *inputs):
        if len(inputs) != self._manifest["inputs"]:
            raise FusionRuntimeError(
                f"forward takes {self._manifest['inputs']} inputs, got "
                f"{len(inputs)}")
        name, arguments, results = self._entries[
            "train" if self.training else "eval"]
        tensors = []
        for argument in arguments:
            if argument.kind == "input":
                tensors.append(inputs[argument.index])
            else:
                owner, attribute = self._owners[argument.name]
                tensors.append(getattr(owner, attribute).detach())
        outputs = self._library.call(name, tensors)
        values = []
        updated = set()
        with torch.no_grad():
            for result, tensor in zip(results, outputs):
                if result.kind == "output":
                    values.append(tensor)
                    continue
                bn = self.original.get_submodule(result.name)
                getattr(bn, result.kind).copy_(tensor)
                if result.name not in updated:
                    updated.add(result.name)
                    bn.num_batches_tracked.add_(1)
        return values[0] if len(values) == 1 else tuple(values)

    def save(self, path):
        """Writes the library and what rebinding it to a module needs."""
        path = pathlib.Path(path)
        path.mkdir(parents=True, exist_ok=True)
        for suffix in (".so", ".json", ".h"):
            source = (self._directory / LIBRARY).with_suffix(suffix)
            if source.resolve() != (path / LIBRARY).with_suffix(
                    suffix).resolve():
                shutil.copy(source, (path / LIBRARY).with_suffix(suffix))
        (path / MANIFEST).write_text(json.dumps(self._manifest, indent=1))


def load(path, module):
    """Binds the library saved at `path` to `module` (the same architecture
    as the compiled one); needs no compiler."""
    path = pathlib.Path(path)
    manifest = json.loads((path / MANIFEST).read_text())
    return CompiledModule(module, path, manifest)


def compile(module, example_inputs, *, target="sm_80", precision=None,
            strategy="auto", fp32_math="tf32x3", tile=None):
    """Compiles `module`'s forward for `example_inputs` (2-D tensors whose
    first dimension, the batch, stays free) into a library for `target`
    ("sm_80" and newer GPUs, or "cpu"). `precision` is the GEMM precision of
    float32 models: "fp32" (default, PyTorch's), "tf32", "bf16" or "f16".
    `strategy` is the GPU backend of the fused GEMMs: "auto" (default: per
    op, by the measured rule of docs/architecture.md), "cublas" (cuBLASLt +
    generated epilogue kernels) or "tiled" (generated tensor-core kernels
    with the epilogue in registers). `fp32_math` is how generated kernels
    multiply float32 in fp32 precision: "tf32x3" (tensor cores, split
    operands, fp32-accurate) or "simt" (fma on the CUDA cores). `tile`
    ("BMxBN,WMxWN,STAGES") overrides the generated kernels' tiling. The
    options are checked by the compiler, as fusion-compile's are."""
    from . import _fusion

    example_inputs = tuple(example_inputs)
    modes = ("train", "eval") if has_batch_norm(module) else ("train",)
    functions = {mode: import_module(module, example_inputs,
                                     training=mode == "train",
                                     name=f"forward_{mode}")
                 for mode in modes}
    text = "\n".join(f.text for f in functions.values())
    directory = pathlib.Path(tempfile.mkdtemp(prefix="fusion-"))
    context = _fusion.Context()
    compiled = _fusion.Module.parse(context, text, "model")
    compiled.compile(str(directory / LIBRARY), target=target,
                     strategy=strategy, precision=precision or "",
                     fp32_math=fp32_math, tile=tile or "")
    entries = {mode: {"name": f.name,
                      "arguments": [dataclasses.asdict(a)
                                    for a in f.arguments],
                      "results": [dataclasses.asdict(r) for r in f.results]}
               for mode, f in functions.items()}
    if "eval" not in entries:
        entries["eval"] = entries["train"]
    manifest = {"entries": entries, "inputs": len(example_inputs),
                "target": target, "precision": precision or "fp32",
                "module": type(module).__name__, "ir": text}
    return CompiledModule(module, directory, manifest)
