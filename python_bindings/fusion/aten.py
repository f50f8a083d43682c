"""The ATen importer: core-ATen FX graphs (from torch.export or a dynamo /
AOTAutograd graph) as fusion programs.

One table, keyed by ATen op, says what fusion computes:

- `ELEMENTWISE`: each elementwise op's scalar formula (PyTorch's), built with
  arith/math ops. A chain of them over one GEMM output, however the ops
  combine (`x * tanh(softplus(x))`, `x + x`, per-column vectors, numbers),
  becomes one `fusion.elementwise` region; the compiler fuses it into the
  GEMM's epilogue.
- `STRUCTURAL`: ops that only pass their input on (clone, alias, ...).
- The GEMM (`addmm`, `mm` with a transposed weight, `linear`) and the batch
  norms (`_native_batch_norm_legit*`).

Importing is pure Python and produces a `Program` (fusion/program.py), a
JSON-able description that is the cache key and the saved module's check;
only compiling it needs the native extension.
"""
import math
import operator
import re

import torch
import torch.fx

from .dtypes import ELEMENT_TYPES
from .errors import UnsupportedOperationError
from .program import Program

aten = torch.ops.aten


# Scalar formulas. `s` is a ScalarBuilder (fusion/program.py); operands are
# its scalars or Python numbers.
def _gelu(s, x, approximate="none"):
    if approximate == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        inner = s.mul(math.sqrt(2.0 / math.pi),
                      s.add(x, s.mul(0.044715, s.mul(x, s.mul(x, x)))))
        return s.mul(s.mul(x, 0.5), s.add(1.0, s.op("math.tanh", inner)))
    # x * 0.5 * (1 + erf(x / sqrt(2)))
    return s.mul(s.mul(x, 0.5),
                 s.add(1.0, s.op("math.erf", s.mul(x, math.sqrt(0.5)))))


def _pow(s, x, exponent):
    # PyTorch computes small integer and half powers exactly this way.
    if exponent == 2:
        return s.mul(x, x)
    if exponent == 3:
        return s.mul(s.mul(x, x), x)
    if exponent == 0.5:
        return s.op("math.sqrt", x)
    if exponent == -1:
        return s.div(1.0, x)
    if exponent == -0.5:
        return s.op("math.rsqrt", x)
    return s.op("math.powf", x, exponent)


def _clamp(s, x, low=None, high=None):
    if low is not None:
        x = s.op("arith.maximumf", x, low)
    if high is not None:
        x = s.op("arith.minimumf", x, high)
    return x


def _elu(s, x, alpha=1.0, scale=1.0, input_scale=1.0):
    negative = s.mul(s.op("math.expm1", s.mul(x, input_scale)), alpha * scale)
    return s.select(s.cmp("ogt", x, 0.0), s.mul(x, scale), negative)


def _leaky_relu(s, x, slope=0.01):
    return s.select(s.cmp("ogt", x, 0.0), x, s.mul(x, slope))


def _add(s, a, b, alpha=1):
    return s.add(a, b if alpha == 1 else s.mul(b, alpha))


def _sub(s, a, b, alpha=1):
    return s.sub(a, b if alpha == 1 else s.mul(b, alpha))


def _div(s, a, b, rounding_mode=None):
    if rounding_mode is not None:
        raise UnsupportedOperationError(
            f"division with rounding_mode={rounding_mode!r}")
    return s.div(a, b)


def _unary(name):
    return lambda s, x: s.op(name, x)


def _compare(predicate):
    return lambda s, a, b: s.cmp(predicate, a, b)


ELEMENTWISE = {
    "aten.relu.default": lambda s, x: s.op("arith.maximumf", x, 0.0),
    "aten.leaky_relu.default": _leaky_relu,
    "aten.gelu.default": _gelu,
    "aten.sigmoid.default":
        lambda s, x: s.div(1.0, s.add(1.0, s.op("math.exp", s.neg(x)))),
    "aten.silu.default":
        lambda s, x: s.div(x, s.add(1.0, s.op("math.exp", s.neg(x)))),
    "aten.tanh.default": _unary("math.tanh"),
    "aten.hardtanh.default":
        lambda s, x, low=-1.0, high=1.0: _clamp(s, x, low, high),
    "aten.elu.default": _elu,
    "aten.exp.default": _unary("math.exp"),
    "aten.expm1.default": _unary("math.expm1"),
    "aten.log.default": _unary("math.log"),
    "aten.log1p.default": _unary("math.log1p"),
    "aten.erf.default": _unary("math.erf"),
    "aten.sqrt.default": _unary("math.sqrt"),
    "aten.rsqrt.default": _unary("math.rsqrt"),
    "aten.abs.default": _unary("math.absf"),
    "aten.neg.default": lambda s, x: s.neg(x),
    "aten.reciprocal.default": lambda s, x: s.div(1.0, x),
    "aten.pow.Tensor_Scalar": _pow,
    "aten.clamp.default": _clamp,
    "aten.clamp_min.default": lambda s, x, low: _clamp(s, x, low, None),
    "aten.clamp_max.default": lambda s, x, high: _clamp(s, x, None, high),
    "aten.add.Tensor": _add,
    "aten.add.Scalar": _add,
    "aten.sub.Tensor": _sub,
    "aten.sub.Scalar": _sub,
    "aten.rsub.Scalar": lambda s, a, b, alpha=1: _sub(s, b, a, alpha),
    "aten.mul.Tensor": lambda s, a, b: s.mul(a, b),
    "aten.mul.Scalar": lambda s, a, b: s.mul(a, b),
    "aten.div.Tensor": lambda s, a, b: s.div(a, b),
    "aten.div.Scalar": lambda s, a, b: s.div(a, b),
    "aten.div.Tensor_mode": _div,
    "aten.maximum.default": lambda s, a, b: s.op("arith.maximumf", a, b),
    "aten.minimum.default": lambda s, a, b: s.op("arith.minimumf", a, b),
    "aten.where.self": lambda s, c, a, b: s.select(c, a, b),
    "aten.gt.Scalar": _compare("ogt"),
    "aten.gt.Tensor": _compare("ogt"),
    "aten.ge.Scalar": _compare("oge"),
    "aten.ge.Tensor": _compare("oge"),
    "aten.lt.Scalar": _compare("olt"),
    "aten.lt.Tensor": _compare("olt"),
    "aten.le.Scalar": _compare("ole"),
    "aten.le.Tensor": _compare("ole"),
    "aten.eq.Scalar": _compare("oeq"),
    "aten.eq.Tensor": _compare("oeq"),
    "aten.ne.Scalar": _compare("une"),
    "aten.ne.Tensor": _compare("une"),
}

# Ops that pass their (only tensor) input on unchanged.
STRUCTURAL = {"aten.clone.default", "aten.alias.default",
              "aten.detach.default", "aten.lift_fresh_copy.default"}
# Views that keep the features (the last dimension) of a contiguous value
# only regroup its rows, which elementwise ops do not see.
ROW_VIEWS = {"aten.view.default", "aten._unsafe_view.default",
             "aten.reshape.default"}

GEMMS = {"aten.addmm.default", "aten.mm.default", "aten.linear.default"}
TRANSPOSES = {"aten.permute.default", "aten.t.default"}
BATCH_NORMS = {"aten._native_batch_norm_legit_functional.default",
               "aten._native_batch_norm_legit_no_training.default",
               "aten._native_batch_norm_legit.no_stats"}


FLOAT_CONVERSIONS = {"aten._to_copy.default",
                     "prims.convert_element_type.default"}


def is_float_conversion(node):
    """`_to_copy` or `convert_element_type` that only changes the float
    type."""
    if op_name(node) == "prims.convert_element_type.default":
        return len(node.args) == 2 and node.args[1] in ELEMENT_TYPES
    return op_name(node) == "aten._to_copy.default" and \
        set(node.kwargs) <= {"dtype", "layout"} and \
        node.kwargs.get("dtype") in ELEMENT_TYPES and \
        node.kwargs.get("layout", torch.strided) == torch.strided


def op_name(node):
    return str(node.target)


def location(node):
    """`(file, line)` of the model's own source that made `node`: the
    innermost frame of its stack trace outside torch, or None."""
    trace = node.meta.get("stack_trace") or ""
    torch_dir = torch.__file__.rsplit("/", 1)[0]
    frames = [(file, int(line)) for file, line in
              re.findall(r'File "([^"]+)", line (\d+)', trace)
              if not file.startswith(torch_dir)]
    return frames[-1] if frames else None


def where(node):
    loc = location(node)
    return f"{loc[0]}:{loc[1]}" if loc else "unknown location"


def unsupported(node, why=""):
    raise UnsupportedOperationError(
        f"{op_name(node)} is not supported by fusion"
        f"{': ' + why if why else ''} ({where(node)})")


def tensor_meta(node):
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return value if isinstance(value, torch.Tensor) else None


def _static(size):
    return size if isinstance(size, int) else None


class _Expr:
    """A scalar expression over one GEMM-chain matrix element (`root`),
    per-column vector elements and numbers; `args` hold _Expr, numbers,
    strings or None."""
    __slots__ = ("fn", "args", "kwargs")

    def __init__(self, fn, args=(), kwargs=()):
        self.fn, self.args, self.kwargs = fn, tuple(args), tuple(kwargs)


_ROOT = _Expr("x")


class _Chain:
    """A value the chain computes: `expr` over the matrix `root` (a program
    value), not yet materialized unless `expr` is the root itself."""
    __slots__ = ("root", "expr")

    def __init__(self, root, expr=_ROOT):
        self.root, self.expr = root, expr


class Importer:
    """Imports a set of ATen nodes (in graph order) whose tensor inputs are
    `inputs` (placeholders or values computed outside), as a Program whose
    arguments are those inputs, in order, and whose results are `outputs`
    (nodes, or (node, index) for the outputs of multi-result ops)."""

    def __init__(self, nodes, inputs, outputs):
        self.nodes = list(nodes)
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.program = Program()
        self.values = {}          # fx node (or (node, index)) -> value
        # Inputs of one value (0-d or (1,)) that the caller broadcasts to a
        # vector of this many features.
        self.broadcasts = {}
        self.element = None
        self.weights = self._weights()

    def _weights(self):
        """Inputs used as the [N, K] weight of a GEMM (so of static shape)."""
        weights = set()
        for node in self.nodes:
            gemm = self._gemm_operands(node)
            if gemm is not None:
                weights.add(gemm[1])
        return weights

    def _gemm_operands(self, node):
        """(x, weight [N, K], bias or None) of a GEMM node, else None."""
        name = op_name(node)
        if name == "aten.linear.default":
            return node.args[0], node.args[1], \
                node.args[2] if len(node.args) > 2 else None
        if name not in ("aten.addmm.default", "aten.mm.default"):
            return None
        if name == "aten.addmm.default":
            bias, x, transposed = node.args[:3]
            if node.kwargs.get("beta", 1) != 1 or \
                    node.kwargs.get("alpha", 1) != 1:
                unsupported(node, "addmm with alpha or beta other than 1")
        else:
            (x, transposed), bias = node.args[:2], None
        if not isinstance(transposed, torch.fx.Node) or \
                op_name(transposed) not in TRANSPOSES or \
                transposed not in self.nodes:
            unsupported(node, "the GEMM's second operand must be a "
                        "transposed [out_features, in_features] weight, as "
                        "linear's")
        if op_name(transposed) == "aten.permute.default" and \
                list(transposed.args[1]) != [1, 0]:
            unsupported(transposed, "only a 2-D transpose")
        return x, transposed.args[0], bias

    # Types.
    def _element(self, node, what):
        meta = tensor_meta(node)
        element = ELEMENT_TYPES.get(meta.dtype) if meta is not None else None
        if element is None:
            raise UnsupportedOperationError(
                f"{what} has dtype {getattr(meta, 'dtype', None)}; fusion "
                f"supports float32, bfloat16 and float16 ({where(node)})")
        if self.element is None:
            self.element = element
        elif element != self.element:
            raise UnsupportedOperationError(
                f"{what} has dtype {meta.dtype} while the model computes in "
                f"{self.element}: mixed dtypes are not supported "
                f"({where(node)})")
        return element

    def _argument(self, node):
        meta = tensor_meta(node)
        if meta is None:
            raise UnsupportedOperationError(
                f"input {node.name} is not a tensor ({where(node)})")
        element = self._element(node, f"input {node.name}")
        if meta.numel() == 1 and meta.dim() <= 1 and node not in self.weights:
            # A 0-d or (1,) tensor: its caller broadcasts it to the
            # features of the chain that reads it, a per-column vector.
            columns = self._single_value_columns(node)
            self.broadcasts[node] = columns
            self.values[node] = self.program.argument([columns], element)
            return
        shape = [_static(d) for d in meta.shape]
        if meta.dim() == 2 and node not in self.weights:
            shape[0] = None  # The batch, free at run time.
        if None in shape[1:] or (meta.dim() == 1 and shape[0] is None):
            raise UnsupportedOperationError(
                f"input {node.name} has dynamic feature sizes "
                f"{tuple(meta.shape)}: only the batch may vary "
                f"({where(node)})")
        if meta.dim() not in (1, 2):
            raise UnsupportedOperationError(
                f"input {node.name} has shape {tuple(meta.shape)}; fusion "
                f"computes on [batch, features] matrices and [features] "
                f"vectors ({where(node)})")
        value = self.program.argument(shape, element)
        self.values[node] = value if meta.dim() == 1 or node in \
            self.weights else _Chain(value)

    def _single_value_columns(self, node):
        """The features of the elementwise ops reading `node`."""
        widths = {self._columns(user) for user in node.users
                  if user in self.nodes}
        if len(widths) != 1 or None in widths:
            raise UnsupportedOperationError(
                f"input {node.name} (one value) is read by "
                f"{', '.join(op_name(u) for u in node.users)}; fusion "
                f"broadcasts such a tensor as an operand of elementwise ops "
                f"on values of one feature count ({where(node)})")
        return widths.pop()

    # Values.
    def _columns(self, node):
        """The features (last dimension) of a value of rank >= 2."""
        meta = tensor_meta(node)
        return None if meta is None or meta.dim() < 2 else meta.shape[-1]

    def _operand(self, arg, user):
        """`arg` of elementwise `user` as an expression operand: a number,
        a per-column vector element or a chain expression."""
        if arg is None or isinstance(arg, (bool, str)):
            return arg
        if isinstance(arg, (int, float)):
            return float(arg)
        if not isinstance(arg, torch.fx.Node) or arg not in self.values:
            unsupported(user, f"its operand {arg} is not a value fusion "
                        f"computes")
        value = self.values[arg]
        if isinstance(value, float):
            return value
        if isinstance(value, _Chain):
            return value
        # A per-column vector: its length must be the chain's columns.
        columns = self._columns(user)
        if arg not in self.broadcasts and \
                tensor_meta(arg).shape[0] != columns:
            unsupported(user, f"its operand {arg.name} has shape "
                        f"{tuple(tensor_meta(arg).shape)}, neither a number "
                        f"nor a ({columns},) vector")
        return _Expr("column", (value,))

    def _elementwise(self, node):
        if self._columns(node) is None:
            unsupported(node, "fusion computes elementwise ops on "
                        "[..., features] values")
        args = [self._operand(a, node) for a in node.args]
        kwargs = [(k, self._operand(v, node))
                  for k, v in sorted(node.kwargs.items())]
        chains = [a for a in args + [v for _, v in kwargs]
                  if isinstance(a, _Chain)]
        roots = {c.root for c in chains}
        if len(roots) != 1:
            unsupported(node, "an elementwise op between values of different "
                        "GEMM chains" if roots else
                        "an elementwise op on no GEMM output")
        unwrap = lambda a: a.expr if isinstance(a, _Chain) else a
        expr = _Expr(op_name(node), [unwrap(a) for a in args],
                     [(k, unwrap(v)) for k, v in kwargs])
        self.values[node] = _Chain(roots.pop(), expr)

    def materialize(self, value, node):
        """The program value of a chain value: its elementwise expression,
        if any, as one `fusion.elementwise` op."""
        if not isinstance(value, _Chain):
            return value
        if value.expr is _ROOT:
            return value.root
        return self.program.elementwise(value.root, value.expr,
                                        location(node))

    def _matrix(self, arg, user):
        if not isinstance(arg, torch.fx.Node) or arg not in self.values or \
                not isinstance(self.values[arg], _Chain):
            unsupported(user, f"its input {arg} is not a [batch, features] "
                        f"matrix fusion computes")
        return self.materialize(self.values[arg], arg)

    def _vector(self, arg, user, length):
        if arg is None:
            return None
        value = self.values.get(arg) if isinstance(arg, torch.fx.Node) \
            else None
        meta = tensor_meta(arg)
        if not isinstance(value, int) or meta is None or \
                tuple(meta.shape) != (length,):
            unsupported(user, f"its operand {arg} must be a ({length},) "
                        f"parameter or buffer")
        return value

    # Ops.
    def _gemm(self, node):
        x, weight, bias = self._gemm_operands(node)
        w_meta = tensor_meta(weight)
        if weight not in self.values or w_meta is None or w_meta.dim() != 2:
            unsupported(node, "the weight must be an input of the model")
        out_features, in_features = w_meta.shape
        if self._columns(x) != in_features:
            unsupported(node, f"its input has {self._columns(x)} features, "
                        f"the weight {in_features}")
        self._element(node, op_name(node))
        value = self.program.linear(
            self._matrix(x, node), self.values[weight],
            self._vector(bias, node, out_features), location(node))
        self.values[node] = _Chain(value)

    def _batch_norm(self, node):
        name = op_name(node)
        args = list(node.args)
        if name.endswith("no_stats"):
            x, weight, bias, training, momentum, eps = args
            mean = var = None
        elif "no_training" in name:
            x, weight, bias, mean, var, momentum, eps = args
            training = False
        else:
            x, weight, bias, mean, var, training, momentum, eps = args
        columns = self._columns(x)
        if tensor_meta(x).dim() != 2:
            unsupported(node, "a batch norm over a [batch, features] matrix "
                        "only (BatchNorm1d on 2-D inputs)")
        if training:
            # Only the normalized output and the running statistics are
            # computed; PyTorch's saved batch statistics are not.
            for user in node.users:
                if user.target is operator.getitem and user.args[1] in (1, 2) \
                        and user.users:
                    unsupported(node, "its batch mean or inverse standard "
                                "deviation is used (as by a backward pass)")
        results = self.program.batch_norm(
            self._matrix(x, node), training=bool(training),
            epsilon=float(eps), momentum=float(momentum),
            weight=self._vector(weight, node, columns),
            bias=self._vector(bias, node, columns),
            running_mean=self._vector(mean, node, columns),
            running_var=self._vector(var, node, columns),
            location=location(node))
        self.values[(node, 0)] = _Chain(results[0])
        if len(results) == 3:
            self.values[(node, 3)] = results[1]
            self.values[(node, 4)] = results[2]

    def _getitem(self, node):
        source, index = node.args
        if (source, index) not in self.values:
            unsupported(source, f"its result {index} is not one fusion "
                        f"computes")
        self.values[node] = self.values[(source, index)]

    def _row_view(self, node):
        source = node.args[0]
        if not isinstance(self.values.get(source), _Chain) or \
                self._columns(node) != self._columns(source):
            unsupported(node, "only views that keep the features of a value "
                        "fusion computes")
        self.values[node] = self.values[source]

    def _float_conversion(self, node):
        """Conversions between float types (low-precision batch norms
        compute in float32): fusion computes every chain value in float32
        and rounds the results once to the element type, so they pass
        their value on."""
        source = node.args[0]
        if not is_float_conversion(node) or \
                not isinstance(self.values.get(source), (_Chain, int)):
            unsupported(node, "only conversions between float32, bfloat16 "
                        "and float16 of values fusion computes")
        self.values[node] = self.values[source]

    def _full(self, node):
        size, value = node.args[:2]
        if list(size) != []:
            unsupported(node, "only a 0-d constant")
        self.values[node] = float(value)

    def run(self):
        for node in self.inputs:
            self._argument(node)
        for node in self.nodes:
            name = op_name(node)
            if node.op != "call_function":
                unsupported(node)
            if isinstance(node.meta.get("val"), (torch.SymInt, int)):
                continue  # Size arithmetic (of a symbolic batch), for views.
            if node.target is operator.getitem:
                self._getitem(node)
            elif name in GEMMS:
                self._gemm(node)
            elif name in TRANSPOSES:
                continue  # Read by its GEMM.
            elif name in BATCH_NORMS:
                self._batch_norm(node)
            elif name in ELEMENTWISE:
                self._elementwise(node)
            elif name in STRUCTURAL:
                self.values[node] = self.values.get(node.args[0])
            elif name in ROW_VIEWS:
                self._row_view(node)
            elif name in FLOAT_CONVERSIONS:
                self._float_conversion(node)
            elif name == "aten.full.default":
                self._full(node)
            elif name == "aten.native_dropout.default":
                unsupported(node, "dropout in training mode draws random "
                            "numbers, which fusion does not reproduce as "
                            "PyTorch does; in eval() mode it is the "
                            "identity")
            else:
                unsupported(node)
        for output in self.outputs:
            key = output
            if key not in self.values or isinstance(self.values[key], float):
                unsupported(output if isinstance(output, torch.fx.Node)
                            else output[0], "its result is not one fusion "
                            "computes")
            node = output if isinstance(output, torch.fx.Node) else output[0]
            meta = tensor_meta(node)
            if meta is not None and ELEMENT_TYPES.get(meta.dtype) != \
                    self.element:
                unsupported(node, f"its result is {meta.dtype}, the "
                            f"model's tensors {self.element}")
            self.program.result(self.materialize(self.values[key], node))
        return self.program
