"""The ATen importer (torch.export, core ATen): the programs it makes of
modules, and the errors for what it cannot import. Runs without the
compiler."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
from fusion.export import import_module

from conftest import LinearLeakyRelu, LinearScaleBatchNorm


def ops(function):
    return [op["op"] for op in function.program.data["ops"]]


def body(op):
    return [node["fn"] for node in op["body"]]


def test_workload_a():
    f = import_module(LinearLeakyRelu(96, 80), (torch.randn(4, 96),),
                      training=True)
    assert ops(f) == ["linear", "elementwise"]
    linear, act = f.program.data["ops"]
    assert body(act) == ["x", "aten.mul.Tensor", "aten.leaky_relu.default"]
    assert act["body"][1]["args"] == [{"ref": 0}, 2.0]
    assert act["body"][2]["args"] == [{"ref": 1}, 0.1]
    args = f.program.arguments
    assert args[linear["operands"][0]] == {"shape": [None, 96], "dtype": "f32"}
    assert args[linear["operands"][1]] == {"shape": [80, 96], "dtype": "f32"}
    assert [(a.kind, a.name) for a in f.arguments] == [
        ("parameter", "linear.weight"), ("parameter", "linear.bias"),
        ("input", "")]


def test_workload_b_training():
    f = import_module(LinearScaleBatchNorm(96, 80), (torch.randn(4, 96),),
                      training=True)
    assert ops(f) == ["linear", "elementwise", "batch_norm"]
    scale, bn = f.program.data["ops"][1:]
    assert body(scale) == ["x", "column", "aten.mul.Tensor"]
    assert bn["training"] and bn["momentum"] == 0.1 and bn["epsilon"] == 1e-5
    assert len(bn["results"]) == 3
    assert [(r.kind, r.name) for r in f.results] == [
        ("output", ""), ("running_mean", "bn"), ("running_var", "bn")]
    assert f.batch_statistics == ["bn"]


def test_workload_b_eval():
    f = import_module(LinearScaleBatchNorm(96, 80), (torch.randn(4, 96),),
                      training=False)
    bn = f.program.data["ops"][-1]
    assert not bn["training"] and len(bn["results"]) == 1
    assert [r.kind for r in f.results] == ["output"]
    assert f.batch_statistics == []


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_without_running_stats_uses_batch_statistics(training):
    model = LinearScaleBatchNorm(8, 6, affine=False,
                                 track_running_stats=False)
    f = import_module(model, (torch.randn(4, 8),), training=training)
    bn = f.program.data["ops"][-1]
    assert bn["training"] and bn["operands"][1:] == [None] * 4


def test_momentum_and_epsilon():
    f = import_module(LinearScaleBatchNorm(8, 6, momentum=0.3, eps=1e-3),
                      (torch.randn(4, 8),), training=True)
    bn = f.program.data["ops"][-1]
    assert (bn["momentum"], bn["epsilon"]) == (0.3, 1e-3)


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
    assert ops(f) == ["linear", "elementwise", "linear", "elementwise"]
    first, second = f.program.data["ops"][1], f.program.data["ops"][3]
    assert sorted(body(first)) == sorted([
        "x", "aten.mul.Tensor", "aten.leaky_relu.default", "column",
        "aten.mul.Tensor"])
    assert body(second) == ["x", "aten.relu.default"]
    assert f.program.data["ops"][2]["operands"][2] is None  # no bias
    assert {(a.kind, a.name) for a in f.arguments} == {
        ("parameter", "w1"), ("parameter", "b1"), ("buffer", "s"),
        ("parameter", "w2"), ("input", "")}


class Mish(nn.Module):
    """A decomposed activation: x * tanh(softplus(x)) reads x three times."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)

    def forward(self, x):
        return F.mish(self.linear(x))


def test_decomposed_activation_is_one_elementwise_op():
    f = import_module(Mish(), (torch.randn(4, 8),), training=True)
    assert ops(f) == ["linear", "elementwise"]
    assert body(f.program.data["ops"][1]).count("x") == 1


def test_no_bias_and_bf16():
    model = LinearLeakyRelu(8, 6, bias=False).to(torch.bfloat16)
    f = import_module(model, (torch.randn(4, 8, dtype=torch.bfloat16),),
                      training=True)
    assert {a["dtype"] for a in f.program.arguments} == {"bf16"}
    assert f.program.data["ops"][0]["operands"][2] is None


def test_source_locations_are_the_models_lines():
    f = import_module(LinearLeakyRelu(8, 6), (torch.randn(4, 8),),
                      training=True)
    for op in f.program.data["ops"]:
        assert op["loc"][0].endswith("conftest.py"), op


class Rank3(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)

    def forward(self, x):
        return F.gelu(self.linear(x))


def test_rank_3_inputs_flatten_into_the_batch():
    f = import_module(Rank3(), (torch.randn(2, 3, 8),), training=True)
    assert ops(f) == ["linear", "elementwise"]
    assert {"shape": [None, 8], "dtype": "f32"} in f.program.arguments
    assert f.output_ranks == [3]


def test_fingerprint_ignores_locations_only():
    a = import_module(LinearLeakyRelu(8, 6), (torch.randn(4, 8),),
                      training=True).program
    b = import_module(LinearLeakyRelu(8, 6, slope=0.2), (torch.randn(4, 8),),
                      training=True).program
    c = import_module(LinearLeakyRelu(8, 6), (torch.randn(7, 8),),
                      training=True).program
    assert a.fingerprint() != b.fingerprint()
    assert a.fingerprint() == c.fingerprint()


class Cumsum(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)

    def forward(self, x):
        return torch.cumsum(self.linear(x), 1)


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
    (Cumsum(), r"aten.cumsum.default is not supported by fusion"),
    (Dropout().train(), r"aten.native_dropout.default is not supported by "
                        r"fusion: dropout in training mode.*eval\(\) mode "
                        r"it is the identity"),
    (Residual(), r"aten.mul.Tensor is not supported by fusion: an "
                 r"elementwise op between values of different GEMM chains"),
])
def test_unsupported_operations_name_op_and_line(model, names):
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=names + r".*\(.*test_importer\.py:\d+\)"):
        import_module(model, (torch.randn(4, 8),), training=model.training)


def test_dropout_in_eval_is_the_identity():
    f = import_module(Dropout().eval(), (torch.randn(4, 8),), training=False)
    assert ops(f) == ["linear"]


def test_momentum_none_is_refused():
    with pytest.raises(fusion.UnsupportedOperationError,
                       match="batch norm bn has momentum=None"):
        import_module(LinearScaleBatchNorm(8, 6, momentum=None),
                      (torch.randn(4, 8),), training=True)


def test_unsupported_input_shape():
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=r"input 0 must be a tensor of rank >= 2"):
        import_module(LinearLeakyRelu(8, 6), (torch.randn(8),),
                      training=True)


def test_unsupported_dtype():
    with pytest.raises(fusion.UnsupportedOperationError,
                       match="dtype torch.float64"):
        import_module(LinearLeakyRelu(8, 6).double(),
                      (torch.randn(4, 8, dtype=torch.float64),),
                      training=True)


class SharedBatchNorm(torch.nn.Module):
    """The same BatchNorm1d applied twice (shared/reliability/
    silent_python_cases.py): PyTorch counts both in num_batches_tracked."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.bn = torch.nn.BatchNorm1d(8)

    def forward(self, x):
        return self.bn(self.bn(self.linear(x)))


def test_batch_norm_applied_twice_is_refused_in_training():
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=r"batch norm bn is applied more than once in "
                             r"training mode"):
        import_module(SharedBatchNorm(), (torch.randn(4, 8),), training=True)


def test_batch_norm_applied_twice_in_inference_imports():
    function = import_module(SharedBatchNorm().eval(), (torch.randn(4, 8),),
                             training=False)
    assert ops(function).count("batch_norm") == 2


class DataDependentBranch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 6)

    def forward(self, x):
        if x.sum() > 0:  # control flow on a tensor value: not exportable
            return self.linear(x)
        return self.linear(x) * 2.0


def test_unexportable_forward_is_refused():
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=r"the forward of DataDependentBranch cannot be "
                             r"exported"):
        import_module(DataDependentBranch(), (torch.randn(4, 8),),
                      training=True)


class FunctionalSoftmax(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)

    def forward(self, x):
        return F.softmax(F.leaky_relu(self.linear(x)), dim=1)  # the line


def test_functional_ops_name_the_models_line():
    """Regression: functional ops reported torch/overrides.py as their
    source line instead of the model's."""
    with pytest.raises(fusion.UnsupportedOperationError) as error:
        import_module(FunctionalSoftmax(), (torch.randn(4, 8),),
                      training=False)
    line = FunctionalSoftmax.forward.__code__.co_firstlineno + 1
    assert "aten._softmax.default is not supported" in str(error.value)
    assert str(error.value).endswith(f"test_importer.py:{line})")


class DictOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)

    def forward(self, x):
        return {"y": torch.relu(self.linear(x))}


class NestedOutput(DictOutput):
    def forward(self, x):
        y = self.linear(x)
        return torch.relu(y), (y * 2,)


@pytest.mark.parametrize("model", [DictOutput(), NestedOutput()])
def test_outputs_other_than_flat_tensors_are_refused(model):
    """Regression: they came back as a flat tuple or a single tensor."""
    with pytest.raises(fusion.UnsupportedOperationError,
                       match="fusion returns a tensor, or a flat tuple or "
                             "list of tensors"):
        import_module(model, (torch.randn(4, 8),), training=False)
