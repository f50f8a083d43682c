"""`torch.compile(model, backend="fusion")`: the fusible parts of each graph
compiled by fusion, the rest left to PyTorch.

AOTAutograd lowers each dynamo graph to core ATen (so gradients stay
PyTorch's: the forward graph it hands over already returns what the backward
needs). In the forward graph, every GEMM with a transposed-weight operand
(`linear`) grows into a partition with the elementwise ops and batch norms
that follow it (ops of fusion/aten.py's table whose other operands are
numbers or per-column vectors). Values that leave the partition become its
results; a partition stops before a second value would leave it, so that
the GEMM's output still makes one trip through memory. Each partition is
imported, compiled (or found in the disk cache, fusion/cache.py) and called
through the custom op `fusion::run`, which torch.compile, FX graphs and CUDA
graph capture see as one op. The batch dimension is dynamic.

Options (`torch.compile(..., options={...})`): "target" ("sm_80", ...,
"cpu"; default: the inputs' device), "precision", "strategy", "fp32_math",
"tile" (as fusion.compile's), "fallback" ("eager", the default: the
other ops run as PyTorch's ATen kernels; "inductor": inductor compiles them,
calling fusion::run as an extern kernel), and "compile_only" (compile and
cache the libraries, for example for another machine's target, but run the
graph as PyTorch would).
"""
import functools
import operator

import torch
import torch.fx
from torch._decomp import core_aten_decompositions
from torch._dynamo import register_backend
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func
from torch.fx.passes.tools_common import legalize_graph

from . import aten
from .cache import compiled_library, library_key
from .dtypes import TORCH_DTYPES
from .errors import UnsupportedOperationError
from .module import _open_library, default_target

ENTRY = "fused"
_OPTIONS = ("target", "precision", "strategy", "fp32_math", "tile")

# The compiled partitions of this process, by cache key: the loaded library
# and the shapes of its results.
_LIBRARIES = {}

_library = torch.library.Library("fusion", "DEF")
_library.define("run(str key, Tensor[] args) -> Tensor[]")


def _run(key, args):
    return _LIBRARIES[key][0].call(ENTRY, list(args))


_library.impl("run", _run, "CPU")
_library.impl("run", _run, "CUDA")


@torch.library.register_fake("fusion::run")
def _run_fake(key, args):
    library, results = _LIBRARIES[key]
    entry = library.entries[ENTRY]
    batch = next((t.shape[0] for spec, t in zip(entry["inputs"], args)
                  if spec["shape"][0] is None), None)
    return [args[0].new_empty([batch if d is None else d for d in shape],
                              dtype=TORCH_DTYPES[dtype])
            for shape, dtype in results]


def _compile_options(options, device):
    """fusion-compile's options for the backend's `options` (the target by
    default that of `device`)."""
    return {"target": options.get("target") or default_target(device),
            "strategy": options.get("strategy", "auto"),
            "precision": options.get("precision") or "",
            "fp32_math": options.get("fp32_math", "tf32x3"),
            "tile": options.get("tile") or ""}


def _check_options(options, example_inputs):
    """Refuses bad options before any graph is compiled (whether or not
    anything fuses), where the compiler is there to say which."""
    try:
        from ._fusion import check_compile_options
    except ImportError:
        return  # Cached libraries only: a bad option finds none.
    devices = [t.device for t in example_inputs
               if isinstance(t, torch.Tensor)]
    check_compile_options(**_compile_options(
        options, devices[0] if devices else torch.device("cpu")))


class _Partition:
    """A GEMM and the ops fused after it."""

    def __init__(self, gemm, transpose):
        self.gemm = gemm
        self.members = [transpose, gemm]

    def outputs(self):
        """Member values used outside the partition, in graph order (the
        transpose is not one: it stays for its other users)."""
        members = set(self.members)
        return [n for n in self.members if aten.op_name(n) not in
                aten.TRANSPOSES and not _is_multi_result(n) and
                any(u not in members for u in n.users)]

    def inputs(self):
        members, seen = set(self.members), []
        for node in self.members:
            for arg in node.all_input_nodes:
                if arg not in members and arg not in seen and \
                        isinstance(aten.tensor_meta(arg), torch.Tensor):
                    seen.append(arg)
        return seen


def _is_multi_result(node):
    return aten.op_name(node) in aten.BATCH_NORMS


def _columns(node):
    """The features of a value of rank >= 2 (the partition's values are
    [batch, features] matrices, or views of them with the rows regrouped)."""
    meta = aten.tensor_meta(node)
    return meta.shape[-1] if meta is not None and meta.dim() >= 2 else None


def _joins(node, members, downstream, columns, dtype):
    """Whether `node` can join a partition of `members` computing
    [batch, columns] values of `dtype`."""
    name = aten.op_name(node)
    if node.target is operator.getitem:
        return node.args[0] in members and node.args[1] in (0, 3, 4)
    if name in aten.ROW_VIEWS:
        return node.args[0] in members and _columns(node) == columns
    if name in aten.BATCH_NORMS:
        # Its batch statistics (getitem 1, 2) are not computed by fusion.
        if any(u.target is operator.getitem and u.args[1] in (1, 2) and
               u.users for u in node.users):
            return False
    elif name in aten.FLOAT_CONVERSIONS:
        meta = aten.tensor_meta(node)
        return node.args[0] in members and aten.is_float_conversion(node) \
            and meta is not None and meta.shape[-1] == columns
    elif name not in aten.ELEMENTWISE and name not in aten.STRUCTURAL:
        return False
    value = node.args[0] if name in aten.BATCH_NORMS else node
    meta = aten.tensor_meta(value)
    # Float32 values inside a low-precision chain (as around batch norms),
    # and comparison results.
    if meta is None or _columns(value) != columns or \
            meta.dtype not in (dtype, torch.float32, torch.bool) or \
            (name in aten.BATCH_NORMS and meta.dim() != 2):
        return False
    inside = False
    for arg in node.all_input_nodes:
        if arg in members:
            inside = True
            continue
        arg_meta = aten.tensor_meta(arg)
        # Outside operands: per-column vectors, or single values (0-d or
        # (1,), broadcast), computed before the GEMM.
        if arg in downstream or arg_meta is None or \
                tuple(arg_meta.shape) not in ((columns,), (1,), ()) or \
                arg_meta.dtype not in (dtype, torch.float32):
            return False
    return inside


def _downstream(node):
    seen, stack = set(), [node]
    while stack:
        for user in stack.pop().users:
            if user not in seen:
                seen.add(user)
                stack.append(user)
    return seen


def _grow(gemm, order):
    """The partition of `gemm`, or None when nothing fuses after it."""
    if aten.op_name(gemm) == "aten.addmm.default":
        transpose = gemm.args[2]
        if gemm.kwargs.get("alpha", 1) != 1 or gemm.kwargs.get("beta", 1) != 1:
            return None
    elif aten.op_name(gemm) == "aten.mm.default":
        transpose = gemm.args[1]
    else:
        return None
    meta = aten.tensor_meta(gemm)
    if not isinstance(transpose, torch.fx.Node) or \
            aten.op_name(transpose) not in aten.TRANSPOSES or \
            meta is None or meta.dtype not in aten.ELEMENT_TYPES or \
            not isinstance(meta.shape[-1], int) or \
            aten.tensor_meta(gemm.args[-2]).dim() != 2:
        return None
    if aten.op_name(transpose) == "aten.permute.default" and \
            list(transpose.args[1]) != [1, 0]:
        return None
    partition = _Partition(gemm, transpose)
    members = set(partition.members)
    downstream = _downstream(gemm)
    for node in order[order.index(gemm) + 1:]:
        if _joins(node, members, downstream, meta.shape[-1], meta.dtype):
            partition.members.append(node)
            members.add(node)
    # Stop before a second value leaves the partition (running statistics
    # aside), so the GEMM output is not written out for its other users.
    while True:
        matrices = [n for n in partition.outputs() if _columns(n) is not None]
        if len(matrices) <= 1:
            break
        cut = partition.members.index(matrices[0])
        # Vectors computed from what stays (running statistics) stay too.
        kept = partition.members[:cut + 1]
        for node in partition.members[cut + 1:]:
            if _columns(node) is None and \
                    all(arg in kept for arg in node.all_input_nodes
                        if arg in members):
                kept.append(node)
        partition.members = kept
    # Batch norms whose normalized output was cut off go too.
    kept = set(partition.members)
    partition.members = [n for n in partition.members if not (
        _is_multi_result(n) and not any(
            u in kept and u.args[1] == 0 for u in n.users))]
    kept = set(partition.members)
    partition.members = [n for n in partition.members if not (
        n.target is operator.getitem and n.args[0] not in kept)]
    computing = [n for n in partition.members[2:] if
                 aten.op_name(n) in aten.ELEMENTWISE or _is_multi_result(n)]
    if not computing or gemm in partition.outputs():
        return None  # A bare GEMM: nothing to fuse.
    return partition


def _compile_partition(partition, options, compile_only):
    """Compiles the partition (or finds it in the cache) and loads its
    library; returns (cache key, inputs, outputs, single-value inputs to
    broadcast) of the call to make, or None when only compiling."""
    outputs = partition.outputs()
    inputs = partition.inputs()
    importer = aten.Importer(partition.members, inputs, outputs)
    program = importer.run()
    compile_options = _compile_options(
        options, aten.tensor_meta(partition.gemm).device)
    programs = {ENTRY: program}
    key = library_key(programs, compile_options)
    if key not in _LIBRARIES:
        files = compiled_library(programs, compile_options)
        if compile_only:
            return None
        # The shapes of the library's results (the program's, in order).
        results = [([None, meta.shape[-1]] if meta.dim() >= 2
                    else [meta.shape[0]], aten.ELEMENT_TYPES[meta.dtype])
                   for meta in map(aten.tensor_meta, outputs)]
        _LIBRARIES[key] = (_open_library(files, "a fusion partition"),
                           results)
    return None if compile_only else (key, inputs, outputs,
                                      importer.broadcasts)


def _replace(graph, key, inputs, outputs, broadcasts, members):
    """The call of the library after the partition's last op; the users of
    its results are put in order after it (legalize_graph). Single-value
    inputs are broadcast to the per-column vectors the library takes."""
    order = {node: index for index, node in enumerate(graph.nodes)}
    last = max(members, key=order.__getitem__)
    arguments = []
    for node in inputs:
        if node in broadcasts:
            with graph.inserting_after(last):
                vector = graph.call_function(torch.ops.aten.expand.default,
                                             (node, [broadcasts[node]]))
            with graph.inserting_after(vector):
                node = graph.call_function(torch.ops.aten.clone.default,
                                           (vector,),
                                           {"memory_format":
                                            torch.contiguous_format})
            last = node
        arguments.append(node)
    with graph.inserting_after(last):
        call = graph.call_function(torch.ops.fusion.run.default,
                                   (key, arguments))
    for index, output in enumerate(outputs):
        with graph.inserting_after(call):
            item = graph.call_function(operator.getitem, (call, index))
        result = item
        if aten.tensor_meta(output).dim() > 2:
            # The library's [batch, features] result, its rows regrouped as
            # the partition's view did.
            with graph.inserting_after(item):
                result = graph.call_function(
                    torch.ops.aten.view.default,
                    (item, _regrouping_view(output, members).args[1]))
        result.meta = dict(output.meta)
        output.replace_all_uses_with(
            result, delete_user_cb=lambda user: user not in (item, result))


def _regrouping_view(output, members):
    """The member view that gave `output` its rank."""
    node = output
    while aten.op_name(node) not in aten.ROW_VIEWS or \
            aten.tensor_meta(node).dim() != aten.tensor_meta(output).dim():
        node = next(a for a in node.all_input_nodes if a in members and
                    _columns(a) == _columns(output))
    return node


def fuse_graph(gm, options=None, compile_only=False):
    """Replaces each fusible partition of the ATen graph `gm` by a call of
    its compiled library; returns the partitions' member nodes' op names
    (for tests and logs)."""
    options = options or {}
    graph = gm.graph
    fused = []
    for gemm in list(graph.nodes):
        if aten.op_name(gemm) not in ("aten.addmm.default",
                                      "aten.mm.default"):
            continue
        if gemm.graph is not graph:
            continue
        order = list(graph.nodes)
        partition = _grow(gemm, order)
        if partition is None:
            continue
        try:
            compiled = _compile_partition(partition, options, compile_only)
        except UnsupportedOperationError:
            continue  # Left to PyTorch.
        fused.append([aten.op_name(n) for n in partition.members])
        if compiled is None:
            continue
        _replace(graph, *compiled, partition.members)
        for node in reversed(partition.members):
            if not node.users:
                graph.erase_node(node)
    legalize_graph(gm)
    graph.lint()
    gm.recompile()
    return fused


# The partitions fused by the last compile in this process, for tests.
last_fused = []


# Ops that run best as PyTorch's own kernels and that fusion does not import:
# AOTAutograd leaves them whole (core ATen would split a layer norm or a
# backward op into many pointwise kernels, run one by one). Everything else
# is decomposed to core ATen, the importer's vocabulary.
_KEPT_WHOLE = ("layer_norm", "group_norm", "rms_norm", "softmax",
               "logsumexp", "dropout", "_backward", "embedding",
               "convolution", "pool", "aten::norm")


def _decompositions(fallback):
    if fallback == "inductor":
        # Inductor lowers what its own table leaves.
        from torch._inductor.decomposition import select_decomp_table
        return select_decomp_table()
    return {op: fn for op, fn in core_aten_decompositions().items()
            if not any(kept in op.name() for kept in _KEPT_WHOLE)}


def _forward_compiler(options, gm, example_inputs):
    global last_fused
    last_fused = fuse_graph(gm, options,
                            compile_only=options.get("compile_only", False))
    return _run_rest(options, gm, example_inputs)


def _run_rest(options, gm, example_inputs):
    """The graph's other ops as PyTorch's ATen kernels, or compiled by
    inductor (which calls fusion::run as an extern kernel)."""
    if options.get("fallback", "eager") == "inductor":
        from torch._inductor.compile_fx import compile_fx_inner
        return compile_fx_inner(gm, example_inputs)
    return make_boxed_func(gm.forward)


@register_backend(name="fusion")
def fusion_backend(gm, example_inputs, options=None, mode=None):
    """The dynamo backend registered as "fusion"."""
    if mode not in (None, "default"):
        raise UnsupportedOperationError(
            f"torch.compile mode {mode!r} with backend 'fusion': capture the "
            f"compiled model in a CUDA graph (torch.cuda.graph) instead")
    options = dict(options or {})
    unknown = set(options) - set(_OPTIONS) - {"compile_only", "fallback"}
    if unknown:
        raise UnsupportedOperationError(
            f"unknown fusion backend options {sorted(unknown)} (known: "
            f"{', '.join(_OPTIONS)}, fallback, compile_only)")
    if options.get("fallback", "eager") not in ("eager", "inductor"):
        raise UnsupportedOperationError(
            f"fusion backend option fallback={options['fallback']!r}: "
            f"'eager' (default) or 'inductor'")
    _check_options(options, example_inputs)
    return aot_autograd(
        fw_compiler=functools.partial(_forward_compiler, options),
        bw_compiler=functools.partial(_run_rest, options),
        decompositions=_decompositions(options.get("fallback")))(
            gm, example_inputs)
