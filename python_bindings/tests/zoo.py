"""A zoo of models of the GEMM-epilogue family that fusion compiles: a
linear layer and the cheap ops after it, in the forms users write them:
elementwise ops, batch norms, reductions along the features (sums, means,
extrema, variances, logsumexp; results of shape [B] and [B, 1]), softmax,
layer and group norms, max and average pooling of the features, and binary
ops with another layer's output.
Ragged sizes (no tile multiples), negative constants, train and eval modes.
Used by test_zoo.py (CPU, both front ends) and gpu/test_zoo.py (GPU).

Each entry: name -> (factory, input shape, training). The factory builds
the model with its parameters; the batch is the first input dimension.
Every model returns one tensor.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Chain(nn.Module):
    """linear(x) followed by `body(y, module)`."""

    def __init__(self, in_features, out_features, body, bias=True,
                 batch_norm=False, second=None, norm=None, after=None):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)
        self.scale = nn.Parameter(torch.rand(out_features) * 3 - 1.5)
        self.register_buffer("shift", torch.randn(out_features))
        self.register_buffer("temperature", torch.tensor(-0.7))
        self.gain = nn.Parameter(torch.tensor([1.3]))
        self.bn = nn.BatchNorm1d(out_features, momentum=0.2) \
            if batch_norm else None
        self.second = nn.Linear(out_features, second) if second else None
        # A normalization module (LayerNorm, GroupNorm) of the features.
        self.norm = norm(out_features) if norm is not None else None
        self.body = body
        self.after = after  # ops after the second layer

    def forward(self, x):
        y = self.body(self.linear(x), self)
        if self.second is None:
            return y
        z = self.second(y)
        return self.after(z, self) if self.after is not None else z


class TwoLinear(nn.Module):
    """body(linear(x), side, module): `side` is a second linear layer of
    the same input (`x -> side(x)`) or of the first's output."""

    def __init__(self, in_features, body, out_features=45, on_input=True):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.side = nn.Linear(in_features if on_input else out_features,
                              out_features)
        self.scale = nn.Parameter(torch.rand(out_features) * 3 - 1.5)
        self.on_input = on_input
        self.body = body

    def forward(self, x):
        y = self.linear(x)
        return self.body(y, self.side(x if self.on_input else F.gelu(y)),
                         self)


class GatedByInput(nn.Module):
    """sigmoid(linear(x)) * x: the input is a [B, N] operand of the
    linear layer's chain."""

    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return torch.sigmoid(self.linear(x)) * x - 0.5


def _layer_norm(**kwargs):
    return lambda features: nn.LayerNorm(features, **kwargs)


def _group_norm(groups, **kwargs):
    return lambda features: nn.GroupNorm(groups, features, **kwargs)


def _periodic(value, period):
    """cos(2 pi value / period): a remainder by `period` as a continuous
    function."""
    return torch.cos(value * (2 * math.pi) / period)


def _swiglu(value, gate):
    return F.silu(value) * gate


def _centre(y):
    return y - y.mean(dim=1, keepdim=True)


def zoo(in_features=37):
    """The zoo for inputs of `in_features` features: 37 by default (rows of
    x and w that are no multiple of 16 bytes), 40 for the Hopper kernels'
    TMA loads, which need them."""
    k = in_features

    def chain(body, **kwargs):
        return lambda: Chain(k, 45, body, **kwargs)

    return {
        # (a) elementwise with numbers, vectors and single values.
        "scale_leaky_relu": (chain(lambda y, m: F.leaky_relu(y * 2.0, 0.1)),
                             (33, k), False),
        "negative_slope": (chain(lambda y, m: F.leaky_relu(-1.5 * y, -0.2)),
                           (33, k), False),
        "gelu_erf": (chain(lambda y, m: F.gelu(y)), (33, k), False),
        "gelu_tanh": (chain(lambda y, m: F.gelu(y, approximate="tanh")),
                      (33, k), False),
        "sigmoid_no_bias": (chain(lambda y, m: torch.sigmoid(y), bias=False),
                            (33, k), False),
        "tanh_shift": (chain(lambda y, m: torch.tanh(y - m.shift)),
                       (33, k), False),
        "silu": (chain(lambda y, m: F.silu(y)), (33, k), False),
        "mish": (chain(lambda y, m: F.mish(y)), (33, k), False),
        "hardtanh": (chain(lambda y, m: F.hardtanh(y, -0.5, 0.25)),
                     (33, k), False),
        "hardswish": (chain(lambda y, m: F.hardswish(y)), (33, k), False),
        "hardsigmoid": (chain(lambda y, m: F.hardsigmoid(y)), (33, k), False),
        "softplus": (chain(
            lambda y, m: F.softplus(y, beta=2.0, threshold=3.0)),
                     (33, k), False),
        "elu": (chain(lambda y, m: F.elu(y, alpha=0.7)), (33, k), False),
        "exp_log_abs_neg": (chain(
            lambda y, m: -torch.log(torch.exp(-y.abs()) + 1.0)),
            (33, k), False),
        "clamp_both": (chain(lambda y, m: torch.clamp(y, -0.3, 0.4)),
                       (33, k), False),
        "clamp_min": (chain(lambda y, m: y.clamp(min=-0.1)), (33, k), False),
        "reversed_operands": (chain(lambda y, m: 2.0 / (3.0 - y.abs()) - 1.0),
                              (33, k), False),
        "divide_by_constants": (chain(lambda y, m: y / -0.7 + y / 3.0),
                                (33, k), False),
        "softshrink_exp2": (chain(lambda y, m: F.softshrink(y, 0.3) -
                                  torch.exp2(-y.abs()) * torch.sign(y)),
                            (33, k), False),
        "sin_cos_atan2": (chain(lambda y, m: torch.sin(y) * torch.cos(
            y * -0.5 + m.shift) + torch.atan2(y, m.gain)),
            (33, k), False),
        "hyperbolic_erfc_log10": (chain(
            lambda y, m: torch.asinh(y) - torch.erfc(y * 0.5) *
            torch.cosh(torch.tanh(y)) + torch.log10(y.abs() + 1.0)),
            (33, k), False),
        # Remainders and rounding divisions, each inside a function of its
        # period (continuous: the comparisons of precisions flip no element
        # past a jump); divisors of either sign, a matrix's included.
        "periodic_remainders": (chain(
            lambda y, m: torch.sin(torch.fmod(y, 1.3) * (2 * math.pi / 1.3)) +
            _periodic(torch.remainder(y, -1.0 - torch.sigmoid(y)),
                      -1.0 - torch.sigmoid(y)) +
            _periodic(y - torch.div(y, -1.1, rounding_mode="floor") * -1.1,
                      1.1) +
            _periodic(y - torch.div(y, 0.9, rounding_mode="trunc") * 0.9,
                      0.9)), (33, k), False),
        "hypot_copysign_lerp_heaviside": (chain(
            lambda y, m: torch.hypot(y, m.shift) + torch.copysign(y, m.scale) +
            torch.where(torch.signbit(y), -y, y) * 0.5 +
            torch.heaviside(y, m.scale) * y +
            torch.lerp(y, torch.tanh(y), torch.sigmoid(y)) +
            torch.lerp(y, m.shift, -0.7)), (33, k), False),
        # Powers of non-special exponents, of a number and to a parameter's
        # (libdevice's powf, out of line on the GPU: fusion-outline-powers).
        "powers": (chain(
            lambda y, m: (y.abs() + 0.25) ** 1.7 -
            torch.sigmoid(y) ** -1.3 + 1.5 ** torch.tanh(y) +
            torch.pow(torch.sigmoid(y) + 0.5, m.scale)), (33, k), False),
        # Special functions written with the math dialect's ops
        # (fusion/special.py), each over its domain.
        # (One heavy function a model: ptxas takes minutes over several
        # inlined for each of a thread's elements.)
        "lgamma_softplus": (chain(
            lambda y, m: torch.lgamma(F.softplus(y) + 0.25) - y * 0.5),
            (33, k), False),
        "digamma_erfinv": (chain(
            lambda y, m: torch.digamma(y.abs() + 0.5) * 0.5 +
            torch.erfinv(torch.tanh(y) * 0.99)), (33, k), False),
        "bessel_log_ndtr": (chain(
            lambda y, m: torch.special.i0e(y * 3.0) - torch.special.i1(y) +
            torch.special.log_ndtr(y * -2.0) * 0.1), (33, k), False),
        # C's and CUDA's Bessel functions (no formula), multigammaln's sum
        # of lgammas, trigamma and polygamma of order 3 (zeta's series).
        "bessel_multigammaln_polygamma": (chain(
            lambda y, m: torch.special.bessel_j0(y * 3.0) -
            torch.special.bessel_y1(y.abs() * 3.0 + 0.5) * 0.1 +
            torch.special.multigammaln(y.abs() + 1.5, 2) * 0.1 +
            torch.polygamma(1, y.abs() + 0.5) * 0.1 +
            torch.polygamma(3, torch.sigmoid(y) * -0.2 - 2.4) * 0.01),
            (33, k), False),
        # Orthogonal polynomials of whole degrees: recurrences and, past
        # degree 6 (shifted W: 4), Chebyshev's closed forms in acos x.
        "orthogonal_polynomials": (chain(
            lambda y, m: torch.special.chebyshev_polynomial_t(
                torch.tanh(y), 9) +
            torch.special.legendre_polynomial_p(torch.tanh(y), 4) +
            torch.special.hermite_polynomial_he(y, 3) * 0.1 +
            torch.special.shifted_chebyshev_polynomial_w(
                torch.sigmoid(y), 6) * 0.1),
            (33, k), False),
        # Booleans as numbers, tests of NaN (each term continuous: the
        # comparisons of precisions flip no element past a jump).
        "masks_nan_to_num": (chain(
            lambda y, m: y * (y > 0) + torch.nan_to_num(torch.sqrt(y)) *
            torch.logical_not(y < -0.5).to(y.dtype)), (33, k), False),
        "isfinite_logical_or": (chain(
            lambda y, m: torch.where(torch.isfinite(torch.log(y)),
                                     torch.log1p(y), 0.0) +
            ((y > 1) + (y < -1)).to(y.dtype) * (y.abs() - 1.0)),
            (33, k), False),
        # Gated layers: pieces of the features of one GEMM.
        "glu": (lambda: Chain(k, 90, lambda y, m: F.glu(y)), (33, k), False),
        "swiglu_chunk_scaled": (lambda: Chain(k, 90, lambda y, m: _swiglu(
            *(y * m.scale - 0.5).chunk(2, dim=-1))), (33, k), False),
        "geglu_softmax": (lambda: Chain(k, 90, lambda y, m: F.softmax(
            F.gelu(y[:, :45]) * y[:, 45:], dim=-1)), (33, k), False),
        "vector_minimum": (chain(lambda y, m: torch.minimum(m.scale, y)),
                           (33, k), False),
        "vector_maximum_clamp_max": (chain(
            lambda y, m: torch.maximum(y, m.scale).clamp(max=0.2)),
            (33, k), False),
        "single_values_left": (chain(
            lambda y, m: m.gain * (m.temperature - y)), (33, k), False),
        "single_values": (chain(lambda y, m: y * m.temperature + m.gain),
                          (33, k), False),
        # Ops of parameters and buffers alone (a learned temperature's
        # exp, a gate's sigmoid), computed where the layer's values read
        # them.
        "vectors_alone": (chain(
            lambda y, m: y * torch.exp(m.gain) + torch.sigmoid(m.scale) *
            torch.tanh(m.temperature).view(1, 1) +
            torch.ldexp(y, torch.round(m.scale * 2.0)) +
            torch.xlogy(y, m.scale.abs() + 0.5) * (m.scale > 0).to(y.dtype) -
            y / m.temperature.abs().clamp(min=0.25)), (33, k), False),
        "tensors_made_in_forward": (chain(
            lambda y, m: F.elu(y * torch.tensor(-1.5) + torch.tensor(0.5))),
            (33, k), False),
        "dropout_eval": (chain(
            lambda y, m: F.relu(F.dropout(y, 0.3, training=False))),
            (33, k), False),
        # (b) binary ops between values of one chain.
        "swish_by_hand": (chain(lambda y, m: y * torch.sigmoid(y)),
                          (33, k), False),
        "x_plus_x": (chain(lambda y, m: y + y), (33, k), False),
        "residual_of_chain": (chain(lambda y, m: torch.relu(y * m.scale) + y),
                              (33, k), False),
        # (c) batch norms, train and eval, followed by further ops.
        "batch_norm_train": (chain(lambda y, m: m.bn(y * m.scale),
                                    batch_norm=True), (33, k), True),
        "batch_norm_eval": (chain(lambda y, m: m.bn(y * m.scale),
                                   batch_norm=True), (33, k), False),
        "batch_norm_gelu_train": (chain(lambda y, m: F.gelu(m.bn(y)),
                                         batch_norm=True), (33, k), True),
        "batch_norm_mish_eval": (chain(lambda y, m: F.mish(m.bn(y) * -2.0),
                                        batch_norm=True), (33, k), False),
        # (f) compositions, two linear layers, rank 3.
        "two_layers": (chain(lambda y, m: F.silu(y * m.scale), second=29),
                       (33, k), False),
        "two_layers_bn": (chain(lambda y, m: torch.tanh(m.bn(y)),
                                 batch_norm=True, second=29), (33, k), True),
        "rank_3": (chain(lambda y, m: F.gelu(y) * m.scale), (3, 11, k), False),
        # (d) reductions along the features, keepdim or not ([B] and [B, 1]
        # results), and ops on them.
        "sum": (chain(lambda y, m: y.sum(1)), (33, k), False),
        "sum_keepdim_tanh": (chain(
            lambda y, m: torch.tanh(y).sum(dim=-1, keepdim=True)),
            (33, k), False),
        "mean": (chain(lambda y, m: y.mean(-1)), (33, k), False),
        "mean_keepdim_scaled": (chain(
            lambda y, m: (y * m.scale).mean(1, keepdim=True) * -3.0),
            (33, k), False),
        "amax_times_two": (chain(lambda y, m: y.amax(1) * 2.0),
                           (33, k), False),
        "amax_keepdim": (chain(lambda y, m: y.amax(1, keepdim=True)),
                         (33, k), False),
        "amin_negative": (chain(lambda y, m: (-1.5 * y).amin(-1)),
                          (33, k), False),
        "amin_keepdim_leaky_relu": (chain(
            lambda y, m: F.leaky_relu(y.amin(1, keepdim=True) + 0.5, 0.2)),
            (33, k), False),
        "max_values": (chain(lambda y, m: y.max(dim=1).values),
                       (33, k), False),
        "min_keepdim": (chain(lambda y, m: torch.min(y, 1, keepdim=True)[0]),
                        (33, k), False),
        "max_minus_min": (chain(lambda y, m: y.amax(1) - y.amin(1)),
                          (33, k), False),
        "single_value_of_reduction": (chain(lambda y, m: y.amax(1) * m.gain),
                                      (33, k), False),
        "var_unbiased": (chain(lambda y, m: y.var(1)), (33, k), False),
        "var_biased_keepdim": (chain(
            lambda y, m: y.var(1, correction=0, keepdim=True)),
            (33, k), False),
        "std": (chain(lambda y, m: y.std(1)), (33, k), False),
        "std_biased_keepdim": (chain(
            lambda y, m: torch.std(y, 1, correction=0, keepdim=True)),
            (33, k), False),
        "var_mean_sum": (chain(lambda y, m: sum(torch.var_mean(y, 1))),
                         (33, k), False),
        "logsumexp": (chain(lambda y, m: torch.logsumexp(y, 1)),
                      (33, k), False),
        "gelu_logsumexp_keepdim": (chain(lambda y, m: F.gelu(
            torch.logsumexp(y * -0.5, dim=1, keepdim=True))), (33, k), False),
        "vector_norm": (chain(lambda y, m: torch.linalg.vector_norm(y, dim=1)),
                        (33, k), False),
        # (e) softmax, and reduced values broadcast back over the row.
        "softmax": (chain(lambda y, m: F.softmax(y, dim=1)), (33, k), False),
        "softmax_temperature": (chain(
            lambda y, m: F.softmax(y * -0.5, dim=-1), bias=False),
            (33, k), False),
        "log_softmax_shift": (chain(
            lambda y, m: F.log_softmax(y - m.shift, dim=1)), (33, k), False),
        "log_softmax_by_hand": (chain(
            lambda y, m: y - torch.logsumexp(y, 1, keepdim=True)),
            (33, k), False),
        "centre": (chain(lambda y, m: _centre(y)), (33, k), False),
        "reduce_broadcast_ops": (chain(
            lambda y, m: torch.relu(y - y.amax(1, keepdim=True) + 1.0) *
            (y / y.abs().sum(1, keepdim=True))), (33, k), False),
        "softmax_then_sum": (chain(
            lambda y, m: (F.softmax(y, 1) * m.scale).sum(1)), (33, k), False),
        "centred_abs_max": (chain(lambda y, m: _centre(y).abs().amax(1)),
                            (33, k), False),
        "rms_norm": (chain(lambda y, m: F.rms_norm(y, (45,)) * m.scale),
                     (33, k), False),
        "fused_rms_norm_op": (chain(
            lambda y, m: torch.ops.aten._fused_rms_norm(
                y, [45], m.scale, None)[0] - 0.5),
            (33, k), False),  # CUDA's form
        "normalize": (chain(lambda y, m: F.normalize(y, dim=1)),
                      (33, k), False),
        "grouped_softmax": (chain(
            lambda y, m: y.view(-1, 5, 9).softmax(-1).view(-1, 45)),
            (33, k), False),
        "grouped_sums": (chain(lambda y, m: y.view(-1, 3, 15).sum(-1)),
                         (33, k), False),
        # (f) layer and group norms followed by further ops.
        "layer_norm": (chain(lambda y, m: m.norm(y), norm=_layer_norm()),
                       (33, k), False),
        "layer_norm_plain_gelu": (chain(
            lambda y, m: F.gelu(m.norm(y)),
            norm=_layer_norm(elementwise_affine=False)), (33, k), False),
        "layer_norm_no_bias": (chain(
            lambda y, m: m.norm(y * m.scale) * -2.0,
            norm=_layer_norm(bias=False, eps=1e-3)), (33, k), False),
        "group_norm_3_silu": (chain(lambda y, m: F.silu(m.norm(y)),
                                     norm=_group_norm(3)), (33, k), False),
        "group_norm_5_plain": (chain(
            lambda y, m: torch.relu(m.norm(y)) - 0.25,
            norm=_group_norm(5, affine=False)), (33, k), False),
        "group_norm_15_tanh": (chain(lambda y, m: torch.tanh(m.norm(y)),
                                      norm=_group_norm(15)), (33, k), False),
        "group_norm_1_gelu": (chain(lambda y, m: F.gelu(m.norm(y)),
                                     norm=_group_norm(1)), (33, k), False),
        "norm_gelu_softmax": (chain(lambda y, m: F.softmax(
            F.gelu(m.norm(y)), dim=1), norm=_layer_norm()), (33, k), False),
        "batch_norm_softmax_train": (chain(
            lambda y, m: F.softmax(m.bn(y), dim=1), batch_norm=True),
            (33, k), True),
        "batch_norm_layer_norm_eval": (chain(
            lambda y, m: m.norm(m.bn(y)), batch_norm=True,
            norm=_layer_norm()), (33, k), False),
        "rank_3_layer_norm": (chain(lambda y, m: m.norm(y),
                                     norm=_layer_norm()), (3, 11, k), False),
        "rank_3_logsumexp": (chain(lambda y, m: torch.logsumexp(y, -1)),
                             (3, 11, k), False),
        # (h) pooling along the features: non-overlapping windows of a
        # [B, 1, N] (or [B, C, L]) view, results in PyTorch's shape.
        "max_pool": (chain(lambda y, m: F.max_pool1d(y.unsqueeze(1), 5)
                            .squeeze(1)), (33, k), False),
        "max_pool_module_3d_result": (chain(
            lambda y, m: nn.MaxPool1d(9)(y.view(-1, 1, 45))), (33, k), False),
        "min_pool_negated": (chain(
            lambda y, m: -F.max_pool1d(-1.5 * y.unsqueeze(1), 3, stride=3)),
            (33, k), False),
        "max_pool_channels": (chain(
            lambda y, m: F.max_pool1d(y.view(-1, 3, 15), 5, ceil_mode=True) *
            m.gain), (33, k), False),  # ceil_mode: no partial window here
        "avg_pool_gelu": (chain(lambda y, m: F.gelu(
            F.avg_pool1d((y * m.scale).unsqueeze(1), 3).squeeze(1) * -2.0 +
            0.5)), (33, k), False),
        "avg_pool_module_softmax": (chain(lambda y, m: F.softmax(
            nn.AvgPool1d(5)(y.unsqueeze(1)), dim=-1)), (33, k), False),
        "avg_pool_divisor_override": (chain(lambda y, m: F.avg_pool2d(
            y.view(-1, 1, 1, 45), (1, 9), divisor_override=4)),
            (33, k), False),
        "max_pool_then_sum": (chain(
            lambda y, m: F.max_pool1d(torch.tanh(y).unsqueeze(1), 9).sum(-1)),
            (33, k), False),
        "window_max_subtracted": (chain(lambda y, m: (
            y.view(-1, 9, 5) -
            F.max_pool1d(y.unsqueeze(1), 5).view(-1, 9, 1)).view(-1, 45)),
            (33, k), False),
        "adaptive_avg_pool": (chain(
            lambda y, m: F.adaptive_avg_pool1d(y.unsqueeze(1), 9)),
            (33, k), False),
        "adaptive_max_pool_shift": (chain(
            lambda y, m: nn.AdaptiveMaxPool1d(15)(
                y.unsqueeze(1)).squeeze(1) - 0.25), (33, k), False),
        "layer_norm_max_pool": (chain(lambda y, m: F.max_pool1d(
            m.norm(y).unsqueeze(1), 5).squeeze(1), norm=_layer_norm()),
            (33, k), False),
        "batch_norm_avg_pool_train": (chain(lambda y, m: F.avg_pool1d(
            m.bn(y).unsqueeze(1), 9).squeeze(1), batch_norm=True),
            (33, k), True),
        "rank_3_max_pool": (chain(lambda y, m: F.max_pool1d(y, 3)),
                            (3, 11, k), False),
        # (g) binary ops between layers, and two layers with reductions.
        "residual_second_linear": (lambda: TwoLinear(k, lambda y, s, m: y + s),
                                   (33, k), False),
        "gelu_plus_second_linear": (lambda: TwoLinear(k,
            lambda y, s, m: F.gelu(y) * -0.5 + s * m.scale), (33, k), False),
        "second_linear_of_first": (lambda: TwoLinear(k,
            lambda y, s, m: torch.tanh(s) + y, on_input=False),
            (33, k), False),
        "gated_by_input": (lambda: GatedByInput(k), (33, k), False),
        "maximum_of_layers": (lambda: TwoLinear(
            k, lambda y, s, m: torch.maximum(y * -0.5, s) - s.abs()),
            (33, k), False),
        "two_layers_reductions": (chain(
            lambda y, m: _centre(y), second=29,
            after=lambda z, m: torch.logsumexp(z, 1)), (33, k), False),
        "two_layers_norms": (chain(
            lambda y, m: F.gelu(m.norm(y)), second=29, norm=_layer_norm(),
            after=lambda z, m: F.log_softmax(z, 1)), (33, k), False),
    }


ZOO = zoo()



class AtSpecialValues(nn.Module):
    """`body(y, v)` of an identity layer and a vector of zeros of either
    sign, infinities, NaN and finite values."""

    def __init__(self, body):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        with torch.no_grad():
            self.linear.weight.copy_(torch.eye(8))
            self.linear.bias.zero_()
        inf = float("inf")
        self.vector = nn.Parameter(torch.tensor(
            [0.0, -0.0, inf, -inf, float("nan"), 0.7, -0.7, 3.0]))
        self.body = body

    def forward(self, x):
        return self.body(self.linear(x), self.vector)


# Remainders, rounding divisions and sign ops at special values: the
# divisors' zeros, infinities and NaN, exact multiples, values of either
# sign and quotients past 2^23 (fmod's long path). name -> (body, relative
# tolerance against PyTorch's kernels): 3e-7 where the formula is
# PyTorch's (a compiler may contract lerp's product and sum; the rest are
# exact), 6e-7 for hypot (within 2 ulps, libdevice's hypotf within 3).
SPECIAL_VALUES = {
    "fmod": (lambda y, v: torch.fmod(y, v), 3e-7),
    "remainder": (lambda y, v: torch.remainder(y, v), 3e-7),
    "remainder of a number": (lambda y, v: torch.remainder(-2.5, y), 3e-7),
    "floor division": (
        lambda y, v: torch.div(y, v, rounding_mode="floor"), 3e-7),
    "truncating division": (
        lambda y, v: torch.div(y, v, rounding_mode="trunc"), 3e-7),
    "copysign": (lambda y, v: torch.copysign(y, v), 3e-7),
    "signbit": (lambda y, v: torch.signbit(y * v).to(y.dtype), 3e-7),
    "heaviside": (lambda y, v: torch.heaviside(y, v), 3e-7),
    "hypot": (lambda y, v: torch.hypot(y, v), 6e-7),
    "lerp": (lambda y, v: torch.lerp(y, v, 0.3) + torch.lerp(y, v, 0.8),
             3e-7),
    "round to decimals": (
        lambda y, v: torch.round(y * v, decimals=3) -
        torch.round(y, decimals=-1), 3e-7),
    # 10^39 is infinite in f32 (10^400 in float64 too): NaN, as PyTorch's.
    "round to 39 decimals": (
        lambda y, v: torch.round(y, decimals=39) +
        torch.round(y, decimals=-39) + torch.round(y, decimals=400), 0.0),
}


def special_values(name):
    """The model of SPECIAL_VALUES[name], its input and the tolerance. The
    input's values are bf16's, so that every GEMM precision computes y = x
    exactly."""
    torch.manual_seed(0)
    x = torch.cat([torch.tensor([[0.0, -3.5, 2.125, -2.125, 2.0 ** 100,
                                  -2.0 ** -100, 0.375, -6.0],
                                 [1.375, -1.375, 7.0, 2.75, -9.0, 6.0,
                                  2.0 ** 66, -2.0 ** 30]]),
                   torch.randn(5, 8) * 10]).to(torch.bfloat16).float()
    body, tolerance = SPECIAL_VALUES[name]
    return AtSpecialValues(body), x, tolerance
