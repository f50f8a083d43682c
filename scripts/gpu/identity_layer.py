"""The vehicle of the GPU checks that feed chosen values to an epilogue
(remainder_check.py, trigonometry_check.py): a linear layer whose weight
is the identity, so that every GEMM precision computes x exactly for bf16
x, and the epilogue adds the bias in f32 as PyTorch does; and random
values of either sign over a wide range of exponents."""
import torch
import torch.nn as nn

FEATURES = 256
ROWS = 4096


class IdentityLayer(nn.Module):
    """`body(x + bias, parameter)`, the sum an identity GEMM's epilogue's."""

    def __init__(self, body, bias=None, parameter=None):
        super().__init__()
        self.linear = nn.Linear(FEATURES, FEATURES)
        with torch.no_grad():
            self.linear.weight.copy_(torch.eye(FEATURES))
            self.linear.bias.copy_(torch.zeros(FEATURES) if bias is None
                                   else bias)
        self.parameter = None if parameter is None else nn.Parameter(parameter)
        self.body = body

    def forward(self, x):
        return self.body(self.linear(x), self.parameter)


def spread(count, low, high, generator, bf16=True):
    """`count` values of either sign, mantissas uniform in [1, 2), exponents
    uniform in [low, high]; rounded to bf16's where `bf16`."""
    mantissa = torch.rand(count, generator=generator) + 1.0
    exponent = torch.randint(low, high + 1, (count,),
                             generator=generator).float()
    sign = torch.randint(0, 2, (count,), generator=generator) * 2.0 - 1.0
    values = sign * mantissa * torch.exp2(exponent)
    return values.to(torch.bfloat16).float() if bf16 else values
