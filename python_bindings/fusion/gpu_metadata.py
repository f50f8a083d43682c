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

The meta device follows the GPU's rules for the norms, but not for
scaled-dot-product attention: its choice of kernel is the math path, whose
batched GEMMs, scaling and softmax read the q, k and v projections where a
GPU's fused kernel saves them for the backward as they are. Partitions
decide by such readers (a projection whose views a training step saves is
not grouped with its siblings), so a model traced on meta tensors would
compile other libraries than the GPU's graphs call. `attention_as_on_gpus`
makes a graph of meta tensors call the kernel a GPU's PyTorch would choose.
"""
import contextlib
import os
import re

import torch
import torch._decomp.decompositions as decompositions
import torch._refs as refs

_HALF_TYPES = (torch.bfloat16, torch.float16)
aten = torch.ops.aten


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


# F.scaled_dot_product_attention as dynamo records it, and its ATen op.
_ATTENTIONS = (torch._C._nn.scaled_dot_product_attention,
               aten.scaled_dot_product_attention.default)
_FLASH, _EFFICIENT, _MATH, _CUDNN = (int(b) for b in (
    torch.nn.attention.SDPBackend.FLASH_ATTENTION,
    torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION,
    torch.nn.attention.SDPBackend.MATH,
    torch.nn.attention.SDPBackend.CUDNN_ATTENTION))
_DEFAULT_ORDER = [_FLASH, _EFFICIENT, _MATH, _CUDNN, int(
    torch.nn.attention.SDPBackend.OVERRIDEABLE)]
_ENABLED = {_FLASH: torch.backends.cuda.flash_sdp_enabled,
            _CUDNN: torch.backends.cuda.cudnn_sdp_enabled,
            _EFFICIENT: torch.backends.cuda.mem_efficient_sdp_enabled}


def attention_as_on_gpus(gm, target):
    """Makes each scaled_dot_product_attention of `gm` (a graph dynamo
    traced from meta tensors, compiled for the GPU `target`) call the kernel
    PyTorch would choose on the target's GPUs (_gpu_attention)."""
    chips = [int(m.group(1)) for m in re.finditer(r"sm_(\d+)", target)]
    changed = False
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in _ATTENTIONS:
            node.target = _gpu_attention
            node.kwargs = {**node.kwargs, "chips": tuple(chips)}
            changed = True
    if changed:
        gm.recompile()


def _gpu_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                   is_causal=False, scale=None, enable_gqa=False, chips=()):
    """scaled_dot_product_attention as PyTorch's CUDA build runs it on the
    `chips` (sm numbers): the first of its backends, in its priority order,
    that is enabled and takes the arguments (sdp_utils.cpp's checks, for
    dense tensors without a mask: what the graph rewrites leave of
    transformers' constant masks). What the partitions depend on is
    modeled, not the kernel itself: cuDNN's attention (PyTorch's first
    choice on sm_90 and sm_100 GPUs) is traced as flash attention, which
    also saves q, k and v as they are and writes a contiguous output; the
    memory-efficient kernel writes [batch, sequence, heads, features]. A
    mask, grouped-query attention, or flash attention's padding of a head
    to whole 16-byte chunks keep the meta device's own choice (its math
    path), as a backend not listed does."""
    arguments = (query, key, value)
    for backend in _priority_order(chips):
        if backend not in _ENABLED:
            break
        if not _ENABLED[backend]():
            continue
        if backend == _EFFICIENT:
            if _efficient_takes(arguments, attn_mask, enable_gqa):
                log_sum_exp = torch.is_grad_enabled() and any(
                    t.requires_grad for t in arguments)
                return aten._scaled_dot_product_efficient_attention(
                    query, key, value, None, log_sum_exp, dropout_p,
                    is_causal, scale=scale)[0]
        elif backend == _CUDNN and _cudnn_takes(
                arguments, attn_mask, dropout_p, enable_gqa, chips) or \
                backend == _FLASH and _flash_takes(
                    arguments, attn_mask, dropout_p, is_causal, enable_gqa,
                    chips):
            if query.shape[-1] % 8:
                break  # Flash attention pads the head: not modeled.
            return aten._scaled_dot_product_flash_attention(
                query, key, value, dropout_p, is_causal, scale=scale)[0]
    return torch._C._nn.scaled_dot_product_attention(
        query, key, value, attn_mask, dropout_p, is_causal, scale=scale,
        enable_gqa=enable_gqa)


def _priority_order(chips):
    """PyTorch's order of the backends, as a GPU process has it: on sm_90
    and sm_100 GPUs with cuDNN after 9.15 it puts cuDNN's first the first
    time a GPU runs an attention (sdp_utils.cpp, check_prefer_cudnn_
    attention), unless TORCH_CUDNN_SDPA_DEPRIORITIZED is set, or the order
    was set by the user."""
    order = list(torch._C._get_sdp_priority_order())
    version = torch.backends.cudnn.version() or 0
    deprioritized = os.environ.get(
        "TORCH_CUDNN_SDPA_DEPRIORITIZED", "").upper() in ("1", "ON", "TRUE",
                                                         "YES", "Y")
    if order == _DEFAULT_ORDER and chips and version > 91500 and \
            all(chip in (90, 100, 103) for chip in chips) and \
            not deprioritized:
        return [_CUDNN, _FLASH, _EFFICIENT, _MATH]
    return order


def _cudnn_takes(arguments, attn_mask, dropout_p, enable_gqa, chips):
    """cuDNN's checks (sm_90 or sm_100; heads of at most 128 features, which
    every cuDNN release takes; dropout in sixteenths), for dense tensors
    without a mask; unlike flash attention it takes a causal mask over
    sequences of unequal lengths."""
    query, key, value = arguments
    return all(chip in (90, 100, 103) for chip in chips) and \
        _dense_and_unmasked(arguments, attn_mask, enable_gqa) and \
        query.dtype in _HALF_TYPES and \
        query.shape[-1] == key.shape[-1] and \
        all(t.shape[-1] <= 128 and t.shape[-1] % 8 == 0
            for t in (query, value)) and \
        key.shape[2] != 1 and float(dropout_p * 16).is_integer() and \
        not (dropout_p and query.shape[2] == 1)


def _dense_and_unmasked(arguments, attn_mask, enable_gqa):
    """The checks the fused kernels share: 4-D tensors of one dtype, batch
    and head count, nonempty sequences, unit strides along the head
    dimension; here also no mask and no grouped-query attention."""
    query, key, value = arguments
    return attn_mask is None and not enable_gqa and \
        all(t.dim() == 4 for t in arguments) and \
        len({t.dtype for t in arguments}) == 1 and \
        len({t.shape[:2] for t in arguments}) == 1 and \
        all(t.shape[2] > 0 and t.stride(-1) == 1 for t in arguments) and \
        key.shape[2] == value.shape[2]


def _flash_takes(arguments, attn_mask, dropout_p, is_causal, enable_gqa,
                 chips):
    query, key, value = arguments
    head = query.shape[-1]
    # sm_86, sm_89 and sm_12x train heads of (192, 224] features, and those
    # over 224 with dropout, in other kernels.
    training = torch.is_grad_enabled() and any(
        t.requires_grad for t in arguments)
    small_chip = any(chip in (86, 89) or chip >= 120 for chip in chips)
    return all(chip >= 80 for chip in chips) and \
        _dense_and_unmasked(arguments, attn_mask, enable_gqa) and \
        query.dtype in _HALF_TYPES and \
        key.shape[-1] == value.shape[-1] == head <= 256 and \
        not (is_causal and query.shape[2] != key.shape[2]) and \
        not (small_chip and training and
             (192 < head <= 224 or head > 224 and dropout_p > 0))


def _efficient_takes(arguments, attn_mask, enable_gqa):
    query, key, value = arguments
    # The GEMMs' alignment: 16 bytes of 16-bit values, 4 f32 values.
    alignment = 8 if query.dtype in _HALF_TYPES else 4
    return _dense_and_unmasked(arguments, attn_mask, enable_gqa) and \
        query.dtype in (torch.float32, *_HALF_TYPES) and \
        query.shape[-1] == key.shape[-1] and \
        query.shape[-1] % alignment == 0 and \
        value.shape[-1] % alignment == 0
