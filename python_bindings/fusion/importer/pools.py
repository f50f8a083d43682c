"""Pooling of contiguous groups of each row's features."""
import math
import operator

from .nodes import POOLS, arguments, int_size, op_name, same_size, unsupported


class PoolImports:
    """The pools of `Importer`."""

    def _pool(self, node):
        """A pooling whose windows are contiguous groups of each row's
        features, without overlap or padding: a `max` reduce, or a `sum`
        reduce divided by the window size (or divisor_override)."""
        kind, spatial, adaptive = POOLS[op_name(node)]
        a = arguments(node)
        results = node.meta.get("val")
        multi = isinstance(results, (tuple, list))
        out = results[0] if multi else results
        self._check_dtype(node, out)
        if multi and any(user.target is operator.getitem and
                         user.args[1] != 0 and user.users
                         for user in node.users):
            unsupported(node, "its indices are used (return_indices=True, "
                        "or saved for a backward pass); fusion computes "
                        "the pooled values only")
        chain, shape, lead = self._chain(a["self"], node)
        if spatial is None:
            spatial = len(a["kernel_size"])
        if len(shape) < spatial + 1:
            unsupported(node, f"a {spatial}-D pooling of a {shape} value")
        dims = list(range(len(shape) - spatial, len(shape)))
        if adaptive:
            windows = _adaptive_windows(node, a, dims, shape, lead)
        else:
            windows = _windows(node, a, spatial)
        group = _window_group(node, dims, windows, shape, lead)
        groups = chain.width // group
        tail = [int_size(d) for d in out.shape[lead:]]
        if None in tail or math.prod(tail) != groups:
            unsupported(node, f"its result {tuple(out.shape)} is not the "
                        f"{groups} windows of {group} values of each row "
                        f"of its {shape} input")
        if group == 1:  # Windows of one value.
            value = chain
        else:
            value = self._reduce(chain, "max" if kind == "max" else "sum",
                                 groups, node)
        if kind == "avg":
            divisor = a.get("divisor_override") or group
            if divisor != 1:
                value = self._number(value, "aten.div.Tensor", divisor,
                                     node)
        self.values[(node, 0) if multi else node] = value


def _expand(value, default, spatial):
    """A pooling argument (one number, or one a dimension) for each of the
    `spatial` dimensions."""
    if value is None or (isinstance(value, (list, tuple)) and not value):
        return default
    value = list(value) if isinstance(value, (list, tuple)) else [value]
    return value * spatial if len(value) == 1 else value


def _adaptive_windows(node, a, dims, shape, lead):
    """The window of each pooled dimension of an adaptive pooling, which
    must divide it."""
    windows = []
    sizes = [shape[d] for d in dims]
    for dim, size, count in zip(dims, sizes, _expand(a["output_size"], None,
                                                     len(dims))):
        if same_size(size, count):
            windows.append(1)
        elif int_size(size) is None or dim < lead:
            unsupported(node, f"an adaptive pooling of dimension "
                        f"{dim} of a {shape} value into {count} "
                        f"windows, across the batch: fusion pools "
                        f"the features of each row")
        elif int_size(size) % count:
            unsupported(node, f"an adaptive pooling of {size} "
                        f"values into {count} windows: {count} does "
                        f"not divide {size}, so PyTorch's windows "
                        f"differ in size and overlap; fusion pools "
                        f"equal windows without overlap")
        else:
            windows.append(int_size(size) // count)
    return windows


def _windows(node, a, spatial):
    """The windows of a pooling, which must neither overlap, leave gaps,
    pad nor dilate."""
    windows = _expand(a["kernel_size"], None, spatial)
    stride = _expand(a.get("stride"), windows, spatial)
    padding = _expand(a.get("padding"), [0] * spatial, spatial)
    dilation = _expand(a.get("dilation"), [1] * spatial, spatial)
    if any(padding):
        unsupported(node, f"padding {padding}: fusion pools windows "
                    f"of the features themselves, without padding")
    if any(d != 1 for d in dilation):
        unsupported(node, f"dilation {dilation}: fusion pools "
                    f"windows of contiguous values")
    if stride != windows:
        how = "with gaps between them" if all(
            s >= k for s, k in zip(stride, windows)) else "overlapping"
        unsupported(node, f"windows of {windows} with stride "
                    f"{stride}, {how}: fusion pools non-overlapping "
                    f"windows (stride = kernel_size)")
    return windows


def _window_group(node, dims, windows, shape, lead):
    """How many contiguous values of a row one window holds: windows must
    span whole dimensions after their first pooled one, within the
    features."""
    pooled = [dim for dim, window in zip(dims, windows) if window != 1]
    if not pooled:
        return 1
    first = pooled[0]
    if first < lead:
        unsupported(node, f"a pooling over dimension {first} of a "
                    f"{shape} value, across the batch: fusion pools "
                    f"the features of each row")
    for dim, window in zip(dims, windows):
        if dim > first and window != int_size(shape[dim]):
            unsupported(node, f"windows of {windows} over the last "
                        f"{len(dims)} dimensions of a {shape} value, not "
                        f"contiguous features of a row (a window "
                        f"spans whole dimensions after its first)")
    window, size = windows[first - dims[0]], int_size(shape[first])
    if size % window:
        unsupported(node, f"windows of {window} of {size} values, "
                    f"not a multiple: PyTorch drops (or with "
                    f"ceil_mode pools) a partial last window; "
                    f"fusion pools whole windows")
    return window * math.prod(int_size(d) for d in shape[first + 1:])
