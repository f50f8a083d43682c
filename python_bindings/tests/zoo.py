"""A zoo of models of the GEMM-epilogue family that fusion compiles: a
linear layer and the cheap ops after it, in the forms users write them.
Ragged sizes (no tile multiples), negative constants, train and eval modes.
Used by test_zoo.py (CPU, both front ends) and scripts/gpu/zoo_check.py.

Each entry: name -> (factory, input shape, training). The factory builds
the model with its parameters; the batch is the first input dimension.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Chain(nn.Module):
    """linear(x) followed by `body(y, module)`."""

    def __init__(self, in_features, out_features, body, bias=True,
                 batch_norm=False, second=None):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)
        self.scale = nn.Parameter(torch.rand(out_features) * 3 - 1.5)
        self.register_buffer("shift", torch.randn(out_features))
        self.register_buffer("temperature", torch.tensor(-0.7))
        self.gain = nn.Parameter(torch.tensor([1.3]))
        self.bn = nn.BatchNorm1d(out_features, momentum=0.2) \
            if batch_norm else None
        self.second = nn.Linear(out_features, second) if second else None
        self.body = body

    def forward(self, x):
        y = self.body(self.linear(x), self)
        return self.second(y) if self.second is not None else y


def _chain(body, **kwargs):
    return lambda: Chain(37, 45, body, **kwargs)


ZOO = {
    # (a) elementwise with numbers, vectors and single values.
    "scale_leaky_relu": (_chain(lambda y, m: F.leaky_relu(y * 2.0, 0.1)),
                         (33, 37), False),
    "negative_slope": (_chain(lambda y, m: F.leaky_relu(-1.5 * y, -0.2)),
                       (33, 37), False),
    "gelu_erf": (_chain(lambda y, m: F.gelu(y)), (33, 37), False),
    "gelu_tanh": (_chain(lambda y, m: F.gelu(y, approximate="tanh")),
                  (33, 37), False),
    "sigmoid_no_bias": (_chain(lambda y, m: torch.sigmoid(y), bias=False),
                        (33, 37), False),
    "tanh_shift": (_chain(lambda y, m: torch.tanh(y - m.shift)),
                   (33, 37), False),
    "silu": (_chain(lambda y, m: F.silu(y)), (33, 37), False),
    "mish": (_chain(lambda y, m: F.mish(y)), (33, 37), False),
    "hardtanh": (_chain(lambda y, m: F.hardtanh(y, -0.5, 0.25)),
                 (33, 37), False),
    "hardswish": (_chain(lambda y, m: F.hardswish(y)), (33, 37), False),
    "hardsigmoid": (_chain(lambda y, m: F.hardsigmoid(y)), (33, 37), False),
    "softplus": (_chain(lambda y, m: F.softplus(y, beta=2.0, threshold=3.0)),
                 (33, 37), False),
    "elu": (_chain(lambda y, m: F.elu(y, alpha=0.7)), (33, 37), False),
    "exp_log_abs_neg": (_chain(
        lambda y, m: -torch.log(torch.exp(-y.abs()) + 1.0)), (33, 37), False),
    "clamp_both": (_chain(lambda y, m: torch.clamp(y, -0.3, 0.4)),
                   (33, 37), False),
    "clamp_min": (_chain(lambda y, m: y.clamp(min=-0.1)), (33, 37), False),
    "reversed_operands": (_chain(lambda y, m: 2.0 / (3.0 - y.abs()) - 1.0),
                          (33, 37), False),
    "vector_minimum": (_chain(lambda y, m: torch.minimum(m.scale, y)),
                       (33, 37), False),
    "single_values": (_chain(lambda y, m: y * m.temperature + m.gain),
                      (33, 37), False),
    "dropout_eval": (_chain(
        lambda y, m: F.relu(F.dropout(y, 0.3, training=False))),
        (33, 37), False),
    # (b) binary ops between values of one chain.
    "swish_by_hand": (_chain(lambda y, m: y * torch.sigmoid(y)),
                      (33, 37), False),
    "x_plus_x": (_chain(lambda y, m: y + y), (33, 37), False),
    "residual_of_chain": (_chain(lambda y, m: torch.relu(y * m.scale) + y),
                          (33, 37), False),
    # (c) batch norms, train and eval, followed by further ops.
    "batch_norm_train": (_chain(lambda y, m: m.bn(y * m.scale),
                                batch_norm=True), (33, 37), True),
    "batch_norm_eval": (_chain(lambda y, m: m.bn(y * m.scale),
                               batch_norm=True), (33, 37), False),
    "batch_norm_gelu_train": (_chain(lambda y, m: F.gelu(m.bn(y)),
                                     batch_norm=True), (33, 37), True),
    "batch_norm_mish_eval": (_chain(lambda y, m: F.mish(m.bn(y) * -2.0),
                                    batch_norm=True), (33, 37), False),
    # (f) compositions, two linear layers, rank 3.
    "two_layers": (_chain(lambda y, m: F.silu(y * m.scale), second=29),
                   (33, 37), False),
    "two_layers_bn": (_chain(lambda y, m: torch.tanh(m.bn(y)),
                             batch_norm=True, second=29), (33, 37), True),
    "rank_3": (_chain(lambda y, m: F.gelu(y) * m.scale), (3, 11, 37), False),
}
