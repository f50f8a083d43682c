"""The operands of an op as its import reads them: per-column vectors,
single values, matrices of other chains (row operands), materialized
chains."""
import math

import torch

from .expressions import (Chain, Expr, ROOT, Vectors, map_leaves,
                          reads_columns, substitute)
from .nodes import int_size, location, same_size, tensor_meta, unsupported


class OperandImports:
    """How `Importer` reads an op's operands."""

    def _columns(self, node):
        """The features (last dimension) of a value of rank >= 2."""
        meta = tensor_meta(node)
        return None if meta is None or meta.dim() < 2 else meta.shape[-1]

    def _column(self, arg, user, width, shape=None, lead=None):
        """Vector operand `arg` of an op computing `width` values per row
        (of PyTorch `shape`, whose first `lead` dimensions are the batch):
        a per-column vector element."""
        value = self.values[arg]
        self._check_model_dtype(arg, user, value)
        if value not in self._singles:  # One value suits any width.
            self._check_vector_shape(arg, user, width, shape, lead)
        return Expr("column", (value,))

    def _check_vector_shape(self, arg, user, width, shape, lead):
        """That `arg` holds `width` values, one per feature of each row,
        broadcast over the batch of PyTorch `shape` (first `lead`
        dimensions) where that is given."""
        own = self._shape(arg)
        ok = math.prod(int_size(d) or 0 for d in own) == width
        if ok and shape is not None:
            # Broadcast as PyTorch does (the last dimensions aligned): over
            # the batch, and matching the features.
            if len(own) > len(shape):
                ok = False
            else:
                aligned = (1,) * (len(shape) - len(own)) + tuple(own)
                ok = all(int_size(d) == 1 for d in aligned[:lead]) and all(
                    same_size(a, b)
                    for a, b in zip(aligned[lead:], shape[lead:]))
        if not ok:
            unsupported(user, f"its operand {arg.name} has shape "
                        f"{tuple(own)}, neither a number nor a vector of "
                        f"the {width} features of each row"
                        f"{f' {tuple(shape[lead:])}' if shape else ''}")

    def _vectors(self, arg, value, user, width, shape, lead):
        """The expression of `value`, the Vectors value of `arg`, in an op
        computing `width` values per row: its vectors as columns."""
        if math.prod(int_size(d) or 0 for d in self._shape(arg)) != 1:
            self._check_vector_shape(arg, user, width, shape, lead)
        return map_leaves(value.expr, lambda leaf: self._column(
            leaf.args[0], user, width) if leaf.fn == "vector" else leaf)

    def _foreign(self, chain, width, node):
        """The expression of `chain` inside an op of another root of
        `width` values per row: its root a row operand. Its per-column
        vectors have its own width, so a narrower chain reading some is
        materialized first (and one materialized already is read as it
        is)."""
        if id(chain) in self._materialized or (
                chain.width != width and reads_columns(chain.expr)):
            return Expr("row", (self.materialize(chain, node),))
        if id(chain) not in self._inlined:
            self._inlined[id(chain)] = (chain, substitute(
                chain.expr, Expr("row", (chain.root,))))
        return self._inlined[id(chain)][1]

    def _operand(self, arg, user, width, shape, lead):
        """`arg` of elementwise `user` as an expression operand: a number,
        a per-column vector element or a chain; where `user` reads no
        chain (`width` None), a vector as a Vectors value."""
        if arg is None or isinstance(arg, (bool, str)):
            return arg
        if isinstance(arg, (int, float)):
            return float(arg)
        if not isinstance(arg, torch.fx.Node) or arg not in self.values:
            unsupported(user, f"its operand {arg} is not a value fusion "
                        f"computes")
        value = self.values[arg]
        if isinstance(value, (float, Chain)):
            return value
        if width is None:
            return value if isinstance(value, Vectors) else \
                Vectors(Expr("vector", (arg,)))
        if isinstance(value, Vectors):
            return self._vectors(arg, value, user, width, shape, lead)
        return self._column(arg, user, width, shape, lead)

    def materialize(self, value, node):
        """The program value of a chain value: its expression, if any, as
        one `fusion.elementwise` op (once per chain)."""
        if not isinstance(value, Chain):
            return value
        if value.expr is ROOT:
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
        return value
