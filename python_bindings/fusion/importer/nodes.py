"""ATen nodes: the op tables the importer reads and helpers over fx nodes
(names, source locations, tensor metadata, arguments, GEMM operands)."""
import math
import re

import torch
from torch._prims_common import is_contiguous_or_false

from ..dtypes import ELEMENT_TYPES
from ..errors import UnsupportedOperationError
from ..formulas import ELEMENTWISE


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
# Concatenations: of graph inputs that a GEMM reads as its weight or bias
# (the sibling projections torch.compile's partitioner groups into one
# GEMM, docs/architecture.md), a `fusion.concat` that the GEMM reads in
# place; the importer refuses any other.
CONCATS = {"aten.cat.default"}
DROPOUT = "aten.native_dropout.default"
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


def is_boolean(node):
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


def static_size(size):
    return size if isinstance(size, int) else None


def int_size(size):
    """A size as an int when it is static (symbolic sizes known to be a
    number included), else None."""
    if isinstance(size, int):
        return size
    node = getattr(size, "node", None)
    as_int = getattr(node, "maybe_as_int", None)
    return as_int() if as_int is not None else None


def same_size(a, b):
    """Whether two sizes (ints or symbolic) are the same."""
    a_int, b_int = int_size(a), int_size(b)
    if a_int is not None or b_int is not None:
        return a_int == b_int
    return str(a) == str(b)


def row_split(shape, width):
    """The number of leading dimensions of a value of `shape` that holds
    `width` values per row: the smallest k >= 1 whose trailing dimensions
    shape[k:] are static and hold `width` values (the rest, the batch, may
    be symbolic), or None."""
    for k in range(1, len(shape) + 1):
        tail = [int_size(d) for d in shape[k:]]
        if None not in tail and math.prod(tail) == width:
            return k
    return None




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
    """(x, the GEMM's weight operand, bias or None, the weight's layout) of
    an addmm or mm node that computes a linear layer: x @ weight.t() + bias,
    the operand a transpose of an [out_features, in_features] weight
    ("out_in", nn.Linear's), or x @ weight + bias, the operand the weight
    itself, stored [in_features, out_features] ("in_out": `x @ w`,
    GPT-2's Conv1D): the GEMM patterns of the importer and of
    torch.compile's partitioner; the operand may also be a matrix the
    graph computes, of static shape ("in_out": a backward graph's weight
    gradient, `dZ.t() @ x`, whose K is the batch; a weight the forward
    computes). A transpose of a transposed view (a backward graph's
    `t(t(w))`, the forward's saved `w.t()` transposed back) is dense: the
    GEMM reads it as it is, "in_out", without copying the view's rows.
    Refuses other GEMMs by name."""
    if op_name(node) == "aten.addmm.default":
        bias, x, transposed = node.args[:3]
    elif op_name(node) == "aten.mm.default":
        (x, transposed), bias = node.args[:2], None
    else:
        unsupported(node, "not a GEMM")
    if not isinstance(transposed, torch.fx.Node):
        unsupported(node, "its second operand is not a tensor")
    meta = tensor_meta(transposed)
    if op_name(transposed) not in TRANSPOSES or \
            _undoes_transposed_view(transposed):
        if not is_graph_input(transposed) and \
                not is_input_concat(transposed) and \
                (meta is None or meta.dim() != 2 or
                 any(static_size(d) is None for d in meta.shape)):
            unsupported(node, "its second operand is neither a weight (an "
                        "input of the graph, or a concatenation of such), "
                        "a transposed one, nor a matrix of static shape")
        return x, transposed, bias, "in_out"
    if op_name(transposed) == "aten.permute.default" and \
            list(transposed.args[1]) != [1, 0]:
        unsupported(transposed, "only a 2-D transpose")
    return x, transposed, bias, "out_in"


def parameter_linear(node):
    """(x, weight, bias or None, layout) of addmm or mm node `node` where it
    is a linear layer of parameters (the weight and bias inputs of the
    graph), nothing scaled: a layer that sibling layers of the same x may
    join in one GEMM of their concatenated weights; else None."""
    if op_name(node) not in ("aten.addmm.default", "aten.mm.default") or \
            gemm_scales(node) != (1.0, 1.0):
        return None
    try:
        x, operand, bias, layout = linear_operands(node)
    except UnsupportedOperationError:
        return None
    weight = operand.args[0] if layout == "out_in" else operand
    if not is_graph_input(weight) or \
            (bias is not None and not is_graph_input(bias)):
        return None
    return x, weight, bias, layout


def _undoes_transposed_view(transpose):
    """Whether 2-D transpose `transpose` is dense while its operand is not
    (the operand a transposed view of a dense matrix)."""
    meta, operand = tensor_meta(transpose), tensor_meta(transpose.args[0])
    return meta is not None and operand is not None and meta.dim() == 2 and \
        is_contiguous_or_false(meta) and not is_contiguous_or_false(operand)


def is_graph_input(node):
    """Whether `node` is an input of the graph (a parameter, a buffer, a
    forward input): a placeholder or an attribute."""
    return isinstance(node, torch.fx.Node) and \
        node.op in ("placeholder", "get_attr")


def concat_operands(node):
    """(parts, dim) of an `aten.cat` node."""
    parts = node.args[0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    return list(parts), dim


def is_input_concat(node):
    """Whether `node` concatenates inputs of the graph alone (weights or
    biases), which a GEMM can read in place."""
    if not isinstance(node, torch.fx.Node) or op_name(node) not in CONCATS:
        return False
    parts, _ = concat_operands(node)
    return len(parts) >= 2 and all(is_graph_input(p) for p in parts)


def gemm_concats(node):
    """The concatenations of graph inputs that GEMM `node` reads as its
    weight (through its transpose, for an [out, in] weight) or its bias:
    the `fusion.concat` ops its partition holds, in graph order (none
    where it is no linear layer)."""
    try:
        _, operand, bias, layout = linear_operands(node)
    except UnsupportedOperationError:
        return []
    weight = operand.args[0] if layout == "out_in" else operand
    return [n for n in (weight, bias) if is_input_concat(n)]


def gemm_scales(node):
    """(alpha, beta) of an addmm node (beta * bias + alpha * x @ w), (1, 1)
    for other GEMMs."""
    if op_name(node) != "aten.addmm.default":
        return 1.0, 1.0
    return (float(node.kwargs.get("alpha", 1)),
            float(node.kwargs.get("beta", 1)))


def computes(node):
    """Whether `node` computes something (as opposed to passing values on:
    views, conversions, constants, dropout in eval mode)."""
    name = op_name(node)
    return name in ELEMENTWISE or name in REDUCTIONS or \
        name in NORMALIZATIONS or name in BATCH_NORMS or name in POOLS or \
        name == DROPOUT and is_dropping(node)


def is_dropping(dropout):
    """Whether aten.native_dropout node `dropout` drops elements (in
    training mode, p > 0)."""
    _, p, train = (list(dropout.args) + [None])[:3]
    return bool(train) and p != 0
