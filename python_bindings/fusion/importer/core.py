"""The importer's state and what every op's import shares: arguments,
types, chains and their operands, materializing, the GEMM, results, and
the walk over the nodes."""
import operator

import torch

from ..dtypes import ELEMENT_TYPES
from ..errors import UnsupportedOperationError
from ..formulas import ELEMENTWISE, ROUND_TO_ELEMENT
from ..program import Program
from .expressions import ROOT, Chain, Expr, Vectors, row_leaves
from .nodes import (BATCH_NORMS, COLUMN_SLICES, CONCATS, CONSTANTS,
                    DROPOUT, EXPANDS, FLOAT_CONVERSIONS, GEMMS,
                    NORMALIZATIONS, POOLS, REDUCTIONS, STRUCTURAL,
                    TRANSPOSES, VIEWS,
                    concat_operands, gemm_scales, int_size,
                    is_input_concat, linear_operands, location, op_name,
                    row_split, static_size, tensor_meta, unsupported, where)


class ImporterCore:
    """The importer's state, and the steps every op's import takes; the
    ops by kind are the mixins of `Importer` (fusion/importer/__init__.py)."""

    def __init__(self, nodes, inputs, outputs, numbers=None):
        self.nodes = list(nodes)
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.program = Program()
        # fx node (or (node, index)) -> value; `numbers`: nodes whose value
        # is a number (constants the forward made), read as numbers are.
        self.values = dict(numbers or {})
        self.result_shapes = []   # the library's result shapes, in order
        self.element = None
        # Inputs concatenated into a GEMM's bias (vectors, never single
        # values to broadcast), and the concatenations imported.
        self._concat_parts = set()
        self._concats = set()
        self.weights = self._weights()
        # The program values of single values (0-d or (1,) inputs), and of
        # the vectors of (1, ..., 1, features) inputs.
        self._singles = set()
        self._row_broadcast_vectors = set()
        self._expanded = {}       # expand node -> shape before expanding
        self._materialized = {}   # id(chain) -> (chain, program value)
        self._inlined = {}        # id(chain) -> (chain, expression)
        # Linear layer results: program value -> (x, weight node, bias node
        # or None, first row of the weight's input that they take).
        self._linears = {}
        # Those whose weight is stored [in_features, out_features].
        self._in_out_linears = set()
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
        # The seed argument of the program's draws (dropout's), made at the
        # first, the draws' streams so far, and the draws.
        self._draws = set()
        self.seed = None
        self.streams = 0

    def _weights(self):
        """Inputs used as a GEMM's weight (so of static shape), the parts
        of a concatenated one included."""
        weights = set()
        for node in self.nodes:
            gemm = self._gemm_operands(node)
            if gemm is None:
                continue
            _, weight, bias, _ = gemm
            weights.add(weight)
            if is_input_concat(weight):
                weights.update(concat_operands(weight)[0])
            if is_input_concat(bias):
                self._concat_parts.update(concat_operands(bias)[0])
        return weights

    def _gemm_operands(self, node):
        """(x, weight, bias or None, the weight's layout: "out_in", [N, K],
        or "in_out", [K, N]) of a GEMM node, else None."""
        if op_name(node) == "aten.linear.default":
            return node.args[0], node.args[1], \
                node.args[2] if len(node.args) > 2 else None, "out_in"
        if op_name(node) not in ("aten.addmm.default", "aten.mm.default"):
            return None
        x, operand, bias, layout = linear_operands(node)
        if layout == "in_out":
            return x, operand, bias, layout
        if operand not in self.nodes:
            unsupported(node, "the GEMM's transposed weight is computed "
                        "outside the partition")
        return x, operand.args[0], bias, layout

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
        broadcast = self._broadcast_over_rows(node, meta)
        if meta.numel() == 1 and (meta.dim() <= 1 or broadcast) and \
                node not in self.weights and node not in self._concat_parts:
            # A 0-d or (1,) tensor (or a (1, 1) one that elementwise ops
            # broadcast over their rows): a [1] column operand, which the
            # ops that read it broadcast over their features.
            value = self.program.argument([1], element)
            self._singles.add(value)
            self.values[node] = value
            return
        if broadcast:
            # A (1, ..., 1, features) tensor that elementwise ops broadcast
            # over their rows: a per-column vector (never sliced: callers
            # slice vectors' first dimension).
            value = self.program.argument([static_size(meta.shape[-1])],
                                          element)
            self._row_broadcast_vectors.add(value)
            self.values[node] = value
            return
        if any(int_size(d) == 0 for d in meta.shape[1:]) or \
                (node in self.weights and 0 in meta.shape):
            raise UnsupportedOperationError(
                f"input {node.name} has shape {tuple(meta.shape)}, with no "
                f"features: PyTorch computes its empty result "
                f"({where(node)})")
        if node in self.weights and meta.dim() != 2:
            raise UnsupportedOperationError(
                f"weight {node.name} has shape {tuple(meta.shape)}; a "
                f"GEMM's weight is a matrix ({where(node)})")
        # [..., features]: a matrix whose rows are the leading dimensions
        # flattened (free at run time), which the caller passes as
        # [rows, features] (a view, or a copy where the strides are not
        # those of a contiguous tensor).
        shape = [static_size(meta.shape[-1])]
        if node in self.weights:
            shape.insert(0, static_size(meta.shape[0]))
        elif meta.dim() >= 2:
            shape.insert(0, None)
        if None in shape[1:] or (meta.dim() == 1 and shape[0] is None):
            raise UnsupportedOperationError(
                f"input {node.name} has dynamic feature sizes "
                f"{tuple(meta.shape)}: only the leading dimensions may vary "
                f"({where(node)})")
        value = self.program.argument(shape, element)
        self._input_nodes[value] = node
        self.values[node] = value if meta.dim() == 1 or node in \
            self.weights else Chain(value, width=shape[1])

    def _broadcast_over_rows(self, node, meta):
        """Whether input `node` of rank >= 2, all its leading dimensions 1
        and its features static, is read here only by elementwise ops, one
        of which broadcasts it over rows (a (1, features) parameter times a
        [batch, features] value, the batch symbolic or past 1): a vector,
        not a matrix of one row."""
        if meta.dim() < 2 or node in self.weights or \
                node in self._concat_parts or \
                static_size(meta.shape[-1]) is None or \
                any(int_size(d) != 1 for d in meta.shape[:-1]):
            return False
        inside = set(self.nodes)
        users = [user for user in node.users if user in inside]
        if not users or any(op_name(user) not in ELEMENTWISE
                            for user in users):
            return False
        for user in users:
            out = tensor_meta(user)
            if out is not None and out.dim() >= meta.dim() and \
                    any(int_size(d) != 1 for d in out.shape[:-1]):
                return True
        return False

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
        if not isinstance(value, Chain):
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

    def _join(self, fn, args, kwargs=(), node=None):
        """The chain computing scalar function `fn` of `args`/`kwargs`:
        chains (the widest give the width; narrower ones hold a value per
        contiguous group of columns), numbers, column expressions. Its root
        is the latest-computed root of the widest chains; the other chains'
        expressions are inlined, their roots becoming row operands."""
        chains = [a for a in list(args) + [v for _, v in kwargs]
                  if isinstance(a, Chain)]
        if not chains:
            def vector(a):
                return a.expr if isinstance(a, Vectors) else a

            return Vectors(Expr(fn, [vector(a) for a in args],
                                  [(k, vector(v)) for k, v in kwargs]))
        width = max(c.width for c in chains)
        primary = max((c for c in chains if c.width == width),
                      key=lambda c: c.root)

        def convert(a):
            if not isinstance(a, Chain):
                return a
            if a.root == primary.root:
                return a.expr
            return self._foreign(a, width, node)

        return Chain(primary.root,
                      Expr(fn, [convert(a) for a in args],
                            [(k, convert(v)) for k, v in kwargs]), width)

    # Ops.
    def _gemm(self, node):
        x, weight, bias, layout = self._gemm_operands(node)
        w_meta = tensor_meta(weight)
        if weight not in self.values or w_meta is None or w_meta.dim() != 2:
            unsupported(node, "the weight must be an input of the model")
        out_features, in_features = w_meta.shape
        if layout == "in_out":
            in_features, out_features = out_features, in_features
        chain, shape, _ = self._chain(x, node)
        if chain.width != in_features or int_size(shape[-1]) != in_features:
            unsupported(node, f"its input has shape {shape}, the weight "
                        f"{in_features} input features")
        self._element(node, op_name(node))
        x_value = self.materialize(chain, x)
        alpha, beta = gemm_scales(node)
        scaled = (alpha, beta) != (1.0, 1.0)
        if beta == 0:
            bias = None  # addmm ignores the bias then (NaNs included).
        if scaled and bias in self._concats:
            # The epilogue would read it as a column, which the GPU
            # backends take only as the GEMM's own bias.
            unsupported(node, f"a scaled addmm (alpha {alpha}, beta "
                        f"{beta}) whose bias {bias.name} is a "
                        f"concatenation")
        value = self.program.linear(
            x_value, self.values[weight],
            None if scaled else self._vector(bias, node, out_features),
            location(node), layout)
        self._linears[value] = (x_value, weight, None if scaled else bias, 0)
        if layout != "out_in":
            self._in_out_linears.add(value)
        result = Chain(value, width=out_features)
        if scaled:
            # alpha * (x @ w) + beta * bias, as addmm computes it: in the
            # epilogue, which the fused op's alpha and bias take again.
            result = self._number(result, "aten.mul.Tensor", alpha, node)
            if bias is not None:
                self._vector(bias, node, out_features)
                column = Expr("aten.mul.Tensor", [
                    self._column(bias, node, out_features), beta], [])
                result = self._join("aten.add.Tensor", [result, column],
                                    node=node)
        self.values[node] = result

    def _concat(self, node):
        """A concatenation of inputs of the graph (parameters) that the
        partition's GEMMs read as their weight or bias, along their output
        features: a `fusion.concat`, which the GEMM reads in place (the
        sibling projections that torch.compile's partitioner makes one
        GEMM). Any other concatenation is refused."""
        if not is_input_concat(node):
            unsupported(node)
        parts, dim = concat_operands(node)
        rank = tensor_meta(node).dim()
        readers, inside = [], set(self.nodes)
        for user in node.users:
            if user not in inside:
                continue  # PyTorch's, outside the partition.
            if op_name(user) in TRANSPOSES:
                readers += [(r, "out_in") for r in user.users
                            if r in inside]
            else:
                readers.append((user, None))
        # Along the output features: dimension 0 of an [out, in] weight
        # and of a bias, 1 of an [in, out] weight.
        expected, other = set(), not readers
        for reader, through in readers:
            gemm = self._gemm_operands(reader) if \
                op_name(reader) in GEMMS else None
            if gemm is None:
                other = True
            elif gemm[1] is node and (through is None) == (
                    gemm[3] == "in_out" or
                    op_name(reader) == "aten.linear.default"):
                expected.add(1 if gemm[3] == "in_out" else 0)
            elif gemm[2] is node and through is None:
                expected.add(0)
            else:
                other = True  # x, or a weight transposed twice.
        if other:
            unsupported(node, "fusion concatenates parameters that the "
                        "GEMMs of the partition read as their weight or "
                        "bias, not other values")
        if expected != {dim % rank}:
            unsupported(node, f"it concatenates dimension {dim} of "
                        f"{rank}-D parameters; fusion concatenates a GEMM's "
                        f"weights and biases along its output features")
        self.values[node] = self.program.concat(
            [self.values[p] for p in parts], dim % rank, location(node))
        self._concats.add(node)

    def result_problem(self, output):
        """Why the imported value `output` cannot be a result, or None."""
        value = self.values.get(output)
        if value is None or isinstance(value, float):
            return "its result is not one fusion computes"
        if isinstance(value, Vectors):
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
        elif name in CONCATS:
            self._concat(node)
        elif name in FLOAT_CONVERSIONS:
            self._float_conversion(node)
        elif name in CONSTANTS:
            self._constant(node)
        elif name == DROPOUT:
            self._dropout(node)
        else:
            unsupported(node)
        self._round_if_reduced(node)

    def _round_if_reduced(self, node):
        """In a 16-bit model, a value computed in float32 that a reduction
        reads is rounded to the model's dtype where it is computed, as
        eager stores it (the GEMM's output too): the reduction (whose
        result is rounded) and the value's other readers see one value, so
        that eager's identities hold (x - mean(x) over one feature is 0; a
        shifted logsumexp's largest term is exp(0); a training batch norm's
        statistics are those of the input its backward reads). Other
        values stay float32 until the results are rounded once. A reduced
        value that reads a draw (a dropout's output) is computed once, by
        the op that computes it (its GEMM's epilogue): the reductions and
        the ops that use their results (a softmax's, a norm's) read it,
        rather than each drawing again (Philox's ten rounds an element)."""
        value = self.values.get(node)
        if not isinstance(value, Chain) or not self._read_by_reduction(node):
            return
        if self.element in ("bf16", "f16"):
            value = self._join(ROUND_TO_ELEMENT, [value],
                               [("dtype", self.element)], node)
        if any(leaf.args[0] in self._draws
               for leaf in row_leaves(value.expr)):
            value = Chain(self.materialize(value, node), ROOT, value.width)
        self.values[node] = value

    def _read_by_reduction(self, node):
        """Whether a reduction of the partition reads `node` (through views
        and float32 copies: decompositions upcast a 16-bit logsumexp's
        input)."""
        inside, readers = set(self.nodes), list(node.users)
        while readers:
            reader = readers.pop()
            if reader not in inside:
                continue
            name = op_name(reader)
            if name in REDUCTIONS or name in NORMALIZATIONS or \
                    name in BATCH_NORMS or name in POOLS:
                return True
            if name in VIEWS or name in STRUCTURAL or \
                    name in FLOAT_CONVERSIONS:
                readers += list(reader.users)
        return False

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
            if isinstance(value, Chain):
                self.result_shapes.append([None, value.width])
            else:  # A vector, returned flat (the caller views it).
                self.result_shapes.append([meta.numel() if meta is not None
                                           else None])
            self.program.result(self.materialize(value, node))
        self.program.remove_unread_ops()
        return self.program
