"""Tracing on the CPU with the metadata PyTorch's GPU kernels give.

A few ATen ops return statistics of another dtype or shape on the CPU than
on GPUs: a 16-bit layer or batch norm's saved mean and reciprocal deviation
are float32 on GPUs and 16-bit on the CPU, an inference batch norm saves
the running statistics on GPUs and nothing on the CPU, and a group norm's
decomposition folds its affine parameters into a scale and shift on the
CPU alone (normalizing, then scaling and shifting, on GPUs). A graph traced
on CPU tensors for a GPU target (`compile_only`, preparing libraries on a
machine without a GPU) would then import other programs than the GPU's
graphs, and the GPU machine would miss their libraries. `traced_as_on_gpus`
makes the decompositions and fake kernels follow the GPU's rules while a
graph is traced; the CPU run after it is unchanged (the real kernels).
"""
import contextlib

import torch
import torch._decomp.decompositions as decompositions
import torch._refs as refs

_HALF_TYPES = (torch.bfloat16, torch.float16)


def _layer_norm_as_on_gpus(layer_norm):
    def as_on_gpus(input, normalized_shape, weight, bias, eps):
        if input.device.type != "cpu" or input.dtype not in _HALF_TYPES:
            return layer_norm(input, normalized_shape, weight, bias, eps)
        # The reference computes in float32 and rounds the statistics to the
        # input's type on the CPU alone; from a float32 input it keeps them.
        out, mean, rstd = layer_norm(input.to(torch.float32),
                                     normalized_shape, weight, bias, eps)
        return out.to(input.dtype), mean, rstd
    return as_on_gpus


def _batch_norm_as_on_gpus(helper):
    def as_on_gpus(input, weight, bias, running_mean, running_var, training,
                   momentum, eps, functional):
        arguments = (weight, bias, running_mean, running_var, training,
                     momentum, eps, functional)
        if input.device.type != "cpu":
            return helper(input, *arguments)
        if training:
            if input.dtype not in _HALF_TYPES:
                return helper(input, *arguments)
            # As the layer norm's: float32 statistics from a float32 input.
            out, *rest = helper(input.to(torch.float32), *arguments)
            return (out.to(input.dtype), *rest)
        result = helper(input, *arguments)
        if running_mean is None:
            return result
        # GPUs save the running statistics (in float32) and the reciprocal
        # deviation they normalize with; the CPU saves nothing.
        out, _, _, new_mean, new_var = result
        mean = running_mean.to(torch.float32, copy=True)
        rstd = 1 / torch.sqrt(running_var.to(torch.float32) + eps)
        return out, mean, rstd, new_mean, new_var
    return as_on_gpus


def _group_norm_as_on_gpus(group_norm):
    def as_on_gpus(input, weight, bias, batch_size, num_channels,
                   inner_size, num_groups, eps):
        if input.device.type != "cpu" or weight is None:
            return group_norm(input, weight, bias, batch_size, num_channels,
                              inner_size, num_groups, eps)
        # On the CPU the reference folds the affine parameters into a scale
        # and shift per channel; GPUs normalize, then scale and shift, as
        # it does without a weight (from a float32 input: unrounded).
        half = input.dtype in _HALF_TYPES
        out, mean, rstd = group_norm(
            input.to(torch.float32) if half else input, None, None,
            batch_size, num_channels, inner_size, num_groups, eps)
        dims = [0] + list(range(2, input.ndim))
        out = out * _unsqueezed(weight, dims)
        if bias is not None:
            out = out + _unsqueezed(bias, dims)
        if half:
            out, mean, rstd = (t.to(input.dtype) for t in (out, mean, rstd))
        return out, mean, rstd
    return as_on_gpus


def _unsqueezed(vector, dims):
    for dim in sorted(dims):
        vector = torch.unsqueeze(vector, dim)
    return vector


_DECOMPOSITIONS_AS_ON_GPUS = {
    torch.ops.aten.native_layer_norm.default: _layer_norm_as_on_gpus,
    torch.ops.aten.native_group_norm.default: _group_norm_as_on_gpus,
}


@contextlib.contextmanager
def traced_as_on_gpus(decomposition_table):
    """While in the context, the layer, batch and group norms traced from
    CPU tensors (through `decomposition_table`, which is updated in place,
    and through the fake kernels) are GPUs'."""
    layer_norm = refs.native_layer_norm
    helper = decompositions.native_batch_norm_helper
    originals = {op: decomposition_table[op]
                 for op in _DECOMPOSITIONS_AS_ON_GPUS
                 if op in decomposition_table}
    replaced = {op: _DECOMPOSITIONS_AS_ON_GPUS[op](fn)
                for op, fn in originals.items()}
    refs.native_layer_norm = _layer_norm_as_on_gpus(layer_norm)
    decompositions.native_batch_norm_helper = _batch_norm_as_on_gpus(helper)
    decomposition_table.update(replaced)
    try:
        yield
    finally:
        refs.native_layer_norm = layer_norm
        decompositions.native_batch_norm_helper = helper
        decomposition_table.update(originals)
