"""The two workloads as the plain PyTorch modules users write."""
import torch
import torch.nn as nn


class LinearLeakyRelu(nn.Module):
    """(A): Linear + multiply by 2.0 + LeakyReLU(0.1)."""

    def __init__(self, in_features=8192, out_features=8192):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.act = nn.LeakyReLU(0.1)

    def forward(self, x):
        return self.act(self.linear(x) * 2.0)


class LinearScaleBatchNorm(nn.Module):
    """(B): Linear + `x * self.scale` + BatchNorm1d in training mode."""

    def __init__(self, in_features=4096, out_features=4096):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.rand(out_features) * 3 - 1.5)
        self.bn = nn.BatchNorm1d(out_features, eps=1e-5, momentum=0.1)

    def forward(self, x):
        return self.bn(self.linear(x) * self.scale)


# name -> (module class, batch size of the check)
WORKLOADS = {"A": (LinearLeakyRelu, 1024), "B": (LinearScaleBatchNorm, 16384)}
PRECISIONS = {"fp32": torch.float32, "tf32": torch.float32,
              "bf16": torch.bfloat16}
