"""Rewrites of the graph dynamo hands the backend, before AOTAutograd traces
it (so they hold for the inductor and eager fallbacks alike), and of the
ATen graphs it hands the forward compiler.

`simplify_constant_attention_masks`: under torch.compile, transformers
cannot look at a mask's values, so it builds BERT's and ViT's all-true
mask in the graph and passes it to scaled_dot_product_attention, which
then takes its math path instead of a fused kernel, 2x slower than eager
(docs/known-issues.md); GPT-2's and Llama's causal mask likewise, where
eager passes `is_causal=True`. A mask the graph computes from constants
alone is evaluated here; all true (boolean) or all zero (additive) is no
mask, and the lower triangle of each [L, S] (top left, as `is_causal`'s)
is `is_causal=True`.

`share_constant_masks`: under DDP, dynamo's DDPOptimizer splits the graph
into pieces at gradient buckets and compiles each alone; the first piece
builds the mask and passes it to the others, which see it as an input.
The first piece returns its constant mask as a buffer of its own, and the
others take an input that is that buffer (checked each call, else they
run as the graph is) as the constant it holds.

`rewrite_einsum_gemms`: an einsum that is a linear layer reaches the ATen
graph as a batched product of a batch of one between permutes and views;
as an `mm` of the input's rows and the weight it fuses like `F.linear`.

`join_concatenated_gemms`: sibling linear layers of one input whose
outputs the model concatenates along the features (`torch.cat([q(x),
k(x), v(x)], -1)`) are one linear layer of the concatenated weights and
biases, which fusion's GEMM reads in place (`fusion.concat`): the GEMM
writes the concatenation, and what follows the `cat` fuses into it."""
import math
import operator
import weakref

import torch
import torch._guards
import torch.fx
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily
from torch.fx.experimental.symbolic_shapes import statically_known_true
from torch.fx.node import map_aggregate

from . import importer
from .importer.nodes import concat_operands

# The first is F.scaled_dot_product_attention, as dynamo records it.
_SDPA = (torch._C._nn.scaled_dot_product_attention,
         torch.ops.aten.scaled_dot_product_attention.default)
# Ops that only repeat their first operand's values: transformers expands
# its mask to the batch, a graph input where the batch is dynamic.
_BROADCASTS = ("expand", "expand_as", "broadcast_to")
# Ops whose values are not a function of their operands (by name, so that
# the method, function and ATen spellings all match).
_RANDOM = ("rand", "dropout", "bernoulli", "multinomial", "normal",
           "poisson", "uniform", "exponential", "cauchy", "geometric",
           "empty", "seed")
_IN_PLACE = {operator.setitem, operator.delitem, operator.iadd,
             operator.isub, operator.imul, operator.itruediv,
             operator.ifloordiv, operator.imod, operator.ipow,
             operator.imatmul, operator.iand, operator.ior, operator.ixor,
             operator.ilshift, operator.irshift}


def simplify_constant_attention_masks(gm):
    """Passes `attn_mask=None` to each scaled_dot_product_attention of `gm`
    whose mask the graph computes from constants alone (no graph input,
    attribute, random or in-place op) and which is all true or all zero,
    or, with `is_causal=True`, the causal one; each broadcast within the
    attention's [..., L, S]. Returns how many it simplified; on any doubt
    or error a call is left as it is."""
    simplified, verdicts, unused = 0, {}, set()
    for node, mask in _masked_attentions(gm):
        try:
            if mask not in verdicts:
                verdicts[mask] = _constant_mask_kind(gm, mask)
            kind, nodes = verdicts[mask]
            if kind is None or not _droppable(node, mask, kind):
                continue
        except Exception:  # The model must run: keep the mask.
            continue
        _drop_mask(node, kind)
        unused |= nodes
        simplified += 1
    if simplified:
        # Only the masks' own nodes: the graph's DCE counts method calls as
        # pure, in-place ones too (x.add_(1) with no user).
        for node in reversed(list(gm.graph.nodes)):
            if node in unused and not node.users:
                gm.graph.erase_node(node)
        gm.recompile()
    return simplified


# The constant masks pieces of a graph return (share_constant_masks):
# (kind, the buffer, its version then), the buffer's piece keeping it.
_SHARED_MASKS = []


class Assumptions:
    """What a piece's rewrite took for granted: buffers it returns unchanged
    since (version counters), and inputs that are such buffers of a kind;
    `guarded(compiled)` runs `compiled` where they hold, else the graph as
    it was."""

    def __init__(self, original):
        self.original = original
        self.buffers = []  # (buffer, version)
        self.inputs = []  # (index, kind)

    def hold(self, args):
        return all(b._version == v for b, v in self.buffers) and \
            all(_is_shared_mask(args[i], kind) for i, kind in self.inputs)

    def guarded(self, compiled):
        def call(*args):
            fake = next((a for a in args if isinstance(a, FakeTensor)), None)
            if fake is not None:
                # DDPOptimizer's trace of the piece's outputs, which must
                # be fake: a returned buffer is real.
                return map_aggregate(compiled(*args), lambda value: (
                    fake.fake_mode.from_tensor(value)
                    if isinstance(value, torch.Tensor) and
                    not isinstance(value, FakeTensor) else value))
            return (compiled if self.hold(args) else self.original)(*args)
        return call


def _is_shared_mask(value, kind):
    """Whether `value` is a live shared mask of `kind`, unchanged (the same
    elements, shape, strides, type and device): its values are then the
    kind's."""
    for shared_kind, ref, version in _SHARED_MASKS:
        mask = ref()
        if mask is not None and shared_kind == kind and \
                mask._version == version and \
                isinstance(value, torch.Tensor) and \
                value.data_ptr() == mask.data_ptr() and \
                value.shape == mask.shape and \
                value.stride() == mask.stride() and \
                value.dtype == mask.dtype and value.device == mask.device:
            return True
    return False


def _in_ddp_piece():
    context = torch._guards.TracingContext.try_get()
    return context is not None and context.ddp_optimizer_ctx is not None


def share_constant_masks(gm):
    """In a piece of DDPOptimizer's split (else nothing): each output the
    piece computes from constants that is a mask of a kind
    _constant_mask_kind knows becomes a buffer of `gm` holding its value,
    shared (_SHARED_MASKS); each scaled_dot_product_attention whose mask is
    an input that the traced shape and type allow to be a shared mask of a
    kind drops it as simplify_constant_attention_masks does. Returns the
    Assumptions to guard the compiled piece with, or None where it made
    none."""
    if not _in_ddp_piece():
        return None
    assumptions = Assumptions(_copy(gm))
    _share_returned_masks(gm, assumptions)
    _drop_passed_masks(gm, assumptions)
    if not assumptions.buffers and not assumptions.inputs:
        return None
    gm.recompile()
    return assumptions


def _copy(gm):
    """`gm` with a copy of its graph, sharing its parameters and buffers."""
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(gm.graph, {}))
    return torch.fx.GraphModule(gm, graph)


def _share_returned_masks(gm, assumptions):
    output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    unused = set()
    for node in list(dict.fromkeys(output.all_input_nodes)):
        if node.op not in ("call_function", "call_method"):
            continue
        try:
            kind, nodes = _constant_mask_kind(gm, node)
            if kind is None:
                continue
            value = _evaluate(gm, nodes, node)
            traced = _value(node)
            if (value.shape, value.stride(), value.dtype, value.device) != \
                    (traced.shape, traced.stride(), traced.dtype,
                     traced.device):
                continue
        except Exception:  # The model must run: keep the mask.
            continue
        name = f"_fusion_shared_mask_{len(assumptions.buffers)}"
        gm.register_buffer(name, value)
        # AOTAutograd takes the source of each buffer of a dynamo graph.
        sources = getattr(gm, "_param_name_to_source", None)
        if sources is not None:
            from torch._dynamo.source import ConstantSource
            sources[name] = ConstantSource(f"__fusion_mask_{id(value)}")
        with gm.graph.inserting_before(output):
            constant = gm.graph.get_attr(name)
        constant.meta = dict(node.meta)
        output.replace_input_with(node, constant)
        _SHARED_MASKS[:] = [m for m in _SHARED_MASKS if m[1]() is not None]
        _SHARED_MASKS.append((kind, weakref.ref(value), value._version))
        assumptions.buffers.append((value, value._version))
        unused |= nodes
    for node in reversed(list(gm.graph.nodes)):
        if node in unused and not node.users:
            gm.graph.erase_node(node)


def _drop_passed_masks(gm, assumptions):
    inputs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node, mask in _masked_attentions(gm):
        if mask not in inputs:
            continue
        try:
            traced = _value(mask)
            kinds = {kind for kind, ref, _ in _SHARED_MASKS
                     if ref() is not None and
                     (ref().shape, ref().dtype, ref().device) ==
                     (traced.shape, traced.dtype, traced.device)}
            if len(kinds) != 1:
                continue
            kind, = kinds
            if not _droppable(node, mask, kind):
                continue
        except Exception:  # The model must run: keep the mask.
            continue
        _drop_mask(node, kind)
        assumptions.inputs.append((inputs.index(mask), kind))


def _masked_attentions(gm):
    """(call, its mask) of each scaled_dot_product_attention of `gm` that
    is given a mask the graph computes or takes."""
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target in _SDPA:
            mask = _argument(node, 3, "attn_mask")
            if isinstance(mask, torch.fx.Node):
                yield node, mask


def _drop_mask(attention, kind):
    """No mask for `attention`; is_causal for a causal one."""
    _set_argument(attention, 3, "attn_mask", None)
    if kind == "causal":
        _set_argument(attention, 5, "is_causal", True)


def _argument(node, index, name, default=None):
    if name in node.kwargs:
        return node.kwargs[name]
    return node.args[index] if len(node.args) > index else default


def _set_argument(node, index, name, value):
    if name in node.kwargs or len(node.args) <= index:
        node.update_kwarg(name, value)
    else:
        node.update_arg(index, value)


def _value(node):
    """The node's tensor as dynamo traced it (a fake tensor)."""
    value = node.meta.get("example_value", node.meta.get("val"))
    if not isinstance(value, torch.Tensor):
        raise ValueError(f"no traced value for {node}")
    return value


def _droppable(attention, mask, kind):
    """Whether dropping the mask (`kind` "causal": for is_causal) leaves
    eager's result: no error eager would raise (is_causal with a mask, a
    float mask of another dtype), no shape the mask's broadcast gives the
    output, and a causal mask's [L, S] whole (its value was checked at
    those sizes)."""
    query = _value(_argument(attention, 0, "query"))
    key = _value(_argument(attention, 1, "key"))
    traced = _value(mask)
    if _argument(attention, 5, "is_causal", False) is not False or \
            traced.dtype not in (torch.bool, query.dtype):
        return False
    scores = (*query.shape[:-1], key.shape[-2])
    if traced.dim() > min(4, len(scores)) or \
            kind == "causal" and traced.dim() < 2:
        return False
    whole = 2 if kind == "causal" else 0
    return all((i >= whole and statically_known_true(m == 1)) or
               statically_known_true(m == s)
               for i, (m, s) in enumerate(zip(reversed(traced.shape),
                                              reversed(scores))))


def _constant_mask_kind(gm, mask):
    """("none", nodes) if the graph computes the mask from constants alone
    and it is all true or all zero, ("causal", nodes) if it is the lower
    triangle of each [L, S] (true, or 0 where the rest is -inf), where
    `nodes` are the mask's (its broadcasts and what they broadcast); else
    (None, None)."""
    chain, base = [mask], mask
    while (base.op == "call_method" and base.target in _BROADCASTS or
           base.op == "call_function" and base.target is torch.broadcast_to):
        base = base.args[0]
        if not isinstance(base, torch.fx.Node):
            return None, None
        chain.append(base)
    nodes, stack = set(), [base]
    while stack:
        node = stack.pop()
        if node in nodes:
            continue
        # Inputs and attributes may change between calls; modules are
        # opaque.
        if node.op not in ("call_function", "call_method") or \
                _random(node) or _mutates(node):
            return None, None
        nodes.add(node)
        stack.extend(node.all_input_nodes)
    # A mutation after the mask is computed (of a view of it) counts too.
    if any(_mutates(user) for node in nodes.union(chain)
           for user in node.users):
        return None, None
    value = _evaluate(gm, nodes, base)
    traced = _value(mask)
    if not isinstance(value, torch.Tensor) or value.dtype != traced.dtype:
        return None, None
    if value.dtype == torch.bool:
        allowed = value
    elif value.is_floating_point() and \
            bool(((value == 0) | (value == float("-inf"))).all()):
        allowed = value == 0
    else:
        return None, None
    if bool(allowed.all()):
        return "none", nodes.union(chain)
    # Causal as the attention reads it: [L, S] not broadcast from a row or
    # a column (an expanded row of a triangle is no triangle).
    if value.dim() >= 2 and traced.dim() >= 2 and \
            tuple(value.shape[-2:]) == tuple(traced.shape[-2:]):
        rows, columns = value.shape[-2:]
        causal = torch.ones(rows, columns, dtype=torch.bool).tril()
        if bool((allowed == causal.to(allowed.device)).all()):
            return "causal", nodes.union(chain)
    return None, None


def _name(node):
    if isinstance(node.target, str):
        return node.target
    return getattr(node.target, "__name__", str(node.target))


def _random(node):
    target = node.target
    if isinstance(target, torch._ops.OpOverload) and \
            torch.Tag.nondeterministic_seeded in target.tags:
        return True
    return any(word in _name(node).lower() for word in _RANDOM)


def _mutates(node):
    target, name = node.target, _name(node)
    if isinstance(target, torch._ops.OpOverload):
        return target._schema.is_mutable
    if target in _IN_PLACE or "out" in node.kwargs:
        return True
    if getattr(target, "__module__", None) in ("operator", "_operator"):
        return False  # operator.and_, or_: the in-place ones are _IN_PLACE
    return (name in ("__setitem__", "__delitem__") or
            name.startswith("__i") or
            name.endswith("_") and not name.endswith("__"))


def _evaluate(gm, nodes, result):
    """Runs `nodes` (in graph order) for `result`'s value, on the devices
    the graph names where this machine has them, else on the CPU (a
    compile without the GPU, or from meta tensors, which hold no values)."""
    interpreter = torch.fx.Interpreter(gm, garbage_collect_values=False)
    with unset_fake_temporarily(), torch.no_grad():
        for node in gm.graph.nodes:
            if node not in nodes:
                continue
            args, kwargs = interpreter.fetch_args_kwargs_from_env(node)
            kwargs = dict(kwargs)
            if kwargs.get("device") is not None:
                kwargs["device"] = torch.device(kwargs["device"])
            args, kwargs = map_aggregate((args, kwargs), _usable_device)
            interpreter.env[node] = getattr(interpreter, node.op)(
                node.target, args, kwargs)
    return interpreter.env[result]


def _usable_device(value):
    if not isinstance(value, torch.device) or value.type == "cpu":
        return value
    backend = getattr(torch, value.type, None)
    if backend is not None and backend.is_available():
        return value
    return torch.device("cpu")


# Ops that only move their first operand's elements, whose effect on a
# matrix _replay_layout works out on indices.
_LAYOUT_OPS = importer.VIEWS | importer.TRANSPOSES | {
    "aten.transpose.int", "aten.clone.default"}


def _op_name(node):
    return importer.op_name(node) if node.op == "call_function" else ""


def _static_shape(node):
    value = importer.tensor_meta(node)
    if value is None or not all(isinstance(d, int) for d in value.shape):
        return None
    return tuple(value.shape)


def _layout_source(node):
    """The tensor `node` moves the elements of, through layout ops, and
    those ops (source first)."""
    chain = []
    while _op_name(node) in _LAYOUT_OPS and \
            isinstance(node.args[0], torch.fx.Node):
        chain.append(node)
        node = node.args[0]
    return node, chain[::-1]


def _replay_layout(chain, shape):
    """Where each element of the result of `chain` comes from: the ops run
    on the indices of a tensor of `shape` (outside the fake mode)."""
    value = torch.arange(math.prod(shape)).reshape(shape)
    for node in chain:
        value = node.target(value, *node.args[1:], **node.kwargs)
    return value


def rewrite_einsum_gemms(gm):
    """Makes each batched product of a batch of one (`einsum("bsk,nk->bsn",
    x, w)` and its kin: PyTorch decomposes an einsum into `bmm` between
    permutes and views) an `mm` of x's rows and the weight, the form of
    `x @ w.t()` (or `x @ w`) that fusion's partitioner takes as a linear
    layer, with a view of the result where the product's users read it.
    Only where the operands' index maps prove it: x's rows in order, the
    weight itself or its transpose. Returns how many it rewrote."""
    rewritten = 0
    for bmm in list(gm.graph.nodes):
        if _op_name(bmm) != "aten.bmm.default":
            continue
        try:
            replaced = _bmm_as_mm(gm.graph, bmm)
        except Exception:  # The graph must run: leave the product as it is.
            continue
        rewritten += bool(replaced)
        # The product and the layout ops only it read, now unread.
        for node in reversed(list(gm.graph.nodes)):
            if node in replaced and not node.users:
                gm.graph.erase_node(node)
    if rewritten:
        gm.recompile()
    return rewritten


def _weight_transposed(x_chain, x_shape, w_chain, w_shape, mkn):
    """Whether the product's second operand is the weight transposed
    (True) or as stored (False), its first x's rows in order; None where
    the index maps show another layout."""
    m, k, n = mkn
    with unset_fake_temporarily():
        rows = torch.arange(m * k).reshape(1, m, k)
        if not torch.equal(_replay_layout(x_chain, x_shape), rows):
            return None
        weight = _replay_layout(w_chain, w_shape)
        indices = torch.arange(k * n)
        if w_shape == (n, k) and torch.equal(
                weight, indices.reshape(n, k).t().unsqueeze(0)):
            return True
        if w_shape == (k, n) and torch.equal(
                weight, indices.reshape(k, n).unsqueeze(0)):
            return False
    return None


def _bmm_as_mm(graph, bmm):
    """The nodes `bmm` no longer needs once replaced (an empty set where
    it is left as it is)."""
    a, b = bmm.args
    shapes = [_static_shape(n) for n in (a, b, bmm)]
    if None in shapes or shapes[2][0] != 1:
        return set()
    (_, m, k), (_, _, n) = shapes[0], shapes[1]
    x, x_chain = _layout_source(a)
    w, w_chain = _layout_source(b)
    x_shape, w_shape = _static_shape(x), _static_shape(w)
    if x_shape is None or w_shape is None or len(w_shape) != 2 or \
            x_shape[-1] != k:
        return set()
    transposed = _weight_transposed(x_chain, x_shape, w_chain, w_shape,
                                    (m, k, n))
    if transposed is None:
        return set()
    aten = torch.ops.aten
    with graph.inserting_before(bmm):
        # A reshape: x's rows are in order, but x may be strided.
        matrix = graph.call_function(aten.reshape.default, (x, [m, k]))
        operand = graph.call_function(aten.permute.default, (w, [1, 0])) \
            if transposed else w
        product = graph.call_function(aten.mm.default, (matrix, operand))
        result = graph.call_function(aten.view.default, (product, [1, m, n]))
    for node, value in ((matrix, (m, k)), (product, (m, n)),
                        (result, (1, m, n))):
        node.meta = {"val": bmm.meta["val"].new_empty(value),
                     "stack_trace": bmm.meta.get("stack_trace")}
    if transposed:
        operand.meta = {"val": w.meta["val"].t()}
    bmm.replace_all_uses_with(result)
    return {bmm, *x_chain, *w_chain, *_collapse_reshapes(graph, result,
                                                         product)}


def _collapse_reshapes(graph, start, product):
    """Replaces the longest run of layout ops after `start` (each its
    predecessor's only user) that only reshapes the [M, N] `product` in
    row-major order by one view of it: the decomposed einsum's views and
    permutes of size-1 dimensions, which the importer does not read
    through. Returns the ops it replaced."""
    chain, node = [], start
    while len(node.users) == 1:
        user = next(iter(node.users))
        if _op_name(user) not in _LAYOUT_OPS or user.args[0] is not node:
            break
        chain.append(user)
        node = user
    m, n = _static_shape(product)
    for end in range(len(chain), 0, -1):
        last = chain[end - 1]
        shape = _static_shape(last)
        with unset_fake_temporarily():
            if shape is None or not torch.equal(
                    _replay_layout(chain[:end], (1, m, n)),
                    torch.arange(m * n).reshape(shape)):
                continue
        with graph.inserting_before(last):
            view = graph.call_function(torch.ops.aten.view.default,
                                       (product, list(shape)))
        view.meta = dict(last.meta)
        last.replace_all_uses_with(view)
        return [start] + chain[:end]
    return []


# The meta key of a GEMM that join_concatenated_gemms made: the names of
# the GEMMs it joined.
JOINED = "fusion_joined"
# The ops that give a GEMM's [M, N] result back the leading dimensions of
# an input of rank > 2 (and x its rows).
_ROW_RESHAPES = ("aten.view.default", "aten._unsafe_view.default",
                 "aten.reshape.default")


def join_concatenated_gemms(gm, may_join=lambda gemms: True):
    """Makes each concatenation along the features of linear layers' outputs
    (addmm or mm of one x, parameters' weights of one layout, all with
    biases or none, nothing scaled; each output read by the `cat` alone,
    through the view that restores x's leading dimensions) one GEMM of the
    weights and biases concatenated, where `may_join(gemms)`. Returns how
    many it joined."""
    joined = 0
    for cat in list(gm.graph.nodes):
        if _op_name(cat) != "aten.cat.default":
            continue
        parts = _concatenated_gemms(cat)
        if parts is not None and may_join([part.gemm for part in parts]):
            joined += _join(gm.graph, cat, parts)
    if joined:
        gm.recompile()
    return joined


class _GemmPart:
    """One linear layer's output among a concatenation's parts."""

    def __init__(self, gemm, view, x, weight, bias, layout):
        self.gemm, self.view, self.x = gemm, view, x
        self.weight, self.bias, self.layout = weight, bias, layout

    def key(self):
        """What the parts of one GEMM share: x (its view's source and
        arguments), the weights' layout, whether they have biases, and the
        view of the result's leading dimensions."""
        x = (self.x.args[0], repr(self.x.args[1:])) \
            if _op_name(self.x) in _ROW_RESHAPES else (self.x, None)
        view = repr(self.view.args[1][:-1]) if self.view is not None \
            else None
        return x, self.layout, self.bias is None, view, \
            self.weight.meta["val"].dtype


def _concatenated_gemms(cat):
    """The _GemmParts of `cat`, a concatenation along the last dimension,
    or None where any part is something else or they differ in what one
    GEMM shares."""
    parts, dim = concat_operands(cat)
    meta = importer.tensor_meta(cat)
    if meta is None or len(parts) < 2 or dim % meta.dim() != meta.dim() - 1:
        return None
    found = []
    for part in parts:
        found.append(_gemm_part(part, meta.dim()))
        if found[-1] is None or found[-1].key() != found[0].key() or \
                part in parts[:len(found) - 1]:
            return None
    return found


def _gemm_part(node, rank):
    view = None
    if rank > 2:
        if _op_name(node) not in _ROW_RESHAPES or len(node.users) != 1:
            return None
        view, node = node, node.args[0]
    layer = importer.parameter_linear(node)
    if layer is None or len(node.users) != 1:
        return None
    return _GemmPart(node, view, *layer)


def _join(graph, cat, parts):
    """Replaces `cat` by the GEMM of its parts' weights; returns whether it
    did (the graph is left as it was where a value cannot be computed on
    the fake tensors)."""
    aten = torch.ops.aten
    first = parts[0]
    added = []

    def add(op, *args):
        value = op(*map_aggregate(
            args, lambda a: a.meta["val"] if isinstance(a, torch.fx.Node)
            else a))
        added.append(graph.call_function(op, args))
        added[-1].meta = {"val": value,
                          "stack_trace": cat.meta.get("stack_trace")}
        return added[-1]

    try:
        with graph.inserting_before(cat):
            weight = add(aten.cat.default, [p.weight for p in parts],
                         0 if first.layout == "out_in" else 1)
            if first.layout == "out_in":
                weight = add(aten.permute.default, weight, [1, 0])
            if first.bias is None:
                result = add(aten.mm.default, first.x, weight)
            else:
                result = add(aten.addmm.default,
                             add(aten.cat.default, [p.bias for p in parts]),
                             first.x, weight)
            if first.view is not None:
                shape = list(first.view.args[1])
                shape[-1] = importer.tensor_meta(cat).shape[-1]
                result = add(aten.view.default, result, shape)
    except Exception:  # noqa: BLE001 (the graph must run: leave the cat)
        for node in reversed(added):
            graph.erase_node(node)
        return False
    cat.replace_all_uses_with(result)
    gemm = result.args[0] if first.view is not None else result
    gemm.meta[JOINED] = [p.gemm.name for p in parts]
    # The parts' nodes, now unread (x's views and the weights' transposes
    # may have other readers).
    replaced = dict.fromkeys([cat] + [n for p in parts for n in (
        p.view, p.gemm, p.gemm.args[-1], p.x) if n is not None])
    for node in replaced:
        if not node.users and node.op == "call_function":
            graph.erase_node(node)
    return True
