"""The PyTorch importer: a torch.fx trace of an nn.Module as fusion IR.

Supported: nn.Linear and F.linear (with or without bias), multiplication by
a Python number or by a parameter/buffer of shape (N,) (either operand
order), nn.LeakyReLU / F.leaky_relu, nn.ReLU / F.relu, nn.BatchNorm1d (train
and eval, affine or not, running statistics tracked or not, a momentum
given), in chains, several layers per model, on 2-D float32, bfloat16 or
float16 tensors whose first dimension is the batch. Parameters and buffers
become function arguments, so weights are bound at run time. Anything else
raises UnsupportedOperationError naming the operation and its source line.
"""
import dataclasses
import operator
import re
import traceback

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

from .errors import UnsupportedOperationError

from .dtypes import ELEMENT_TYPES


@dataclasses.dataclass
class Argument:
    """A function argument: a forward input (`index`) or a parameter or
    buffer of the module (`name`, its qualified name)."""
    kind: str  # "input", "parameter" or "buffer"
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
    text: str
    arguments: list
    results: list
    output_structure: str  # forward returns a "tensor", a "tuple" or a "list"
    batch_statistics: list  # batch norms normalizing with batch statistics


class _Tracer(torch.fx.Tracer):
    record_stack_traces = True


def _float(value):
    """`value` as an MLIR float literal, which needs a dot: 1e-05 -> 1.0e-05."""
    text = repr(float(value))
    if "inf" in text or "nan" in text:
        raise UnsupportedOperationError(f"the constant {value} is not finite")
    if "." not in text:
        text = text.replace("e", ".0e") if "e" in text else text + ".0"
    return text


def _trace(module):
    """The fx graph of `module`'s forward; code fx cannot trace (control flow
    on tensor values, ...) is refused with its source line."""
    try:
        return _Tracer().trace(module)
    except torch.fx.proxy.TraceError as error:
        # The innermost frame outside torch is the model's own line.
        torch_dir = torch.__file__.rsplit("/", 1)[0]
        frames = [f for f in traceback.extract_tb(error.__traceback__)
                  if not f.filename.startswith(torch_dir)]
        where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames \
            else "unknown location"
        raise UnsupportedOperationError(
            f"the forward of {type(module).__name__} cannot be traced, "
            f"which fusion needs: {error} ({where})") from None


def _location(node):
    """`file:line` of the model source that made `node`, if known (fx puts
    the innermost frame, the module's forward, first)."""
    trace = getattr(node, "stack_trace", None) or ""
    frames = re.findall(r'File "([^"]+)", line (\d+)', trace)
    return f"{frames[0][0]}:{frames[0][1]}" if frames else "unknown location"


class _Importer:
    def __init__(self, module, example_inputs, training, name):
        self.module = module
        self.example_inputs = example_inputs
        self.training = training
        self.name = name
        self.arguments = []        # Argument, in function order
        self.argument_types = []
        self.argument_of = {}      # qualified name or input index -> %arg
        self.values = {}           # fx node -> (ssa name, columns)
        self.lines = []
        self.results = []
        self.counter = 0
        self.element = None
        self.batch_norms_applied = set()  # qualified names, training only
        self.batch_statistics = []  # qualified names

    # Types and arguments.
    def _check_dtype(self, tensor, what):
        element = ELEMENT_TYPES.get(tensor.dtype)
        if element is None:
            raise UnsupportedOperationError(
                f"{what} has dtype {tensor.dtype}; fusion supports float32, "
                f"bfloat16 and float16")
        if self.element is None:
            self.element = element
        elif element != self.element:
            raise UnsupportedOperationError(
                f"{what} has dtype {tensor.dtype} while the model computes "
                f"in {self.element}: mixed dtypes are not supported")
        return element

    def matrix(self, columns):
        return f"tensor<?x{columns}x{self.element}>"

    def tensor_type(self, shape):
        return "tensor<" + "x".join(str(d) for d in shape) + \
            f"x{self.element}>"

    def _add_argument(self, key, argument, type_text):
        if key not in self.argument_of:
            ssa = f"%arg{len(self.arguments)}"
            self.arguments.append(argument)
            self.argument_types.append(type_text)
            self.argument_of[key] = ssa
        return self.argument_of[key]

    def state(self, qualified, node):
        """The argument holding parameter or buffer `qualified`."""
        try:
            tensor = self.module.get_parameter(qualified)
            kind = "parameter"
        except AttributeError:
            tensor = self.module.get_buffer(qualified)
            kind = "buffer"
        self._check_dtype(tensor, f"{kind} {qualified} ({_location(node)})")
        return self._add_argument(
            qualified, Argument(kind, name=qualified),
            self.tensor_type(tensor.shape)), tensor

    def fresh(self):
        self.counter += 1
        return f"%v{self.counter}"

    @staticmethod
    def loc(node):
        """The op's MLIR location: the model source line, if known."""
        location = _location(node)
        if location == "unknown location":
            return ""
        file, line = location.rsplit(":", 1)
        return f' loc("{file}":{line}:0)'

    def emit(self, node, text, columns):
        ssa = self.fresh()
        self.lines.append(f"  {ssa} = {text}{self.loc(node)}")
        self.values[node] = (ssa, columns)
        return ssa

    def value(self, node, user):
        if node not in self.values:
            raise UnsupportedOperationError(
                f"{self.describe(user)} takes {node.format_node()} as its "
                f"input, which is not a tensor fusion computes "
                f"({_location(user)})")
        return self.values[node]

    @staticmethod
    def describe(node):
        if node.op == "call_module":
            return f"module {node.target}"
        target = getattr(node.target, "__name__", str(node.target))
        return f"{node.op} {target}"

    def unsupported(self, node, why=""):
        raise UnsupportedOperationError(
            f"{self.describe(node)} is not supported by fusion"
            f"{': ' + why if why else ''} ({_location(node)})")

    # Ops.
    def linear(self, node, x_node, weight, bias):
        x, columns = self.value(x_node, node)
        if columns is None:
            self.unsupported(node, "its input must be a 2-D tensor")
        weight_ssa, weight_tensor = weight
        out_features, in_features = weight_tensor.shape
        if in_features != columns:
            raise UnsupportedOperationError(
                f"{self.describe(node)}: weight in_features {in_features} does "
                f"not match input features {columns} ({_location(node)})")
        operands = f"{x}, {weight_ssa}"
        types = f"{self.matrix(columns)}, {self.tensor_type(weight_tensor.shape)}"
        if bias is not None:
            operands += f", {bias[0]}"
            types += f", {self.tensor_type(bias[1].shape)}"
        return self.emit(node, f"fusion.linear {operands} : {types} -> "
                         f"{self.matrix(out_features)}", out_features)

    def leaky_relu(self, node, x_node, slope):
        x, columns = self.value(x_node, node)
        return self.emit(node, f"fusion.leaky_relu {x}, negative_slope = "
                         f"{_float(slope)} : {self.matrix(columns)}", columns)

    def relu(self, node, x_node):
        # Not leaky_relu with slope 0: relu(-inf) is 0, -inf * 0 is NaN.
        x, columns = self.value(x_node, node)
        return self.emit(node, f"fusion.relu {x} : {self.matrix(columns)}",
                         columns)

    def mul(self, node, left, right):
        tensor_node, other = (left, right) if left in self.values \
            else (right, left)
        x, columns = self.value(tensor_node, node)
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return self.emit(node, f"fusion.mul_scalar {x}, {_float(other)} "
                             f": {self.matrix(columns)}", columns)
        if isinstance(other, torch.fx.Node) and other.op == "get_attr":
            scale, tensor = self.state(other.target, node)
            if tuple(tensor.shape) != (columns,):
                self.unsupported(node, f"the multiplier {other.target} has "
                                 f"shape {tuple(tensor.shape)}, not "
                                 f"({columns},)")
            return self.emit(node, f"fusion.mul {x}, {scale} : "
                             f"{self.matrix(columns)}, "
                             f"{self.tensor_type(tensor.shape)}", columns)
        self.unsupported(node, "only products with a number or a (N,) "
                         "parameter or buffer are")

    def batch_norm(self, node, x_node, bn, qualified):
        x, columns = self.value(x_node, node)
        if bn.momentum is None:
            self.unsupported(node, "momentum=None (a cumulative average)")
        if bn.num_features != columns:
            self.unsupported(node, f"it normalizes {bn.num_features} "
                             f"features but gets {columns}")
        tracked = bn.running_mean is not None
        training = self.training or not tracked
        if training:
            self.batch_statistics.append(qualified)
        operands, types = [x], [self.matrix(columns)]
        clauses = ""
        if bn.affine:
            weight = self.state(f"{qualified}.weight", node)[0]
            bias = self.state(f"{qualified}.bias", node)[0]
            clauses += f" weight({weight}) bias({bias})"
            types += [self.tensor_type([columns])] * 2
        if tracked:
            mean = self.state(f"{qualified}.running_mean", node)[0]
            var = self.state(f"{qualified}.running_var", node)[0]
            clauses += f" running_stats({mean}, {var})"
            types += [self.tensor_type([columns])] * 2
        mode = "training" if training else "inference"
        config = (f"<{mode}, epsilon = {_float(bn.eps)}, momentum = "
                  f"{_float(bn.momentum)}>")
        vector = self.tensor_type([columns])
        updates = training and tracked
        result_types = [self.matrix(columns)] + [vector] * (2 * updates)
        result_text = result_types[0] if not updates else \
            "(" + ", ".join(result_types) + ")"
        ssa = self.fresh()
        name = f"{ssa}:3" if updates else ssa
        self.lines.append(
            f"  {name} = fusion.batch_norm {x}, {config}{clauses} : "
            f"({', '.join(types)}) -> {result_text}{self.loc(node)}")
        self.values[node] = (f"{ssa}#0" if updates else ssa, columns)
        if updates:
            self.results.append((Result("running_mean", name=qualified),
                                 f"{ssa}#1", vector))
            self.results.append((Result("running_var", name=qualified),
                                 f"{ssa}#2", vector))

    def run(self):
        graph = _trace(self.module)
        outputs = []
        placeholder = 0
        for node in graph.nodes:
            if node.op == "placeholder":
                if placeholder >= len(self.example_inputs):
                    self.unsupported(node, "no example input for it")
                example = self.example_inputs[placeholder]
                if not isinstance(example, torch.Tensor) or example.dim() != 2:
                    raise UnsupportedOperationError(
                        f"input {placeholder} ({node.target}) must be a 2-D "
                        f"tensor [batch, features]")
                self._check_dtype(example, f"input {placeholder}")
                ssa = self._add_argument(
                    ("input", placeholder),
                    Argument("input", index=placeholder),
                    self.matrix(example.shape[1]))
                self.values[node] = (ssa, example.shape[1])
                placeholder += 1
            elif node.op == "get_attr":
                continue  # Used by the op that reads it.
            elif node.op == "call_module":
                self.call_module(node)
            elif node.op == "call_function":
                self.call_function(node)
            elif node.op == "call_method" and node.target == "mul":
                self.mul(node, node.args[0], node.args[1])
            elif node.op == "output":
                result = node.args[0]
                structure = "tuple" if isinstance(result, tuple) else \
                    "list" if isinstance(result, list) else "tensor"
                outputs = [result] if structure == "tensor" else list(result)
            else:
                self.unsupported(node)
        results = []
        for index, output in enumerate(outputs):
            ssa, columns = self.value(output, output)
            results.append((Result("output", index=index), ssa,
                            self.matrix(columns)))
        results += self.results
        signature = ", ".join(f"{ssa}: {type_text}" for ssa, type_text in
                              zip(self.argument_of_order(),
                                  self.argument_types))
        result_types = ", ".join(r[2] for r in results)
        body = "\n".join(self.lines)
        text = (f"func.func @{self.name}({signature}) -> ({result_types}) {{\n"
                f"{body}\n  return {', '.join(r[1] for r in results)} : "
                f"{result_types}\n}}\n")
        return ImportedFunction(self.name, text, self.arguments,
                                [r[0] for r in results], structure,
                                self.batch_statistics)

    def argument_of_order(self):
        return [f"%arg{i}" for i in range(len(self.arguments))]

    def call_module(self, node):
        sub = self.module.get_submodule(node.target)
        args = node.args
        if isinstance(sub, nn.Linear):
            weight = self.state(f"{node.target}.weight", node)
            bias = self.state(f"{node.target}.bias", node) \
                if sub.bias is not None else None
            self.linear(node, args[0], weight, bias)
        elif isinstance(sub, nn.LeakyReLU):
            self.leaky_relu(node, args[0], sub.negative_slope)
        elif isinstance(sub, nn.ReLU):
            self.relu(node, args[0])
        elif isinstance(sub, nn.BatchNorm1d):
            # PyTorch updates the running statistics once per application;
            # one compiled call writes them once.
            if self.training and node.target in self.batch_norms_applied:
                self.unsupported(node, "the same BatchNorm1d is applied more "
                                 "than once in training mode")
            self.batch_norms_applied.add(node.target)
            self.batch_norm(node, args[0], sub, node.target)
        else:
            self.unsupported(node, f"{type(sub).__name__} is no linear, "
                             f"leaky_relu, relu or BatchNorm1d")

    def call_function(self, node):
        fn, args, kwargs = node.target, node.args, node.kwargs
        if fn is F.linear:
            weight_node = kwargs.get("weight", args[1] if len(args) > 1
                                     else None)
            bias_node = kwargs.get("bias", args[2] if len(args) > 2 else None)
            if not isinstance(weight_node, torch.fx.Node) or \
                    weight_node.op != "get_attr":
                self.unsupported(node, "the weight must be a parameter")
            weight = self.state(weight_node.target, node)
            bias = None
            if bias_node is not None:
                if not isinstance(bias_node, torch.fx.Node) or \
                        bias_node.op != "get_attr":
                    self.unsupported(node, "the bias must be a parameter")
                bias = self.state(bias_node.target, node)
            self.linear(node, args[0], weight, bias)
        elif fn is F.leaky_relu:
            slope = kwargs.get("negative_slope",
                               args[1] if len(args) > 1 else 0.01)
            self.leaky_relu(node, args[0], slope)
        elif fn in (F.relu, torch.relu):
            self.relu(node, args[0])
        elif fn in (operator.mul, torch.mul):
            self.mul(node, args[0], args[1])
        else:
            self.unsupported(node)


def import_module(module, example_inputs, *, training, name="forward"):
    """The fusion-dialect function of `module`'s forward, batch norms in
    training mode if `training` (else inference, where they track running
    statistics), and how its arguments and results map to the module."""
    return _Importer(module, list(example_inputs), training, name).run()


def has_batch_norm(module):
    return any(isinstance(m, nn.BatchNorm1d) for m in module.modules())
