"""Elementwise ops: their formulas applied to chains, vectors and numbers."""
import math

import torch

from ..dtypes import rounded
from ..formulas import (BOOLEAN_ARITHMETIC, BOOLEAN_RESULTS, BOOL_TO_FLOAT,
                        LOGICAL)
from ..program import SEED_DTYPE, SEED_SHAPE
from .expressions import Chain, Expr, Vectors
from .nodes import (check_formula, int_size, is_boolean, is_dropping,
                    location, op_name, row_split, same_size, tensor_meta,
                    unsupported)


class ElementwiseImports:
    """The elementwise ops of `Importer`."""

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
        operands = [a for a in tensors if isinstance(self.values[a], Chain)]
        if not operands:
            if not any(isinstance(self.values[a], (int, Vectors))
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
        tail = [int_size(d) for d in shape[lead:]]
        if None in tail:
            unsupported(node, f"its result {shape} has dynamic features")
        width = math.prod(tail)
        for arg in operands:
            chain = self.values[arg]
            own = self._shape(arg)
            aligned = (1,) * (len(shape) - len(own)) + own
            if not all(same_size(a, b) for a, b in
                       zip(aligned[:lead], shape[:lead])):
                unsupported(node, f"its operand {arg.name} of shape {own} "
                            f"broadcasts over the batch {shape[:lead]}")
            end = lead
            while end < len(shape) and same_size(aligned[end], shape[end]):
                end += 1
            if any(int_size(d) != 1 for d in aligned[end:]) or \
                    math.prod(int_size(d) for d in aligned[lead:end]) != \
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
        if name in BOOLEAN_ARITHMETIC and is_boolean(node) and all(
                is_boolean(a) for a in node.args):
            name = BOOLEAN_ARITHMETIC[name]
        args = [self._number_or_boolean(
            name, node, index, a,
            self._operand(a, node, width, shape, lead))
            for index, a in enumerate(node.args)]
        kwargs = [(k, self._number_or_boolean(
            name, node, k, v, self._operand(v, node, width, shape, lead)))
            for k, v in sorted(node.kwargs.items())]
        value = self._join(name, args, kwargs, node)
        if is_boolean(node) and name not in BOOLEAN_RESULTS:
            # A boolean from numbers (the maximum of two booleans).
            value = self._join("aten.ne.Scalar", [value, 0.0], node=node)
        self.values[node] = value

    def _number_or_boolean(self, name, node, position, arg, value):
        """Operand `arg` (at `position`) of elementwise op `node`, computed
        as `name`, as the op reads it: a boolean (an i1 value) where a
        logical op or where's condition reads it, or where selects between
        booleans; as a number (1.0 or 0.0, as PyTorch promotes it)
        elsewhere."""
        if not is_boolean(arg):
            if name in LOGICAL and isinstance(arg, torch.fx.Node):
                unsupported(node, f"its operand {arg.name} is not boolean; "
                            f"fusion computes logical ops of booleans")
            return value
        if name in LOGICAL or (name == "aten.where.self" and (
                position in (0, "condition") or is_boolean(node))):
            return value
        return self._join(BOOL_TO_FLOAT, [value], node=node)

    def _dropout(self, node):
        """aten.native_dropout(x, p, train) as PyTorch computes it (as
        fusion/dynamo.py's _dropout writes it): `(u > p) * x / (1 - p)`, u
        a draw of x's dtype, p as that dtype holds it. The draw is a
        `random_uniform` of the program's seed (an argument the caller
        draws per call) whose rows are those of x's GEMM input, where x is
        a linear layer's output, so that the comparison fuses into that
        GEMM's epilogue; a stream of its own per dropout. Its mask (result
        1) is not computed: a bool result is not in the entry ABI."""
        x, p = node.args[:2]
        chain, _, _ = self._chain(x, node)
        if not is_dropping(node):
            self.values[(node, 0)] = chain
            return
        if p == 1:
            unsupported(node, "dropout with p = 1, whose output is zeros")
        if self.seed is None:
            self.seed = self.program.argument(SEED_SHAPE, SEED_DTYPE)
        linear = self._linears.get(chain.root)
        rows_of = linear[0] if linear is not None else chain.root
        draw = self.program.random_uniform(self.seed, rows_of, chain.width,
                                           self.streams, location(node))
        self.streams += 1
        self._draws.add(draw)
        keep = Expr("aten.gt.Scalar", [Expr("row", (draw,)), rounded(
            p, tensor_meta(node.args[0]).dtype)])
        kept = Expr("aten.mul.Tensor", [Expr(BOOL_TO_FLOAT, [keep]),
                                        chain.expr])
        self.values[(node, 0)] = Chain(chain.root, Expr(
            "aten.mul.Tensor", [kept, float(1.0 / (1.0 - p))]), chain.width)

    def _number(self, chain, fn, number, node):
        return self._join(fn, [chain, float(number)], (), node)

    def _unary(self, fn, chain, node):
        return self._join(fn, [chain], (), node)
