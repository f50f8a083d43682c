"""The vehicle of the GPU checks that feed chosen values to an epilogue
(remainder_check.py, trigonometry_check.py, special_functions_check.py):
a linear layer whose weight is the identity, so that every GEMM precision
computes x exactly for bf16 x, and the epilogue adds the bias in f32 as
PyTorch does; random values of either sign over a wide range of
exponents; and errors in ulps against float64."""
import torch
import torch.nn as nn

FEATURES = 512
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


def ulps(out, exact, magnitude=None):
    """|out - exact| in ulps of the f32 nearest exact (or `magnitude`;
    2^-149 below normals); 0 where both are NaN or both are the same zero,
    infinity where one is NaN alone or a zero's sign differs."""
    nearest = exact.float()
    scale = nearest if magnitude is None else magnitude.float()
    exponent = torch.frexp(scale).exponent.clamp(min=-125).double()
    error = (out.double() - exact).abs() / torch.exp2(exponent - 24)
    both_nan = out.isnan() & exact.isnan()
    error = torch.where(both_nan, torch.zeros_like(error), error)
    error = torch.where(out.isnan() ^ exact.isnan(),
                        torch.full_like(error, float("inf")), error)
    zero = nearest == 0
    same_bits = out.view(torch.int32) == nearest.view(torch.int32)
    return torch.where(zero & ~same_bits, torch.full_like(error, float("inf")),
                       error)
