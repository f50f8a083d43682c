"""Reductions along the features, norms and softmax through fusion.compile
(CPU target): results of PyTorch's shapes ([B], [B, 1], the leading
dimensions of rank-3 inputs), any batch size, gradients, save and load,
bf16; against PyTorch in float64."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion


def relative_error(out, ref):
    return ((out.double() - ref.double()).norm() / ref.double().norm()).item()


class Heads(nn.Module):
    """Several per-row results of one linear layer, and a normalized
    second layer with a residual of the first."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 20)
        self.second = nn.Linear(20, 20)
        self.norm = nn.LayerNorm(20)
        self.groups = nn.GroupNorm(5, 20)

    def forward(self, x):
        y = self.linear(x)
        h = F.gelu(self.norm(self.second(y)) + y)
        z = self.groups(h.reshape(-1, 20)).view(h.shape)  # on [batch, C]
        return (torch.logsumexp(y, -1), y.var(-1, keepdim=True),
                F.log_softmax(z, -1), z.amax(-1) - y.amin(-1))


def _twins():
    torch.manual_seed(0)
    model = Heads()
    reference = Heads()
    reference.load_state_dict(model.state_dict())
    return model, reference


@pytest.mark.parametrize("shape", [(6, 16), (2, 3, 16)])
def test_shapes_and_batch_sizes(shape):
    model, reference = _twins()
    compiled = fusion.compile(model, (torch.randn(*shape),), target="cpu")
    reference.double()
    with torch.no_grad():
        for batch in (1, 5, 33):
            x = torch.randn(batch, *shape[1:-1], 16)
            outs = compiled(x)
            refs = reference(x.double())
            assert type(outs) is tuple and len(outs) == len(refs)
            for out, ref in zip(outs, refs):
                assert out.shape == ref.shape
                assert relative_error(out, ref) <= 1e-5


@pytest.mark.filterwarnings("ignore:var:UserWarning")  # the reference's
def test_empty_batch():
    model, reference = _twins()
    compiled = fusion.compile(model, (torch.randn(4, 16),), target="cpu")
    with torch.no_grad():
        outs = compiled(torch.randn(0, 16))
    assert [o.shape for o in outs] == [o.shape for o in
                                       reference(torch.randn(0, 16))]


def test_gradients_through_per_row_results():
    """The backward recomputes the graph; its [B] and [B, 1] results are
    matched to the library's [B, 1] ones."""
    model, reference = _twins()
    compiled = fusion.compile(model, (torch.randn(4, 16),), target="cpu")
    x = torch.randn(7, 16, requires_grad=True)
    x_reference = x.detach().clone().requires_grad_()
    weights = [torch.randn(7), torch.randn(7, 1), torch.randn(7, 20),
               torch.randn(7)]
    for outs, inputs in ((compiled(x), x), (reference(x_reference),
                                             x_reference)):
        sum((o * w).sum() for o, w in zip(outs, weights)).backward()
    assert relative_error(x.grad, x_reference.grad) <= 1e-5
    for (name, p), q in zip(model.named_parameters(),
                            reference.parameters()):
        assert relative_error(p.grad, q.grad) <= 1e-5, name


def test_save_and_load(tmp_path):
    model, reference = _twins()
    compiled = fusion.compile(model, (torch.randn(4, 16),), target="cpu")
    compiled.save(tmp_path / "saved")
    loaded = fusion.load(tmp_path / "saved", reference)
    x = torch.randn(9, 16)
    with torch.no_grad():
        for out, again in zip(compiled(x), loaded(x)):
            assert out.shape == again.shape and torch.equal(out, again)


def test_bf16():
    model, reference = _twins()
    model.to(torch.bfloat16)
    reference.double()
    x = torch.randn(12, 16)
    compiled = fusion.compile(model, (x.to(torch.bfloat16),), target="cpu")
    with torch.no_grad():
        outs = compiled(x.to(torch.bfloat16))
        refs = reference(x.double())
    for out, ref in zip(outs, refs):
        assert out.dtype == torch.bfloat16 and out.shape == ref.shape
        assert relative_error(out, ref) <= 2e-2


class Extremes(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 6)

    def forward(self, x):
        y = self.linear(x) * 1e30
        return F.softmax(y, -1), torch.logsumexp(y, -1), y.sum(-1)


def test_large_values_as_pytorch():
    """The maximum is subtracted before exponentials, as PyTorch does (no
    overflow); sums overflow to infinity as PyTorch's do."""
    model = Extremes()
    x = torch.randn(5, 4)
    compiled = fusion.compile(model, (x,), target="cpu")
    with torch.no_grad():
        for out, ref in zip(compiled(x), model(x)):
            torch.testing.assert_close(out, ref, rtol=1e-5, atol=0.0)
