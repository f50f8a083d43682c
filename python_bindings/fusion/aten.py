"""The ATen importer: core-ATen FX graphs (from torch.export or a dynamo /
AOTAutograd graph) as fusion programs.

Tables keyed by ATen op say what fusion computes:

- `ELEMENTWISE` (fusion/formulas.py): each elementwise op's scalar formula
  (PyTorch's), built with arith/math ops. A chain of them over one GEMM
  output, however the ops
  combine (`x * tanh(softplus(x))`, `x + x`, per-column vectors, numbers),
  becomes one `fusion.elementwise` region; the compiler fuses it into the
  GEMM's epilogue. Operands of other chains are row operands of that
  region: a [B, N] value of another layer (a residual: `y + linear2(h)`),
  or a narrower one broadcast over contiguous columns of the row (a
  reduction's [B, 1] result, a group norm's [B, G, 1] statistics).
- `REDUCTIONS` along the features (the trailing dimensions, within each
  row: sum, mean, amax/amin, max/min values, var/std/var_mean with any
  correction, logsumexp, vector norms) become `fusion.reduce` ops whose map
  is the expression they reduce; `NORMALIZATIONS` (softmax, log_softmax,
  layer norm, group norm over contiguous groups) are built from them, as
  PyTorch computes them (maxima subtracted before exponentials, variances
  in two passes around the mean).
- `POOLS`: max and average pooling (plain and adaptive) whose windows are
  contiguous groups of each row's features without overlap, padding or
  dilation (`F.max_pool1d(y.unsqueeze(1), k)`: a `max` reduce of N / k
  groups; average pools a `sum` reduce divided by k or divisor_override).
- `STRUCTURAL`: ops that only pass their input on (clone, alias, ...);
  `VIEWS` that keep the rows (regrouping them, or the features, or adding
  or dropping dimensions of size 1) and `EXPANDS` of values that
  elementwise ops broadcast.
- The GEMM (`addmm`, `mm` with a transposed weight, `linear`) and the batch
  norms (`_native_batch_norm_legit*`).

Importing is pure Python and produces a `Program` (fusion/program.py), a
JSON-able description that is the cache key and the saved module's check;
only compiling it needs the native extension. The torch.compile backend
(fusion/dynamo.py) asks the importer which ops a partition can hold.
"""
import math
import operator
import re

import torch
import torch.fx

from .dtypes import ELEMENT_TYPES
from .errors import UnsupportedOperationError
from .formulas import (BOOL_TO_FLOAT, BOOLEAN_ARITHMETIC, BOOLEAN_RESULTS,
                       ELEMENTWISE, FORMULAS, LOGICAL, ROUND_TO_ELEMENT)
from .program import Program

aten = torch.ops.aten

# Ops that the importer takes whole, with PyTorch's kernel's formula, where
# core ATen's decompositions would not import: lerp's computes on a number
# weight as a tensor of its own, heaviside's selects int64 values, rrelu's
# makes its noise tensor (aten.empty) even outside training, mvlgamma's
# (multigammaln's) adds a tensor of aten.arange to the input; or would
# compute otherwise: std's, sqrt(var), overflows where std does not.
UNDECOMPOSED = (aten.lerp.Scalar, aten.lerp.Tensor, aten.heaviside.default,
                aten.rrelu.default, aten.mvlgamma.default,
                aten.std.correction, aten.std_mean.correction)

# Ops that pass their (only tensor) input on unchanged.
STRUCTURAL = {"aten.clone.default", "aten.alias.default",
              "aten.detach.default", "aten.lift_fresh_copy.default"}
# Views that keep the features (the last dimension) of a contiguous value
# only regroup its rows, which elementwise ops do not see (inputs of rank > 2
# flatten through them).
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
    source = tensor_meta(node.args[0]) if node.args else None
    return op_name(node) == "aten._to_copy.default" and \
        set(node.kwargs) <= {"dtype", "layout", "device"} and \
        node.kwargs.get("dtype") in ELEMENT_TYPES and \
        node.kwargs.get("layout", torch.strided) == torch.strided and \
        (source is not None and
         node.kwargs.get("device", source.device) == source.device)


def op_name(node):
    return str(node.target)


def _is_boolean(node):
    meta = tensor_meta(node)
    return meta is not None and meta.dtype == torch.bool


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


class _FormulaCheck:
    """A scalar builder that builds nothing. An elementwise op's formula run
    on it at import time refuses the op's arguments that the formula does
    not take (rrelu's training mode, a keyword of a newer PyTorch) with the
    model's line, rather than when the library is built."""

    def __getattr__(self, name):
        return lambda *operands: self


def check_formula(node):
    dry = _FormulaCheck()

    def stand_in(arg):
        return dry if isinstance(arg, torch.fx.Node) else arg

    try:
        ELEMENTWISE[op_name(node)](
            dry, *map(stand_in, node.args),
            **{k: stand_in(v) for k, v in node.kwargs.items()})
    except (UnsupportedOperationError, TypeError) as e:
        unsupported(node, str(e))


def tensor_meta(node):
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return value if isinstance(value, torch.Tensor) else None


def _static(size):
    return size if isinstance(size, int) else None


def _int(size):
    """A size as an int when it is static (symbolic sizes known to be a
    number included), else None."""
    if isinstance(size, int):
        return size
    node = getattr(size, "node", None)
    as_int = getattr(node, "maybe_as_int", None)
    return as_int() if as_int is not None else None


def _same(a, b):
    """Whether two sizes (ints or symbolic) are the same."""
    a_int, b_int = _int(a), _int(b)
    if a_int is not None or b_int is not None:
        return a_int == b_int
    return str(a) == str(b)


def row_split(shape, width):
    """The number of leading dimensions of a value of `shape` that holds
    `width` values per row: the smallest k >= 1 whose trailing dimensions
    shape[k:] are static and hold `width` values (the rest, the batch, may
    be symbolic), or None."""
    for k in range(1, len(shape) + 1):
        tail = [_int(d) for d in shape[k:]]
        if None not in tail and math.prod(tail) == width:
            return k
    return None


class _Expr:
    """A scalar expression over one element of a matrix (`x`, the root of
    the op that computes it), elements of per-column vectors ("column") and
    of per-row operands ("row", a [rows, G] matrix broadcast over N/G
    contiguous columns) and numbers; `args` hold _Expr, numbers, strings or
    None."""
    __slots__ = ("fn", "args", "kwargs")

    def __init__(self, fn, args=(), kwargs=()):
        self.fn, self.args, self.kwargs = fn, tuple(args), tuple(kwargs)


_ROOT = _Expr("x")
# "vector": an fx node whose value is a per-column vector or a single value,
# in the expression of a _Vectors value (no program operand yet).
_LEAVES = ("x", "column", "row", "vector")


def _map_leaves(expr, replace):
    """`expr` with each leaf `e` replaced by `replace(e)`."""
    memo = {}

    def visit(e):
        if not isinstance(e, _Expr):
            return e
        if e.fn in _LEAVES:
            return replace(e)
        if id(e) not in memo:
            memo[id(e)] = _Expr(e.fn, [visit(a) for a in e.args],
                                [(k, visit(v)) for k, v in e.kwargs])
        return memo[id(e)]

    return visit(expr)


def _substitute(expr, leaf):
    """`expr` with its root `x` replaced by `leaf`."""
    return _map_leaves(expr, lambda e: leaf if e.fn == "x" else e)


def _reads_columns(expr):
    seen, stack = set(), [expr]
    while stack:
        e = stack.pop()
        if not isinstance(e, _Expr) or id(e) in seen:
            continue
        seen.add(id(e))
        if e.fn == "column":
            return True
        stack += list(e.args) + [v for _, v in e.kwargs]
    return False


class _Vectors:
    """A value computed from per-column vectors, single values and numbers
    alone (`torch.exp(self.log_scale)`): `expr` over their "vector" leaves.
    It has no rows of its own; an op that reads it with a [batch, features]
    value evaluates it for each element, reading its vectors' elements as
    columns, as PyTorch's broadcasting does."""
    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr


class _Chain:
    """A value computed per row: `expr` over the [rows, width] matrix `root`
    (a program value), not yet materialized unless `expr` is the root
    itself. `width` is the number of values per row: the features of a
    GEMM output, 1 for a per-row value (a reduction's [B] or [B, 1]
    result), G for grouped statistics ([B, G, 1]). Its PyTorch shape is
    its node's."""
    __slots__ = ("root", "expr", "width")

    def __init__(self, root, expr=_ROOT, width=None):
        self.root, self.expr, self.width = root, expr, width


def arguments(node):
    """The arguments of an ATen op node by name, with their defaults."""
    schema = node.target._schema
    values, positional = {}, list(node.args)
    for argument in schema.arguments:
        if not argument.kwarg_only and positional:
            values[argument.name] = positional.pop(0)
        elif argument.name in node.kwargs:
            values[argument.name] = node.kwargs[argument.name]
        elif argument.has_default_value():
            values[argument.name] = argument.default_value
        else:
            values[argument.name] = None
    return values


# Ops that reduce the features of each row (or contiguous groups of them,
# the trailing dimensions of a value) and the normalizations, which
# compute such reductions and broadcast them back over the row.
REDUCTIONS = {"aten.sum.dim_IntList", "aten.mean.dim", "aten.amax.default",
              "aten.amin.default", "aten.max.dim", "aten.min.dim",
              "aten.var.correction", "aten.std.correction",
              "aten.var_mean.correction", "aten.std_mean.correction",
              "aten.logsumexp.default", "aten.linalg_vector_norm.default"}
NORMALIZATIONS = {"aten._softmax.default", "aten._log_softmax.default",
                  "aten.native_layer_norm.default",
                  "aten.native_group_norm.default",
                  "aten._fused_rms_norm.default"}
# Pooling: op -> (kind, pooled dimensions (None: the kernel's length),
# adaptive). The 1-D functions arrive as the 2-D ops on a view with a
# height of 1; inductor's decompositions turn max pools into
# `_low_memory_max_pool_with_offsets`. Non-overlapping windows that are
# contiguous groups of each row's features are `reduce` ops (average
# pools: sums divided by the window, or divisor_override).
POOLS = {
    **{f"aten.max_pool{d}d{suffix}.default": ("max", d, False)
       for d in (1, 2, 3) for suffix in ("", "_with_indices")},
    **{f"aten.avg_pool{d}d.default": ("avg", d, False) for d in (1, 2, 3)},
    **{f"aten.adaptive_max_pool{d}d.default": ("max", d, True)
       for d in (1, 2, 3)},
    **{f"aten.{prefix}adaptive_avg_pool{d}d.default": ("avg", d, True)
       for d in (1, 2, 3) for prefix in ("", "_")
       if (prefix, d) != ("_", 1)},
    "prims._low_memory_max_pool_with_offsets.default": ("max", None, False),
}
# Views that drop or add dimensions of size 1 (of reduced values, say).
VIEWS = ROW_VIEWS | {"aten.squeeze.dim", "aten.squeeze.dims",
                     "aten.squeeze.default", "aten.unsqueeze.default"}
EXPANDS = {"aten.expand.default"}
# Features of a linear layer's output taken apart (chunk, split, glu): each
# piece is the layer on the rows of its weight and bias that compute it.
COLUMN_SLICES = {"aten.slice.Tensor", "aten.split.Tensor",
                 "aten.split_with_sizes.default", "aten.glu.default"}
CONSTANTS = {"aten.full.default", "aten.scalar_tensor.default"}


def constant_readers(node):
    """The nodes reading the constant `node`'s value, through its structural
    copies (export and AOTAutograd copy a lifted constant before its use)."""
    readers, stack = [], list(node.users)
    while stack:
        user = stack.pop()
        if op_name(user) in STRUCTURAL:
            stack += list(user.users)
        else:
            readers.append(user)
    return readers


def folds_as_number(tensor, readers):
    """Whether the constant `tensor` (the forward made it: torch.tensor(2.0))
    is one number that `readers`, all elementwise ops, read as a number: 0-d
    (PyTorch promotes it as a number), or (1,) of the dtype of each reader's
    operands and result (no promotion)."""

    def reads_as_number(reader):
        if tensor.dim() == 0:
            return True
        dtypes = {reader.meta["val"].dtype} | {
            a.meta["val"].dtype for a in reader.all_input_nodes
            if isinstance(a.meta.get("val"), torch.Tensor)}
        return dtypes == {tensor.dtype}

    return tensor.numel() == 1 and tensor.dim() <= 1 and \
        (tensor.is_floating_point() or
         tensor.dtype in (torch.int8, torch.int16, torch.int32,
                          torch.int64, torch.uint8)) and \
        bool(readers) and all(op_name(r) in ELEMENTWISE and
                              reads_as_number(r) for r in readers)


def linear_operands(node):
    """(x, transposed weight, bias or None) of an addmm or mm node that
    computes a linear layer, x @ weight.t() + bias: the one GEMM pattern of
    the importer and of torch.compile's partitioner. Refuses other GEMMs
    by name."""
    if op_name(node) == "aten.addmm.default":
        bias, x, transposed = node.args[:3]
        if node.kwargs.get("beta", 1) != 1 or \
                node.kwargs.get("alpha", 1) != 1:
            unsupported(node, "addmm with alpha or beta other than 1")
    elif op_name(node) == "aten.mm.default":
        (x, transposed), bias = node.args[:2], None
    else:
        unsupported(node, "not a GEMM")
    if not isinstance(transposed, torch.fx.Node) or \
            op_name(transposed) not in TRANSPOSES:
        unsupported(node, "the GEMM's second operand must be a transposed "
                    "[out_features, in_features] weight, as linear's")
    if op_name(transposed) == "aten.permute.default" and \
            list(transposed.args[1]) != [1, 0]:
        unsupported(transposed, "only a 2-D transpose")
    return x, transposed, bias


def computes(node):
    """Whether `node` computes something (as opposed to passing values on:
    views, conversions, constants)."""
    name = op_name(node)
    return name in ELEMENTWISE or name in REDUCTIONS or \
        name in NORMALIZATIONS or name in BATCH_NORMS or name in POOLS


class Importer:
    """Imports a set of ATen nodes (in graph order) whose tensor inputs are
    `inputs` (placeholders or values computed outside), as a Program whose
    arguments are those inputs, in order, and whose results are `outputs`
    (nodes, or (node, index) for the outputs of multi-result ops).

    Values are per-column vectors (program values), numbers, `_Vectors`
    (elementwise ops of vectors alone, evaluated where a chain reads them)
    and `_Chain`s: expressions over a [rows, width] matrix. Elementwise ops
    combine chains into one expression however they mix: a value of another chain of the
    same width (a residual, another linear layer's output) or a narrower
    one broadcast over the row (a reduction's result) becomes a row operand
    of the expression. Reductions become `reduce` ops whose map is the
    expression they reduce; only what is needed as a whole (GEMM inputs,
    batch norms, results, row operands that read columns of another width)
    is materialized."""

    def __init__(self, nodes, inputs, outputs, numbers=None):
        self.nodes = list(nodes)
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.program = Program()
        # fx node (or (node, index)) -> value; `numbers`: nodes whose value
        # is a number (constants the forward made), read as numbers are.
        self.values = dict(numbers or {})
        # Inputs of one value (0-d or (1,)) that the caller broadcasts to a
        # vector of this many features (those of the ops reading them).
        self.broadcasts = {}
        self.result_shapes = []   # the library's result shapes, in order
        self.element = None
        self.weights = self._weights()
        # Single values: program value -> (node, argument index).
        self._singles = {}
        self._expanded = {}       # expand node -> shape before expanding
        self._materialized = {}   # id(chain) -> (chain, program value)
        self._inlined = {}        # id(chain) -> (chain, expression)
        # Linear layer results: program value -> (x, weight node, bias node
        # or None, first row of the weight's input that they take).
        self._linears = {}
        # Program values of another dtype than the model's: a batch norm's
        # batch statistics (float32 on GPUs) -> their dtype's name.
        self._other_dtypes = {}
        # (input node, start, stop, copy) of each argument past the inputs:
        # rows [start, stop) of an input (a weight or a per-column vector),
        # which the caller passes as a view, or as a copy where the view
        # would not start 16 bytes into the input (the library's buffers
        # are 16-byte aligned).
        self.slices = []
        self._sliced = {}         # (input node, start, stop) -> value
        self._pieces = {}         # (layer's value, start, stop) -> value
        # Program value of an input -> its node, or (node, first row) for
        # rows of one.
        self._input_nodes = {}

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
        if op_name(node) == "aten.linear.default":
            return node.args[0], node.args[1], \
                node.args[2] if len(node.args) > 2 else None
        if op_name(node) not in ("aten.addmm.default", "aten.mm.default"):
            return None
        x, transposed, bias = linear_operands(node)
        if transposed not in self.nodes:
            unsupported(node, "the GEMM's transposed weight is computed "
                        "outside the partition")
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

    def _check_dtype(self, node, meta):
        """Values computed inside are the model's type, float32 (as in
        low-precision chains) or comparison results."""
        if meta is not None and meta.dtype not in (torch.float32,
                                                   torch.bool) and \
                ELEMENT_TYPES.get(meta.dtype) != self.element:
            unsupported(node, f"it computes in {meta.dtype}, the model in "
                        f"{self.element}")

    def _argument(self, node):
        meta = tensor_meta(node)
        if meta is None:
            raise UnsupportedOperationError(
                f"input {node.name} is not a tensor ({where(node)})")
        element = self._element(node, f"input {node.name}")
        if meta.numel() == 1 and meta.dim() <= 1 and node not in self.weights:
            # A 0-d or (1,) tensor: its caller broadcasts it to the
            # features of the ops that read it (known when one does), a
            # per-column vector.
            value = self.program.argument([None], element)
            self._singles[value] = (node, len(self.program.arguments) - 1)
            self.values[node] = value
            return
        if any(_int(d) == 0 for d in meta.shape[1:]) or \
                (node in self.weights and 0 in meta.shape):
            raise UnsupportedOperationError(
                f"input {node.name} has shape {tuple(meta.shape)}, with no "
                f"features: PyTorch computes its empty result "
                f"({where(node)})")
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
        self._input_nodes[value] = node
        self.values[node] = value if meta.dim() == 1 or node in \
            self.weights else _Chain(value, width=shape[1])

    # Values.
    def _columns(self, node):
        """The features (last dimension) of a value of rank >= 2."""
        meta = tensor_meta(node)
        return None if meta is None or meta.dim() < 2 else meta.shape[-1]

    def _shape(self, arg):
        """The shape an operand broadcasts from (an expanded value's before
        expanding)."""
        if arg in self._expanded:
            return self._expanded[arg]
        return tuple(tensor_meta(arg).shape)

    def _chain(self, arg, user, what="input"):
        """The chain value of `arg`, an operand of `user`, and the number of
        its leading (batch) dimensions."""
        value = self.values.get(arg) if isinstance(arg, torch.fx.Node) \
            else None
        if not isinstance(value, _Chain):
            unsupported(user, f"its {what} {arg} is not a [batch, features] "
                        f"value fusion computes")
        if arg in self._expanded:
            unsupported(user, f"its {what} {arg.name} is an expanded value; "
                        f"fusion broadcasts values only as operands of "
                        f"elementwise ops")
        shape = tuple(tensor_meta(arg).shape)
        lead = row_split(shape, value.width)
        if lead is None:
            unsupported(user, f"its {what} {arg.name} of shape {shape} does "
                        f"not keep {value.width} values per row")
        return value, shape, lead

    def _column(self, arg, user, width, shape=None, lead=None):
        """Vector operand `arg` of an op computing `width` values per row
        (of PyTorch `shape`, whose first `lead` dimensions are the batch):
        a per-column vector element."""
        value = self.values[arg]
        self._check_model_dtype(arg, user, value)
        if value in self._singles:
            node, index = self._singles[value]
            if node not in self.broadcasts:
                self.broadcasts[node] = width
                self.program.arguments[index]["shape"] = [width]
            elif self.broadcasts[node] != width:
                unsupported(user, f"its operand {arg.name} (one value) is "
                            f"also read by ops on {self.broadcasts[node]} "
                            f"values per row, this one {width}: fusion "
                            f"broadcasts it to one feature count")
            return _Expr("column", (value,))
        self._check_vector_shape(arg, user, width, shape, lead)
        return _Expr("column", (value,))

    def _dtype_of(self, value):
        """The dtype name of imported value `value`: the model's, but for
        the batch statistics in _other_dtypes."""
        if isinstance(value, int):
            return self._other_dtypes.get(value, self.element)
        return self.element

    def _check_model_dtype(self, arg, user, value):
        """That the vector `value` (of `arg`, an operand of `user`) is of
        the model's dtype, as the ops reading vectors take them."""
        dtype = self._dtype_of(value)
        if dtype != self.element:
            unsupported(user, f"its operand {arg.name} is a batch "
                        f"statistic in {dtype}, the model computes in "
                        f"{self.element}")

    def _check_vector_shape(self, arg, user, width, shape, lead):
        """That `arg` holds `width` values, one per feature of each row,
        broadcast over the batch of PyTorch `shape` (first `lead`
        dimensions) where that is given."""
        own = self._shape(arg)
        ok = math.prod(_int(d) or 0 for d in own) == width
        if ok and shape is not None:
            # Broadcast as PyTorch does (the last dimensions aligned): over
            # the batch, and matching the features.
            if len(own) > len(shape):
                ok = False
            else:
                aligned = (1,) * (len(shape) - len(own)) + tuple(own)
                ok = all(_int(d) == 1 for d in aligned[:lead]) and all(
                    _same(a, b) for a, b in zip(aligned[lead:], shape[lead:]))
        if not ok:
            unsupported(user, f"its operand {arg.name} has shape "
                        f"{tuple(own)}, neither a number nor a vector of "
                        f"the {width} features of each row"
                        f"{f' {tuple(shape[lead:])}' if shape else ''}")

    def _vectors(self, arg, value, user, width, shape, lead):
        """The expression of `value`, the _Vectors value of `arg`, in an op
        computing `width` values per row: its vectors as columns."""
        if math.prod(_int(d) or 0 for d in self._shape(arg)) != 1:
            self._check_vector_shape(arg, user, width, shape, lead)
        return _map_leaves(value.expr, lambda leaf: self._column(
            leaf.args[0], user, width) if leaf.fn == "vector" else leaf)

    def _join(self, fn, args, kwargs=(), node=None):
        """The chain computing scalar function `fn` of `args`/`kwargs`:
        chains (the widest give the width; narrower ones hold a value per
        contiguous group of columns), numbers, column expressions. Its root
        is the latest-computed root of the widest chains; the other chains'
        expressions are inlined, their roots becoming row operands."""
        chains = [a for a in list(args) + [v for _, v in kwargs]
                  if isinstance(a, _Chain)]
        if not chains:
            def vector(a):
                return a.expr if isinstance(a, _Vectors) else a

            return _Vectors(_Expr(fn, [vector(a) for a in args],
                                  [(k, vector(v)) for k, v in kwargs]))
        width = max(c.width for c in chains)
        primary = max((c for c in chains if c.width == width),
                      key=lambda c: c.root)

        def convert(a):
            if not isinstance(a, _Chain):
                return a
            if a.root == primary.root:
                return a.expr
            return self._foreign(a, width, node)

        return _Chain(primary.root,
                      _Expr(fn, [convert(a) for a in args],
                            [(k, convert(v)) for k, v in kwargs]), width)

    def _foreign(self, chain, width, node):
        """The expression of `chain` inside an op of another root of
        `width` values per row: its root a row operand. Its per-column
        vectors have its own width, so a narrower chain reading some is
        materialized first (and one materialized already is read as it
        is)."""
        if id(chain) in self._materialized or (
                chain.width != width and _reads_columns(chain.expr)):
            return _Expr("row", (self.materialize(chain, node),))
        if id(chain) not in self._inlined:
            self._inlined[id(chain)] = (chain, _substitute(
                chain.expr, _Expr("row", (chain.root,))))
        return self._inlined[id(chain)][1]

    def _operand(self, arg, user, width, shape, lead):
        """`arg` of elementwise `user` as an expression operand: a number,
        a per-column vector element or a chain; where `user` reads no
        chain (`width` None), a vector as a _Vectors value."""
        if arg is None or isinstance(arg, (bool, str)):
            return arg
        if isinstance(arg, (int, float)):
            return float(arg)
        if not isinstance(arg, torch.fx.Node) or arg not in self.values:
            unsupported(user, f"its operand {arg} is not a value fusion "
                        f"computes")
        value = self.values[arg]
        if isinstance(value, (float, _Chain)):
            return value
        if width is None:
            return value if isinstance(value, _Vectors) else \
                _Vectors(_Expr("vector", (arg,)))
        if isinstance(value, _Vectors):
            return self._vectors(arg, value, user, width, shape, lead)
        return self._column(arg, user, width, shape, lead)

    def _elementwise(self, node):
        meta = tensor_meta(node)
        if meta is None:
            unsupported(node, "fusion computes elementwise ops on tensors")
        self._check_dtype(node, meta)
        shape = tuple(meta.shape)
        tensors = [a for a in list(node.args) + list(node.kwargs.values())
                   if isinstance(a, torch.fx.Node)]
        for arg in tensors:
            if arg not in self.values:
                unsupported(node, f"its operand {arg.name} is not a value "
                            f"fusion computes")
        operands = [a for a in tensors if isinstance(self.values[a], _Chain)]
        if not operands:
            if not any(isinstance(self.values[a], (int, _Vectors))
                       for a in tensors):
                unsupported(node, "an elementwise op on no [batch, "
                            "features] value or vector fusion computes")
            self._compute(node, None, shape, None)
            return
        if meta.dim() < 1:
            unsupported(node, "fusion computes elementwise ops on "
                        "[batch, ...] values")
        # The batch dimensions of the result, as its chain operands say
        # (PyTorch broadcasts from the last dimension).
        lead = None
        for arg in operands:
            own = self._shape(arg)
            own_lead = row_split(own, self.values[arg].width)
            if own_lead is None:
                unsupported(node, f"its operand {arg.name} of shape {own} "
                            f"does not hold {self.values[arg].width} values "
                            f"per row")
            at = own_lead + len(shape) - len(own)
            if lead is None:
                lead = at
            elif at != lead:
                unsupported(node, f"its operand {arg.name} of shape {own} "
                            f"broadcasts along the features (PyTorch aligns "
                            f"the last dimensions); fusion broadcasts "
                            f"per-row values over the row")
        if lead is None:
            unsupported(node, "an elementwise op on no [batch, features] "
                        "value fusion computes")
        tail = [_int(d) for d in shape[lead:]]
        if None in tail:
            unsupported(node, f"its result {shape} has dynamic features")
        width = math.prod(tail)
        for arg in operands:
            chain = self.values[arg]
            own = self._shape(arg)
            aligned = (1,) * (len(shape) - len(own)) + own
            if not all(_same(a, b) for a, b in
                       zip(aligned[:lead], shape[:lead])):
                unsupported(node, f"its operand {arg.name} of shape {own} "
                            f"broadcasts over the batch {shape[:lead]}")
            end = lead
            while end < len(shape) and _same(aligned[end], shape[end]):
                end += 1
            if any(_int(d) != 1 for d in aligned[end:]) or \
                    math.prod(_int(d) for d in aligned[lead:end]) != \
                    chain.width:
                unsupported(node, f"its operand {arg.name} of shape {own} "
                            f"is broadcast to {shape} other than over "
                            f"contiguous columns of each row")
        if not any(self.values[a].width == width for a in operands):
            unsupported(node, f"it broadcasts per-row values to {shape}, "
                        f"with no [batch, features] value of that width to "
                        f"compute on")
        self._compute(node, width, shape, lead)

    def _compute(self, node, width, shape, lead):
        """The value of elementwise op `node` computing `width` values per
        row (None: on vectors alone) of PyTorch `shape`, whose first `lead`
        dimensions are the batch."""
        check_formula(node)
        name = op_name(node)
        if name in BOOLEAN_ARITHMETIC and _is_boolean(node) and all(
                _is_boolean(a) for a in node.args):
            name = BOOLEAN_ARITHMETIC[name]
        args = [self._number_or_boolean(
            name, node, index, a,
            self._operand(a, node, width, shape, lead))
            for index, a in enumerate(node.args)]
        kwargs = [(k, self._number_or_boolean(
            name, node, k, v, self._operand(v, node, width, shape, lead)))
            for k, v in sorted(node.kwargs.items())]
        value = self._join(name, args, kwargs, node)
        if _is_boolean(node) and name not in BOOLEAN_RESULTS:
            # A boolean from numbers (the maximum of two booleans).
            value = self._join("aten.ne.Scalar", [value, 0.0], node=node)
        self.values[node] = value

    def _number_or_boolean(self, name, node, position, arg, value):
        """Operand `arg` (at `position`) of elementwise op `node`, computed
        as `name`, as the op reads it: a boolean (an i1 value) where a
        logical op or where's condition reads it, or where selects between
        booleans; as a number (1.0 or 0.0, as PyTorch promotes it)
        elsewhere."""
        if not _is_boolean(arg):
            if name in LOGICAL and isinstance(arg, torch.fx.Node):
                unsupported(node, f"its operand {arg.name} is not boolean; "
                            f"fusion computes logical ops of booleans")
            return value
        if name in LOGICAL or (name == "aten.where.self" and (
                position in (0, "condition") or _is_boolean(node))):
            return value
        return self._join(BOOL_TO_FLOAT, [value], node=node)

    def materialize(self, value, node):
        """The program value of a chain value: its expression, if any, as
        one `fusion.elementwise` op (once per chain)."""
        if not isinstance(value, _Chain):
            return value
        if value.expr is _ROOT:
            return value.root
        if id(value) not in self._materialized:
            self._materialized[id(value)] = (value, self.program.elementwise(
                value.root, value.expr, location(node)))
        return self._materialized[id(value)][1]

    def _matrix(self, arg, user):
        chain, _, _ = self._chain(arg, user)
        return self.materialize(chain, arg)

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
        self._check_model_dtype(arg, user, value)
        if value in self._singles:
            self._column(arg, user, length)
        return value

    # Ops.
    def _gemm(self, node):
        x, weight, bias = self._gemm_operands(node)
        w_meta = tensor_meta(weight)
        if weight not in self.values or w_meta is None or w_meta.dim() != 2:
            unsupported(node, "the weight must be an input of the model")
        out_features, in_features = w_meta.shape
        chain, shape, _ = self._chain(x, node)
        if chain.width != in_features or _int(shape[-1]) != in_features:
            unsupported(node, f"its input has shape {shape}, the weight "
                        f"{in_features} input features")
        self._element(node, op_name(node))
        x_value = self.materialize(chain, x)
        value = self.program.linear(
            x_value, self.values[weight],
            self._vector(bias, node, out_features), location(node))
        self._linears[value] = (x_value, weight, bias, 0)
        self.values[node] = _Chain(value, width=out_features)

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
        # The batch mean and inverse standard deviation, where read (as a
        # backward pass does), in PyTorch's type for them: f32 on GPUs.
        batch_stats = None
        if training and any(user.target is operator.getitem and
                            user.args[1] in (1, 2) and user.users
                            for user in node.users):
            batch_stats = ELEMENT_TYPES.get(node.meta["val"][1].dtype)
            if batch_stats is None:
                unsupported(node, f"its batch statistics have dtype "
                            f"{node.meta['val'][1].dtype}")
        results = self.program.batch_norm(
            self._matrix(x, node), training=bool(training),
            epsilon=float(eps), momentum=float(momentum),
            weight=self._vector(weight, node, columns),
            bias=self._vector(bias, node, columns),
            running_mean=self._vector(mean, node, columns),
            running_var=self._vector(var, node, columns),
            batch_stats=batch_stats, location=location(node))
        self.values[(node, 0)] = _Chain(results[0], width=columns)
        rest = iter(results[1:])
        if training and mean is not None:
            self.values[(node, 3)] = next(rest)
            self.values[(node, 4)] = next(rest)
        if batch_stats is not None:
            for index in (1, 2):
                self.values[(node, index)] = next(rest)
                self._other_dtypes[self.values[(node, index)]] = batch_stats

    # Reductions and normalizations.
    def _reduced(self, node, arg, dims):
        """(chain, groups, size) of a reduction of value `arg` over
        dimensions `dims`: they must be its trailing dimensions, within the
        features (each row reduces `groups` contiguous groups of `size`
        values)."""
        chain, shape, lead = self._chain(arg, node)
        if dims is None or (isinstance(dims, (list, tuple)) and not dims):
            unsupported(node, f"a reduction over all dimensions of a "
                        f"{shape} value, the batch included: fusion reduces "
                        f"the features of each row")
        dims = sorted({d % len(shape) for d in
                       (dims if isinstance(dims, (list, tuple)) else [dims])})
        if dims[0] < lead:
            unsupported(node, f"a reduction over dimension "
                        f"{', '.join(map(str, dims))} of a {shape} value, "
                        f"across the batch: fusion reduces the features of "
                        f"each row")
        if dims != list(range(dims[0], len(shape))):
            unsupported(node, f"a reduction over dimensions {dims} of a "
                        f"{shape} value: fusion reduces the last "
                        f"dimensions (contiguous features of each row)")
        size = math.prod(_int(d) for d in shape[dims[0]:])
        return chain, chain.width // size, size

    def _check_reduced_shape(self, node, arg, dims, keepdim):
        """That the graph's shape of reduction `node` is its kernel's: the
        fake kernels of some (linalg_vector_norm over dimensions of size 1)
        keep dimensions the real one drops, and fusion's results take the
        graph's shapes."""
        shape = list(tensor_meta(arg).shape)
        dims = {d % len(shape) for d in
                (dims if isinstance(dims, (list, tuple)) else [dims])}
        want = [1 if i in dims else d for i, d in enumerate(shape)
                if keepdim or i not in dims]
        value = node.meta.get("val")
        for result in value if isinstance(value, (tuple, list)) else [value]:
            got = list(result.shape)
            if len(got) != len(want) or not all(
                    _same(g, w) for g, w in zip(got, want)):
                unsupported(node, f"the graph says its result has shape "
                            f"{tuple(got)}, PyTorch's kernel computes "
                            f"{tuple(want)}")

    def _reduce(self, chain, kind, groups, node):
        value = self.program.reduce(chain.root, kind, groups, chain.expr,
                                    location(node))
        return _Chain(value, width=groups)

    def _number(self, chain, fn, number, node):
        return self._join(fn, [chain, float(number)], (), node)

    def _unary(self, fn, chain, node):
        return self._join(fn, [chain], (), node)

    def _moments(self, chain, groups, size, correction, node):
        """(mean, centred values, scale, variance / scale^2) of each group,
        by the corrected two-pass algorithm (Chan, Golub and LeVeque): the
        first mean, rounded to the element type as every reduction's result
        is, is corrected by the mean of the values less it, so that the
        centred values are exact where they are 0 (a row of equal values,
        1e30 or not, has variance 0, as eager's) and 16-bit means are as
        accurate as float32's. The squares are summed over the largest
        magnitude (1 for a row of zeros or with inf or NaN), so that values
        past 1e19 do not overflow them: eager's CPU kernels sum in float64.
        The maximum is computed in the first mean's pass."""
        rough = self._number(self._reduce(chain, "sum", groups, node),
                             "aten.div.Tensor", size, node)
        top = self._reduce(self._unary("aten.abs.default", chain, node),
                           "max", groups, node)
        finite = self._join("aten.logical_and.default", [
            self._number(top, "aten.gt.Scalar", 0.0, node),
            self._number(top, "aten.lt.Scalar", math.inf, node)], (), node)
        scale = self._join("aten.where.self", [finite, top, 1.0], (), node)
        less = self._join("aten.sub.Tensor", [chain, rough], (), node)
        shift = self._number(self._reduce(less, "sum", groups, node),
                             "aten.div.Tensor", size, node)
        mean = self._join("aten.add.Tensor", [rough, shift], (), node)
        centred = self._join("aten.sub.Tensor", [less, shift], (), node)
        scaled = self._join("aten.mul.Tensor", [centred, self._unary(
            "aten.reciprocal.default", scale, node)], (), node)
        squares = self._join("aten.mul.Tensor", [scaled, scaled], (), node)
        ratio = self._number(self._reduce(squares, "sum", groups, node),
                             "aten.div.Tensor", max(0.0, size - correction),
                             node)
        return mean, centred, scale, ratio

    def _variance(self, scale, ratio, node):
        return self._join("aten.mul.Tensor", [self._join(
            "aten.mul.Tensor", [ratio, scale], (), node), scale], (), node)

    def _standard_deviation(self, scale, ratio, node):
        return self._join("aten.mul.Tensor", [
            scale, self._unary("aten.sqrt.default", ratio, node)], (), node)

    def _inverse_deviation(self, scale, ratio, eps, node):
        """1 / sqrt(variance + eps) without overflowing scale^2: for scales
        past 1, (1 / scale) / sqrt(ratio + eps / scale^2)."""
        small = self._unary("aten.rsqrt.default", self._number(
            self._variance(scale, ratio, node), "aten.add.Tensor", eps,
            node), node)
        inverse = self._unary("aten.reciprocal.default", scale, node)
        shrunk = self._join("aten.mul.Tensor", [
            self._number(inverse, "aten.mul.Tensor", eps, node), inverse],
            (), node)
        large = self._join("aten.mul.Tensor", [inverse, self._unary(
            "aten.rsqrt.default", self._join("aten.add.Tensor",
                                             [ratio, shrunk], (), node),
            node)], (), node)
        return self._join("aten.where.self", [
            self._number(scale, "aten.ge.Scalar", 1.0, node), large, small],
            (), node)

    def _reduction(self, node):
        name = op_name(node)
        a = arguments(node)
        x = a["self"]
        meta = tensor_meta(node)
        if meta is not None:
            self._check_dtype(node, meta)
        if a.get("dtype") is not None and a["dtype"] not in ELEMENT_TYPES:
            unsupported(node, f"a reduction computing in {a['dtype']}")
        if name in ("aten.max.dim", "aten.min.dim"):
            chain, groups, _ = self._reduced(node, x, a["dim"])
            kind = "max" if name == "aten.max.dim" else "min"
            self.values[(node, 0)] = self._reduce(chain, kind, groups, node)
            return
        if name in ("aten.amax.default", "aten.amin.default"):
            chain, groups, _ = self._reduced(node, x, a["dim"])
            self.values[node] = self._reduce(
                chain, "max" if name == "aten.amax.default" else "min",
                groups, node)
            return
        chain, groups, size = self._reduced(node, x, a["dim"])
        self._check_reduced_shape(node, x, a["dim"], a.get("keepdim", False))
        if name == "aten.sum.dim_IntList":
            self.values[node] = self._reduce(chain, "sum", groups, node)
        elif name == "aten.mean.dim":
            self.values[node] = self._number(
                self._reduce(chain, "sum", groups, node), "aten.div.Tensor",
                size, node)
        elif name == "aten.logsumexp.default":
            self.values[node] = self._logsumexp(chain, groups, node)
        elif name == "aten.linalg_vector_norm.default":
            self.values[node] = self._norm(node, chain, groups, a["ord"])
        else:  # The variances.
            correction = 1 if a["correction"] is None else a["correction"]
            mean, _, scale, ratio = self._moments(chain, groups, size,
                                                  correction, node)
            if name.startswith("aten.std"):
                var = self._standard_deviation(scale, ratio, node)
            else:
                var = self._variance(scale, ratio, node)
            if name.endswith("_mean.correction"):
                self.values[(node, 0)] = var
                self.values[(node, 1)] = mean
            else:
                self.values[node] = var

    def _logsumexp(self, chain, groups, node):
        """PyTorch's: the maximum (0 where infinite) subtracted."""
        top = self._reduce(chain, "max", groups, node)
        infinite = self._number(self._unary("aten.abs.default", top, node),
                                "aten.eq.Scalar", math.inf, node)
        top = self._join("aten.where.self", [infinite, 0.0, top], (), node)
        exp = self._unary("aten.exp.default", self._join(
            "aten.sub.Tensor", [chain, top], (), node), node)
        log = self._unary("aten.log.default",
                          self._reduce(exp, "sum", groups, node), node)
        return self._join("aten.add.Tensor", [log, top], (), node)

    def _norm(self, node, chain, groups, order):
        order = float(order)
        magnitude = self._unary("aten.abs.default", chain, node)
        if order == math.inf:
            return self._reduce(magnitude, "max", groups, node)
        if order == -math.inf:
            return self._reduce(magnitude, "min", groups, node)
        if order == 2.0:
            squares = self._join("aten.mul.Tensor", [chain, chain], (), node)
            return self._unary("aten.sqrt.default", self._reduce(
                squares, "sum", groups, node), node)
        if order == 1.0:
            return self._reduce(magnitude, "sum", groups, node)
        if order <= 0.0:
            unsupported(node, f"a vector norm of order {order}")
        powers = self._number(magnitude, "aten.pow.Tensor_Scalar", order,
                              node)
        return self._number(self._reduce(powers, "sum", groups, node),
                            "aten.pow.Tensor_Scalar", 1.0 / order, node)

    def _normalization(self, node):
        name = op_name(node)
        a = arguments(node)
        if name in ("aten._softmax.default", "aten._log_softmax.default"):
            self._check_dtype(node, tensor_meta(node))
            if a["half_to_float"]:
                unsupported(node, "a softmax of half values into float32")
            chain, groups, _ = self._reduced(node, a["self"], [a["dim"]])
            top = self._reduce(chain, "max", groups, node)
            shifted = self._join("aten.sub.Tensor", [chain, top], (), node)
            exp = self._unary("aten.exp.default", shifted, node)
            total = self._reduce(exp, "sum", groups, node)
            if name == "aten._softmax.default":
                self.values[node] = self._join("aten.div.Tensor",
                                               [exp, total], (), node)
            else:
                self.values[node] = self._join("aten.sub.Tensor", [
                    shifted, self._unary("aten.log.default", total, node)],
                    (), node)
            return
        if name == "aten._fused_rms_norm.default":
            self._rms_norm(node, a)
            return
        if name == "aten.native_layer_norm.default":
            x, shape = a["input"], list(a["normalized_shape"])
            dims = list(range(-len(shape), 0))
            if not dims:
                unsupported(node, "a layer norm over no dimension")
        else:
            x = a["input"]
            if _int(a["HxW"]) != 1 or tensor_meta(x).dim() != 2:
                unsupported(node, "a group norm over a [batch, channels] "
                            "matrix only (no spatial dimensions)")
            dims = None
        chain, value_shape, lead = self._chain(x, node)
        if dims is not None:
            chain, groups, size = self._reduced(node, x, dims)
        else:
            groups = a["group"]
            if _int(a["C"]) != chain.width or chain.width % groups:
                unsupported(node, f"{groups} groups of {chain.width} "
                            f"channels")
            size = chain.width // groups
        for result in node.meta["val"]:
            self._check_dtype(node, result)
        mean, centred, scale, ratio = self._moments(chain, groups, size, 0,
                                                    node)
        rstd = self._inverse_deviation(scale, ratio, a["eps"], node)
        out = self._join("aten.mul.Tensor", [centred, rstd], (), node)
        out = self._affine(node, a, out, chain.width,
                           groups != 1 and dims is not None, value_shape)
        self.values[(node, 0)] = out
        self.values[(node, 1)] = mean
        self.values[(node, 2)] = rstd

    def _affine(self, node, a, out, width, grouped, shape):
        """`out` times the op's weight plus its bias (per-column vectors),
        those it has."""
        for key, fn in (("weight", "aten.mul.Tensor"),
                        ("bias", "aten.add.Tensor")):
            vector = a.get(key)
            if vector is None:
                continue
            if not isinstance(vector, torch.fx.Node) or \
                    not isinstance(self.values.get(vector), int):
                unsupported(node, f"its {key} {vector} is not a parameter "
                            f"or buffer")
            if grouped:
                unsupported(node, f"a norm with a {key} over the last "
                            f"dimensions of a {shape} value, whose features "
                            f"it does not span")
            column = self._column(vector, node, width)
            out = self._join(fn, [out, column], (), node)
        return out

    def _rms_norm(self, node, a):
        """PyTorch's: x * rsqrt(mean(x^2) + eps) * weight, eps by default
        float32's machine epsilon (the computation's type)."""
        x, shape = a["input"], list(a["normalized_shape"])
        if not shape:
            unsupported(node, "an RMS norm over no dimension")
        chain, groups, size = self._reduced(node, x,
                                            list(range(-len(shape), 0)))
        for result in node.meta["val"]:
            self._check_dtype(node, result)
        eps = torch.finfo(torch.float32).eps if a["eps"] is None \
            else a["eps"]
        # The ops of PyTorch's decomposition (which export applies on the
        # CPU), so that the program is the same for a model exported there.
        squares = self._number(chain, "aten.pow.Tensor_Scalar", 2, node)
        mean = self._number(self._reduce(squares, "sum", groups, node),
                            "aten.div.Tensor", size, node)
        rstd = self._unary("aten.rsqrt.default", self._number(
            mean, "aten.add.Scalar", eps, node), node)
        out = self._join("aten.mul.Tensor", [chain, rstd], (), node)
        self.values[(node, 0)] = self._affine(
            node, a, out, chain.width, groups != 1,
            tuple(tensor_meta(x).shape))
        self.values[(node, 1)] = rstd

    def _pool(self, node):
        """A pooling whose windows are contiguous groups of each row's
        features, without overlap or padding: a `max` reduce, or a `sum`
        reduce divided by the window size (or divisor_override)."""
        kind, spatial, adaptive = POOLS[op_name(node)]
        a = arguments(node)
        results = node.meta.get("val")
        multi = isinstance(results, (tuple, list))
        out = results[0] if multi else results
        self._check_dtype(node, out)
        if multi and any(user.target is operator.getitem and
                         user.args[1] != 0 and user.users
                         for user in node.users):
            unsupported(node, "its indices are used (return_indices=True, "
                        "or saved for a backward pass); fusion computes "
                        "the pooled values only")
        chain, shape, lead = self._chain(a["self"], node)
        if spatial is None:
            spatial = len(a["kernel_size"])
        if len(shape) < spatial + 1:
            unsupported(node, f"a {spatial}-D pooling of a {shape} value")
        dims = list(range(len(shape) - spatial, len(shape)))
        sizes = [shape[d] for d in dims]

        def expand(value, default):
            if value is None or (isinstance(value, (list, tuple)) and
                                 not value):
                return default
            value = list(value) if isinstance(value, (list, tuple)) \
                else [value]
            return value * spatial if len(value) == 1 else value

        if adaptive:
            windows = []
            for dim, size, count in zip(dims, sizes, expand(
                    a["output_size"], None)):
                if _same(size, count):
                    windows.append(1)
                elif _int(size) is None or dim < lead:
                    unsupported(node, f"an adaptive pooling of dimension "
                                f"{dim} of a {shape} value into {count} "
                                f"windows, across the batch: fusion pools "
                                f"the features of each row")
                elif _int(size) % count:
                    unsupported(node, f"an adaptive pooling of {size} "
                                f"values into {count} windows: {count} does "
                                f"not divide {size}, so PyTorch's windows "
                                f"differ in size and overlap; fusion pools "
                                f"equal windows without overlap")
                else:
                    windows.append(_int(size) // count)
        else:
            windows = expand(a["kernel_size"], None)
            stride = expand(a.get("stride"), windows)
            padding = expand(a.get("padding"), [0] * spatial)
            dilation = expand(a.get("dilation"), [1] * spatial)
            if any(padding):
                unsupported(node, f"padding {padding}: fusion pools windows "
                            f"of the features themselves, without padding")
            if any(d != 1 for d in dilation):
                unsupported(node, f"dilation {dilation}: fusion pools "
                            f"windows of contiguous values")
            if stride != windows:
                how = "with gaps between them" if all(
                    s >= k for s, k in zip(stride, windows)) \
                    else "overlapping"
                unsupported(node, f"windows of {windows} with stride "
                            f"{stride}, {how}: fusion pools non-overlapping "
                            f"windows (stride = kernel_size)")
        pooled = [dim for dim, window in zip(dims, windows) if window != 1]
        if pooled and pooled[0] < lead:
            unsupported(node, f"a pooling over dimension {pooled[0]} of a "
                        f"{shape} value, across the batch: fusion pools "
                        f"the features of each row")
        for dim, window in zip(dims, windows):
            if pooled and dim > pooled[0] and window != _int(shape[dim]):
                unsupported(node, f"windows of {windows} over the last "
                            f"{spatial} dimensions of a {shape} value, not "
                            f"contiguous features of a row (a window "
                            f"spans whole dimensions after its first)")
        if pooled:
            first = pooled[0]
            window, size = windows[first - dims[0]], _int(shape[first])
            if size % window:
                unsupported(node, f"windows of {window} of {size} values, "
                            f"not a multiple: PyTorch drops (or with "
                            f"ceil_mode pools) a partial last window; "
                            f"fusion pools whole windows")
            group = window * math.prod(_int(d) for d in shape[first + 1:])
        else:
            group = 1
        groups = chain.width // group
        tail = [_int(d) for d in out.shape[lead:]]
        if None in tail or math.prod(tail) != groups:
            unsupported(node, f"its result {tuple(out.shape)} is not the "
                        f"{groups} windows of {group} values of each row "
                        f"of its {shape} input")
        if group == 1:  # Windows of one value.
            value = chain
        else:
            value = self._reduce(chain, "max" if kind == "max" else "sum",
                                 groups, node)
        if kind == "avg":
            divisor = a.get("divisor_override") or group
            if divisor != 1:
                value = self._number(value, "aten.div.Tensor", divisor,
                                     node)
        self.values[(node, 0) if multi else node] = value

    def _rows_of(self, node, start, stop):
        """The argument holding rows [start, stop) of input `node` (a weight
        or a per-column vector), which the caller passes (see slices)."""
        key = (node, start, stop)
        if key not in self._sliced:
            meta = tensor_meta(node)
            shape = [stop - start] + [_static(d) for d in meta.shape[1:]]
            value = self.program.argument(shape, self.element)
            self._sliced[key] = value
            self._input_nodes[value] = (node, start)
            offset = start * math.prod(shape[1:]) * meta.element_size()
            self.slices.append(key + (offset % 16 != 0,))
        return self._sliced[key]

    def _source_rows(self, value, start, stop):
        """Rows [start, stop) of `value`, an input or rows of one."""
        source = self._input_nodes[value]
        node, first = source if isinstance(source, tuple) else (source, 0)
        return self._rows_of(node, first + start, first + stop)

    def _features(self, source, user, start, stop):
        """Features [start, stop) of `source`, a linear layer's output
        (elementwise ops of numbers and per-column vectors after it
        included): the layer on rows [start, stop) of its weight and bias,
        so that each piece of a chunk, split or glu is a GEMM's output."""
        chain, shape, lead = self._chain(source, user)
        if len(shape) - lead != 1:
            unsupported(user, f"its input {source.name} of shape {shape} "
                        f"has features in several dimensions; fusion "
                        f"slices the features of [batch, features] values")
        if not 0 <= start < stop <= chain.width:
            unsupported(user, f"it takes features [{start}, {stop}) of "
                        f"{chain.width}, an empty piece")
        if start == 0 and stop == chain.width:
            return chain
        if chain.root not in self._linears:
            unsupported(user, f"fusion slices the features of a linear "
                        f"layer's output, not those of {source.name}")
        key = (chain.root, start, stop)
        if key not in self._pieces:
            x, weight, bias, first = self._linears[chain.root]
            value = self.program.linear(
                x, self._rows_of(weight, first + start, first + stop),
                None if bias is None else
                self._rows_of(bias, first + start, first + stop),
                location(user))
            self._linears[value] = (x, weight, bias, first + start)
            self._pieces[key] = value

        def replace(leaf):
            if leaf.fn == "row":
                unsupported(user, f"its input {source.name} reads another "
                            f"matrix; fusion slices the features of a "
                            f"linear layer's output and of elementwise ops "
                            f"of numbers and vectors on it")
            if leaf.fn == "column" and leaf.args[0] in self._singles:
                node = self._singles[leaf.args[0]][0]
                unsupported(user, f"its input {source.name} reads "
                            f"{node.name}, a single value that fusion "
                            f"broadcasts to the {chain.width} features of "
                            f"the whole layer, not to the {stop - start} of "
                            f"this piece")
            if leaf.fn == "column":
                return _Expr("column", (self._source_rows(
                    leaf.args[0], start, stop),))
            return leaf

        return _Chain(self._pieces[key], _map_leaves(chain.expr, replace),
                      stop - start)

    def _feature_dimension(self, node, source, dim):
        rank = tensor_meta(source).dim()
        if dim % rank != rank - 1:
            unsupported(node, f"it takes apart dimension {dim} of a value "
                        f"of rank {rank}; fusion slices the features (the "
                        f"last dimension)")

    def _column_slice(self, node):
        name = op_name(node)
        a = arguments(node)
        source = a["self"]
        if name == "aten.slice.Tensor" and a["step"] == 1 and \
                a["start"] in (None, 0) and _same(
                    tensor_meta(node).shape[a["dim"]],
                    tensor_meta(source).shape[a["dim"]]):
            # All of a dimension (x[:, :7] slices the batch first).
            self._pass_on(node, lambda v: True)
            return
        self._feature_dimension(node, source, a["dim"])
        width = _int(tensor_meta(source).shape[-1])
        if name == "aten.slice.Tensor":
            start, stop = a["start"], a["end"]
            if a["step"] != 1:
                unsupported(node, f"a slice with step {a['step']}")
            start = 0 if start is None else start
            stop = width if stop is None else stop
            start, stop = (min(max(i + width if i < 0 else i, 0), width)
                           for i in (start, stop))
            self.values[node] = self._features(source, node, start, stop)
            return
        if name == "aten.glu.default":
            if width % 2:
                unsupported(node, f"glu of {width} features, an odd count")
            half = width // 2
            value = self._features(source, node, 0, half)
            gate = self._features(source, node, half, width)
            self.values[node] = self._join("aten.mul.Tensor", [
                value, self._join("aten.sigmoid.default", [gate],
                                  node=node)], node=node)
            return
        if name == "aten.split.Tensor":
            size = a["split_size"]
            sizes = [min(size, width - i) for i in range(0, width, size)]
        else:
            sizes = list(a["split_sizes"])
        start = 0
        for index, size in enumerate(sizes):
            self.values[(node, index)] = self._features(
                source, node, start, start + size)
            start += size

    def _getitem(self, node):
        source, index = node.args
        if (source, index) not in self.values:
            unsupported(source, f"its result {index} is not one fusion "
                        f"computes")
        self.values[node] = self.values[(source, index)]

    def _view(self, node):
        """Views keep the values (of a contiguous value, in order): of a
        chain they must keep the batch dimensions' product, only
        regrouping the rows or the features; of a vector, its length."""
        source = node.args[0]
        value = self.values.get(source)
        if source in self._expanded:
            unsupported(node, "a view of an expanded value")
        if isinstance(value, _Chain):
            if row_split(tuple(tensor_meta(node).shape), value.width) is None:
                unsupported(node, "only views that keep the rows (the "
                            "batch) of a value fusion computes, regrouping "
                            "its rows or its features")
        elif isinstance(value, int):
            # A per-column vector (a parameter, a batch norm's statistics):
            # only leading dimensions of size 1 (unsqueeze(0)), which keep
            # it per column.
            shape = [_int(d) for d in tensor_meta(node).shape]
            length = tensor_meta(source).numel()
            if shape[-1:] != [length] or any(d != 1 for d in shape[:-1]):
                unsupported(node, f"a view of a vector of {length} "
                            f"features as {tuple(shape)}: only leading "
                            f"dimensions of size 1")
        elif not isinstance(value, (float, _Vectors)):
            unsupported(node, "a view of a value fusion does not compute")
        self.values[node] = value

    def _expand(self, node):
        source = node.args[0]
        value = self.values.get(source)
        if not isinstance(value, (_Chain, _Vectors, int, float)):
            unsupported(node, "an expand of a value fusion does not compute")
        if not isinstance(value, float):
            self._expanded[node] = self._shape(source)
        self.values[node] = value

    def _pass_on(self, node, value_check):
        source = node.args[0]
        value = self.values.get(source)
        if not value_check(value):
            return False
        if source in self._expanded:
            self._expanded[node] = self._expanded[source]
        self.values[node] = value
        return True

    def _float_conversion(self, node):
        """Conversions between float types (low-precision batch norms
        compute in float32): fusion computes every chain value in float32
        and rounds the results once to the element type, so they pass
        their value on. A boolean becomes 1.0 or 0.0."""
        if not is_float_conversion(node) or not self._pass_on(
                node, lambda v: isinstance(v, (_Chain, _Vectors, int,
                                               float))):
            unsupported(node, "only conversions between float32, bfloat16 "
                        "and float16 of values fusion computes, and of "
                        "booleans to them")
        if _is_boolean(node.args[0]) and isinstance(self.values[node],
                                                    (_Chain, _Vectors)):
            self.values[node] = self._join(BOOL_TO_FLOAT,
                                           [self.values[node]], node=node)

    def _constant(self, node):
        if op_name(node) == "aten.scalar_tensor.default":
            self.values[node] = float(node.args[0])
            return
        size, value = node.args[:2]
        if list(size) != []:
            unsupported(node, "only a 0-d constant")
        self.values[node] = float(value)

    def result_problem(self, output):
        """Why the imported value `output` cannot be a result, or None."""
        value = self.values.get(output)
        if value is None or isinstance(value, float):
            return "its result is not one fusion computes"
        if isinstance(value, _Vectors):
            return ("its result is computed from vectors alone; fusion "
                    "computes them where [batch, features] values read "
                    "them")
        if output in self._expanded:
            return ("its result is an expanded value; fusion returns values "
                    "as they are computed")
        meta = tensor_meta(output)
        dtype = self._dtype_of(value)
        if meta is not None and ELEMENT_TYPES.get(meta.dtype) != dtype:
            return f"its result is {meta.dtype}, where fusion computes " \
                f"{dtype}"
        return None

    def import_node(self, node):
        name = op_name(node)
        if node.op != "call_function":
            unsupported(node)
        if isinstance(node.meta.get("val"), (torch.SymInt, int)):
            return  # Size arithmetic (of a symbolic batch), for views.
        if node.target is operator.getitem:
            self._getitem(node)
        elif name in GEMMS:
            self._gemm(node)
        elif name in TRANSPOSES:
            return  # Read by its GEMM.
        elif name in BATCH_NORMS:
            self._batch_norm(node)
        elif name in ELEMENTWISE:
            self._elementwise(node)
        elif name in REDUCTIONS:
            self._reduction(node)
        elif name in NORMALIZATIONS:
            self._normalization(node)
        elif name in POOLS:
            self._pool(node)
        elif name in STRUCTURAL:
            self._pass_on(node, lambda v: True)
        elif name in VIEWS:
            self._view(node)
        elif name in EXPANDS:
            self._expand(node)
        elif name in COLUMN_SLICES:
            self._column_slice(node)
        elif name in FLOAT_CONVERSIONS:
            self._float_conversion(node)
        elif name in CONSTANTS:
            self._constant(node)
        elif name == "aten.native_dropout.default":
            unsupported(node, "dropout in training mode draws random "
                        "numbers, which fusion does not reproduce as "
                        "PyTorch does; in eval() mode it is the identity")
        else:
            unsupported(node)
        self._round_if_reduced(node)

    def _round_if_reduced(self, node):
        """In a 16-bit model, a value computed in float32 that a reduction
        reads is rounded to the model's dtype where it is computed, as
        eager stores it: the reduction (whose result is rounded) and the
        value's other readers see one value, so that eager's identities
        hold (x - mean(x) over one feature is 0; a shifted logsumexp's
        largest term is exp(0)). Other values stay float32 until the
        results are rounded once."""
        value = self.values.get(node)
        if self.element not in ("bf16", "f16") or \
                not isinstance(value, _Chain) or value.expr is _ROOT:
            return
        inside, readers = set(self.nodes), list(node.users)
        while readers:
            reader = readers.pop()
            if reader not in inside:
                continue
            name = op_name(reader)
            if name in REDUCTIONS or name in NORMALIZATIONS or \
                    name in POOLS:
                self.values[node] = self._join(
                    ROUND_TO_ELEMENT, [value], [("dtype", self.element)],
                    node)
                return
            if name in VIEWS or name in STRUCTURAL:
                readers += list(reader.users)

    def run(self):
        for node in self.inputs:
            self._argument(node)
        for node in self.nodes:
            self.import_node(node)
        for output in self.outputs:
            key = output
            node = output if isinstance(output, torch.fx.Node) else output[0]
            problem = self.result_problem(output)
            if problem:
                unsupported(node, problem)
            value = self.values[key]
            if isinstance(output, torch.fx.Node):
                meta = tensor_meta(node)
            else:
                val = node.meta.get("val")
                meta = val[output[1]] if isinstance(val, (list, tuple)) \
                    else None
            if isinstance(value, _Chain):
                self.result_shapes.append([None, value.width])
            else:  # A vector, returned flat (the caller views it).
                self.result_shapes.append([meta.numel() if meta is not None
                                           else None])
            self.program.result(self.materialize(value, node))
        for value, (node, index) in self._singles.items():
            if node not in self.broadcasts:  # Read by nothing.
                self.broadcasts[node] = 1
                self.program.arguments[index]["shape"] = [1]
        self.program.remove_unread_ops()
        return self.program
