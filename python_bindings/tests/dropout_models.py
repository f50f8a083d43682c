"""The dropout checks' models (CPU and GPU): a linear layer with dropout,
KernelBench 66's form, and the dropout that keeps given elements, which
the references put in place of a model's dropout."""
import torch
import torch.nn as nn


class LinearDropout(nn.Module):
    def __init__(self, in_features, out_features, p):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(p)

    def forward(self, x):
        return self.dropout(self.linear(x))


class DropoutSoftmax(LinearDropout):
    """KernelBench 66: `softmax(dropout(linear(x)))`, the softmax's row
    program after the GEMM."""

    def forward(self, x):
        return torch.softmax(super().forward(x), dim=-1)


class KeptBy(nn.Module):
    """A dropout of `p` that keeps the elements of `keep`."""

    def __init__(self, keep, p):
        super().__init__()
        self.keep, self.p = keep, p

    def forward(self, x):
        return x * self.keep / (1 - self.p)
