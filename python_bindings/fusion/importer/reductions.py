"""Reductions along the features: sums, extrema, moments, logsumexp and
norms, as fusion.reduce ops."""
import math

from ..dtypes import ELEMENT_TYPES
from .expressions import Chain
from .nodes import (arguments, int_size, location, op_name, same_size,
                    tensor_meta, unsupported)


class ReductionImports:
    """The reductions of `Importer`."""

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
        size = math.prod(int_size(d) for d in shape[dims[0]:])
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
                    same_size(g, w) for g, w in zip(got, want)):
                unsupported(node, f"the graph says its result has shape "
                            f"{tuple(got)}, PyTorch's kernel computes "
                            f"{tuple(want)}")

    def _reduce(self, chain, kind, groups, node):
        value = self.program.reduce(chain.root, kind, groups, chain.expr,
                                    location(node))
        return Chain(value, width=groups)

    def _inner_sum(self, chain, groups, size, node):
        """The sum of each group of `size` values as accurate as float32's,
        for sums inside an op (a softmax's, a norm's) that eager keeps in
        float32 and never rounds: a reduction's result is stored in the
        model's dtype, so in a 16-bit model the rounded sum is corrected by
        the sum of the values less their share of it (two 16-bit parts, as
        `_moments` corrects the mean). An infinite or NaN sum stays as it
        is (inf - inf would make it NaN)."""
        total = self._reduce(chain, "sum", groups, node)
        if self.element not in ("bf16", "f16"):
            return total
        share = self._number(total, "aten.div.Tensor", size, node)
        rest = self._reduce(self._join("aten.sub.Tensor", [chain, share], (),
                                       node), "sum", groups, node)
        finite = self._number(self._unary("aten.abs.default", total, node),
                              "aten.lt.Scalar", math.inf, node)
        return self._join("aten.where.self", [
            finite, self._join("aten.add.Tensor", [total, rest], (), node),
            total], (), node)

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
        ratio = self._number(self._inner_sum(squares, groups, size, node),
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
            self.values[node] = self._logsumexp(chain, groups, size, node)
        elif name == "aten.linalg_vector_norm.default":
            self.values[node] = self._norm(node, chain, groups, size,
                                           a["ord"])
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

    def _logsumexp(self, chain, groups, size, node):
        """PyTorch's: the maximum (0 where infinite) subtracted."""
        top = self._reduce(chain, "max", groups, node)
        infinite = self._number(self._unary("aten.abs.default", top, node),
                                "aten.eq.Scalar", math.inf, node)
        top = self._join("aten.where.self", [infinite, 0.0, top], (), node)
        exp = self._unary("aten.exp.default", self._join(
            "aten.sub.Tensor", [chain, top], (), node), node)
        log = self._unary("aten.log.default",
                          self._inner_sum(exp, groups, size, node), node)
        return self._join("aten.add.Tensor", [log, top], (), node)

    def _norm(self, node, chain, groups, size, order):
        order = float(order)
        magnitude = self._unary("aten.abs.default", chain, node)
        if size == 1 and order != 0.0:
            # PyTorch's linalg_vector_norm over dimensions of size 1 is abs
            # for every nonzero order, no square to overflow past 1.8e19.
            return magnitude
        if order == math.inf:
            return self._reduce(magnitude, "max", groups, node)
        if order == -math.inf:
            return self._reduce(magnitude, "min", groups, node)
        if order == 2.0:
            squares = self._join("aten.mul.Tensor", [chain, chain], (), node)
            return self._unary("aten.sqrt.default", self._inner_sum(
                squares, groups, size, node), node)
        if order == 1.0:
            return self._reduce(magnitude, "sum", groups, node)
        if order <= 0.0:
            unsupported(node, f"a vector norm of order {order}")
        powers = self._number(magnitude, "aten.pow.Tensor_Scalar", order,
                              node)
        return self._number(self._inner_sum(powers, groups, size, node),
                            "aten.pow.Tensor_Scalar", 1.0 / order, node)
