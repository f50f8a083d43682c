"""fusion.compile, fusion.load and the modules they return."""
import dataclasses
import json
import math
import os
import pathlib
import tempfile

import torch

from . import runtime
from .cache import LIBRARY, LIBRARY_FILES, compiled_library
from .dtypes import ELEMENT_TYPES, TORCH_DTYPES
from .errors import FusionRuntimeError, UnsupportedOperationError
from .export import (Argument, Result, import_module,
                     mode_dependent_modules)
from .options import check_names, compiler_text, describe
from .random import SEED_BITS_RANGE, draw_seed

MANIFEST = "fusion_module.json"
_module_call = runtime.MODULE_CALL and runtime.MODULE_CALL.call


@dataclasses.dataclass
class _Entry:
    """One entry point of the library (the train or eval forward)."""
    name: str
    arguments: list  # Argument
    results: list  # Result
    batch_statistics: list  # batch norms normalizing with the batch's
    # Arguments past `arguments`: [i, start, stop, copy], rows of
    # argument i (copied if `copy`).
    slices: list
    # The position of the draws' seed among the library's arguments, or
    # None (ImportedFunction.seed).
    seed: int = None

    def __post_init__(self):
        # What a call may skip: writing running statistics back, and
        # preparing the library's arguments.
        self.writes_back = any(r.kind != "output" for r in self.results)
        self.plain_arguments = not self.slices and self.seed is None

    @classmethod
    def from_manifest(cls, entry):
        return cls(entry["name"], [Argument(**a) for a in entry["arguments"]],
                   [Result(**r) for r in entry["results"]],
                   entry["batch_statistics"], entry.get("slices", []),
                   entry.get("seed"))


class CompiledModule(torch.nn.Module):
    """A drop-in replacement of the compiled module: the same forward
    signature and results, computed by the compiled library with the original
    module's parameters and buffers (shared, not copied), batch norms in
    training or eval mode as the module is, running statistics and
    num_batches_tracked updated in place as PyTorch does."""

    def __init__(self, original, files, manifest, functions,
                 source="the compile"):
        super().__init__()
        self._functions = functions  # ImportedFunction by mode
        self.original = original
        self._files = files  # LIBRARY_FILES' contents, which save() writes
        self._manifest = manifest
        self._library = _open_library(files, source)
        self.training = original.training  # Only informative: see _mode.
        self._captured = _constants_and_submodules(original)
        # What _check_unchanged compares at every call, flattened so that the
        # common case (nothing changed) costs a few dictionary lookups.
        self._captured_checks = [
            (module, vars(module), len(vars(module)), tuple(constants.items()))
            for module, constants in self._captured.values()]
        self._children = [(parent._modules, child_name, child)
                          for parent in original.modules()
                          for child_name, child in parent._modules.items()]
        self._mode_dependent = mode_dependent_modules(original)
        self._entries = {mode: _Entry.from_manifest(entry)
                         for mode, entry in manifest["entries"].items()}
        # Each output's dimensions after the inputs' leading ones (the
        # library returns [batch, their product]).
        self._output_shapes = manifest.get("output_shapes") or \
            next(iter(functions.values())).output_shapes
        self._output_widths = [math.prod(tail)
                               for tail in self._output_shapes]
        self._plain_outputs = all(len(tail) == 1
                                  for tail in self._output_shapes)
        # (owning module, attribute) of each parameter and buffer argument,
        # read at every call, so that replaced parameters are seen.
        self._owners = {}
        for entry in self._entries.values():
            for argument in entry.arguments:
                if argument.kind != "input":
                    path, _, leaf = argument.name.rpartition(".")
                    self._owners[argument.name] = (
                        original.get_submodule(path), leaf)
        self._plan = self._call_plan()

    def _call_plan(self):
        """What the C++ call (python_bindings/ModuleCall.cpp) checks and
        reads at every call in the common case, or None."""
        if runtime.MODULE_CALL is None:
            return None
        probe = torch.empty(3)
        return runtime.MODULE_CALL.module_plan(
            self._manifest["inputs"], self._children,
            [checks[1:] for checks in self._captured_checks],
            list(self._mode_dependent), self._plan_entry("train"),
            self._plan_entry("eval"), self._output_shapes,
            self._manifest["output_structure"], probe, probe.data_ptr(),
            probe.numel())

    def _plan_entry(self, mode):
        """The key of `mode`'s entry point and each argument's source (an
        input's index, its owner's __dict__ and name, or the bounds of a
        seed's bits, which the C++ call draws as draw_seed does), where
        the C++ call can take it: no batch statistics, nothing to write
        back or take apart."""
        entry = self._entries.get(mode)
        if entry is None or entry.writes_back or entry.batch_statistics \
                or entry.slices or self._library._updates[entry.name]:
            return None
        sources = []
        for argument in entry.arguments:
            if argument.kind == "input":
                sources.append(argument.index)
                continue
            owner, leaf = self._owners[argument.name]
            if hasattr(type(owner), leaf):
                return None  # getattr reads the class's first.
            sources.append((vars(owner), leaf))
        if entry.seed is not None:
            sources.insert(entry.seed, SEED_BITS_RANGE)
        return self._library.keys[entry.name], sources

    def forward(self, *inputs, **keyword_inputs):
        if self._plan is not None and not keyword_inputs:
            outputs = _module_call(self._plan, *inputs)
            if outputs is not NotImplemented:
                return outputs
        return self._checked_forward(inputs, keyword_inputs)

    def _checked_forward(self, inputs, keyword_inputs):
        """The forward of every case, and the explanation of each refusal
        (the C++ call's NotImplemented)."""
        if keyword_inputs:
            raise FusionRuntimeError(
                f"a compiled module takes its inputs by position, got "
                f"keyword arguments {', '.join(sorted(keyword_inputs))}")
        if len(inputs) != self._manifest["inputs"]:
            raise FusionRuntimeError(
                f"forward takes {self._manifest['inputs']} inputs, got "
                f"{len(inputs)}")
        for index, value in enumerate(inputs):
            if not isinstance(value, torch.Tensor):
                raise FusionRuntimeError(
                    f"forward input {index} must be a torch.Tensor, got "
                    f"{type(value).__name__}")
        self._check_unchanged()
        mode = self._mode()
        entry = self._entries.get(mode)
        if entry is None:
            raise FusionRuntimeError(
                f"{self._manifest['module']} was compiled without its "
                f"{mode}() mode, which fusion refused: "
                f"{self._manifest['refused'][mode]}")
        # Inputs of rank > 2 flatten their leading dimensions into the batch.
        leading = inputs[0].shape[:-1] if inputs and inputs[0].dim() else ()
        inputs = tuple(x.reshape(-1, x.shape[-1]) if x.dim() > 2 else x
                       for x in inputs)
        batch = inputs[0].shape[0] if inputs and inputs[0].dim() else None
        self._check_batch_statistics(entry, batch)
        tensors = self._arguments(entry, inputs)
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            if entry.seed is not None:
                raise FusionRuntimeError(
                    f"{self._manifest['module']}'s {mode}() forward draws "
                    f"dropout masks, which its backward (the forward "
                    f"recomputed through PyTorch) would draw anew: call it "
                    f"under torch.no_grad(), or in eval() mode, or train "
                    f"it through torch.compile(backend=\"fusion\")")
            outputs = _CallWithRecomputedBackward.apply(
                self, mode, entry, leading, *tensors)
        else:
            outputs = self._library.call(entry.name,
                                         _library_inputs(entry, tensors),
                                         in_place=True)
        values = self._write_back(entry, outputs, batch)
        if len(leading) != 1 or not self._plain_outputs:
            values = [v.view(*leading, *tail)
                      for v, tail in zip(values, self._output_shapes)]
        if self._manifest["output_structure"] == "tensor":
            return values[0]
        return tuple(values) if self._manifest["output_structure"] == \
            "tuple" else values

    def _recompute(self, mode, entry, leading, tensors):
        """The entry's results computed again by PyTorch, from the same
        arguments, through the module's ATen graph (the ops it wrote, not
        the decomposition the library was compiled from): what the backward
        pass differentiates."""
        function = self._functions[mode]
        by_argument = {(a.kind, a.index, a.name): t
                       for a, t in zip(entry.arguments, tensors)}
        graph_inputs = []
        for argument in function.graph_arguments:
            key = (argument.kind, argument.index, argument.name)
            if key in by_argument:
                tensor = by_argument[key]
                if argument.kind == "input" and len(leading) > 1:
                    tensor = tensor.view(*leading, tensor.shape[-1])
                graph_inputs.append(tensor)
            elif argument.kind == "input":
                graph_inputs.append(None)  # Unused by the forward.
            elif argument.kind == "constant":
                graph_inputs.append(function.constants[argument.name])
            else:
                path, _, leaf = argument.name.rpartition(".")
                graph_inputs.append(
                    getattr(self.original.get_submodule(path), leaf))
        outputs = function.graph_module(*graph_inputs)
        # The graph returns the buffers it updates first, then the outputs,
        # which the library returns as [batch, values per row].
        count = len(self._output_widths)
        return [o.reshape(-1, width) for o, width in zip(
            list(outputs)[len(outputs) - count:], self._output_widths)]

    def _unchanged(self):
        # Plain loops: the check runs at every call.
        for children, name, child in self._children:
            if children.get(name) is not child:
                return False
        for _, attributes, count, constants in self._captured_checks:
            if len(attributes) != count:
                return False
            for key, value in constants:
                if attributes.get(key, _MISSING) != value:
                    return False
        return True

    def _check_unchanged(self):
        """Refuses to run if the module's submodules or constants differ from
        those the library was compiled from."""
        if self._unchanged():
            return
        now = dict(self.original.named_modules())
        changes = []
        for name, (module, constants) in self._captured.items():
            if now.get(name) is not module:
                replacement = type(now[name]).__name__ if name in now \
                    else "nothing"
                raise FusionRuntimeError(
                    f"submodule {name} ({type(module).__name__}) was replaced "
                    f"by {replacement} after compiling: compile the module "
                    f"again")
            current = _plain_attributes(module)
            prefix = f"{name}." if name else ""
            changes += [
                f"{prefix}{key} {constants.get(key)!r} -> {current.get(key)!r}"
                for key in sorted(constants.keys() | current.keys())
                if constants.get(key) != current.get(key)]
        if changes:
            raise FusionRuntimeError(
                f"the module changed after compiling ({'; '.join(changes)}); "
                f"the library holds the old values: compile the module again")

    def _mode(self):
        """"train" or "eval": the mode of the batch norms and dropouts now,
        not at compile time, as the module's own forward would use."""
        modes = {m.training for m in self._mode_dependent}
        if len(modes) > 1:
            raise FusionRuntimeError(
                "the module's batch norms and dropouts are partly in train() "
                "and partly in eval() mode; a compiled module runs them all "
                "in one mode")
        return "eval" if modes == {False} else "train"

    def _check_batch_statistics(self, entry, batch):
        # As PyTorch's F.batch_norm: the variance of one sample is undefined.
        if batch == 1 and entry.batch_statistics:
            bn = self.original.get_submodule(entry.batch_statistics[0])
            raise ValueError(
                f"Expected more than 1 value per channel when training, got "
                f"input size {torch.Size([1, bn.num_features])} (batch norm "
                f"{entry.batch_statistics[0]})")

    def _arguments(self, entry, inputs):
        """The library's arguments: the inputs, and the module's parameters
        and buffers as they are now."""
        tensors = []
        for argument in entry.arguments:
            if argument.kind == "input":
                tensors.append(inputs[argument.index])
                continue
            owner, attribute = self._owners[argument.name]
            value = getattr(owner, attribute)
            if not isinstance(value, torch.Tensor):
                raise FusionRuntimeError(
                    f"{argument.kind} {argument.name} is {value!r} now; the "
                    f"library was compiled with it: compile the module again")
            tensors.append(value)
        return tensors

    def _write_back(self, entry, outputs, batch):
        """The forward outputs among the library's results; the updated
        running statistics go into the batch norms, as PyTorch's do."""
        if not entry.writes_back:
            return outputs
        values = []
        updated = set()
        with torch.no_grad():
            for result, tensor in zip(entry.results, outputs):
                if result.kind == "output":
                    values.append(tensor)
                    continue
                bn = self.original.get_submodule(result.name)
                # Written in place already where the library could; PyTorch
                # leaves the statistics alone on an empty batch but still
                # counts it.
                statistic = getattr(bn, result.kind)
                if batch != 0 and tensor is not statistic:
                    statistic.copy_(tensor)
                if result.name not in updated:
                    updated.add(result.name)
                    bn.num_batches_tracked.add_(1)
        return values

    def save(self, path):
        """Writes the library and what rebinding it to a module needs."""
        path = pathlib.Path(path)
        path.mkdir(parents=True, exist_ok=True)
        for name, data in self._files.items():
            _replace_file(path / name, data)
        _replace_file(path / MANIFEST,
                      json.dumps(self._manifest, indent=1).encode())


def _library_inputs(entry, tensors):
    """The library's arguments: the tensors, then the rows of weights and
    vectors it takes apart (views, or copies where a view would not be
    16-byte aligned), and the seed of its draws, drawn now."""
    if entry.plain_arguments:
        return tensors
    def rows(i, start, stop, copy):
        view = tensors[i][start:stop]
        return view.clone() if copy else view

    arguments = tensors + [rows(*piece) for piece in entry.slices]
    if entry.seed is not None:
        arguments.insert(entry.seed, draw_seed(tensors[0].device))
    return arguments


class _CallWithRecomputedBackward(torch.autograd.Function):
    """The library's results in the forward pass; in the backward pass, the
    gradients of the same computation recomputed through PyTorch's ops
    (fusing the backward is a later step). Running statistics are outputs
    without gradients."""

    @staticmethod
    def forward(ctx, module, mode, entry, leading, *tensors):
        ctx.module, ctx.mode, ctx.entry, ctx.leading = \
            module, mode, entry, leading
        # Buffers as they are now: the forward updates running statistics
        # in place.
        ctx.save_for_backward(*[
            t.clone() if a.kind == "buffer" else t
            for a, t in zip(entry.arguments, tensors)])
        outputs = module._library.call(
            entry.name, _library_inputs(entry, [t.detach() for t in tensors]))
        ctx.mark_non_differentiable(*[
            o for o, r in zip(outputs, entry.results) if r.kind != "output"])
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grads):
        tensors = ctx.saved_tensors
        if 0 in ctx.leading:
            # No rows, empty outputs: every gradient is 0, as eager's (the
            # recomputation's functional batch norm refuses an empty batch).
            return (None, None, None, None) + tuple(
                torch.zeros_like(t) if t.requires_grad else None
                for t in tensors)
        leaves = [t.detach().requires_grad_(t.requires_grad)
                  for t in tensors]
        with torch.enable_grad():
            recomputed = ctx.module._recompute(ctx.mode, ctx.entry,
                                               ctx.leading, leaves)
        output_grads = [g for g, r in zip(grads, ctx.entry.results)
                        if r.kind == "output"]
        pairs = [(o, g) for o, g in zip(recomputed, output_grads)
                 if g is not None and o.requires_grad]
        wanted = [leaf for leaf in leaves if leaf.requires_grad]
        found = iter(torch.autograd.grad(
            [o for o, _ in pairs], wanted, [g for _, g in pairs],
            allow_unused=True) if pairs and wanted else [None] * len(wanted))
        return (None, None, None, None) + tuple(
            next(found) if leaf.requires_grad else None for leaf in leaves)


def _replace_file(path, data):
    # A new file, not the old one rewritten: a process that has the old
    # library loaded (mapped) keeps its copy intact.
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def _read_library(directory):
    return {name: (pathlib.Path(directory) / name).read_bytes()
            for name in LIBRARY_FILES}


def _open_library(files, source, keys=None):
    """The library loaded from a private copy, removed once loaded (the
    loaded code needs no file): no temporary folder is left behind, and a
    library saved again at a path never aliases the one loaded from it
    before (dlopen returns the library already loaded from a path)."""
    with tempfile.TemporaryDirectory(prefix="fusion-") as directory:
        for name, data in files.items():
            (pathlib.Path(directory) / name).write_bytes(data)
        try:
            return runtime.Library(pathlib.Path(directory) / LIBRARY, keys)
        except OSError as error:  # The temporary path would only confuse.
            raise FusionRuntimeError(
                f"cannot load the library of {source}: "
                f"{str(error).replace(directory + '/', '')}") from error


# Attribute types an import can read into the library as constants.
_PLAIN_TYPES = (bool, int, float, str, tuple, type(None))
_MISSING = object()


def _plain_attributes(module):
    # training is not one: the mode is followed at every call (_mode).
    return {key: value for key, value in vars(module).items()
            if key != "training" and isinstance(value, _PLAIN_TYPES)}


def _constants_and_submodules(module):
    """What an import reads from `module` besides parameter and buffer
    values, which the library holds fixed: each submodule (the object), and
    its plain attributes (slopes, multipliers, momentum, eps, ...)."""
    return {name: (sub, _plain_attributes(sub))
            for name, sub in module.named_modules()}


def load(path, module):
    """Binds the library saved at `path` to `module`, which must import as
    the compiled one did (the same ops, constants, parameter names, shapes
    and dtypes); needs no compiler."""
    path = pathlib.Path(path)
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except FileNotFoundError:
        raise FusionRuntimeError(
            f"no saved fusion module at {path} (no {MANIFEST})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise FusionRuntimeError(
            f"{path / MANIFEST} is not a fusion manifest ({error}): save the "
            f"module again") from None
    _drop_broadcast_widths(manifest)
    functions = _check_same_ops(path, manifest, module)
    return CompiledModule(module, _read_library(path), manifest, functions,
                          str(path))


def _drop_broadcast_widths(manifest):
    """Removes the "broadcast" width that manifests saved before single
    values became [1] column operands give each argument: 0 (the value
    passed as it is) is what an argument means without it, and a library
    that took a broadcast vector differs in its program, which
    _check_same_ops refuses."""
    for entry in manifest.get("entries", {}).values():
        for argument in entry.get("arguments", []):
            if argument.get("broadcast") == 0:
                del argument["broadcast"]


def _import(module, example_inputs, any_mode=False):
    """The module's forward as fusion functions by mode ("train", and
    "eval" where batch norms or dropouts make it differ), and why fusion
    refused a mode (dropout in train() mode), which the compiled module
    refuses to run in: not the mode the module is in now (unless
    `any_mode`: then one of them)."""
    modal = mode_dependent_modules(module)
    if not modal:
        function = import_module(module, example_inputs, training=True,
                                 name="forward_train")
        return {"train": function, "eval": function}, {}
    now = "train" if any(m.training for m in modal) else "eval"
    functions, refused = {}, {}
    for mode in ("train", "eval"):
        try:
            functions[mode] = import_module(module, example_inputs,
                                            training=mode == "train",
                                            name=f"forward_{mode}")
        except UnsupportedOperationError as error:
            if mode == now and not any_mode or \
                    any_mode and not functions and mode == "eval":
                raise
            refused[mode] = str(error)
    return functions, refused


def _programs(functions):
    return {f.name: f.program for f in functions.values()}


def _manifest_entries(functions):
    """How each mode's entry point binds to the module (the manifest's)."""
    return {mode: {"name": f.name,
                   "arguments": [dataclasses.asdict(a) for a in f.arguments],
                   "results": [dataclasses.asdict(r) for r in f.results],
                   "batch_statistics": f.batch_statistics,
                   "slices": f.slices, "seed": f.seed}
            for mode, f in functions.items()}


def _check_same_ops(path, manifest, module):
    """Refuses `module` unless it imports as the programs the library was
    compiled from (the manifest's, source locations aside): the same ops,
    constants, parameter shapes and dtypes. Importing needs no compiler.
    Returns the module's imported functions."""
    if "programs" not in manifest:
        raise FusionRuntimeError(
            f"{path} was saved by an older fusion, without the programs that "
            f"checking the module needs: compile and save again")
    # On the module's device: exporting mixes no devices.
    device = next((t.device for t in module.parameters()),
                  torch.device("cpu"))
    examples = [torch.randn(shape, dtype=TORCH_DTYPES[element],
                            device=device)
                for shape, element in manifest["example_inputs"]]
    try:
        functions, refused = _import(module, examples, any_mode=True)
    except UnsupportedOperationError as error:
        raise FusionRuntimeError(
            f"{path} was compiled from other ops than this "
            f"{type(module).__name__}, which does not import for the saved "
            f"example inputs: {error}") from error
    for name, program in _programs(functions).items():
        saved = manifest["programs"].get(name)
        if saved != json.loads(json.dumps(program.without_locations())):
            raise FusionRuntimeError(
                f"{path} was compiled from other ops than this "
                f"{type(module).__name__} (its {name} differs: "
                f"{_first_difference(saved, program.without_locations())}); "
                f"compile the module instead")
    # The same ops on parameters and buffers of other names.
    entries = _manifest_entries(functions)
    if entries != manifest["entries"]:
        raise FusionRuntimeError(
            f"{path} binds {_state_names(manifest['entries'])}, this "
            f"{type(module).__name__} has {_state_names(entries)}: compile "
            f"the module instead")
    return functions


def _first_difference(saved, now):
    """The first op (or the signature) in which two programs differ."""
    saved = saved or {"ops": [], "arguments": []}
    if saved["arguments"] != now["arguments"]:
        return f"arguments {saved['arguments']} vs {now['arguments']}"
    for old, new in zip(saved["ops"] + [None] * len(now["ops"]),
                        now["ops"] + [None] * len(saved["ops"])):
        if old != new:
            return f"the library has {old}, the module {new}"
    return "results"


def _state_names(entries):
    """The parameters and buffers that manifest entries bind."""
    return sorted({a["name"] for entry in entries.values()
                   for a in entry["arguments"] if a["kind"] != "input"})


def default_target(device):
    """The compile target of tensors on `device`: its GPU's (sm_XY), or
    "cpu"."""
    if device.type == "cuda":
        major, minor = torch.cuda.get_device_capability(device)
        return f"sm_{major}{minor}"
    return "cpu"


def compile(module, example_inputs, **options):
    """Compiles `module`'s forward for `example_inputs` (tensors of rank >= 2
    [..., features] whose leading dimensions stay free; they flatten into
    the batch) into a library, through torch.export and the ATen importer.
    The module's train/eval mode is followed at every call. `options` are
    the compile options below (fusion/options.py, the compiler's table);
    `target` is by default that of the example inputs' device. The compiler
    checks them, as fusion-compile's. Libraries are cached
    (fusion/cache.py).

    """
    check_names(options, "fusion.compile")
    example_inputs = tuple(example_inputs)
    if options.get("target") is None:
        devices = [x.device for x in example_inputs
                   if isinstance(x, torch.Tensor)]
        options = {**options, "target": default_target(
            devices[0] if devices else torch.device("cpu"))}
    text = compiler_text(options)
    functions, refused = _import(module, example_inputs)
    programs = _programs(functions)
    first = next(iter(functions.values()))
    files = compiled_library(programs, text)
    manifest = {"entries": _manifest_entries(functions),
                "inputs": len(example_inputs),
                "refused": refused,
                "output_structure": first.output_structure,
                "output_ranks": first.output_ranks,
                "output_shapes": first.output_shapes,
                "target": text["target"],
                "precision": text["precision"] or "fp32",
                "module": type(module).__name__,
                "programs": {name: p.without_locations()
                             for name, p in programs.items()},
                # What load's import of a module to check needs.
                "example_inputs": [[list(x.shape), ELEMENT_TYPES[x.dtype]]
                                   for x in example_inputs]}
    return CompiledModule(module, files, manifest, functions)


compile.__doc__ += describe()
