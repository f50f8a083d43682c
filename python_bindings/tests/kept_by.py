"""A dropout that keeps given elements: the dropout checks' references
(CPU and GPU) replace a model's dropout by the mask it drew."""
import torch.nn as nn


class KeptBy(nn.Module):
    """A dropout of `p` that keeps the elements of `keep`."""

    def __init__(self, keep, p):
        super().__init__()
        self.keep, self.p = keep, p

    def forward(self, x):
        return x * self.keep / (1 - self.p)
