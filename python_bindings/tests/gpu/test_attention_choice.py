"""A model traced on meta tensors for a GPU target (how libraries are
prepared on a machine without a GPU) calls the attention kernel PyTorch's
CUDA build chooses (fusion.gpu_metadata.attention_as_on_gpus), so that its
partitions, and the libraries they look up, are the GPU's."""
import contextlib

import pytest
import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx
from torch.nn.attention import SDPBackend, sdpa_kernel

import transformer_zoo
from fusion.gpu_metadata import _gpu_attention

pytestmark = pytest.mark.gpu

# (dtype, query's [B, H, L, E], key's sequence, is_causal, dropout, the
# backends enabled): the cases the emulation models.
CASES = [
    (torch.float32, (2, 4, 64, 128), 64, False, 0.0, None),
    (torch.float32, (2, 4, 64, 64), 64, True, 0.0, None),
    (torch.float32, (2, 4, 64, 66), 64, False, 0.0, None),
    (torch.bfloat16, (2, 4, 64, 128), 64, False, 0.0, None),
    (torch.bfloat16, (2, 4, 64, 128), 64, True, 0.1, None),
    (torch.bfloat16, (2, 4, 32, 64), 64, True, 0.0, None),
    (torch.bfloat16, (2, 4, 64, 256), 64, False, 0.0, None),
    (torch.bfloat16, (2, 4, 64, 264), 64, False, 0.0, None),
    (torch.float16, (2, 4, 64, 64), 64, False, 0.0, None),
    (torch.bfloat16, (2, 4, 64, 128), 64, False, 0.0,
     [SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]),
]


def traced_ops(attention, device, dtype, shape, keys, is_causal, dropout,
               grad):
    query = torch.randn(shape, device=device, dtype=dtype,
                        requires_grad=grad)
    key = torch.randn((*shape[:2], keys, shape[3]), device=device,
                      dtype=dtype, requires_grad=grad)
    value = torch.randn_like(key, requires_grad=grad)

    def call(q, k, v):
        return attention(q, k, v, dropout_p=dropout, is_causal=is_causal)

    graph = make_fx(call)(query, key, value)
    out = call(query, key, value)
    kinds = {KINDS.get(str(n.target), "decomposed") for n in graph.graph.nodes
             if n.op == "call_function" and not _moves(n)}
    return kinds, out.stride()


# What the partitions around an attention depend on: whether one kernel
# saves q, k and v as they are, and its output's strides (cuDNN's and flash
# attention's are contiguous; the emulation traces cuDNN's as flash's).
KINDS = {"aten._scaled_dot_product_flash_attention.default": "flash-like",
         "aten._scaled_dot_product_cudnn_attention.default": "flash-like",
         "aten._scaled_dot_product_efficient_attention.default":
             "memory-efficient"}


def _moves(node):
    """The fused kernels' tuple items and the autograd bookkeeping."""
    return str(node.target) in ("<built-in function getitem>",
                                "aten.detach.default")


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(
    map(str, (str(c[0])[6:], *c[1], c[2], c[3], c[4], bool(c[5])))))
def test_meta_attention_is_the_gpus(sm90, case, grad):
    """The meta trace's attention is the kind the GPU runs, with the same
    output strides."""
    dtype, shape, keys, is_causal, dropout, backends = case
    enabled = sdpa_kernel(backends) if backends else contextlib.nullcontext()
    with enabled, torch.set_grad_enabled(grad):
        gpu = traced_ops(F.scaled_dot_product_attention, "cuda", dtype,
                         shape, keys, is_causal, dropout, grad)
        meta = traced_ops(
            lambda *a, **k: _gpu_attention(*a, **k, chips=(90,)), "meta",
            dtype, shape, keys, is_causal, dropout, grad)
    assert meta == gpu


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16],
                         ids=["fp32", "bf16"])
@pytest.mark.parametrize("name", ["bert", "vit", "gpt2", "llama"])
def test_meta_trace_looks_up_the_gpus_libraries(sm90, library_lookups, name,
                                                dtype):
    gpu = transformer_zoo.training_step_keys(library_lookups, name, dtype,
                                             "cuda")
    meta = transformer_zoo.training_step_keys(library_lookups, name, dtype,
                                              "meta")
    assert len(gpu) >= 3 and meta == gpu
