"""The PyTorch importer: the fusion IR of traced modules, FileCheck-style
(the ops, their operands and attributes, in order), and the errors for what
it cannot import."""
import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
from fusion.torch import import_module

from conftest import LinearLeakyRelu, LinearScaleBatchNorm


def check(text, *patterns):
    """Each regex of `patterns` matches, in order, later in `text`."""
    position = 0
    for pattern in patterns:
        match = re.compile(pattern).search(text, position)
        assert match, f"{pattern!r} not found after:\n{text[position:]}"
        position = match.end()


def ops(text):
    return re.findall(r"fusion\.(\w+)", text)


def test_workload_a():
    f = import_module(LinearLeakyRelu(96, 80), (torch.randn(4, 96),),
                      training=True)
    check(f.text,
          r"func.func @forward\(%arg0: tensor<\?x96xf32>, "
          r"%arg1: tensor<80x96xf32>, %arg2: tensor<80xf32>\) -> "
          r"\(tensor<\?x80xf32>\)",
          r"%v1 = fusion.linear %arg0, %arg1, %arg2 :",
          r"%v2 = fusion.mul_scalar %v1, 2.0 :",
          r"%v3 = fusion.leaky_relu %v2, negative_slope = 0.1 :",
          r"return %v3")
    assert [a.kind for a in f.arguments] == ["input", "parameter",
                                             "parameter"]
    assert [a.name for a in f.arguments[1:]] == ["linear.weight",
                                                 "linear.bias"]


def test_workload_b_training():
    f = import_module(LinearScaleBatchNorm(96, 80), (torch.randn(4, 96),),
                      training=True)
    check(f.text,
          r"fusion.linear %arg0, %arg1, %arg2",
          r"%v2 = fusion.mul %v1, %arg3 : tensor<\?x80xf32>, tensor<80xf32>",
          r"%v3:3 = fusion.batch_norm %v2, <training, epsilon = 1.0e-05, "
          r"momentum = 0.1> weight\(%arg4\) bias\(%arg5\) "
          r"running_stats\(%arg6, %arg7\)",
          r"return %v3#0, %v3#1, %v3#2")
    assert [(r.kind, r.name) for r in f.results] == [
        ("output", ""), ("running_mean", "bn"), ("running_var", "bn")]
    assert [a.kind for a in f.arguments[-2:]] == ["buffer", "buffer"]


def test_workload_b_eval():
    f = import_module(LinearScaleBatchNorm(96, 80), (torch.randn(4, 96),),
                      training=False)
    check(f.text, r"fusion.batch_norm %v2, <inference,",
          r"running_stats\(%arg6, %arg7\) : .* -> tensor<\?x80xf32>")
    assert [r.kind for r in f.results] == ["output"]


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_without_running_stats_uses_batch_statistics(training):
    model = LinearScaleBatchNorm(8, 6, affine=False,
                                 track_running_stats=False)
    f = import_module(model, (torch.randn(4, 8),), training=training)
    check(f.text, r"fusion.batch_norm %v2, <training, epsilon = 1.0e-05, "
          r"momentum = 0.1> : \(tensor<\?x6xf32>\) -> tensor<\?x6xf32>")
    assert "weight(" not in f.text and "running_stats" not in f.text


def test_momentum_and_epsilon():
    f = import_module(LinearScaleBatchNorm(8, 6, momentum=0.3, eps=1e-3),
                      (torch.randn(4, 8),), training=True)
    check(f.text, r"<training, epsilon = 0.001, momentum = 0.3>")


class Functional(nn.Module):
    """F.linear, a scalar on the left, a buffer multiplier, F.leaky_relu,
    F.relu, a second layer without bias."""

    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(6, 8))
        self.b1 = nn.Parameter(torch.randn(6))
        self.register_buffer("s", torch.randn(6))
        self.w2 = nn.Parameter(torch.randn(5, 6))

    def forward(self, x):
        h = F.leaky_relu(-2.0 * F.linear(x, self.w1, self.b1), 0.2)
        h = self.s * h
        return F.relu(F.linear(h, self.w2))


def test_functional_forms_and_several_layers():
    f = import_module(Functional(), (torch.randn(4, 8),), training=True)
    assert ops(f.text) == ["linear", "mul_scalar", "leaky_relu", "mul",
                           "linear", "relu"]
    check(f.text, r"fusion.linear %arg0, %arg1, %arg2",
          r"fusion.mul_scalar %v1, -2.0",
          r"fusion.leaky_relu %v2, negative_slope = 0.2",
          r"fusion.mul %v3, %arg3",
          r"fusion.linear %v4, %arg4 : tensor<\?x6xf32>, tensor<5x6xf32> ->",
          r"fusion.relu %v5 :")
    assert [(a.kind, a.name) for a in f.arguments[1:]] == [
        ("parameter", "w1"), ("parameter", "b1"), ("buffer", "s"),
        ("parameter", "w2")]


def test_no_bias_and_bf16():
    model = LinearLeakyRelu(8, 6, bias=False).to(torch.bfloat16)
    f = import_module(model, (torch.randn(4, 8, dtype=torch.bfloat16),),
                      training=True)
    check(f.text, r"%arg0: tensor<\?x8xbf16>",
          r"fusion.linear %arg0, %arg1 : tensor<\?x8xbf16>, tensor<6x8xbf16>"
          r" -> tensor<\?x6xbf16>")


def test_source_locations():
    f = import_module(LinearLeakyRelu(8, 6), (torch.randn(4, 8),),
                      training=True)
    assert re.search(r'loc\("[^"]*conftest.py":\d+:0\)', f.text)


class Sigmoid(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)

    def forward(self, x):
        return torch.sigmoid(self.linear(x))


class Dropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.linear(x))


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        return self.linear(x) * x


@pytest.mark.parametrize("model, names", [
    (Sigmoid(), r"call_function sigmoid is not supported by fusion"),
    (Dropout(), r"module drop is not supported by fusion: Dropout"),
    (Residual(), r"call_function mul is not supported by fusion"),
    (LinearScaleBatchNorm(8, 6, momentum=None),
     r"module bn is not supported by fusion: momentum=None"),
])
def test_unsupported_operations_name_op_and_line(model, names):
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=names + r".*\(.*\.py:\d+\)"):
        import_module(model, (torch.randn(4, 8),), training=True)


def test_unsupported_input_shape():
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=r"input 0 \(x\) must be a 2-D tensor"):
        import_module(LinearLeakyRelu(8, 6), (torch.randn(2, 4, 8),),
                      training=True)


def test_unsupported_dtype():
    with pytest.raises(fusion.UnsupportedOperationError,
                       match="dtype torch.float64"):
        import_module(LinearLeakyRelu(8, 6).double(),
                      (torch.randn(4, 8, dtype=torch.float64),),
                      training=True)


class SharedBatchNorm(torch.nn.Module):
    """The same BatchNorm1d applied twice (shared/reliability/
    silent_python_cases.py): PyTorch updates its running statistics twice."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.bn = torch.nn.BatchNorm1d(8)

    def forward(self, x):
        return self.bn(self.bn(self.linear(x)))


def test_batch_norm_applied_twice_is_refused_in_training():
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=r"module bn is not supported by fusion: the same "
                             r"BatchNorm1d is applied more than once in "
                             r"training mode \(.*\.py:\d+\)"):
        import_module(SharedBatchNorm(), (torch.randn(4, 8),), training=True)


def test_batch_norm_applied_twice_in_inference_imports():
    # Without running-statistics updates the two applications are pure.
    function = import_module(SharedBatchNorm().eval(), (torch.randn(4, 8),),
                             training=False)
    assert function.text.count("fusion.batch_norm") == 2


class DataDependentBranch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 6)

    def forward(self, x):
        if x.sum() > 0:  # control flow on a tensor value: not traceable
            return self.linear(x)
        return self.linear(x) * 2.0


def test_untraceable_forward_names_its_line():
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=r"the forward of DataDependentBranch cannot be "
                             r"traced.*\(.*test_importer\.py:\d+\)"):
        import_module(DataDependentBranch(), (torch.randn(4, 8),),
                      training=True)
