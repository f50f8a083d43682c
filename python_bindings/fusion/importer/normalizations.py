"""Normalizations: softmax, layer, group, RMS and batch norms."""
import operator

import torch

from ..dtypes import ELEMENT_TYPES
from .expressions import Chain
from .nodes import (arguments, int_size, location, op_name, tensor_meta,
                    unsupported)


class NormalizationImports:
    """The normalizations of `Importer`."""

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
        self.values[(node, 0)] = Chain(results[0], width=columns)
        rest = iter(results[1:])
        if training and mean is not None:
            self.values[(node, 3)] = next(rest)
            self.values[(node, 4)] = next(rest)
        if batch_stats is not None:
            for index in (1, 2):
                self.values[(node, index)] = next(rest)
                self._other_dtypes[self.values[(node, index)]] = batch_stats

    def _normalization(self, node):
        name = op_name(node)
        a = arguments(node)
        if name in ("aten._softmax.default", "aten._log_softmax.default"):
            self._check_dtype(node, tensor_meta(node))
            if a["half_to_float"]:
                unsupported(node, "a softmax of half values into float32")
            chain, groups, size = self._reduced(node, a["self"], [a["dim"]])
            top = self._reduce(chain, "max", groups, node)
            shifted = self._join("aten.sub.Tensor", [chain, top], (), node)
            exp = self._unary("aten.exp.default", shifted, node)
            total = self._inner_sum(exp, groups, size, node)
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
            if int_size(a["HxW"]) != 1 or tensor_meta(x).dim() != 2:
                unsupported(node, "a group norm over a [batch, channels] "
                            "matrix only (no spatial dimensions)")
            dims = None
        chain, value_shape, lead = self._chain(x, node)
        if dims is not None:
            chain, groups, size = self._reduced(node, x, dims)
        else:
            groups = a["group"]
            if int_size(a["C"]) != chain.width or chain.width % groups:
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
