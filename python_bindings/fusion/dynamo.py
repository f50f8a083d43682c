"""`torch.compile(model, backend="fusion")`: the fusible parts of each graph
compiled by fusion, the rest left to PyTorch.

AOTAutograd lowers each dynamo graph to core ATen (so gradients stay
PyTorch's: the forward graph it hands over already returns what the backward
needs). In the forward graph (and in the backward graph, _backward_compiler),
every GEMM with a transposed-weight operand
(`linear`) grows into a partition with the ops that follow it and that the
importer (fusion/importer) takes, tried one by one in graph order: elementwise
ops, reductions along the features, softmax, layer, group and batch norms,
pooling of the features; their other operands are numbers, per-column
vectors, single values (a tensor of one number that the forward makes,
`torch.tensor(-1.5)`, is folded into the program, as fusion.compile does),
elementwise ops of those alone (pulled into the partition), or values
computed before the GEMM (a residual, another layer's output) or in it.
Values that leave the partition become its results: those that a training
step saves for its backward pass (the GEMM's output before an activation, a
batch norm's input) leave as the fused op's intermediate results, written
beside its result from the values the epilogue computes anyway, and a
training batch norm's batch mean and inverse standard deviation as its
batch statistics, which the kernels that finish the norm write. Each
partition is imported, compiled (or found in the disk cache,
fusion/cache.py) and called through the custom op `fusion::run`, which
torch.compile, FX graphs and CUDA graph capture see as one op. The batch
dimension is dynamic. A backward graph is partitioned the same way: each
data gradient's GEMM (dX = dZ @ W, the weight read in its stored layout)
takes the derivative of the activation below it, its elementwise ops of
the forward's saved value pulled in (_pulled), so the epilogue reads the
saved value once; each weight gradient's GEMM (dW = dZ^T @ X, K the batch)
reads X, a matrix the graph computes, as an [in, out] weight, where the
graph's shapes are static (a dynamic batch leaves it to PyTorch).

Options (`torch.compile(..., options={...})`): fusion.compile's compile
options (fusion/options.py; "target" by default the inputs' device's,
"precision" as below), "fallback" ("inductor", the default for GPU
targets: inductor compiles the other ops and the backward, calling
fusion::run as an extern kernel, with its own decompositions, batch norms'
forwards excepted, which fusion takes whole, and its partitioner; "eager",
the default for the CPU target: they run as PyTorch's ATen kernels; on the
transformer zoo the inductor fallback is the faster, docs/benchmarks.md),
"compile_only" (compile and cache the libraries, for example for
another machine's target, but run the graph as PyTorch would),
"fuse_backward" ("auto", the default: the backward graph's GEMMs that
fusion computes faster than PyTorch even alone, f32 in fp32 precision;
"on": every one; "off": none) and
"group_gemms" ("auto", the default, "on" or "off": whether linear layers
of one input that nothing fuses after, attention's q, k and v
projections, become one GEMM of their concatenated weights, a
fusion.concat the GEMM reads in place; "auto" where that beats separate
GEMMs, see _may_group) and "k_major_copies" ("auto", the default, "on" or
"off": whether GEMMs read an [in, out] operand from a K-major copy made
in the graph, "auto" the 3xTF32 GEMMs where x has at least 1024 static
rows, "on" every one, see _copy_k_major).

Where the options name no "precision" (or ""), the GEMM precision of f32
chains follows PyTorch's float32 matmul setting for GPU targets, as
inductor's GEMMs do: "highest" (`torch.set_float32_matmul_precision`'s
default) gives "fp32", fp32-accurate (3xTF32 on the tensor cores); "high"
and "medium" (or `torch.backends.cuda.matmul.allow_tf32 = True`) give
"tf32". For the CPU target it is "fp32" whatever the setting, as PyTorch's
CPU matmuls are (fusion's tf32 there only rounds the operands). The
setting is read when a graph compiles (dynamo compiles the graph again
when it changes) and is part of its libraries' cache keys: compile_only
caches for the setting the run will have. bf16 and f16 chains compute the
same either way; fusion.compile's default stays "fp32"; fusion.explain's
census names a precision other than fp32.
"""
import collections
import contextlib
import copy
import functools
import operator
import re
import types
import warnings
import weakref

import torch
import torch.fx
from torch._decomp import core_aten_decompositions
from torch._dynamo import register_backend
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func
from torch._prims_common import is_contiguous_or_false
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.fx._lazy_graph_module import _LazyGraphModule
from torch.fx.passes.tools_common import stable_topological_sort
from torch.utils import _pytree as pytree

from . import gpu_metadata, graph_rewrites, importer, runtime
from .cache import compiled_library, library_key
from .census import Census, GemmReport
from .dtypes import ELEMENT_TYPES, TORCH_DTYPES, rounded
from .program import SEED_DTYPE, SEED_SHAPE
from .random import SEED_BITS_DTYPE, SEED_BITS_RANGE
from .errors import (FusionBackendWarning, LibraryNotCachedError,
                     UnsupportedOperationError)
from .formulas import ELEMENTWISE
from .module import _open_library, default_target
from .options import PACKAGE_OPTIONS, compiler_text

ENTRY = "fused"

# The compiled partitions of this process, by cache key: the loaded library
# and the shapes of its results; and how many compiled graphs call each.
# A library no compiled graph calls any more is unloaded (_release).
_LIBRARIES = {}
# Libraries only compiled (compile_only), by cache key: their signature's
# entry points (as a library's `entries`) standing in for the library,
# which is another machine's and not loaded, for fusion::run's fake; and
# the shapes of its results.
_SIGNATURES = {}


def _library(key):
    """(library, results) of `key`: loaded, or only compiled."""
    return _LIBRARIES.get(key) or _SIGNATURES[key]


_CALLERS = collections.Counter()
# The keys each graph being compiled (innermost last) holds loaded until
# its compiled function does (_holding_libraries).
_HELD = []

# fusion::run and fusion::run_updating are C++
# (python_bindings/TorchOperator.cpp, loaded by fusion/runtime.py): tracing
# needs only the shapes of their results.
def _run_fake(key, args, updated=()):
    """The results of `key`'s entry point on `args` but for the outputs
    `updated` (of fusion::run_updating: written into its state)."""
    library, results = _library(key)
    entry = library.entries[ENTRY]
    inputs = [spec for spec in entry["inputs"]
              if spec["index"] not in updated.values()] if updated \
        else entry["inputs"]
    batch = next((t.shape[0] for spec, t in zip(inputs, args)
                  if spec["shape"][0] is None), None)
    return [args[0].new_empty([batch if d is None else d for d in shape],
                              dtype=TORCH_DTYPES[dtype])
            for index, (shape, dtype) in enumerate(results)
            if index not in updated]


def _run_updating_fake(key, args, state):
    library, _ = _library(key)
    return _run_fake(key, args,
                     runtime.updated_inputs(library.entries[ENTRY]))


if runtime.HAS_OPERATOR:
    torch.library.register_fake("fusion::run")(_run_fake)
    torch.library.register_fake("fusion::run_updating")(_run_updating_fake)
# The ops that call a library.
_RUNS = ("fusion.run.default", "fusion.run_updating.default")


def _target(options, device):
    """The compile target: the option, else that of `device`."""
    return options.get("target") or default_target(device)


def _compile_options(options, device):
    """fusion-compile's options for the backend's `options` (the target by
    default that of `device`)."""
    return compiler_text({**options, "target": _target(options, device)})


def _inputs_device(example_inputs):
    return next((t.device for t in example_inputs
                 if isinstance(t, torch.Tensor)), torch.device("cpu"))


def _default_fallback(options, device):
    """"inductor" where fusion compiles for a GPU (the faster on the
    transformer zoo, docs/benchmarks.md), "eager" for the CPU target (the
    reference lowering, which tests run)."""
    return "eager" if _target(options, device) == "cpu" else "inductor"


def _default_precision(options, device):
    """The GEMM precision of f32 chains where the options name none. For a
    GPU target, PyTorch's float32 matmul setting, read as inductor reads
    it: tf32 where torch.backends.cuda.matmul.fp32_precision is "tf32"
    (torch.set_float32_matmul_precision("high") or "medium",
    torch.backends.cuda.matmul.allow_tf32 = True), else fp32 ("highest",
    PyTorch's default). For the CPU target, fp32: PyTorch's CPU matmuls
    stay fp32 under "high", and fusion's tf32 there only rounds the
    operands (the GPU kernels' reference), gaining no speed."""
    if _target(options, device) == "cpu":
        return "fp32"
    tf32 = torch.backends.cuda.matmul.fp32_precision == "tf32"
    return "tf32" if tf32 else "fp32"


def _check_options(options, device):
    """Refuses bad options before any graph is compiled (whether or not
    anything fuses), where the compiler is there to say which."""
    try:
        from ._fusion import check_compile_options
    except ImportError:
        return  # Cached libraries only: a bad option finds none.
    check_compile_options(**_compile_options(options, device))


class _Partition:
    """A GEMM and the ops fused after it; `numbers` are the graph's
    constants read as numbers (see _numbers)."""

    def __init__(self, gemm, transpose, numbers):
        self.gemm = gemm
        # The concatenations of parameters that the GEMM reads as its
        # weight or bias (fusion.concat, read in place: PyTorch would copy
        # them every call), the weight's transpose (none where the GEMM
        # reads the weight as it is stored), the GEMM, then the ops fused
        # after it.
        self.members = importer.gemm_concats(gemm) + \
            ([] if transpose is None else [transpose]) + [gemm]
        self.numbers = numbers
        self.downstream = _downstream(gemm)

    def fused(self):
        """The members after the GEMM."""
        return self.members[self.members.index(self.gemm) + 1:]

    def outputs(self):
        """Member values used outside the partition, in graph order: those
        computed from the GEMM's output (the transpose, and the values of
        outside vectors pulled in, stay for their other users)."""
        members = set(self.members)
        return [n for n in self.members
                if (n is self.gemm or n in self.downstream) and
                not _is_multi_result(n) and
                any(u not in members for u in n.users)]

    def inputs(self):
        return _inputs(self.members, self.numbers)


def _inputs(members, numbers):
    """The tensors that `members` (a list) read from outside, in order
    (`numbers` aside, which they read as numbers)."""
    inside, seen = set(members), []
    for node in members:
        for arg in node.all_input_nodes:
            if arg not in inside and arg not in seen and \
                    arg not in numbers and \
                    isinstance(importer.tensor_meta(arg), torch.Tensor):
                seen.append(arg)
    return seen


def _numbers(gm):
    """The tensors of one number that the forward made (torch.tensor(-1.5):
    attributes of `gm`, which live on the CPU) and that every op reading
    them reads as a number, with their structural copies: node -> the
    number. Partitions fold them into their programs, as fusion.compile
    does, rather than pass a CPU tensor to a library of another device."""
    numbers = {}
    for node in gm.graph.nodes:
        if node.op != "get_attr":
            continue
        value = functools.reduce(getattr, node.target.split("."), gm)
        readers = [r for r in importer.constant_readers(node)
                   if r.op == "call_function"]
        if not isinstance(value, torch.Tensor) or \
                not importer.folds_as_number(value, readers):
            continue
        copies = [node]
        for alias in copies:
            copies += [u for u in alias.users
                       if importer.op_name(u) in importer.STRUCTURAL]
        # The forward compiler runs under AOTAutograd's fake mode; the
        # attribute itself is a real tensor.
        with unset_fake_temporarily():
            number = float(value.item())
        numbers.update((alias, number) for alias in copies)
    return numbers


def _is_multi_result(node):
    return isinstance(node.meta.get("val"), (tuple, list))


def _left_to_pytorch(node, error):
    """Warns that `node`'s partition runs as PyTorch because of `error`,
    an error of fusion's own or a library missing from the cache of a
    machine without the compiler (a refusal is not one: it says nothing
    is wrong)."""
    warnings.warn(f"fusion left the partition of {node.name} "
                  f"({importer.op_name(node)}, {importer.where(node)}) to "
                  f"PyTorch: {type(error).__name__}: {error}",
                  FusionBackendWarning, stacklevel=2)


def _importer(members, numbers, outputs=(), refusals=None):
    """The importer of `members` (run), or None when it refuses them or
    they read a tensor of another device than the GEMM's: the importer
    alone says what a partition can hold. Its refusal is recorded in
    `refusals` (by the last member) where given."""
    inputs = _inputs(members, numbers)
    gemm = next(m for m in members if importer.op_name(m) in importer.GEMMS)
    device = importer.tensor_meta(gemm).device
    if any(importer.tensor_meta(arg).device != device for arg in inputs):
        if refusals is not None:
            refusals[members[-1]] = f"it reads a tensor of another device " \
                f"than {device}"
        return None
    try:
        imported = importer.Importer(members, inputs, list(outputs),
                                     numbers)
        imported.run()
    except UnsupportedOperationError as error:
        if refusals is not None:
            refusals[members[-1]] = str(error)
        return None
    except Exception as error:  # noqa: BLE001 (fusion's bug: PyTorch runs it)
        _left_to_pytorch(members[-1], error)
        return None
    return imported


def _pulled(arg, members, numbers, compute=True, backward=False):
    """The nodes to take into the partition with outside operand `arg`, in
    graph order: constants, views of outside vectors and single values, and
    (where `compute`) elementwise ops of those alone (a learned
    temperature's exp), which the importer reads through or computes where
    the partition's values read them; none where `arg` reads anything else
    (it is an input). In `backward` graphs, elementwise ops of outside
    matrices too (an activation's derivative from the forward's saved
    value), the matrices staying inputs. Such an op that other ops read
    too stays in the graph
    for them (computed twice, in the epilogue and by its other readers'
    kernels, where it would otherwise be written to memory for the
    partition to read: GELU's tanh, which both halves of its derivative
    read); once those readers join the partition, it is computed once."""
    taken, stack = [], [arg]
    kinds = importer.VIEWS | importer.EXPANDS | importer.STRUCTURAL
    if compute:
        kinds = kinds | ELEMENTWISE.keys() | importer.FLOAT_CONVERSIONS
    while stack:
        node = stack.pop()
        if node in members or node in taken or node in numbers:
            continue
        name = importer.op_name(node)
        if name in importer.CONSTANTS:
            taken.append(node)
        elif node.op == "call_function" and name in kinds:
            taken.append(node)
            stack += [a for a in node.all_input_nodes
                      if isinstance(importer.tensor_meta(a), torch.Tensor)]
        else:
            meta = importer.tensor_meta(node)
            if meta is None or meta.dim() > 1 and not backward and \
                    not _draws_uniform(node):
                return []
    order = {node: index for index, node in enumerate(arg.graph.nodes)}
    return sorted(taken, key=order.__getitem__)


def _draws_uniform(node):
    """Whether `node` draws a matrix of uniform random numbers (dropout's
    `rand(x.shape) > p`, _dropout): the partition reads it as an input and
    computes the comparison in its epilogue, so that the draw stays
    PyTorch's (its generator and seed) and the GEMM's output is not written
    for a dropout kernel to read."""
    return node.op == "call_function" and \
        importer.op_name(node) == "aten.rand.default"


def _shared_input_gemm(arg, gemm, members):
    """The nodes to take into `gemm`'s partition with outside operand
    `arg` where it is (through views) another GEMM of the same input, of
    the same weight layout, that nothing else reads: the other GEMM's weight
    transpose (where it reads one), the GEMM and the views, in graph order;
    else none. The compiler makes the two one dual GEMM (a gated MLP's gate
    and up projections), which reads the input once."""
    chain = [arg]
    while importer.op_name(chain[-1]) in importer.VIEWS:
        chain.append(chain[-1].args[0])
    other = chain[-1]
    if other is gemm or other in members or \
            importer.op_name(other) not in importer.GEMMS or \
            any(len(node.users) != 1 for node in chain) or \
            importer.gemm_concats(gemm) or importer.gemm_concats(other):
        return []  # A grouped GEMM (fusion.concat) is no dual's half.
    try:
        x, _, _, layout = importer.linear_operands(gemm)
        other_x, operand, _, other_layout = importer.linear_operands(other)
    except UnsupportedOperationError:
        return []
    if other_x is not x or other_layout != layout:
        return []
    taken = ([operand] if layout == "out_in" else []) + list(reversed(chain))
    return [n for n in taken if n not in members]


def _downstream(node):
    seen, stack = set(), [node]
    while stack:
        for user in stack.pop().users:
            if user not in seen:
                seen.add(user)
                stack.append(user)
    return seen


def _is_convex(partition):
    """Whether no path leaves the members the call replaces (the GEMM and
    those computed from it; the others are computed again inside and stay
    for their other readers) and comes back: then every outside reader of
    the call's results can follow it and every input precede it, in a
    topological order of the graph."""
    inside = {n for n in partition.members
              if n is partition.gemm or n in partition.downstream}
    outside_readers = {u for m in inside for u in m.users
                       if u not in inside}
    seen, stack = set(), list(outside_readers)
    while stack:
        node = stack.pop()
        if node in inside:
            return False
        if node not in seen:
            seen.add(node)
            stack += list(node.users)
    return True


def _without(members, node):
    """`members` without `node` and the members computed from it."""
    gone = {node}
    for member in members:
        if any(a in gone for a in member.all_input_nodes):
            gone.add(member)
    return [m for m in members if m not in gone]


def _runs_faster_alone(gemm, options):
    """Whether fusion computes `gemm` faster than PyTorch even with nothing
    fused after it: f32 in fp32 precision on a GPU, which the generated
    kernels multiply with 3xTF32 (fp32-accurate, about 2x cuBLAS's SGEMM);
    an [in, out] weight the wgmma kernel's splitters transpose where its
    rows of N and x's of K are whole 16-byte chunks (TMA's strides), else
    cuBLASLt's SGEMM computes it, PyTorch's own (as for the cublas strategy
    and simt math)."""
    meta = importer.tensor_meta(gemm)
    try:
        x, _, _, layout = importer.linear_operands(gemm)
    except UnsupportedOperationError:
        return False
    chunks = layout == "out_in" or (
        meta.shape[-1] % 4 == 0 and importer.tensor_meta(x).shape[-1] % 4 == 0)
    return meta.dtype == torch.float32 and chunks and \
        _target(options, meta.device) != "cpu" and options.get("precision") in (None, "", "fp32") \
        and options.get("strategy") in (None, "auto", "tiled", "wgmma") and \
        options.get("fp32_math") in (None, "tf32x3")


def _grow(gemm, order, numbers, report, alone=False, backward=False):
    """The partition of `gemm`, or None when nothing fuses after it and it
    does not run faster `alone` (why, and why each op reading it stayed
    outside, go into `report`). In a `backward` graph, elementwise ops of
    outside matrices are pulled in too (_pulled)."""
    try:
        x, operand, _, layout = importer.linear_operands(gemm)
    except UnsupportedOperationError as error:
        report.reason = str(error)
        return None
    meta = importer.tensor_meta(gemm)
    if meta is None or meta.dtype not in ELEMENT_TYPES or \
            not isinstance(meta.shape[-1], int) or \
            importer.tensor_meta(x).dim() != 2:
        report.reason = "its result's dtype or features are not static " \
            "float32, bfloat16 or float16 ones"
        return None
    partition = _Partition(gemm, operand if layout == "out_in" else None,
                           numbers)
    refusals = {}
    if _importer(partition.members, numbers, refusals=refusals) is None:
        report.reason = refusals.get(gemm, "the importer refuses it")
        return None
    members = set(partition.members)
    downstream = _downstream(gemm)
    for node in order[order.index(gemm) + 1:]:
        if node.op != "call_function" or \
                importer.op_name(node) in importer.GEMMS or \
                not any(a in members for a in node.all_input_nodes):
            continue  # One GEMM per partition, and the ops reading it.
        pulled, outside = [], [a for a in node.all_input_nodes
                               if a not in members]
        # Outside operands computed from the GEMM's output would make a
        # cycle (size arithmetic of views aside).
        if any(a in downstream and
               (importer.tensor_meta(a) is not None or
                importer.op_name(node) not in importer.VIEWS)
               for a in outside):
            continue
        # The outside vectors' elementwise ops pulled in, else (where there
        # are any) left to PyTorch as inputs.
        choices = []
        for compute in (True, False):
            pulled = []
            for arg in outside:
                taken = _pulled(arg, members, numbers, compute, backward)
                if compute and not taken:
                    taken = _shared_input_gemm(arg, gemm, members)
                pulled += [p for p in taken if p not in pulled]
            if pulled not in choices:
                choices.append(pulled)
        for pulled in choices:
            candidate = partition.members + pulled + [node]
            if _importer(candidate, numbers, refusals=refusals) is not None:
                partition.members = candidate
                members.update(pulled + [node])
                break
    while True:
        members = set(partition.members)
        # Views and constants pulled in for ops that were cut go too.
        orphans = [n for n in partition.fused() if not any(
            a in members for a in n.all_input_nodes) and not any(
            u in members for u in n.users)]
        if orphans:
            partition.members = [n for n in partition.members
                                 if n not in orphans]
            continue
        imported = _importer(partition.members, numbers)
        outputs = partition.outputs()
        # Values fusion does not return (other dtypes, expanded values)
        # stay PyTorch's, and what is computed from them.
        bad = [n for n in outputs if imported.result_problem(n)]
        if bad:
            refusals[bad[0]] = imported.result_problem(bad[0])
            partition.members = _without(partition.members, bad[0])
            continue
        # A multi-result op (batch norm, layer norm, ...) stays only with
        # all its used results, which PyTorch would compute again otherwise.
        kept = set(partition.members)
        split = [n for n in partition.members if _is_multi_result(n) and any(
            u not in kept for u in n.users if u.users or
            u.op == "output")]
        if split:
            refusals[split[0]] = "fusion would compute only some of its " \
                "results, which PyTorch would compute again"
            partition.members = _without(partition.members, split[0])
            continue
        break
    report.stopped = _stops(partition, refusals)
    computing = [n for n in partition.fused() if importer.computes(n)]
    if not computing:
        if not alone:
            report.reason = _NOTHING_AFTER
            return None
        report.reason = "nothing after it that fusion computes, but " \
            "fusion's 3xTF32 GEMM is about 2x cuBLAS's SGEMM"
    if not _is_convex(partition):
        report.reason = "a value outside the partition both reads its " \
            "results and is read by it: no single call replaces it"
        return None
    read_back = _read_back(partition) if backward else []
    if len(read_back) > 1:
        # The GEMM's output alone, which one kernel of PyTorch's reads,
        # moves fewer bytes (a norm's backward, whose row sums stop the
        # partition halfway: Llama's, 3% slower a bf16 step, run 133).
        why = f"{len(read_back)} of its results would be read back by " \
            f"PyTorch's ops ({', '.join(n.name for n in read_back)}), " \
            f"more memory traffic than the GEMM's output alone"
        if not alone:
            report.reason = why
            return None
        report.reason = f"only the GEMM (fusion's 3xTF32 GEMM is about 2x " \
            f"cuBLAS's SGEMM): {why}"
        partition.members = partition.members[
            :partition.members.index(partition.gemm) + 1]
        report.stopped = _stops(partition, refusals)
    return partition


def _read_back(partition):
    """The partition's matrix results that ops other than GEMMs read
    (through views), which PyTorch's kernels then read back from memory."""
    members = set(partition.members)

    def read_by_other_ops(node):
        for user in node.users:
            name = importer.op_name(user)
            if user in members or user.op != "call_function" or \
                    name in importer.GEMMS:
                continue
            if name not in importer.VIEWS | importer.TRANSPOSES or \
                    read_by_other_ops(user):
                return True
        return False

    return [node for node in partition.outputs()
            if getattr(importer.tensor_meta(node), "ndim", 0) > 1 and
            read_by_other_ops(node)]


def _stops(partition, refusals):
    """(node, why) of each op that reads the partition's values from
    outside it: the reasons fusion stopped there."""
    members = set(partition.members)
    stops = []
    for node in [partition.gemm] + partition.fused():
        if node is not partition.gemm and node not in partition.downstream:
            continue  # An outside value pulled in: its readers are others'.
        for user in node.users:
            if user in members or user.op != "call_function" or \
                    any(user is stop for stop, _ in stops):
                continue
            if importer.op_name(user) in importer.GEMMS:
                why = "a GEMM, whose input it is"
            else:
                why = refusals.get(user, "it reads a value computed from "
                                   "this GEMM's output outside the "
                                   "partition")
            stops.append((user, why))
    return stops


def _view_shapes(graph, outputs, result_shapes):
    """The shape of each output, as `aten.view` arguments, for the results
    the library returns as [batch, values per row]; None where it is
    that."""
    symbols = {}
    for node in graph.nodes:
        value = node.meta.get("val")
        if isinstance(value, torch.SymInt):
            symbols.setdefault(str(value), node)
    shapes = []
    for output, library in zip(outputs, result_shapes):
        shape = list(importer.tensor_meta(output).shape)
        if len(shape) == len(library) and all(
                want is None or importer.int_size(got) == want
                for got, want in zip(shape, library)):
            shapes.append(None)
            continue
        arguments, free = [], False
        for size in shape:
            if importer.int_size(size) is not None:
                arguments.append(importer.int_size(size))
            elif str(size) in symbols:
                arguments.append(symbols[str(size)])
            elif not free:
                arguments.append(-1)
                free = True
            else:
                raise UnsupportedOperationError(
                    f"output {output.name} has shape {tuple(shape)}, whose "
                    f"sizes the graph does not compute")
        shapes.append(arguments)
    return shapes


def _compile_partition(partition, options, compile_only):
    """Compiles the partition (or finds it in the cache) and loads its
    library (`compile_only`: reads its signature alone, the library being
    another machine's); returns (cache key, inputs, outputs, the rows of
    inputs it takes apart, the position of its draws' seed among its
    arguments or None, the outputs' view shapes) of the call to make."""
    outputs = partition.outputs()
    inputs = partition.inputs()
    imported = importer.Importer(partition.members, inputs, outputs,
                             partition.numbers)
    program = imported.run()
    views = _view_shapes(partition.gemm.graph, outputs,
                         imported.result_shapes)
    compile_options = _compile_options(
        options, importer.tensor_meta(partition.gemm).device)
    programs = {ENTRY: program}
    key = library_key(programs, compile_options)
    # The shapes of the library's results (the program's, in order).
    results = [(shape, ELEMENT_TYPES[meta.dtype])
               for shape, meta in zip(imported.result_shapes,
                                      map(importer.tensor_meta, outputs))]
    if compile_only:
        # The call is put in the graph as a run would (later partitions grow
        # on that graph: their programs, and keys, must be the run's); the
        # caller restores the graph PyTorch runs (_fuse_or_leave).
        if key not in _SIGNATURES:
            files = compiled_library(programs, compile_options)
            _SIGNATURES[key] = (types.SimpleNamespace(
                entries=runtime.entry_points(files["model.json"])), results)
    else:
        if key not in _LIBRARIES:
            files = compiled_library(programs, compile_options)
            _LIBRARIES[key] = (_open_library(files, "a fusion partition",
                                             {ENTRY: key}),
                               results)
        if _HELD:
            _HELD[-1].append(key)
            _CALLERS[key] += 1
    seed = None if imported.seed is None else \
        [a["value"] for a in program.arguments].index(imported.seed)
    return key, inputs, outputs, imported.slices, seed, views


# The meta key of the nodes that make up a fusion::run call: the call, its
# results' items and its arguments' preparation (copies to dense rows).
_CALL_PART = "fusion_call_part"


def _append(graph, last, op, *args, **kwargs):
    """A call of ATen `op` inserted after `last`, with the value it makes
    (computed on the operands' fake values) as its meta, as the graph's
    other nodes have, so that later partitions can read it."""
    with graph.inserting_after(last):
        node = graph.call_function(op, args, kwargs)
    node.meta["val"] = op(*torch.fx.node.map_arg(
        args, lambda arg: arg.meta["val"]), **kwargs)
    node.meta[_CALL_PART] = True
    return node


def _dense_rows(graph, node, last):
    """Input `node` as the library reads it, appended after `last`: a
    [rows, features] matrix over its leading dimensions, copied first
    where its strides are not those of a contiguous tensor (a slice of the
    sequence, `hidden[:, 0]`, a transpose, an expand) or not known to be."""
    meta = importer.tensor_meta(node)
    if not is_contiguous_or_false(meta):
        node = last = _append(graph, last, torch.ops.aten.clone.default,
                              node, memory_format=torch.contiguous_format)
    if meta.dim() > 2:
        node = _append(graph, last, torch.ops.aten.view.default, node,
                       [-1, meta.shape[-1]])
    return node


def _seed(graph, last, device, fake_mode):
    """The seed of a library's draws, drawn per call from PyTorch's
    generator as fusion.random.draw_seed draws it, appended after
    `last`."""
    with fake_mode or contextlib.nullcontext():
        bits = _append(graph, last, torch.ops.aten.randint.low,
                       *SEED_BITS_RANGE, SEED_SHAPE, dtype=SEED_BITS_DTYPE,
                       device=device)
        return _append(graph, bits, torch.ops.aten.view.dtype, bits,
                       TORCH_DTYPES[SEED_DTYPE])


def _replace(graph, key, inputs, outputs, slices, seed, views, members):
    """Inserts (and returns) the call of the library after the partition's
    last op; the users of its results are put in order after it
    (fuse_graph's sort). Inputs are
    passed as dense [rows, features] matrices (_dense_rows), single values
    as they are (0-d or (1,): the library reads one value), and the rows of
    weights and vectors it takes apart follow the inputs as views (copies
    where a view would not be 16-byte aligned); the seed of its draws, if
    any, goes at its position `seed`; the library's [batch, values per
    row] results are viewed as the outputs' shapes."""
    order = {node: index for index, node in enumerate(graph.nodes)}
    last = max(members, key=order.__getitem__)
    arguments = []
    for node in inputs:
        argument = _dense_rows(graph, node, last)
        if argument is not node:
            last = argument
        arguments.append(argument)
    for node, start, stop, copied in slices:
        last = _append(graph, last, torch.ops.aten.slice.Tensor, node, 0,
                       start, stop)
        # Copied where a view would not be 16-byte aligned, or not dense
        # (rows of a transposed weight: a backward graph's).
        if copied or not is_contiguous_or_false(last.meta["val"]):
            last = _append(graph, last, torch.ops.aten.clone.default, last,
                           memory_format=torch.contiguous_format)
        arguments.append(last)
    if seed is not None:
        values = [node.meta["val"] for node in inputs]
        last = _seed(graph, last, values[0].device,
                     torch._guards.detect_fake_mode(values))
        arguments.insert(seed, last)
    call = _append(graph, last, torch.ops.fusion.run.default, key,
                   arguments)
    for index, (output, view) in enumerate(zip(outputs, views)):
        item = _append(graph, call, operator.getitem, call, index)
        result = item
        if view is not None:
            with graph.inserting_after(item):
                result = graph.call_function(torch.ops.aten.view.default,
                                             (item, view))
        result.meta = dict(output.meta, **{_CALL_PART: True})
        output.replace_all_uses_with(
            result, delete_user_cb=lambda user: user not in (item, result))
    return call


# The matrix products of ATen graphs that fusion's census lists.
_MATMULS = ("aten.addmm.default", "aten.mm.default", "aten.bmm.default",
            "aten.baddbmm.default")


def _report(gemm, graph_index, backward):
    a, b = (importer.tensor_meta(arg) for arg in gemm.args[-2:])
    shape = (a.shape[-2], a.shape[-1], b.shape[-1]) \
        if a is not None and b is not None else ("?", "?", "?")
    return GemmReport(graph_index, gemm.name, importer.op_name(gemm),
                      importer.where(gemm), shape, backward=backward,
                      k_major_copy=bool(gemm.meta.get(_K_MAJOR_COPY)))


def _own(owners, call, gemm):
    """Records library call `call` as `gemm`'s partition, and where the
    model made it (for the reports of partitions it stops)."""
    owners[call] = gemm.name
    call.meta["stack_trace"] = gemm.meta.get("stack_trace")


_NOTHING_AFTER = "nothing after it that fusion computes"


def _owned_by(node, owner):
    """Why a partition stopped at `node`, which `owner`'s partition took
    (or is: the call of its library)."""
    if importer.op_name(node) in importer.GEMMS:
        return f"it is computed in {owner}'s GEMM, as its dual"
    if node.target is torch.ops.fusion.run.default:
        return f"an op fused after {owner} reads it"
    return f"it is fused after {owner}"


def _merge_identical_views(graph):
    """Makes views of one value with the same arguments one node (two
    linears of one input each view it apart): a partition then writes
    that value once, and the GEMMs reading it share an input (the dual
    GEMM's condition)."""
    seen = {}
    for node in list(graph.nodes):
        if node.op != "call_function" or \
                importer.op_name(node) not in importer.VIEWS:
            continue
        key = (node.target, str(node.args), str(node.kwargs))
        if key in seen:
            node.replace_all_uses_with(seen[key])
            graph.erase_node(node)
        else:
            seen[key] = node


# The values of the backend options "group_gemms" (see _may_group),
# "fuse_backward" (_backward_compiler) and "k_major_copies"
# (_copy_k_major), the first the default.
GROUP_GEMMS = ("auto", "on", "off")
FUSE_BACKWARD = ("auto", "on", "off")
K_MAJOR_COPIES = ("auto", "on", "off")
# The options of the backend that fusion.compile does not take (those
# that the compile option table lists aside).
_BACKEND_OPTIONS = ("fallback", "compile_only", "group_gemms",
                    "fuse_backward", "k_major_copies")
# The rows of x from which a 3xTF32 GEMM reads an [in, out] operand from a
# K-major copy (_copy_k_major): the tensor cores read tf32 operands K-major
# only, and the wgmma kernel's splitters transpose such an operand's stages
# in shared memory, which took 20-30% longer than the same GEMM reading it
# [out, in] (docs/benchmarks.md, run 139); the copy, one pass over K x N
# values, costs less than that from about 600 rows on.
_K_MAJOR_COPY_MIN_ROWS = 1024
# The meta key of a GEMM that _copy_k_major made read a copy (its report's).
_K_MAJOR_COPY = "fusion_k_major_copy"


def _option(options, name, values):
    """The backend option `name` (one of `values`, the first by default)."""
    return options.get(name) or values[0]


def _copy_k_major(graph, options):
    """Makes GEMMs read their [in, out] operand w (GPT-2's Conv1D weight; a
    data gradient's weight, a weight gradient's dZ) from a K-major copy
    made in the graph, `t(clone(t(w)))`, which linear_operands reads [out,
    in]: by the backend option "k_major_copies", "auto" (the default) those
    that fusion computes with 3xTF32 (_runs_faster_alone) where x's rows
    are static and at least _K_MAJOR_COPY_MIN_ROWS (the kernel transposes
    w's stages itself below), "on" every GEMM whatever its precision and
    target (which tests the rewrite on the CPU), "off" none. GEMMs that
    read one w (a shared weight) read one copy."""
    mode = _option(options, "k_major_copies", K_MAJOR_COPIES)
    if mode == "off":
        return
    copies = {}  # w -> its copy's transpose
    for gemm in list(graph.nodes):
        if importer.op_name(gemm) not in ("aten.addmm.default",
                                          "aten.mm.default"):
            continue
        try:
            _, operand, _, layout = importer.linear_operands(gemm)
        except UnsupportedOperationError:
            continue
        if layout != "in_out" or (mode == "auto" and not (
                _runs_faster_alone(gemm, options) and
                (importer.int_size(importer.tensor_meta(gemm).shape[0]) or 0)
                >= _K_MAJOR_COPY_MIN_ROWS)):
            continue
        if operand not in copies:
            transposed = _append(graph, gemm.prev,
                                 torch.ops.aten.permute.default, operand,
                                 [1, 0])
            copy = _append(graph, transposed, torch.ops.aten.clone.default,
                           transposed, memory_format=torch.contiguous_format)
            copies[operand] = _append(graph, copy,
                                      torch.ops.aten.permute.default, copy,
                                      [1, 0])
        gemm.replace_input_with(operand, copies[operand])
        gemm.meta[_K_MAJOR_COPY] = True


def _group_mode(options):
    """The option "group_gemms", "auto" by default."""
    return _option(options, "group_gemms", GROUP_GEMMS)


def _may_group(gemm, options):
    """Whether `gemm` may join a group of sibling GEMMs (_group_gemms), by
    the option "group_gemms": "on" wherever the shapes allow, "off" never,
    "auto" (the default) where fusion's GEMM reads the concatenated
    weights in place and beats separate GEMMs: the wgmma kernel (an sm_90
    target, strategy auto or wgmma; cuBLASLt would run one GEMM a part,
    as PyTorch does) in bf16 or f16 (one kernel for the group up to 1024
    rows, 1.25-1.33x a prompt's prefill; cuBLASLt's GEMMs past them,
    docs/benchmarks.md), or in f32 where fusion computes each member
    alone anyway (_runs_faster_alone: 3xTF32). Not on the CPU, whose
    reference lowering gains nothing."""
    mode = _group_mode(options)
    if mode != "auto":
        return mode == "on"
    meta = importer.tensor_meta(gemm)
    chips = [re.fullmatch(r"sm_(\d+)a?", chip)
             for chip in _target(options, meta.device).split(",")]
    if not all(chip and int(chip.group(1)) >= 90 for chip in chips) or \
            options.get("strategy") not in (None, "auto", "wgmma"):
        return False
    if meta.dtype in (torch.bfloat16, torch.float16):
        return True
    return meta.dtype == torch.float32 and _runs_faster_alone(gemm, options)


def _may_join(gemms, options):
    """Whether the linear layers `gemms`, whose outputs the model
    concatenates, may be one GEMM whose result is the concatenation
    (graph_rewrites.join_concatenated_gemms): where they could be one
    group (_group_key, _tile_aligned), which then writes no slices for
    the `cat` to copy."""
    keys = {_group_key(gemm, options) for gemm in gemms}
    return None not in keys and len(keys) == 1 and (
        _group_mode(options) == "on" or
        all(_width(gemm) % _NARROWEST_TILE == 0 for gemm in gemms[:-1]))


def _group_key(gemm, options):
    """What sibling GEMMs that one GEMM can compute share: (x, the weights'
    layout, the dtype, whether they have biases), for a linear layer whose
    weight and bias are parameters of static shapes, with nothing scaled,
    that may be grouped (_may_group); else None."""
    layer = importer.parameter_linear(gemm)
    if layer is None:
        return None
    x, weight, bias, layout = layer
    meta, x_meta, w_meta = (importer.tensor_meta(n)
                            for n in (gemm, x, weight))
    if meta is None or x_meta is None or w_meta is None or \
            x_meta.dim() != 2 or w_meta.dim() != 2 or \
            not all(isinstance(d, int) for d in w_meta.shape) or \
            meta.dtype not in ELEMENT_TYPES or \
            {x_meta.dtype, w_meta.dtype} != {meta.dtype}:
        return None
    if bias is not None:
        b_meta = importer.tensor_meta(bias)
        features = w_meta.shape[0 if layout == "out_in" else 1]
        if b_meta is None or tuple(b_meta.shape) != (features,) or \
                b_meta.dtype != meta.dtype:
            return None
    if not _may_group(gemm, options):
        return None
    return x, layout, meta.dtype, bias is not None


def _is_alias(node):
    """Whether `node` views its first operand's elements (a view, a
    transpose, a slice; an item of a split), so that its value follows
    that operand's strides."""
    if node.op != "call_function":
        return False
    if node.target is operator.getitem or \
            importer.op_name(node) in importer.ROW_VIEWS:
        return True  # _unsafe_view views too, without saying so.
    schema = getattr(node.target, "_schema", None)
    return schema is not None and any(
        r.alias_info is not None and not r.alias_info.is_write
        for r in schema.returns)


def _restrided(gemm, value):
    """The values that `gemm`'s output and its views take when the output
    is `value`, a slice of a wider one: {node: value} of its views, or
    None where one of them would fail on it (a view that merges strided
    dimensions), where the graph returns one (a training step's saved
    value, which the backward graph reads with the strides it was traced
    with; a view that AOTAutograd may rebuild from its base with them) or
    a fusion::run call reads one (it takes dense rows)."""
    values, stack = {gemm: value}, [gemm]
    while stack:
        node = stack.pop()
        for user in node.users:
            if user.op == "output" or \
                    importer.op_name(user) == "fusion.run.default":
                return None
            if user in values or not _is_alias(user):
                continue
            try:
                values[user] = user.target(*torch.fx.node.map_arg(
                    user.args, lambda a: values.get(a, a.meta.get("val"))),
                    **user.kwargs)
            except Exception:  # noqa: BLE001 (strides a view cannot take)
                return None
            stack.append(user)
    del values[gemm]
    return values


def _group_gemms(graph, candidates, numbers, owners, options,
                 compile_only):
    """Makes each group of sibling GEMMs among `candidates` ((gemm,
    report), in graph order: GEMMs nothing fuses after, or that fusion
    would compute alone) one GEMM: their input x (attention's q, k and v
    projections) times the concatenation of their weights along the
    output features (a fusion.concat, which fusion's GEMM reads in place),
    plus that of their biases; each member's result is a slice (a view) of
    its output. Returns the GEMMs grouped."""
    groups, present = collections.defaultdict(list), set(graph.nodes)
    for gemm, report in candidates:
        if gemm not in owners and gemm in present:
            key = _group_key(gemm, options)
            if key is not None:
                groups[key].append((gemm, report))
    taken, copies = set(), _group_mode(options) == "on"
    for members in groups.values():
        if not copies:
            members = _tile_aligned(members)
        while len(members) > 1:
            rewrite = _group(graph, [gemm for gemm, _ in members], copies)
            if isinstance(rewrite, int):
                del members[rewrite]  # A member that cannot be a slice.
                continue
            names = [gemm.name for gemm, _ in members]
            if _compile_group(graph, rewrite, members, numbers, owners,
                              options, compile_only):
                taken.update(gemm for gemm, _ in members)
                for gemm, report in members:
                    report.grouped_with = [n for n in names
                                           if n != gemm.name]
            break
    return taken


# The narrowest tile of the wgmma kernel (kNarrowestWgmmaBlockN): a group's
# parts must start at whole tiles for it to read them in place
# (whyNotWeightParts), else cuBLASLt runs a GEMM a part, slower than
# 3xTF32 alone and no faster than PyTorch's GEMMs.
_NARROWEST_TILE = 64


def _tile_aligned(members):
    """The members of a group under "auto" whose parts the wgmma kernel
    reads in place: those of whole 64-column tiles, then at most one other
    (the last part may end anywhere); the others stay apart."""
    aligned = [m for m in members if _width(m[0]) % _NARROWEST_TILE == 0]
    ragged = [m for m in members if _width(m[0]) % _NARROWEST_TILE != 0]
    return aligned + ragged[:1]


def _width(gemm):
    """The output features of linear layer `gemm`."""
    _, operand, _, layout = importer.linear_operands(gemm)
    weight = operand.args[0] if layout == "out_in" else operand
    return importer.tensor_meta(weight).shape[0 if layout == "out_in" else 1]


class _Group:
    """The nodes of a group's GEMM, inserted in the graph before its first
    member: the concatenations, the transpose, the GEMM and each member's
    slice (or its copy: `slices`, what the member's readers read); and the
    values each member's views take then."""

    def __init__(self, nodes, gemm, slices, views):
        self.nodes = nodes
        self.gemm = gemm
        self.slices = slices
        self.views = views

    def undo(self, graph):
        for node in reversed(self.nodes):
            graph.erase_node(node)


def _group(graph, gemms, copies):
    """The _Group of `gemms` (siblings: one _group_key), or the index of a
    member whose views cannot read a slice (_restrided) unless `copies`:
    then its readers read a contiguous copy of the slice, which has the
    strides the graph was traced with (a copy that "auto" does not spend,
    gaining less than it costs)."""
    aten = torch.ops.aten
    operands = [importer.linear_operands(gemm) for gemm in gemms]
    x, first_operand, _, layout = operands[0]
    weights = [o[1].args[0] if layout == "out_in" else o[1]
               for o in operands]
    biases = [o[2] for o in operands if o[2] is not None]
    dim = 0 if layout == "out_in" else 1
    widths = [importer.tensor_meta(w).shape[dim] for w in weights]
    vals = {}

    def value(node):
        return vals[node] if node in vals else node.meta["val"]

    def add(op, *args, **kwargs):
        node = graph.call_function(op, args, kwargs)
        vals[node] = op(*torch.fx.node.map_arg(args, value), **kwargs)
        node.meta = {"val": vals[node],
                     "stack_trace": gemms[0].meta.get("stack_trace")}
        nodes.append(node)
        return node

    nodes = []
    # Before the first member in graph order (the members' order is the
    # parts').
    members = set(gemms)
    first = next(node for node in graph.nodes if node in members)
    with graph.inserting_before(first):
        weight = add(aten.cat.default, weights, dim)
        bias = add(aten.cat.default, biases, 0) if biases else None
        if layout == "out_in":
            # The members' transpose op (permute, or t).
            weight = add(first_operand.target, weight,
                         *first_operand.args[1:])
        gemm = add(aten.addmm.default, bias, x, weight) if biases else \
            add(aten.mm.default, x, weight)
        slices, views, start = [], {}, 0
        for index, (member, width) in enumerate(zip(gemms, widths)):
            piece = add(aten.slice.Tensor, gemm, 1, start, start + width)
            start += width
            restrided = _restrided(member, vals[piece])
            if restrided is None and copies:
                piece = add(aten.clone.default, piece,
                            memory_format=torch.contiguous_format)
                restrided = {}
            elif restrided is None:
                for node in reversed(nodes):
                    graph.erase_node(node)
                return index
            slices.append(piece)
            views.update(restrided)
    return _Group(nodes, gemm, slices, views)


def _compile_group(graph, group, members, numbers, owners, options,
                   compile_only):
    """Compiles the group's GEMM alone and makes its members' readers read
    their slices of its output. Whatever fails, the graph is left as it
    was: returns whether it compiled."""
    first, first_report = members[0]
    report = GemmReport(first_report.graph, group.gemm.name,
                        importer.op_name(group.gemm), first_report.where,
                        first_report.shape, backward=first_report.backward)
    partition = _grow(group.gemm, list(graph.nodes), numbers, report,
                      alone=True)
    if partition is None or partition.fused():
        group.undo(graph)
        return False
    try:
        compiled = _compile_partition(partition, options, compile_only)
    except UnsupportedOperationError:
        group.undo(graph)
        return False  # Left to PyTorch, each member as it was.
    except Exception as error:  # noqa: BLE001 (fusion's bug)
        _left_to_pytorch(first, error)
        group.undo(graph)
        return False
    first_report.members = [importer.op_name(n) for n in partition.members]
    _own(owners, _replace(graph, *compiled, partition.members), first)
    for (gemm, _), piece in zip(members, group.slices):
        gemm.replace_all_uses_with(piece)
    for node, value in group.views.items():
        node.meta["val"] = value
    for gemm, _ in members:
        transpose = gemm.args[-1]
        graph.erase_node(gemm)
        if transpose.op == "call_function" and not transpose.users:
            graph.erase_node(transpose)
    for node in reversed(partition.members):
        if not node.users:
            graph.erase_node(node)
    return True


def _fuse(graph, partition, report, owners, options, compile_only):
    """Compiles `partition` (or finds it in the cache) and replaces it by
    the call of its library; a partition fusion fails to compile is left
    to PyTorch (why, in `report`)."""
    gemm = partition.gemm
    try:
        compiled = _compile_partition(partition, options, compile_only)
    except LibraryNotCachedError as error:
        # Fusion would fuse it: the user learns why it runs as PyTorch.
        _left_to_pytorch(gemm, error)
        report.reason = str(error)
        return
    except UnsupportedOperationError as error:
        report.reason = str(error)
        return  # Left to PyTorch.
    except Exception as error:  # noqa: BLE001 (fusion's bug)
        _left_to_pytorch(gemm, error)
        report.reason = f"{type(error).__name__}: {error}"
        return
    report.members = [importer.op_name(n) for n in partition.members]
    report.fused = [importer.op_name(n) for n in partition.fused()]
    owners.update((n, gemm.name) for n in partition.fused())
    # Convex (_grow): the readers of its results can all follow the call,
    # which fuse_graph's sort puts them after.
    _own(owners, _replace(graph, *compiled, partition.members), gemm)
    for node in reversed(partition.members):
        if not node.users:
            graph.erase_node(node)


def fuse_graph(gm, options=None, compile_only=False, graph_index=0,
               backward=False):
    """Replaces each fusible partition of the ATen graph `gm` by a call of
    its compiled library; returns a GemmReport of each GEMM of the graph.
    A partition fusion fails to compile is left to PyTorch with a
    FusionBackendWarning. Of a `backward` graph, the GEMMs that the option
    fuse_backward takes, with elementwise ops of outside matrices (_grow).
    `compile_only` replaces them too (by libraries compiled, not loaded),
    so that each partition grows on the graph a run would have; the
    caller runs the graph it saved (_fuse_or_leave)."""
    options = options or {}
    graph = gm.graph
    graph_rewrites.rewrite_einsum_gemms(gm)
    _merge_identical_views(graph)
    _recompose_maskless_dropouts(graph)
    if not backward:
        graph_rewrites.join_concatenated_gemms(
            gm, lambda gemms: _may_join(gemms, options))
    _copy_k_major(graph, options)
    numbers = _numbers(gm)
    reports = []
    owners = {}  # node -> the GEMM whose fused partition took it
    matmuls = [(node, _report(node, graph_index, backward))
               for node in graph.nodes
               if importer.op_name(node) in _MATMULS]
    # The GEMMs a group may take (_group_gemms): those nothing fuses
    # after, and those that fusion computes alone, whose partitions wait
    # for the grouping (deferred). Siblings are found before partitions
    # replace their input.
    keys = {gemm: _group_key(gemm, options) for gemm, _ in matmuls}
    siblings = collections.Counter(filter(None, keys.values()))
    candidates, deferred = [], []
    for gemm, report in matmuls:
        reports.append(report)
        if gemm in owners:
            report.dual_of = owners[gemm]
            continue  # Another partition's dual GEMM.
        if importer.op_name(gemm) not in ("aten.addmm.default",
                                          "aten.mm.default"):
            report.reason = "a batched product (attention's, or a bmm the " \
                "model wrote): fusion fuses linear layers"
            continue
        # A joined GEMM reads its weights concatenated, which fusion reads
        # in place and PyTorch would copy.
        report.joined = gemm.meta.get(graph_rewrites.JOINED, [])
        alone = _runs_faster_alone(gemm, options) or bool(report.joined)
        if backward and not alone and \
                _option(options, "fuse_backward", FUSE_BACKWARD) == "auto":
            report.reason = "a backward graph's GEMM that fusion's kernels " \
                "do not compute faster than PyTorch's (fuse_backward " \
                "'auto': f32 in fp32 precision, 3xTF32; 'on': every one)"
            continue
        partition = _grow(gemm, list(graph.nodes), numbers, report, alone,
                          backward)
        has_siblings = siblings[keys[gemm]] > 1
        if partition is None:
            if has_siblings:
                candidates.append((gemm, report))
            continue
        if has_siblings and not any(importer.computes(n)
                                    for n in partition.fused()):
            candidates.append((gemm, report))
            deferred.append((gemm, report))
            continue
        _fuse(graph, partition, report, owners, options, compile_only)
    taken = _group_gemms(graph, candidates, numbers, owners, options,
                         compile_only)
    for gemm, report in deferred:
        if gemm in taken:
            continue
        if gemm in owners:
            report.dual_of = owners[gemm]
            continue  # A later partition's dual GEMM.
        # Grown again: the graph changed since.
        partition = _grow(gemm, list(graph.nodes), numbers, report, True,
                          backward)
        if partition is not None:
            _fuse(graph, partition, report, owners, options, compile_only)
    for report in reports:
        takers = sorted({owners[node] for node, _ in report.stopped
                         if node in owners})
        if report.reason == _NOTHING_AFTER and takers:
            # Its readers are in another GEMM's partition, which reads its
            # output as an operand (a parallel residual's sum of two
            # layers' outputs).
            report.reason = f"what follows it is fused after " \
                f"{' and '.join(takers)}, which reads its output"
        report.stopped = [
            (importer.op_name(node), importer.where(node),
             _owned_by(node, owners[node]) if node in owners else why)
            for node, why in report.stopped]
    for node in reversed(list(numbers)):
        if not node.users:
            graph.erase_node(node)  # folded into every reader
    stable_topological_sort(gm)  # A new graph: gm.graph, not `graph`.
    gm.graph.lint()
    gm.recompile()
    return reports


def _is_state_copy(node):
    """Whether `node` is AOTAutograd's copy of a mutated graph input's new
    value into it (keep_inference_input_mutations), such as a training
    batch norm's running statistics."""
    return importer.op_name(node) == "aten.copy_.default" and \
        node.args[0].op == "placeholder"


def _write_state_in_place(graph):
    """Makes each library call whose outputs may update inputs (its
    signature's updates_input: a training batch norm's running statistics)
    a call of fusion::run_updating, which writes them in place, where the
    graph copies each of them into its input and nothing else reads that
    input or that output: the copies go."""
    for call in [node for node in graph.nodes
                 if node.target is torch.ops.fusion.run.default]:
        key, arguments = call.args
        updates = runtime.updated_inputs(_library(key)[0].entries[ENTRY])
        items = {item.args[1]: item for item in call.users}
        copies = {}
        for output, input_index in updates.items():
            state = arguments[input_index]
            users = list(items[output].users) if output in items else []
            if len(users) != 1 or not _is_state_copy(users[0]) or \
                    users[0].args != (state, items[output]) or \
                    set(state.users) != {call, users[0]} or \
                    arguments.count(state) != 1:
                break
            copies[output] = users[0]
        if not updates or len(copies) != len(updates):
            continue
        state_inputs = sorted(updates.values())
        with graph.inserting_before(call):
            updating = graph.call_function(
                torch.ops.fusion.run_updating.default,
                (key, [a for i, a in enumerate(arguments)
                       if i not in state_inputs],
                 [arguments[i] for i in state_inputs]))
        kept = [index for index in range(len(call.meta["val"]))
                if index not in updates]
        updating.meta = dict(call.meta,
                             val=[call.meta["val"][i] for i in kept])
        for output, item in items.items():
            if output in copies:
                graph.erase_node(copies[output])
                graph.erase_node(item)
            else:
                item.args = (updating, kept.index(output))
        graph.erase_node(call)


# The partitions fused by the last compile in this process (of a forward
# graph; of a backward graph), for tests.
last_fused = []
last_fused_backward = []
# That compile's backend options, with the defaults it resolved (the
# precision, the fallback).
last_options = {}
# (whether it is a backward graph, its GemmReports) of each graph compiled
# while explain() runs.
_census = None


# Ops that run best as PyTorch's own kernels where fusion does not import
# them: AOTAutograd leaves them whole (core ATen would split a backward op into
# many pointwise kernels, run one by one). Everything else is decomposed to
# core ATen, the importer's vocabulary: layer and group norms and softmax
# stay whole there (native_layer_norm, native_group_norm, _softmax, which
# the importer takes, and PyTorch runs as one kernel where nothing fuses);
# logsumexp and rms_norm become reductions and elementwise ops. Pooling
# stays whole too (max_pool2d_with_indices, avg_pool2d, adaptive_max_pool2d,
# _adaptive_avg_pool2d: the 1-D functions are 2-D pools of a view), which
# the importer takes where the windows are contiguous groups of features.
# Scaled-dot-product attention stays PyTorch's fused kernel (flash or
# memory-efficient attention), not its decomposition's batched GEMMs and
# softmax. Training-mode dropout is decomposed (_RANDOM_DECOMPOSITIONS).
_KEPT_WHOLE = ("_backward", "embedding", "convolution", "pool",
               "aten::norm", "scaled_dot_product")


def _dropout(input, p, train):
    """aten.native_dropout as a draw and a comparison that the GEMM before
    it computes in its epilogue (_draws_uniform), as inductor's table has
    it, but for the threshold: `p` as the input's dtype holds it, so that
    the comparison is the same whether the draw is compared in that dtype
    (PyTorch's CPU kernels) or in float32 (its CUDA kernels, Triton's,
    fusion's epilogues), and the mask a backward graph computes again from
    the draw is the one the forward applied."""
    if not train or p == 0:
        return input, torch.ones_like(input, dtype=torch.bool)
    if p == 1:
        return torch.zeros_like(input), \
            torch.zeros_like(input, dtype=torch.bool)
    threshold = rounded(p, input.dtype)
    keep = torch.rand(input.shape, dtype=input.dtype,
                      device=input.device) > threshold
    return keep * input * float(1.0 / (1.0 - p)), keep


_RANDOM_DECOMPOSITIONS = {torch.ops.aten.native_dropout.default: _dropout}


def _inductor_decompositions():
    # Some of inductor's decompositions (max pools) consult its lowerings,
    # which compile_fx imports only later.
    import torch._inductor.lowering  # noqa: F401
    from torch._inductor.decomposition import select_decomp_table
    return select_decomp_table()


def _decompositions(fallback):
    if fallback == "inductor":
        # Inductor lowers what its own table leaves, but a batch norm's
        # forward stays whole for fusion, whose importer takes it whole (not
        # its decomposition's reductions over the batch); the norms fusion
        # leaves are decomposed after it (_decomposed_leftovers). Their
        # backwards are decomposed as inductor's table says.
        return {**{op: fn for op, fn in _inductor_decompositions().items()
                   if str(op) not in importer.BATCH_NORMS},
                **_RANDOM_DECOMPOSITIONS}
    table = {op: fn for op, fn in core_aten_decompositions().items()
             if op not in importer.UNDECOMPOSED and
             not any(kept in op.name() for kept in _KEPT_WHOLE)}
    # rand_like as inductor's table has it, a draw of x's shape that does
    # not read x.
    from torch._inductor.decomposition import decompositions
    table[torch.ops.aten.rand_like.default] = \
        decompositions[torch.ops.aten.rand_like.default]
    return {**table, **_RANDOM_DECOMPOSITIONS}


def _decomposed_leftovers(gm, example_inputs):
    """`gm` with the batch norms and dropouts that fusion left (kept whole
    for it) decomposed by inductor's table (dropouts as _dropout), which
    inductor expects to have run: it refuses an op that its table
    decomposes."""
    if not any(str(node.target) in importer.BATCH_NORMS or
               str(node.target) == importer.DROPOUT
               for node in gm.graph.nodes):
        return gm
    from torch._guards import detect_fake_mode
    from torch._dispatch.python import enable_python_dispatcher
    from torch.fx.experimental.proxy_tensor import make_fx
    fake_mode = detect_fake_mode(example_inputs)
    with enable_python_dispatcher(), \
            fake_mode if fake_mode is not None else contextlib.nullcontext():
        return make_fx(gm, decomposition_table={
            **_inductor_decompositions(), **_RANDOM_DECOMPOSITIONS})(
            *example_inputs)


def _inductor_ready(gm, example_inputs):
    """`gm` as inductor's own flow hands graphs to compile_fx_inner: the
    batch norms fusion left decomposed, and random ops (dropout's
    aten.rand in training) in inductor's forms, which its joint-graph
    passes make before partitioning (its lowering refuses aten.rand)."""
    from torch._guards import detect_fake_mode
    from torch._inductor.fx_passes.replace_random import replace_random_passes
    from torch._inductor.virtualized import V
    gm = _decomposed_leftovers(gm, example_inputs)
    fake_mode = detect_fake_mode(example_inputs)
    with V.set_fake_mode(fake_mode) if fake_mode else contextlib.nullcontext():
        if replace_random_passes(gm):
            gm.recompile()
    return gm


def _holding_libraries(compiler):
    """`compiler` with the libraries its graph's partitions load or find
    held loaded until its compiled function holds them (_compiled): an
    earlier graph that calls one of them too may die meanwhile (its
    cycles collected during this compile, after a recompile or
    torch._dynamo.reset()) and would unload it."""
    @functools.wraps(compiler)
    def holding(*args, **kwargs):
        _HELD.append([])
        try:
            return compiler(*args, **kwargs)
        finally:
            _release(_HELD.pop())
    return holding


@_holding_libraries
def _forward_compiler(options, direct, gm, example_inputs):
    global last_fused, last_options
    reports = _fuse_or_leave(gm, options, graph_index=_graphs_seen(False))
    last_fused = [report.members for report in reports if report.members]
    last_options = dict(options)
    if _census is not None:
        _census.append((False, reports))
    compiled = _compiled(options, gm, example_inputs)
    if _runs_as_graph_module(options, gm):
        direct.offer(gm, compiled)
    return compiled


class _DirectCall:
    """An inference graph's call without AOTAutograd's runtime wrapper
    where that wrapper would do nothing (the tiny layer's call on the
    build machine: 10.9 us instead of 12.7). The forward compiler offers
    its graph module, taken if AOTAutograd's metadata of the graph (the
    tracing context's) says no input is mutated outside the graph, no
    output aliases an input or another output, and no tokens, random
    states, subclasses or dynamic outputs need the wrapper; fusion_backend
    calls it only where dynamo's guards keep gradients and autocast off
    and the inputs apart (_call_directly)."""

    def __init__(self):
        self.forward = None
        self.arguments = None  # The graph's, AOTAutograd's flat inputs.

    def offer(self, gm, compiled):
        from torch._functorch._aot_autograd.schemas import (
            OutputType, SubclassCreationMeta)
        context = torch._guards.TracingContext.try_get()
        meta = context and context.fw_metadata
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        if meta is None or meta.is_train or \
                meta.num_mutated_inp_runtime_indices or \
                meta.num_intermediate_bases or meta.tokens or \
                meta.is_rng_op_functionalized or \
                meta.num_graphsafe_rng_states or meta.dynamic_outputs or \
                meta.grad_enabled_mutation is not None or \
                any(o.output_type != OutputType.non_alias
                    for o in meta.output_info) or \
                any(isinstance(m, SubclassCreationMeta) for m in
                    meta.subclass_inp_meta + meta.subclass_fw_graph_out_meta):
            return
        # The graph's generated forward itself: a lazy graph module's
        # forward recompiles if needed and calls the module (nn.Module's
        # __call__ and FX's wrapper: three more Python frames a call).
        if isinstance(gm, _LazyGraphModule):
            gm.real_recompile()
        forward = gm.forward
        mutated = list(meta.mutated_graph_handled_indices_seen_by_autograd)

        if mutated:
            def call(*args):
                # As AOTAutograd's wrapper: the inputs the graph writes are
                # seen as written.
                torch.autograd.graph.increment_version(
                    [args[i] for i in mutated])
                return forward(*args)
        else:
            call = functools.partial(forward)  # It takes the attribute.
        call.compiled = compiled  # Holds the libraries (_compiled).
        self.forward = call
        self.arguments = len(placeholders)


def _call_directly(direct, gm, example_inputs):
    """direct.forward, where fusion_backend may return it for `gm`'s
    compile: no gradient to record and no autocast (dynamo guards both),
    the graph's inputs dynamo's (no parameter of `gm` itself), and no two
    tensor inputs sharing memory (dynamo guards that too; AOTAutograd
    would merge them)."""
    tensors = [x for x in example_inputs if isinstance(x, torch.Tensor)]
    storages = {x.untyped_storage()._cdata for x in tensors}
    if direct.forward is None or torch.is_grad_enabled() or \
            torch._C._is_any_autocast_enabled() or \
            direct.arguments != len(example_inputs) or \
            next(gm.parameters(), None) is not None or \
            next(gm.buffers(), None) is not None or \
            len(storages) != len(tensors):
        return None
    return direct.forward


@_holding_libraries
def _backward_compiler(options, gm, example_inputs):
    """AOTAutograd's backward graph, its GEMMs' partitions fused as the
    forward's (elementwise ops of the forward's saved values pulled in:
    an activation's derivative in the epilogue of the GEMM whose gradient
    it scales), by the option "fuse_backward": "auto" (the default) those
    of GEMMs that fusion computes faster than PyTorch even alone (f32 in
    fp32 precision: 3xTF32, _runs_faster_alone; in bf16 "on" measured
    +0.5% on GPT-2's step and -1.4% on Llama's against inductor's
    backward, run 134), "on" every one with something to fuse, "off"
    none."""
    global last_fused_backward
    reports = _fuse_or_leave(gm, options, backward=True,
                             graph_index=_graphs_seen(True)) if _option(
        options, "fuse_backward", FUSE_BACKWARD) != "off" else []
    last_fused_backward = [report.members for report in reports
                           if report.members]
    if _census is not None:
        _census.append((True, reports))
    return _compiled(options, gm, example_inputs)


def _graphs_seen(backward):
    """How many forward (or backward) graphs explain() has seen so far."""
    return sum(1 for seen, _ in _census or () if seen == backward)


def _fuse_or_leave(gm, options, **fuse_options):
    """fuse_graph's reports on `gm`, or none, the graph left whole to
    PyTorch with a FusionBackendWarning, where fusion failed on it."""
    saved = copy.deepcopy(gm.graph)
    compile_only = options.get("compile_only", False)
    try:
        reports = fuse_graph(gm, options, compile_only=compile_only,
                             **fuse_options)
        if compile_only:  # The graph as PyTorch runs it.
            gm.graph = saved
            gm.recompile()
        return reports
    except Exception as error:  # noqa: BLE001 (fusion's bug: PyTorch runs it)
        warnings.warn(f"fusion left the whole graph to PyTorch: "
                      f"{type(error).__name__}: {error}",
                      FusionBackendWarning, stacklevel=3)
        gm.graph = saved
        gm.recompile()
        return []


def _compiled(options, gm, example_inputs):
    """The graph's call (_run_rest), holding the libraries it calls."""
    compiled = _run_rest(options, gm, example_inputs)
    keys = [node.args[0] for node in gm.graph.nodes
            if importer.op_name(node) in _RUNS]
    _CALLERS.update(keys)
    weakref.finalize(compiled, _release, keys)
    return compiled


def _release(keys):
    """Unloads the libraries that `keys` name and no compiled graph calls
    any more (that graph is gone: torch._dynamo.reset(), a recompile)."""
    _CALLERS.subtract(keys)
    for key in set(keys):
        if _CALLERS[key] <= 0 and key in _LIBRARIES:
            del _CALLERS[key]
            _LIBRARIES.pop(key)[0].close()


# Ops that compute nothing: items of fusion::run's results and views.
_FREE_OPS = importer.VIEWS | importer.TRANSPOSES | importer.EXPANDS


def _only_fusion_calls(gm):
    """Whether the graph computes nothing but fusion::run calls (and their
    arguments' copies and dropouts' draws, one ATen kernel each) and
    copies into its inputs (of a batch norm's count of batches, its
    increment): inductor would only wrap them, at its wrapper's host time
    a call (the H200's tiny layer: 80 us through inductor's wrapper,
    eager's 60; KernelBench 66's draw: 174 us)."""
    increments = {_increment(node) for node in gm.graph.nodes
                  if _is_state_copy(node)}
    return all(node.op != "call_function" or node.meta.get(_CALL_PART) or
               importer.op_name(node) in _FREE_OPS or _is_state_copy(node) or
               node in increments or _drawn_for_calls(node)
               for node in gm.graph.nodes)


def _drawn_for_calls(node):
    """Whether `node` is a draw that only fusion's calls read."""
    return _draws_uniform(node) and \
        all(user.meta.get(_CALL_PART) for user in node.users)


def _increment(copy):
    """The add of a number to the graph input that `copy` (a state copy)
    copies it into, a batch norm's count of batches, which nothing else
    reads; else None."""
    count, value = copy.args
    if importer.op_name(value) == "aten.add.Tensor" and \
            value.args[0] is count and len(value.users) == 1 and \
            isinstance(value.args[1], (int, float)) and not value.kwargs:
        return value
    return None


def _runs_as_graph_module(options, gm):
    """Whether the graph runs as its FX graph module (PyTorch's ATen
    kernels and fusion::run calls), not compiled by inductor."""
    return options["fallback"] != "inductor" or \
        options.get("compile_only") or _only_fusion_calls(gm)


def _run_rest(options, gm, example_inputs):
    """The graph's other ops as PyTorch's ATen kernels, or compiled by
    inductor (which calls fusion::run as an extern kernel) where any are
    left; when only compiling fusion's libraries, the graph as PyTorch
    runs it."""
    if not _runs_as_graph_module(options, gm):
        # The running statistics stay copied by the graph: inductor cannot
        # call fusion::run_updating, whose list of results it cannot
        # functionalize.
        from torch._inductor.compile_fx import compile_fx_inner
        saved = copy.deepcopy(gm.graph)
        try:
            return compile_fx_inner(_inductor_ready(gm, example_inputs),
                                    example_inputs)
        except Exception as error:  # noqa: BLE001 (inductor's: ATen runs it)
            # Inductor's assertions on the graph fusion hands it (model
            # fuzzer seed 1211: a group norm's backward, "unexpected
            # group"): the graph runs as PyTorch's ATen, its fusion calls
            # included, instead of failing the user's call.
            warnings.warn(f"inductor failed on a graph with fusion's calls, "
                          f"which runs as PyTorch's ATen: "
                          f"{type(error).__name__}: {error}",
                          FusionBackendWarning, stacklevel=2)
            gm.graph = saved
            gm.recompile()
            return make_boxed_func(gm.forward)
    _write_state_in_place(gm.graph)
    if options["fallback"] == "eager":
        _recompose_dropouts(gm.graph)
    _increment_in_place(gm)
    return make_boxed_func(gm.forward)


def _decomposed_dropouts(graph):
    """Each dropout's decomposition (_dropout: a draw, a comparison and two
    products) in `graph`, as (draw, keep, product, scaled), where the
    mask's readers (keep's) all follow the product."""
    aten = torch.ops.aten
    order = {node: index for index, node in enumerate(graph.nodes)}
    found = []
    for draw in graph.nodes:
        if not _draws_uniform(draw) or len(draw.users) != 1:
            continue
        (keep,) = draw.users
        products = [u for u in keep.users if u.target == aten.mul.Tensor and
                    u.args[0] is keep and len(u.users) == 1]
        if keep.target != aten.gt.Scalar or keep.args[0] is not draw or \
                len(products) != 1:
            continue
        (product,) = products
        (scaled,) = product.users
        # The dropout takes the product's place (its input may be computed
        # after the draw, a fusion call's result): the mask's other readers
        # must follow it.
        if scaled.target == aten.mul.Tensor and \
                scaled.args[0] is product and \
                isinstance(scaled.args[1], float) and \
                all(order[user] >= order[product] for user in keep.users):
            found.append((draw, keep, product, scaled))
    return found


def _recompose(graph, draw, keep, product, scaled):
    """Makes a dropout's decomposition aten.native_dropout again, its p the
    one the scale gives; the mask is its result 1 where anything reads
    it."""
    aten = torch.ops.aten
    with graph.inserting_before(product):
        dropout = graph.call_function(
            aten.native_dropout.default,
            (product.args[1], 1.0 - 1.0 / scaled.args[1], True))
        result = graph.call_function(operator.getitem, (dropout, 0))
        mask = graph.call_function(operator.getitem, (dropout, 1)) \
            if len(keep.users) > 1 else None
    result.meta = dict(scaled.meta)
    dropout.meta = dict(scaled.meta, val=(scaled.meta.get("val"),
                                          keep.meta.get("val")))
    scaled.replace_all_uses_with(result)
    if mask is not None:
        mask.meta = dict(keep.meta)
        keep.replace_all_uses_with(mask)
    for node in (scaled, product, keep, draw):
        graph.erase_node(node)


def _recompose_dropouts(graph):
    """Each dropout that no fusion call took (one before a GEMM, after an
    embedding), in a graph PyTorch runs: its decomposition (four kernels)
    becomes aten.native_dropout again, PyTorch's one kernel."""
    for dropout in _decomposed_dropouts(graph):
        _recompose(graph, *dropout)


def _recompose_maskless_dropouts(graph):
    """Each dropout whose mask nothing else reads (no backward saves it: an
    inference graph's) becomes aten.native_dropout again before
    partitioning, which the importer draws in the epilogue that applies it
    (`fusion.random_uniform` of a seed the call draws): neither PyTorch's
    draw nor its reading costs a pass over memory. Where no partition
    takes it, it is PyTorch's one kernel (or inductor's: its table
    decomposes it again, _decomposed_leftovers)."""
    for dropout in _decomposed_dropouts(graph):
        _, keep, _, _ = dropout
        if len(keep.users) == 1:
            _recompose(graph, *dropout)


def _increment_in_place(gm):
    """Makes each copy into a graph input of a number added to it (a batch
    norm's count of batches) one in-place add, for a graph that runs as
    PyTorch's ATen: one call instead of two (12 us of host time a call
    less on the H200)."""
    graph = gm.graph
    for copy in [node for node in graph.nodes if _is_state_copy(node)]:
        value = _increment(copy)
        if value is None:
            continue
        with graph.inserting_before(copy):
            increment = graph.call_function(torch.ops.aten.add_.Tensor,
                                            value.args)
        increment.meta = dict(copy.meta)
        graph.erase_node(copy)
        graph.erase_node(value)
    gm.recompile()


# Reductions whose backward hands the gradient to the input's elements
# equal to the result; and the training batch norm (kept whole for fusion
# under inductor's decompositions), whose backward normalizes its input
# again with the statistics the forward saved.
_COMPARED_REDUCTIONS = ("aten.amax.default", "aten.amin.default",
                        "aten.max.default", "aten.min.default")
_TRAINING_BATCH_NORM = "aten._native_batch_norm_legit_functional.default"
_SAVED_INPUTS = _COMPARED_REDUCTIONS + (_TRAINING_BATCH_NORM,)


def _min_cut_keeping_compared_values(joint_module, joint_inputs, **kwargs):
    """Inductor's min-cut partition of the joint graph, the inputs of
    maximum and minimum reductions and of training batch norms saved for
    the backward rather than recomputed there, where fusion computed them
    and inductor would compute them again a rounding apart:
    - a maximum's backward compares the input with the saved result and
      needs the value the forward reduced to the last bit: an ulp apart,
      no element matches and the gradient is 0/0 (model fuzzer seed 1164:
      a bf16 layer norm's amax);
    - a batch norm's backward normalizes the input with the saved mean, so
      that the input's gradient sums to zero over the batch; with the mean
      of other values it does not, and what reads that sum (a bias added
      before the norm) gets a gradient of the input gradient's size where
      it is a rounding error (seed 1816: 780 times eager's error)."""
    from torch._functorch.partitioners import \
        min_cut_rematerialization_partition
    from torch.utils.checkpoint import CheckpointPolicy
    for node in joint_module.graph.nodes:
        if importer.op_name(node) in _SAVED_INPUTS:
            node.args[0].meta["recompute"] = CheckpointPolicy.MUST_SAVE
    return min_cut_rematerialization_partition(
        joint_module, joint_inputs, compiler="inductor", **kwargs)


def _traced_as_on_target(options, device, decompositions):
    """Where CPU tensors are compiled for a GPU target (compile_only: the
    libraries prepared here for a GPU machine), the graph traced with the
    GPU's metadata, so that its programs are the GPU's graphs'."""
    if device.type == "cpu" and _target(options, device) != "cpu":
        return gpu_metadata.traced_as_on_gpus(decompositions)
    return contextlib.nullcontext()


@register_backend(name="fusion")
def fusion_backend(gm, example_inputs, options=None, mode=None):
    """The dynamo backend registered as "fusion"."""
    if mode not in (None, "default"):
        raise UnsupportedOperationError(
            f"torch.compile mode {mode!r} with backend 'fusion': capture the "
            f"compiled model in a CUDA graph (torch.cuda.graph) instead")
    options = dict(options or {})
    unknown = set(options) - set(PACKAGE_OPTIONS) - set(_BACKEND_OPTIONS)
    if unknown:
        raise UnsupportedOperationError(
            f"unknown fusion backend options {sorted(unknown)} (known: "
            f"{', '.join(PACKAGE_OPTIONS + _BACKEND_OPTIONS)})")
    for name, values in (("group_gemms", GROUP_GEMMS),
                         ("fuse_backward", FUSE_BACKWARD),
                         ("k_major_copies", K_MAJOR_COPIES)):
        if _option(options, name, values) not in values:
            raise UnsupportedOperationError(
                f"fusion backend option {name}={options[name]!r}: "
                f"{', '.join(values)}")
    device = _inputs_device(example_inputs)
    options.setdefault("fallback", _default_fallback(options, device))
    if options["fallback"] not in ("eager", "inductor"):
        raise UnsupportedOperationError(
            f"fusion backend option fallback={options['fallback']!r}: "
            f"'inductor' (the default for GPU targets) or 'eager' (for "
            f"the CPU target)")
    if not options.get("precision"):
        # Resolved once per graph, so that the cache key and
        # _runs_faster_alone see it; dynamo guards on the setting, so a
        # change compiles the graph again.
        options["precision"] = _default_precision(options, device)
    _check_options(options, device)
    # Before AOTAutograd traces SDPA: a mask it sees sends it to the math
    # path.
    graph_rewrites.simplify_constant_attention_masks(gm)
    assumptions = graph_rewrites.share_constant_masks(gm)
    target = _target(options, device)
    if device.type == "meta" and target != "cpu":
        gpu_metadata.attention_as_on_gpus(gm, target)
    partition = {}
    if options["fallback"] == "inductor":
        # Inductor's partitioner: the backward recomputes what inductor
        # fuses into its kernels rather than keeping it, so fewer of the
        # fused op's values are kept as activations.
        partition["partition_fn"] = _min_cut_keeping_compared_values
    # Mutated buffers (running statistics) are copied into in the graph, as
    # inductor's flow has them, so that the library writes them in place
    # (_write_state_in_place).
    direct = _DirectCall()
    decompositions = _decompositions(options["fallback"])
    with _traced_as_on_target(options, device, decompositions):
        compiled = aot_autograd(
            fw_compiler=functools.partial(_forward_compiler, options, direct),
            bw_compiler=functools.partial(_backward_compiler, options),
            decompositions=decompositions,
            keep_inference_input_mutations=True,
            **partition)(gm, example_inputs)
    compiled = _call_directly(direct, gm, example_inputs) or compiled
    return assumptions.guarded(compiled) if assumptions else compiled


def _backward_from(outputs):
    """A backward pass from the sum of `outputs`' tensors (nested in
    tuples, lists, dicts or a transformers ModelOutput) that require
    gradients."""
    tensors = [t for t in pytree.tree_leaves(outputs)
               if isinstance(t, torch.Tensor) and t.requires_grad]
    if not tensors:
        raise UnsupportedOperationError(
            "explain(backward=True): no output requires gradients (call the "
            "model with gradients enabled and parameters or inputs that "
            "require them)")
    sum(t.float().sum() for t in tensors).backward()


def explain(model, *args, options=None, backward=False, **kwargs):
    """What `torch.compile(model, backend="fusion", options=options)` fuses
    when called on `args` and `kwargs` (as the model is: its train/eval
    mode, gradients enabled or not): every GEMM of its forward graphs, the
    ops fused with it, and where and why fusion stopped (a Census; print
    it). With `backward`, also those of the backward graphs, by a backward
    pass from the sum of the outputs that require gradients (which writes
    the parameters' .grad, as a training step's backward would). The model
    runs once; dynamo's caches are reset first, as torch._dynamo.explain
    does."""
    global _census
    torch._dynamo.reset()
    _census = []
    try:
        outputs = torch.compile(model, backend="fusion", options=options)(
            *args, **kwargs)
        if backward:
            _backward_from(outputs)
        census = Census(report for _, graph in _census for report in graph)
        if _census:
            census.precision = last_options["precision"]
        return census
    finally:
        _census = None
        torch._dynamo.reset()

