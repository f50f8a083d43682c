"""Random chains of the table's elementwise ops (and batch norms) after
linear layers, through torch.compile(backend="fusion") and fusion.compile on
the CPU target, against PyTorch in float64: what the partitioner and the
importer make of compositions nobody wrote by hand. Seeded: each case is
reproducible from its number."""
import random

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
import fusion.dynamo

# Unary steps on the chain value y (v: a per-column parameter).
UNARY = [
    lambda y, v, c: F.gelu(y),
    lambda y, v, c: F.gelu(y, approximate="tanh"),
    lambda y, v, c: torch.sigmoid(y),
    lambda y, v, c: torch.tanh(y),
    lambda y, v, c: F.silu(y),
    lambda y, v, c: F.mish(y),
    lambda y, v, c: F.hardswish(y),
    lambda y, v, c: F.hardsigmoid(y),
    lambda y, v, c: F.softplus(y),
    lambda y, v, c: F.elu(y, alpha=abs(c)),
    lambda y, v, c: F.leaky_relu(y, c),
    lambda y, v, c: torch.relu(y),
    lambda y, v, c: F.hardtanh(y, -abs(c), abs(c) + 0.5),
    lambda y, v, c: torch.clamp(y, min=c),
    lambda y, v, c: y * c,
    lambda y, v, c: c - y,
    lambda y, v, c: y / (abs(c) + 0.5),
    lambda y, v, c: y * v,
    lambda y, v, c: v + y,
    lambda y, v, c: torch.maximum(y, v),
    lambda y, v, c: y * torch.sigmoid(y),
    lambda y, v, c: y + y * c,
    lambda y, v, c: torch.where(y > c, y, v),
    lambda y, v, c: torch.exp(-y.abs()),
    lambda y, v, c: y ** 2 - y,
]


class RandomChain(nn.Module):
    def __init__(self, seed):
        super().__init__()
        rng = random.Random(seed)
        features = [rng.randint(3, 21) for _ in range(rng.randint(2, 3))]
        self.layers = nn.ModuleList(
            nn.Linear(a, b, bias=rng.random() < 0.8)
            for a, b in zip(features, features[1:]))
        self.vectors = nn.ParameterList(
            nn.Parameter(torch.randn(b)) for b in features[1:])
        self.norms = nn.ModuleList(
            nn.BatchNorm1d(b) if rng.random() < 0.3 else nn.Identity()
            for b in features[1:])
        self.steps = [[(rng.randrange(len(UNARY)),
                        round(rng.uniform(-2, 2), 3))
                       for _ in range(rng.randint(1, 4))]
                      for _ in features[1:]]
        self.in_features = features[0]

    def forward(self, x):
        for layer, vector, norm, steps in zip(self.layers, self.vectors,
                                              self.norms, self.steps):
            x = layer(x)
            for index, (step, constant) in enumerate(steps):
                x = UNARY[step](x, vector, constant)
                if index == 0:
                    x = norm(x)
        return x


def relative_error(out, reference):
    return ((out.double() - reference).norm() / reference.norm()).item()


@pytest.mark.parametrize("seed", range(12))
def test_random_chain(seed):
    torch._dynamo.reset()
    torch.manual_seed(seed)
    model = RandomChain(seed).train(seed % 2 == 0)
    with torch.no_grad():
        for norm in model.norms:
            if isinstance(norm, nn.BatchNorm1d):
                norm.running_mean.uniform_(-1, 1)
                norm.running_var.uniform_(0.5, 2)
    reference = RandomChain(seed).train(seed % 2 == 0)
    reference.load_state_dict(model.state_dict())
    reference.double()
    x = torch.randn(9, model.in_features)
    with torch.no_grad():
        out = torch.compile(model, backend="fusion")(x)
        expected = reference(x.double())
        assert relative_error(out, expected) <= 1e-5
        assert fusion.dynamo.last_fused, "nothing was fused"
        for name, buffer in reference.named_buffers():
            torch.testing.assert_close(model.get_buffer(name).double(),
                                       buffer.double(), rtol=1e-5,
                                       atol=1e-6, msg=name)
        compiled = fusion.compile(model, (x,), target="cpu")
        assert relative_error(compiled(x), reference(x.double())) <= 1e-5
