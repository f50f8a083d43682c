"""Views, slices, expands, conversions and constants: ops that regroup,
select or pass values on."""
import math

from ..formulas import BOOL_TO_FLOAT
from .expressions import Chain, Expr, Vectors, map_leaves
from .nodes import (arguments, int_size, is_boolean, is_float_conversion,
                    location, op_name, row_split, same_size, static_size,
                    tensor_meta, unsupported)


class ViewImports:
    """The views, slices and conversions of `Importer`."""

    def _rows_of(self, node, start, stop):
        """The argument holding rows [start, stop) of input `node` (a weight
        or a per-column vector), which the caller passes (see slices)."""
        key = (node, start, stop)
        if key not in self._sliced:
            meta = tensor_meta(node)
            shape = [stop - start] + [static_size(d) for d in meta.shape[1:]]
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
        if chain.root in self._in_out_linears:
            unsupported(user, f"fusion slices the features of a linear "
                        f"layer whose weight is stored [out_features, "
                        f"in_features], not those of {source.name}'s "
                        f"[in_features, out_features] one")
        key = (chain.root, start, stop)
        if key not in self._pieces:
            x, weight, bias, first = self._linears[chain.root]
            if weight in self._concats or bias in self._concats:
                # Its pieces are PyTorch's views of the one GEMM's output
                # (a grouped GEMM's q, k and v), not GEMMs of their own.
                unsupported(user, f"fusion slices the features of a linear "
                            f"layer whose weight and bias are inputs, not "
                            f"those of {source.name}, whose weight or bias "
                            f"is a concatenation")
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
            if leaf.fn == "column" and leaf.args[0] not in self._singles:
                if leaf.args[0] in self._row_broadcast_vectors:
                    unsupported(user, f"its input {source.name} reads a "
                                f"(1, ..., features) parameter; fusion "
                                f"slices per-column vectors of shape "
                                f"(features,)")
                return Expr("column", (self._source_rows(
                    leaf.args[0], start, stop),))
            return leaf

        return Chain(self._pieces[key], map_leaves(chain.expr, replace),
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
                a["start"] in (None, 0) and same_size(
                    tensor_meta(node).shape[a["dim"]],
                    tensor_meta(source).shape[a["dim"]]):
            # All of a dimension (x[:, :7] slices the batch first).
            self._pass_on(node, lambda v: True)
            return
        self._feature_dimension(node, source, a["dim"])
        width = int_size(tensor_meta(source).shape[-1])
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
        if isinstance(value, Chain):
            if row_split(tuple(tensor_meta(node).shape), value.width) is None:
                unsupported(node, "only views that keep the rows (the "
                            "batch) of a value fusion computes, regrouping "
                            "its rows or its features")
        elif isinstance(value, int):
            # A per-column vector (a parameter, a batch norm's statistics):
            # only leading dimensions of size 1 (unsqueeze(0)), which keep
            # it per column.
            shape = [int_size(d) for d in tensor_meta(node).shape]
            length = tensor_meta(source).numel()
            if shape[-1:] != [length] or any(d != 1 for d in shape[:-1]):
                unsupported(node, f"a view of a vector of {length} "
                            f"features as {tuple(shape)}: only leading "
                            f"dimensions of size 1")
        elif not isinstance(value, (float, Vectors)):
            unsupported(node, "a view of a value fusion does not compute")
        self.values[node] = value

    def _expand(self, node):
        source = node.args[0]
        value = self.values.get(source)
        if not isinstance(value, (Chain, Vectors, int, float)):
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
                node, lambda v: isinstance(v, (Chain, Vectors, int,
                                               float))):
            unsupported(node, "only conversions between float32, bfloat16 "
                        "and float16 of values fusion computes, and of "
                        "booleans to them")
        if is_boolean(node.args[0]) and isinstance(self.values[node],
                                                    (Chain, Vectors)):
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
