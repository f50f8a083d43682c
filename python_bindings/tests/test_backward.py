"""The backward graph through fusion (issue 67's first step): AOTAutograd's
backward graph is partitioned as the forward is, each data-gradient GEMM
(dX = dZ @ W) fused with the derivative of the activation below it, which
reads the forward's saved value; the gradients of every parameter and of
the input against float64 on ragged batches, with PyTorch's ops for the
rest (fallback "eager", where the activations' backward ops stay whole) and
inductor's (which decomposes them)."""
import copy

import pytest
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

import fusion
import fusion.dynamo

pytestmark = pytest.mark.usefixtures("fresh_dynamo")

ACTIVATIONS = {
    "gelu": (F.gelu, "aten.gelu_backward.default"),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  "aten.gelu_backward.default"),
    "relu": (F.relu, "aten.threshold_backward.default"),
    "silu": (F.silu, "aten.silu_backward.default"),
    "sigmoid": (torch.sigmoid, "aten.sigmoid_backward.default"),
    "tanh": (torch.tanh, "aten.tanh_backward.default"),
}


class ThreeLayers(nn.Module):
    """Three linear layers with an activation after the first two: the
    backward's data gradients of the second and third are each followed
    by the derivative of the activation below."""

    def __init__(self, activation):
        super().__init__()
        self.first = nn.Linear(40, 96)
        self.second = nn.Linear(96, 48)
        self.third = nn.Linear(48, 24)
        self.activation = ACTIVATIONS[activation][0]

    def forward(self, x):
        return self.third(self.activation(
            self.second(self.activation(self.first(x)))))


def gradients(model, x):
    x = x.detach().requires_grad_()
    model.zero_grad(set_to_none=True)
    weights = torch.linspace(-1, 1, 24, dtype=x.dtype)
    (model(x) * weights).square().sum().backward()
    return [x.grad] + [p.grad for p in model.parameters()]


def gradient_errors(activation, options, batches=(13, 5)):
    """The largest relative error of the compiled model's gradients (the
    input's and every parameter's) against float64 at each batch."""
    torch.manual_seed(0)
    model = ThreeLayers(activation)
    reference = copy.deepcopy(model).double()
    compiled = torch.compile(model, backend="fusion", options=options)
    errors = []
    for batch in batches:
        x = torch.randn(batch, 40, dtype=torch.float64)
        found = gradients(compiled, x.float())
        expected = gradients(reference, x)
        errors.append(max(((f.double() - e).norm() / e.norm()).item()
                          for f, e in zip(found, expected)))
    return max(errors)


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_derivative_fused_into_data_gradient(activation):
    """Fallback "eager": the activation's backward op is fused whole into
    the data gradient of the layer above it, twice."""
    error = gradient_errors(activation, {
        "target": "cpu", "fallback": "eager", "fuse_backward": "on"})
    assert error < 1e-5
    fused = fusion.dynamo.last_fused_backward
    derivative = ACTIVATIONS[activation][1]
    assert sum(derivative in members and "aten.mm.default" in members
               for members in fused) == 2, fused


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_decomposed_derivative_fused_with_inductor(activation):
    """Fallback "inductor": the derivative's decomposition (erf and exp of
    the saved value; its comparison with 0 and a where) is pulled into the
    data gradient's partition, the saved value read from outside."""
    error = gradient_errors(activation, {
        "target": "cpu", "fallback": "inductor", "fuse_backward": "on"})
    assert error < 1e-5
    fused = fusion.dynamo.last_fused_backward
    expected = {"gelu": "aten.erf.default",
                "relu": "aten.where.self"}[activation]
    assert sum(expected in members and "aten.mm.default" in members
               for members in fused) == 2, fused


def test_backward_left_to_pytorch_when_off():
    error = gradient_errors("gelu", {
        "target": "cpu", "fallback": "eager", "fuse_backward": "off"})
    assert error < 1e-5
    assert fusion.dynamo.last_fused_backward == []
    assert fusion.dynamo.last_fused  # the forward still fuses


@pytest.mark.parametrize("dtype,fused", [(torch.float32, True),
                                         (torch.bfloat16, False)])
def test_auto_fuses_backward_where_fusion_is_faster(dtype, fused):
    """"auto" (the default): the backward's GEMMs that fusion computes
    faster than PyTorch even alone, f32 in fp32 precision on a GPU (3xTF32,
    here compiled for sm_90 without running); not bf16's, nor the CPU's."""
    model = ThreeLayers("gelu").to(dtype)
    x = torch.randn(8, 40, dtype=dtype, requires_grad=True)
    torch.compile(model, backend="fusion", options={
        "target": "sm_90", "compile_only": True})(x).float().sum().backward()
    assert bool(fusion.dynamo.last_fused_backward) == fused
    torch._dynamo.reset()
    gradient_errors("gelu", {"target": "cpu"})
    assert fusion.dynamo.last_fused_backward == []


def test_bad_fuse_backward_refused():
    compiled = torch.compile(ThreeLayers("relu"), backend="fusion", options={
        "target": "cpu", "fuse_backward": "sometimes"})
    with pytest.raises(Exception, match="fuse_backward='sometimes': auto, "
                                        "on, off"):
        compiled(torch.randn(4, 40))


def saved_value_graph(shared):
    """A backward graph's data gradient `mm` and the ReLU derivative read
    from the saved output: where(le(saved, 0), 0, mm); with `shared`,
    another op reads the comparison too."""
    graph = torch.fx.Graph()
    grad, weight, saved = (graph.placeholder(n)
                           for n in ("grad", "weight", "saved"))
    mm = graph.call_function(torch.ops.aten.mm.default, (grad, weight))
    le = graph.call_function(torch.ops.aten.le.Scalar, (saved, 0.0))
    where = graph.call_function(torch.ops.aten.where.self, (le, 0.0, mm))
    results = [where]
    if shared:
        results.append(graph.call_function(
            torch.ops.aten.logical_not.default, (le,)))
    graph.output(tuple(results))
    for node, value in ((grad, torch.empty(8, 16)),
                        (weight, torch.empty(16, 32)),
                        (saved, torch.empty(8, 32)),
                        (mm, torch.empty(8, 32)),
                        (le, torch.empty(8, 32, dtype=torch.bool)),
                        (where, torch.empty(8, 32))):
        node.meta["val"] = value
    return graph, mm, le, where


@pytest.mark.parametrize("shared", [False, True])
def test_saved_values_ops_pulled_only_where_not_shared(shared):
    """An elementwise op of an outside matrix is pulled into a backward
    partition (its reader given) unless something else reads it, which
    would compute it twice; never without a reader (forward graphs)."""
    graph, mm, le, where = saved_value_graph(shared)
    pulled = fusion.dynamo._pulled(le, {mm}, {}, True, where)
    assert pulled == ([] if shared else [le])
    assert fusion.dynamo._pulled(le, {mm}, {}, True) == []
