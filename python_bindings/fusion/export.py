"""Whole modules through torch.export: an nn.Module's forward, decomposed to
core ATen, as one fusion program, and how its arguments and results bind to
the module (parameters, buffers, inputs, outputs, running statistics).

Inputs of rank >= 2 are accepted with the linear over the last dimension:
the leading dimensions flatten into the batch (as in transformer MLPs) and
the outputs take them back. An output is the inputs' leading dimensions
followed by static ones (`output_shapes`, none for a value per row such as
`y.sum(1)`); the library returns it as [batch, their product].
"""
import dataclasses
import math
import warnings

import torch
import torch.nn as nn
from torch.export.graph_signature import InputKind, OutputKind

from .importer import (UNDECOMPOSED, Importer, constant_readers,
                       folds_as_number, op_name, where)
from .errors import UnsupportedOperationError
from .graph_rewrites import join_concatenated_gemms



@dataclasses.dataclass
class Argument:
    """A function argument: a forward input (`index`) or a parameter or
    buffer of the module (`name`, its qualified name)."""
    kind: str  # "input", "parameter", "buffer" or "constant"
    index: int = -1
    name: str = ""


@dataclasses.dataclass
class Result:
    """A function result: a forward output (`index`), or the updated running
    mean/variance of the batch norm `name`."""
    kind: str  # "output", "running_mean" or "running_var"
    index: int = -1
    name: str = ""


@dataclasses.dataclass
class ImportedFunction:
    name: str
    program: object  # Program
    arguments: list  # Argument
    results: list  # Result
    output_structure: str  # forward returns a "tensor", a "tuple" or a "list"
    batch_statistics: list  # batch norms normalizing with batch statistics
    # What the backward pass recomputes through PyTorch: the module's ATen
    # graph (the ops the model wrote), and its placeholders as Arguments.
    output_ranks: list = None  # the outputs' ranks
    graph_module: object = None
    graph_arguments: list = None
    # Each output's dimensions after the inputs' leading ones.
    output_shapes: list = None
    # The tensors of "constant" graph arguments (numbers the forward writes
    # as tensors, folded into the program) by name, for the recomputation.
    constants: dict = None
    # The library's arguments past `arguments`: [i, start, stop, copy]
    # passes rows [start, stop) of argument i, copied if `copy` (see
    # Importer.slices).
    slices: list = dataclasses.field(default_factory=list)
    # The position among the library's arguments of the seed of its draws
    # (training-mode dropout), which the caller draws per call, or None.
    seed: int = None


def _modes(module):
    return {m: m.training for m in module.modules()}


def _export(module, example_inputs, training):
    """The core-ATen exported program of `module` in train or eval mode,
    and the module's ATen graph with the same signature whose ops are those
    the model wrote (std, softplus), not their decompositions: what the
    backward differentiates, so that its gradients are eager's (sqrt's at a
    zero variance, softplus's branch not taken). The module's own modes are
    left as they were."""
    modes = _modes(module)
    module.train(training)
    try:
        # The leading dimensions stay symbolic, so that the graph (which the
        # backward pass recomputes) runs at any batch size.
        dynamic = tuple({d: torch.export.Dim.AUTO for d in range(x.dim() - 1)}
                        for x in example_inputs)
        decompositions = torch.export.default_decompositions()
        for op in UNDECOMPOSED:
            decompositions.pop(op)
        program = torch.export.export(module, tuple(example_inputs),
                                      dynamic_shapes=dynamic)
        with warnings.catch_warnings():
            # run_decompositions deep-copies the program's own input specs,
            # whose leaves are of a class PyTorch deprecated: its warning
            # says nothing about this model.
            warnings.filterwarnings(
                "ignore", category=FutureWarning,
                message=r"`isinstance\(treespec, LeafSpec\)` is deprecated")
            return (program.run_decompositions(decompositions),
                    program.run_decompositions({}).graph_module)
    except UnsupportedOperationError:
        raise
    except Exception as error:  # noqa: BLE001 (torch raises many kinds)
        raise UnsupportedOperationError(
            f"the forward of {type(module).__name__} cannot be exported by "
            f"torch.export, which fusion needs: "
            f"{str(error).strip().splitlines()[0]}") from None
    finally:
        for m, mode in modes.items():
            m.training = mode


def import_module(module, example_inputs, *, training, name="forward"):
    """The fusion program of `module`'s forward, batch norms in training
    mode if `training` (else inference, where they use running
    statistics), and how its arguments and results map to the module."""
    _check_module(module, example_inputs, training)
    ep, differentiated = _export(module, example_inputs, training)
    join_concatenated_gemms(ep.graph_module)
    user_outputs, outputs, results = _graph_outputs(ep, module)
    # Outputs of other shapes are refused after importing: an op that makes
    # them (a reduction over the batch, say) is named there, with its line.
    output_ranks, output_shapes, shape_problems = _output_shapes(
        ep, module, example_inputs, user_outputs)
    for index, value in enumerate(user_outputs):
        results.insert(index, Result("output", index=index))
        outputs.insert(index, value)
    structure = _structure(ep, module)
    needed = _needed(outputs)
    graph_arguments, inputs, constants, numbers = _graph_inputs(
        ep, module, needed)
    used = {node for _, node in inputs}
    nodes = [n for n in ep.graph.nodes if n.op == "call_function" and
             n in needed and n not in used]
    importer = Importer(nodes, [node for _, node in inputs], outputs,
                        numbers)
    program = importer.run()
    if shape_problems:
        raise UnsupportedOperationError(shape_problems[0])
    for index, (tail, shape) in enumerate(zip(output_shapes,
                                              importer.result_shapes)):
        if math.prod(tail) != shape[-1]:
            raise UnsupportedOperationError(
                f"output {index} of {type(module).__name__} has shape "
                f"{tuple(user_outputs[index].meta['val'].shape)}, computed "
                f"with {shape[-1]} values per row")
    positions = {node: i for i, (_, node) in enumerate(inputs)}
    slices = [[positions[node], start, stop, copy]
              for node, start, stop, copy in importer.slices]
    seed = None if importer.seed is None else \
        [a["value"] for a in program.arguments].index(importer.seed)
    return ImportedFunction(name, program, [a for a, _ in inputs], results,
                            structure, _batch_statistics(nodes),
                            output_ranks, differentiated, graph_arguments,
                            output_shapes, constants, slices, seed)


def _check_module(module, example_inputs, training):
    """Refuses inputs of rank < 2 and batch norms of cumulative averages."""
    for index, example in enumerate(example_inputs):
        if not isinstance(example, torch.Tensor) or example.dim() < 2:
            got = tuple(example.shape) if isinstance(example, torch.Tensor) \
                else type(example).__name__
            raise UnsupportedOperationError(
                f"input {index} must be a tensor of rank >= 2 "
                f"[..., features], got {got}")
    for qualified, sub in module.named_modules():
        if isinstance(sub, nn.modules.batchnorm._BatchNorm) and \
                sub.momentum is None and (training or
                                          sub.running_mean is None):
            raise UnsupportedOperationError(
                f"batch norm {qualified} has momentum=None (a cumulative "
                f"average of the batches), which fusion does not compute")


def _graph_outputs(ep, module):
    """(the user outputs' nodes, the running statistics' nodes and their
    Results): the outputs fusion computes."""
    user_outputs, outputs, results = [], [], []
    for spec, value in zip(ep.graph_signature.output_specs,
                           ep.graph.output_node().args[0]):
        if spec.kind == OutputKind.USER_OUTPUT:
            user_outputs.append(value)
        elif spec.kind == OutputKind.BUFFER_MUTATION:
            bn, _, stat = spec.target.rpartition(".")
            if stat == "num_batches_tracked":
                continue  # CompiledModule counts the batches itself.
            if stat not in ("running_mean", "running_var"):
                raise UnsupportedOperationError(
                    f"the forward of {type(module).__name__} updates buffer "
                    f"{spec.target}, which fusion does not compute")
            results.append(Result(stat, name=bn))
            outputs.append(value)
        else:
            raise UnsupportedOperationError(
                f"the forward of {type(module).__name__} has a "
                f"{spec.kind.name} output, which fusion does not compute")
    return user_outputs, outputs, results


def _output_shapes(ep, module, example_inputs, user_outputs):
    """(ranks, features' shapes, problems) of the user outputs: each must
    have the first input's leading dimensions, then static features."""
    first_input = next(
        n for n in ep.graph.nodes if n.op == "placeholder" and
        n.name == ep.graph_signature.user_inputs[0])
    leading = [str(d) for d in first_input.meta["val"].shape[:-1]]
    ranks, shapes, problems = [], [], []
    for index, value in enumerate(user_outputs):
        meta = value.meta.get("val") if isinstance(value, torch.fx.Node) \
            else None
        tail = list(meta.shape[len(leading):]) if meta is not None else []
        if meta is None or \
                [str(d) for d in meta.shape[:len(leading)]] != leading or \
                not all(isinstance(d, int) for d in tail):
            problems.append(
                f"output {index} of {type(module).__name__} has shape "
                f"{tuple(meta.shape) if meta is not None else None}; fusion "
                f"computes outputs of the inputs' leading dimensions "
                f"{tuple(example_inputs[0].shape[:-1])} followed by "
                f"features")
            if meta is None:
                raise UnsupportedOperationError(problems[0])
        ranks.append(meta.dim())
        shapes.append(tail)
    return ranks, shapes, problems


def _structure(ep, module):
    """How the forward returns its tensors: "tensor", "tuple" or "list"."""
    spec = ep.call_spec.out_spec
    if spec is None or spec.is_leaf():
        return "tensor"
    if spec.type not in (tuple, list) or \
            not all(child.is_leaf() for child in spec.children()):
        raise UnsupportedOperationError(
            f"the forward of {type(module).__name__} returns {spec}; "
            f"fusion returns a tensor, or a flat tuple or list of "
            f"tensors")
    return spec.type.__name__


def _needed(outputs):
    """The nodes the results need (the batch counters' updates are not)."""
    needed, stack = set(), list(outputs)
    while stack:
        node = stack.pop()
        if isinstance(node, torch.fx.Node) and node not in needed:
            needed.add(node)
            stack += node.all_input_nodes
    return needed


def _graph_inputs(ep, module, needed):
    """(every placeholder's Argument, the (Argument, node) of those the
    program reads, constants folded as numbers by name, and by node)."""
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    graph_arguments, inputs = [], []
    constants, numbers = {}, {}
    for spec, node in zip(ep.graph_signature.input_specs, placeholders):
        if spec.kind == InputKind.USER_INPUT:
            argument = Argument("input", index=len(
                [a for a in graph_arguments if a.kind == "input"]))
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            argument = Argument("parameter" if spec.kind ==
                                InputKind.PARAMETER else "buffer",
                                name=spec.target)
        elif spec.kind == InputKind.CONSTANT_TENSOR and \
                not _is_tensor_attribute(module, spec.target) and \
                folds_as_number(ep.constants[spec.target],
                                constant_readers(node)):
            argument = Argument("constant", name=spec.target)
            constants[spec.target] = ep.constants[spec.target]
            numbers[node] = float(constants[spec.target].item())
        else:
            # A tensor the forward makes, or a tensor attribute, is lifted
            # to a constant input: named at the line of its first use.
            user = next(iter(node.users), None)
            raise UnsupportedOperationError(
                f"the forward of {type(module).__name__} reads {spec.kind.name}"
                f" {spec.target}, which fusion cannot bind (a tensor attribute,"
                f" or a tensor made in forward other than one number that "
                f"elementwise ops read: make it a parameter or buffer of the "
                f"module) "
                f"({where(user) if user is not None else 'unknown location'})")
        graph_arguments.append(argument)
        if argument.kind == "constant" or \
                not any(user in needed for user in node.users):
            continue
        inputs.append((argument, node))
    return graph_arguments, inputs, constants, numbers


def _batch_statistics(nodes):
    """The batch norms that train (in graph order): each at most once."""
    names = [_batch_norm_name(n) for n in nodes
             if op_name(n).startswith("aten._native_batch_norm_legit") and
             "no_training" not in op_name(n)]
    for bn in names:
        if names.count(bn) > 1:
            # PyTorch counts each application in num_batches_tracked.
            raise UnsupportedOperationError(
                f"batch norm {bn} is applied more than once in training "
                f"mode, which fusion does not compute")
    return names


def _is_tensor_attribute(module, target):
    """Whether the lifted constant `target` is a tensor attribute of
    `module` (not a parameter or buffer), which may change after compiling:
    not folded."""
    path, _, leaf = target.rpartition(".")
    try:
        owner = module.get_submodule(path)
    except AttributeError:
        return False
    return isinstance(getattr(owner, leaf, None), torch.Tensor)


def _batch_norm_name(node):
    """The qualified name of the batch norm module that made `node`."""
    stack = list((node.meta.get("nn_module_stack") or {}).values())
    return stack[-1][0] if stack else node.name


def mode_dependent_modules(module):
    """The submodules whose forward differs in train() and eval() mode:
    batch norms and dropouts (of a probability above 0)."""
    return [m for m in module.modules()
            if isinstance(m, nn.modules.batchnorm._BatchNorm) or
            (isinstance(m, nn.modules.dropout._DropoutNd) and m.p > 0)]
