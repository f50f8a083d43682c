"""Libraries compiled on the CPU for a GPU target (compile_only) are the
GPU's: a 16-bit norm's statistics, and an inference batch norm's saved
values, are traced with the GPU kernels' dtypes and shapes. The meta
device follows the GPU's rules, so a graph traced on it imports the
programs a GPU's graph does."""
import contextlib

import pytest
import torch
import torch.nn as nn

import fusion.cache
import fusion.dynamo
import fusion.gpu_metadata
import fusion.graph_rewrites
import transformer_zoo


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


class ResidualNormBlock(nn.Module):
    """A residual add and layer norm after a linear, then a linear, relu and
    batch norm, and a linear and group norm: a transformer's output
    projection and KernelBench problems, whose partitions end at or grow
    over the norms."""

    def __init__(self, features=64):
        super().__init__()
        self.proj = nn.Linear(features, features)
        self.norm = nn.LayerNorm(features)
        self.up = nn.Linear(features, features)
        self.bn = nn.BatchNorm1d(features)
        self.down = nn.Linear(features, features)
        self.groups = nn.GroupNorm(8, features)

    def forward(self, x):
        h = self.norm(x + self.proj(x))
        return self.groups(self.down(self.bn(torch.relu(self.up(h)))))


def relative_error(value, reference):
    return ((value.double() - reference).norm() / reference.norm()).item()


def step(dtype, training, compile, device="cpu"):
    """The output and input gradient of a training step of the block (bf16
    values, computed in `dtype`, through `compile`), its loss a fixed
    projection of the output (a batch norm's output sums to zero)."""
    torch.manual_seed(0)
    model = ResidualNormBlock().to(device, dtype).train(training)
    x = torch.randn(32, 64).to(torch.bfloat16).to(device, dtype)
    x.requires_grad_()
    projection = torch.randn(32, 64, dtype=torch.float64).to(device)
    out = compile(model)(x)
    (out.double() * projection).sum().backward()
    return out, x.grad


def library_keys(lookups, device, fallback, training, dtype):
    """The cache keys of the libraries that compile_only compiles for sm_90
    from a training step of the block in `dtype` on `device` (`lookups`:
    the library_lookups fixture); the step's output and input gradient."""
    start = len(lookups)
    torch._dynamo.reset()
    options = {"target": "sm_90", "compile_only": True,
               "fallback": fallback, "fuse_backward": "on"}
    out, grad = step(dtype, training, lambda model: torch.compile(
        model, backend="fusion", options=options), device)
    return _keys(lookups[start:]), out, grad


def _keys(lookups):
    return {fusion.cache.library_key(*lookup) for lookup in lookups}


DTYPES = [torch.bfloat16, torch.float32]


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "fp32"])
@pytest.mark.parametrize("fallback", ["inductor", "eager"])
@pytest.mark.parametrize("training", [True, False])
def test_compile_only_on_the_cpu_compiles_the_gpus_libraries(
        library_lookups, fallback, training, dtype):
    gpu_keys, *_ = library_keys(library_lookups, "meta", fallback, training,
                                dtype)
    cpu_keys, out, grad = library_keys(library_lookups, "cpu", fallback,
                                       training, dtype)
    assert len(gpu_keys) >= 3 and cpu_keys == gpu_keys
    # The CPU run itself computes as PyTorch does: within eager's error of
    # float64's step (its decomposed norms keep the GPU's float32
    # statistics).
    eager = step(dtype, training, nn.Identity())
    exact = step(torch.float64, training, nn.Identity())
    for value, eager_value, exact_value in zip((out, grad), eager, exact):
        assert relative_error(value, exact_value) <= \
            2 * relative_error(eager_value, exact_value) + 1e-3


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "fp32"])
@pytest.mark.parametrize("training", [True, False])
def test_the_cpus_own_metadata_imports_other_programs(
        monkeypatch, library_lookups, training, dtype):
    """Why the tracing follows the GPU: with the CPU's statistics (bf16)
    and its group norm's folded affine parameters (both), some partitions'
    programs differ from the GPU's (the test above can fail)."""
    gpu_keys, *_ = library_keys(library_lookups, "meta", "inductor", training,
                                dtype)
    monkeypatch.setattr(fusion.dynamo, "_traced_as_on_target",
                        lambda *args: contextlib.nullcontext())
    cpu_keys, *_ = library_keys(library_lookups, "cpu", "inductor", training,
                                dtype)
    assert cpu_keys != gpu_keys


# The encoders: transformers builds their all-true attention mask in the
# graph, which the mask rewrite must evaluate on meta tensors too, and
# their q, k and v projections are grouped or not by whether the attention
# saves them for the backward as they are.
ENCODERS = ["bert", "vit"]


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "fp32"])
@pytest.mark.parametrize("name", ENCODERS)
def test_meta_traces_attention_as_gpus_do(library_lookups, name, dtype):
    """A model on the meta device (how the bench's libraries are prepared)
    compiles the libraries a CPU trace does, whose attention saves q, k
    and v for the backward as a GPU's fused kernel does (the GPU checks
    find the CPU's libraries; tests/gpu/test_attention_choice.py compares
    the meta trace with CUDA's)."""
    meta_keys = transformer_zoo.training_step_keys(library_lookups, name,
                                                   dtype, "meta")
    cpu_keys = transformer_zoo.training_step_keys(library_lookups, name,
                                                  dtype, "cpu")
    assert len(meta_keys) >= 3 and meta_keys == cpu_keys


@pytest.mark.parametrize("disabled", ["attention", "mask"])
def test_meta_traces_differ_without_attention_or_mask_rewrite(
        monkeypatch, library_lookups, disabled):
    """Why both rewrites are needed: with the meta device's own attention
    (its math path) or with the mask left unevaluated on meta tensors (no
    fused kernel takes a mask here), BERT's q, k and v projections are
    grouped on meta tensors and computed apart on GPUs."""
    cpu_keys = transformer_zoo.training_step_keys(
        library_lookups, "bert", torch.float32, "cpu")
    if disabled == "attention":
        monkeypatch.setattr(fusion.gpu_metadata, "attention_as_on_gpus",
                            lambda gm, target: None)
    else:
        usable = fusion.graph_rewrites._usable_device
        monkeypatch.setattr(
            fusion.graph_rewrites, "_usable_device",
            lambda value: value if isinstance(value, torch.device) and
            value.type == "meta" else usable(value))
    meta_keys = transformer_zoo.training_step_keys(
        library_lookups, "bert", torch.float32, "meta")
    assert meta_keys != cpu_keys
