"""The ATen importer (torch.export, core ATen): the programs it makes of
modules, and the errors for what it cannot import. Runs without the
compiler."""
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
from fusion.importer import check_formula
from fusion.export import import_module

from conftest import LinearLeakyRelu, LinearScaleBatchNorm


def ops(function):
    return [op["op"] for op in function.program.data["ops"]]


def body(op):
    return [node["fn"] for node in op["body"]]


def argument(function, value):
    """The shape and dtype of argument `value` of the function's program."""
    (record,) = [a for a in function.program.arguments
                 if a["value"] == value]
    return {"shape": record["shape"], "dtype": record["dtype"]}


def test_workload_a():
    f = import_module(LinearLeakyRelu(96, 80), (torch.randn(4, 96),),
                      training=True)
    assert ops(f) == ["linear", "elementwise"]
    linear, act = f.program.data["ops"]
    assert body(act) == ["x", "aten.mul.Tensor", "aten.leaky_relu.default"]
    assert act["body"][1]["args"] == [{"ref": 0}, 2.0]
    assert act["body"][2]["args"] == [{"ref": 1}, 0.1]
    assert argument(f, linear["operands"][0]) == {"shape": [None, 96],
                                                  "dtype": "f32"}
    assert argument(f, linear["operands"][1]) == {"shape": [80, 96],
                                                  "dtype": "f32"}
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
    assert [None, 8] in [a["shape"] for a in f.program.arguments]
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


class ScaledByTensor(nn.Module):
    def __init__(self, make_scale):
        super().__init__()
        self.linear = nn.Linear(8, 6)
        self.make_scale = make_scale

    def forward(self, x):
        return self.linear(x) * self.make_scale()


class TensorAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)
        self.scale = torch.tensor(2.0)  # neither parameter nor buffer

    def forward(self, x):
        return self.linear(x) * self.scale


def test_tensor_attributes_are_not_folded():
    # It may change after compiling, unseen: refused, not baked in.
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=r"reads CONSTANT_TENSOR scale.*a tensor "
                             r"attribute.*\(.*test_importer\.py:\d+\)"):
        import_module(TensorAttribute(), (torch.randn(4, 8),),
                      training=False)


@pytest.mark.parametrize("dtype, make_scale, folds", [
    # PyTorch promotes a 0-d tensor as a number.
    (torch.float32, lambda: torch.tensor(2.0), True),
    (torch.bfloat16, lambda: torch.tensor(2.0), True),
    (torch.bfloat16, lambda: torch.tensor(3), True),
    # A (1,) tensor takes part in promotion: read as a number only where
    # it has its reader's dtype (bf16 * f32 (1,) is f32 in PyTorch).
    (torch.float32, lambda: torch.tensor([2.0]), True),
    (torch.bfloat16, lambda: torch.tensor([2.0]), False),
    (torch.float32, lambda: torch.tensor([2.0, 3.0, 4.0, 5.0, 6.0, 7.0]),
     False),
])
def test_numbers_made_as_tensors_fold_where_pytorch_reads_numbers(
        dtype, make_scale, folds):
    model = ScaledByTensor(make_scale).to(dtype)
    x = torch.randn(4, 8, dtype=dtype)
    if not folds:
        with pytest.raises(fusion.UnsupportedOperationError,
                           match=r"reads CONSTANT_TENSOR .*a tensor made in "
                                 r"forward.*\(.*test_importer\.py:\d+\)"):
            import_module(model, (x,), training=False)
        return
    f = import_module(model, (x,), training=False)
    # The number is in the program; the library takes no argument for it,
    # the backward's recomputation does.
    assert sorted(a.kind for a in f.arguments) == ["input", "parameter",
                                                   "parameter"]
    assert "constant" in [a.kind for a in f.graph_arguments]


class LinearRrelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)
        self.rrelu = nn.RReLU(0.1, 0.3)

    def forward(self, x):
        return self.rrelu(self.linear(x))


class LinearChebyshev(nn.Module):
    def __init__(self, degree):
        super().__init__()
        self.linear = nn.Linear(8, 6)
        self.degree = degree

    def forward(self, x):
        return torch.special.chebyshev_polynomial_t(self.linear(x),
                                                    self.degree)


class LinearBesselK0(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)

    def forward(self, x):
        return torch.special.modified_bessel_k0(self.linear(x))


def test_rrelu_outside_training_is_leaky_relu_with_the_mean_slope():
    f = import_module(LinearRrelu().eval(), (torch.randn(4, 8),),
                      training=False)
    assert ops(f) == ["linear", "elementwise"]
    assert body(f.program.data["ops"][1]) == ["x", "aten.rrelu.default"]


@pytest.mark.parametrize("model, names", [
    (Cumsum(), r"aten.cumsum.default is not supported by fusion"),
    # Refused by the op's formula, at import rather than when building.
    (LinearRrelu().train(), r"aten.rrelu.default is not supported by "
                            r"fusion: rrelu in training mode draws a random "
                            r"slope an element"),
    (LinearBesselK0(), r"aten.special_modified_bessel_k0.default is not "
                       r"supported by fusion"),
    (LinearChebyshev(33), r"aten.special_chebyshev_polynomial_t.n_scalar is "
                          r"not supported by fusion: chebyshev_polynomial_t "
                          r"of degree 33: fusion unrolls the recurrence in "
                          r"each element's code, up to degree 32"),
])
def test_unsupported_operations_name_op_and_line(model, names):
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=names + r".*\(.*test_importer\.py:\d+\)"):
        import_module(model, (torch.randn(4, 8),), training=model.training)


def test_an_argument_the_formula_does_not_take_is_refused_at_import():
    """A keyword that the table's formula does not know (one a newer
    PyTorch might add) names the op, not a TypeError of the builder."""
    graph = torch.fx.Graph()
    y = graph.placeholder("y")
    node = graph.call_function(torch.ops.aten.gelu.default, (y,),
                               {"approximate": "none", "slope": 2.0})
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=r"aten.gelu.default is not supported by fusion: "
                             r".*'slope'.*\(unknown location\)"):
        check_formula(node)


def test_polygamma_of_a_negative_order_is_refused_at_import():
    graph = torch.fx.Graph()
    y = graph.placeholder("y")
    node = graph.call_function(torch.ops.aten.polygamma.default, (-1, y))
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=r"aten.polygamma.default is not supported by "
                             r"fusion: polygamma of order -1 \(orders are "
                             r"whole numbers from 0\)"):
        check_formula(node)


def test_dropout_in_eval_is_the_identity():
    f = import_module(Dropout().eval(), (torch.randn(4, 8),), training=False)
    assert ops(f) == ["linear"]


def test_dropout_in_training_reads_a_draw_of_the_seed_argument():
    """The draw's rows are those of the GEMM's input x (so that the
    comparison can join the GEMM's epilogue), its seed the last argument,
    which the caller draws (ImportedFunction.seed)."""
    f = import_module(Dropout().train(), (torch.randn(4, 8),), training=True)
    assert ops(f) == ["linear", "random_uniform", "elementwise"]
    arguments = f.program.arguments
    x = arguments[[a.kind for a in f.arguments].index("input")]["value"]
    assert f.seed == len(arguments) - 1
    assert arguments[f.seed]["shape"] == [2]
    assert arguments[f.seed]["dtype"] == "f32"
    draw = f.program.data["ops"][1]
    assert draw["operands"] == [arguments[f.seed]["value"], x]
    assert (draw["columns"], draw["stream"]) == (6, 0)


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
        return F.softmax(F.leaky_relu(self.linear(x)), dim=0)  # the line


def test_functional_ops_name_the_models_line():
    """Regression: functional ops reported torch/overrides.py as their
    source line instead of the model's. (A softmax over the batch.)"""
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


# Reductions, normalizations, softmax, and values of several chains.
class Apply(nn.Module):
    """body(linear(x), module, x), with a second linear layer, vectors and
    norms at hand."""

    def __init__(self, body, features=12, **norms):
        super().__init__()
        self.linear = nn.Linear(8, features)
        self.side = nn.Linear(8, features)
        self.scale = nn.Parameter(torch.randn(features))
        self.norms = nn.ModuleDict(norms)
        self.body = body

    def forward(self, x):
        return self.body(self.linear(x), self, x)


def program(body, shape=(4, 8), **norms):
    return import_module(Apply(body, **norms), (torch.randn(*shape),),
                         training=False)


def operands(op):
    """(root, columns, rows) of an elementwise or reduce op."""
    count = op["columns"]
    return (op["operands"][0], op["operands"][1:1 + count],
            op["operands"][1 + count:])


def test_softmax_is_two_reductions_and_one_elementwise_op():
    """max, then the sum of exp(x - max) (the map fused into the
    reduction), then exp(x - max) / sum: the maps read the GEMM output and
    the reductions' [B, 1] results as row operands."""
    f = program(lambda y, m, x: F.softmax(y, dim=1))
    assert ops(f) == ["linear", "reduce", "reduce", "elementwise"]
    linear, top, total, out = f.program.data["ops"]
    (gemm,) = linear["results"]
    assert (top["kind"], top["groups"], body(top)) == ("max", 1, ["x"])
    assert total["kind"] == "sum" and total["groups"] == 1
    assert operands(total) == (gemm, [], top["results"])
    assert body(total) == ["x", "row", "aten.sub.Tensor", "aten.exp.default"]
    assert operands(out) == (gemm, [], top["results"] + total["results"])
    assert body(out) == ["x", "row", "aten.sub.Tensor", "aten.exp.default",
                         "row", "aten.div.Tensor"]
    assert f.program.results == out["results"]
    assert f.output_shapes == [[12]]
    for op in f.program.data["ops"]:
        assert op["loc"][0].endswith("test_importer.py"), op


def test_log_softmax_inlines_the_log_of_the_sum():
    f = program(lambda y, m, x: F.log_softmax(y * -2.0, dim=-1))
    assert ops(f) == ["linear", "reduce", "reduce", "elementwise"]
    assert body(f.program.data["ops"][-1]).count("aten.log.default") == 1
    assert body(f.program.data["ops"][-1]).count("aten.mul.Tensor") == 1


@pytest.mark.parametrize("reduce, kinds, shape", [
    (lambda y: y.sum(1), ["sum"], []),
    (lambda y: y.sum(-1, keepdim=True), ["sum"], [1]),
    (lambda y: y.amax(1), ["max"], []),
    (lambda y: y.max(1, keepdim=True).values, ["max"], [1]),
    (lambda y: torch.min(y, dim=1)[0], ["min"], []),
    (lambda y: y.amin(1, keepdim=True), ["min"], [1]),
    (lambda y: y.mean(1), ["sum"], []),
    (lambda y: y.var(1), ["sum", "max", "sum", "sum"], []),
    (lambda y: y.std(1, correction=0, keepdim=True),
     ["sum", "max", "sum", "sum"], [1]),
    (lambda y: torch.logsumexp(y, 1), ["max", "sum"], []),
    (lambda y: y.view(-1, 3, 4).sum(-1), ["sum"], [3]),
    (lambda y: y.view(-1, 3, 4).amax(-1, keepdim=True), ["max"], [3, 1]),
])
def test_reductions_along_the_features(reduce, kinds, shape):
    f = program(lambda y, m, x: reduce(y))
    reductions = [op for op in f.program.data["ops"] if op["op"] == "reduce"]
    assert [op["kind"] for op in reductions] == kinds
    assert {op["groups"] for op in reductions} == {math.prod(shape)}
    assert f.output_shapes == [shape]


def test_variance_is_corrected_two_passes_over_the_largest_magnitude():
    """The first mean (a row operand), corrected by the mean of the values
    less it; the squares of the centred values over the largest magnitude
    (the scale of the result)."""
    f = program(lambda y, m, x: y.var(1, correction=1))
    linear, total, top, less, squares, var = f.program.data["ops"]
    y = linear["results"][0]
    assert (top["kind"], body(top)) == ("max", ["x", "aten.abs.default"])
    assert operands(less) == (y, [], total["results"])
    assert body(less) == ["x", "row", "aten.div.Tensor", "aten.sub.Tensor"]
    assert less["body"][2]["args"][1] == 12.0  # the mean: sum / 12
    assert operands(squares)[0] == y
    assert sorted(operands(squares)[2]) == sorted(
        total["results"] + top["results"] + less["results"])
    assert "aten.reciprocal.default" in body(squares)
    assert body(squares)[-1] == "aten.mul.Tensor"
    # ratio * scale * scale, the ratio / (12 - correction).
    assert body(var)[-2:] == ["aten.mul.Tensor", "aten.mul.Tensor"]
    assert "aten.where.self" in body(var)  # scale: 1 for 0, inf, NaN
    assert 11.0 in [a for n in var["body"] for a in n.get("args", [])]


@pytest.mark.parametrize("norm, groups, columns", [
    (nn.LayerNorm(12), 1, 2),
    (nn.LayerNorm(12, elementwise_affine=False), 1, 0),
    (nn.LayerNorm(12, bias=False), 1, 1),
    (nn.GroupNorm(3, 12), 3, 2),
    (nn.GroupNorm(4, 12, affine=False), 4, 0),
])
def test_normalizations(norm, groups, columns):
    """The moments (test_reliability.py has their numerics): the sum and
    the largest magnitude in one pass, the sum of the values less the
    first mean, the sum of the squares of the centred values over the
    largest magnitude; then one expression."""
    f = program(lambda y, m, x: F.gelu(m.norms["n"](y)), n=norm)
    assert ops(f) == ["linear"] + ["reduce"] * 4 + ["elementwise"]
    linear, *reductions, out = f.program.data["ops"]
    assert [r["kind"] for r in reductions] == ["sum", "max", "sum", "sum"]
    assert {r["groups"] for r in reductions} == {groups}
    root, vectors, rows = operands(out)
    assert root == linear["results"][0] and len(vectors) == columns
    assert sorted(rows) == sorted(r["results"][0] for r in reductions)
    assert body(out)[-1] == "aten.gelu.default"
    assert "aten.rsqrt.default" in body(out)


@pytest.mark.parametrize("rms_norm", [
    lambda y, w: F.rms_norm(y, (12,), w),  # decomposed when exported
    lambda y, w: torch.ops.aten._fused_rms_norm(y, [12], w, None)[0],  # CUDA's
])
def test_rms_norm(rms_norm):
    f = program(lambda y, m, x: rms_norm(y, m.scale))
    assert ops(f) == ["linear", "reduce", "elementwise"]
    assert "column" in body(f.program.data["ops"][-1])


def test_reduced_values_broadcast_back_and_reduced_again():
    f = program(lambda y, m, x: (y - y.mean(1, keepdim=True)).abs().amax(1))
    assert ops(f) == ["linear", "reduce", "reduce"]
    assert body(f.program.data["ops"][-1]) == [
        "x", "row", "aten.div.Tensor", "aten.sub.Tensor", "aten.abs.default"]
    assert f.output_shapes == [[]]


def test_same_reduction_is_computed_once():
    f = program(lambda y, m, x: F.softmax(y, 1) * y.amax(1, keepdim=True))
    assert [op.get("kind") for op in f.program.data["ops"]] == [
        None, "max", "sum", None]


def test_ops_on_reduced_values_are_one_elementwise_op():
    f = program(lambda y, m, x: F.gelu(torch.logsumexp(y, 1)) * 2.0)
    assert ops(f) == ["linear", "reduce", "reduce", "elementwise"]
    root, columns, rows = operands(f.program.data["ops"][-1])
    assert root == f.program.data["ops"][2]["results"][0]  # the sum
    assert rows == f.program.data["ops"][1]["results"]  # the max
    assert body(f.program.data["ops"][-1])[-2:] == [
        "aten.gelu.default", "aten.mul.Tensor"]


def test_input_of_the_chain_is_a_row_operand():
    """linear(x) * x: the input is a [B, N] operand of the GEMM's chain."""
    f = program(lambda y, m, x: torch.sigmoid(y) * x, features=8)
    linear, out = f.program.data["ops"]
    root, columns, rows = operands(out)
    assert root == linear["results"][0] and columns == []
    assert argument(f, rows[0]) == {"shape": [None, 8], "dtype": "f32"}


def test_residual_of_another_linear_layer():
    """y + side(x): fused into the later GEMM's epilogue, reading the
    earlier GEMM's output as a [B, N] row operand."""
    f = program(lambda y, m, x: F.gelu(y) + m.side(x) * m.scale)
    assert ops(f) == ["linear", "linear", "elementwise"]
    first, second, out = f.program.data["ops"]
    root, columns, rows = operands(out)
    assert root == second["results"][0]
    assert rows == first["results"]
    assert body(out) == ["row", "aten.gelu.default", "x", "column",
                         "aten.mul.Tensor", "aten.add.Tensor"]


def test_glu_is_two_gemms_on_the_weights_halves():
    """glu(linear(x)): each half of the features is the layer on its half
    of the weight's rows and the bias, which the caller passes as views
    (`slices`); the layer itself is read by nothing and left out. The
    later GEMM's epilogue reads the earlier one's output as a residual."""
    f = program(lambda y, m, x: F.glu(y))
    assert ops(f) == ["linear", "linear", "elementwise"]
    first, second, out = f.program.data["ops"]
    weight, bias = f.arguments.index(next(
        a for a in f.arguments if a.name == "linear.weight")), \
        f.arguments.index(next(a for a in f.arguments
                               if a.name == "linear.bias"))
    # The bias's second half starts 24 bytes in: a copy keeps it aligned.
    assert f.slices == [[weight, 0, 6, False], [bias, 0, 6, False],
                        [weight, 6, 12, False], [bias, 6, 12, True]]
    inputs = len(f.arguments)
    values = [a["value"] for a in f.program.arguments]
    assert [values.index(v) for v in first["operands"][1:]] == \
        [inputs, inputs + 1]
    assert [values.index(v) for v in second["operands"][1:]] == \
        [inputs + 2, inputs + 3]
    assert argument(f, first["operands"][1]) == {"shape": [6, 8],
                                                 "dtype": "f32"}
    root, columns, rows = operands(out)
    assert (root, columns, rows) == (second["results"][0], [],
                                     first["results"])
    assert body(out) == ["row", "x", "aten.sigmoid.default",
                         "aten.mul.Tensor"]


@pytest.mark.parametrize("pieces, sizes", [
    (lambda y: y.chunk(3, dim=-1), [4, 4, 4]),
    (lambda y: torch.split(y, 5, dim=1), [5, 5, 2]),
    (lambda y: torch.split(y, [2, 10], dim=-1), [2, 10]),
    (lambda y: (y[:, :7], y[..., 7:]), [7, 5]),
])
def test_pieces_of_the_features_are_gemms_on_rows_of_the_weight(pieces,
                                                                 sizes):
    f = program(lambda y, m, x: sum(torch.tanh(p).sum(-1, keepdim=True)
                                    for p in pieces(y * m.scale * -2.0)))
    linears = [op for op in f.program.data["ops"] if op["op"] == "linear"]
    assert [argument(f, op["operands"][1])["shape"] for op in linears] == \
        [[size, 8] for size in sizes]
    starts = [0] + [sum(sizes[:i + 1]) for i in range(len(sizes) - 1)]
    # Each piece's scale vector is the rows of `scale` it multiplies.
    scale = [a.name for a in f.arguments].index("scale")
    assert [s for s in f.slices if s[0] == scale] == [
        [scale, start, start + size, start % 4 != 0]
        for start, size in zip(starts, sizes)]


def test_booleans_are_numbers_where_pytorch_promotes_them():
    """y * (y > 0) and (y > 0).float(): 1.0 or 0.0; bool * bool is
    PyTorch's logical and, which where takes as its condition; the maximum
    of two booleans is computed on numbers and compared with 0."""
    f = program(lambda y, m, x: y * (y > 0) + (y < m.scale).float() +
                torch.where((y > 1) * (y < 2), y, -y) + torch.where(
                    torch.maximum(y > 3, y < -3), 1.0, 0.5))
    (out,) = [op for op in f.program.data["ops"] if op["op"] ==
              "elementwise"]
    fns = body(out)
    assert fns.count("fusion.bool_to_float") == 4
    wheres = [node for node in out["body"]
              if node["fn"] == "aten.where.self"]
    conditions = [out["body"][w["args"][0]["ref"]]["fn"] for w in wheres]
    assert conditions == ["aten.logical_and.default", "aten.ne.Scalar"]


def test_logical_ops_of_numbers_are_refused():
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=r"aten.logical_and.default .*its operand \w+ "
                             r"is not boolean"):
        program(lambda y, m, x: torch.where(torch.logical_and(y, y - 1), y,
                                            -y))


@pytest.mark.parametrize("forward, message", [
    (lambda y, m, x: y[1:], r"aten.slice.Tensor is not supported by fusion: "
     r"it takes apart dimension 0 of a value of rank 2"),
    (lambda y, m, x: y[:, ::2], r"aten.slice.Tensor .*a slice with step 2"),
    (lambda y, m, x: y * x[:, :4].sum(-1, keepdim=True),
     r"aten.slice.Tensor .*fusion slices the features of a linear layer's "
     r"output, not those of \w+"),
    (lambda y, m, x: F.glu(y + m.side(x)),
     r"aten.slice.Tensor .*reads another matrix"),
    (lambda y, m, x: y[:, 12:], r"aten.slice.Tensor .*an empty piece"),
])
def test_unsupported_pieces_name_op_and_line(forward, message):
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=message + r".*test_importer\.py:\d+"):
        program(forward)


def test_ops_of_vectors_alone_are_computed_where_a_chain_reads_them():
    """y * exp(scale) + sigmoid(scale): the ops of the parameter alone are
    inlined into the chain's expression, the parameter read as a column
    (once an op), not computed outside."""
    f = program(lambda y, m, x: y * torch.exp(m.scale) +
                torch.sigmoid(m.scale).view(1, -1))
    assert ops(f) == ["linear", "elementwise"]
    root, columns, rows = operands(f.program.data["ops"][1])
    (column,) = columns
    assert rows == [] and argument(f, column) == {"shape": [12],
                                                   "dtype": "f32"}
    assert body(f.program.data["ops"][1]) == [
        "x", "column", "aten.exp.default", "aten.mul.Tensor",
        "aten.sigmoid.default", "aten.add.Tensor"]


def test_ops_of_a_single_value_read_it_as_one_column_operand():
    """A 0-d parameter's exp (a learned temperature) scales each row: a [1]
    column operand, whose one value every column reads (the caller passes
    the parameter as it is)."""
    class Temperature(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(8, 12)
            self.log_scale = nn.Parameter(torch.tensor(0.5))

        def forward(self, x):
            return self.linear(x) * self.log_scale.exp()

    f = import_module(Temperature(), (torch.randn(4, 8),), training=False)
    _, (column,), _ = operands(f.program.data["ops"][1])
    assert argument(f, column) == {"shape": [1], "dtype": "f32"}
    assert sorted(a.name for a in f.arguments if a.kind == "parameter") == [
        "linear.bias", "linear.weight", "log_scale"]


@pytest.mark.parametrize("forward, message", [
    (lambda y, m, x: (y, torch.exp(m.scale)),
     r"aten.exp.default is not supported by fusion: its result is computed "
     r"from vectors alone"),
    (lambda y, m, x: F.linear(x, m.side.weight, m.scale.exp()),
     r"must be a \(12,\) parameter or buffer"),
    (lambda y, m, x: y.sum(1, keepdim=True) * torch.exp(m.scale),
     r"aten.mul.Tensor is not supported by fusion: it broadcasts per-row "
     r"values"),
])
def test_unsupported_uses_of_vectors_alone_name_op_and_line(forward,
                                                            message):
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=message + r".*test_importer\.py:\d+"):
        program(forward)


def test_residual_within_the_chain_stays_one_expression():
    f = program(lambda y, m, x: torch.relu(y * m.scale) + y)
    assert ops(f) == ["linear", "elementwise"]
    assert operands(f.program.data["ops"][1])[2] == []


def test_expanded_reduction_is_a_row_operand():
    f = program(lambda y, m, x: F.normalize(y, dim=1))
    assert ops(f) == ["linear", "reduce", "elementwise"]
    assert "row" in body(f.program.data["ops"][-1])


class Located(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.linear = nn.Linear(8, 12)
        self.scale = nn.Parameter(torch.randn(12))
        self.norm = nn.LayerNorm(4)
        self.body = body

    def forward(self, x):
        return self.body(self.linear(x), self)


@pytest.mark.parametrize("body, message", [
    (lambda y, m: y.sum(0),
     r"aten.sum.dim_IntList is not supported by fusion: a reduction over "
     r"dimension 0 of a \(s\d+, 12\) value, across the batch"),
    (lambda y, m: y.sum((0, 1)),
     r"aten.sum.dim_IntList is not supported by fusion: a reduction over "
     r"dimension 0, 1 of a .*across the batch"),
    (lambda y, m: y.sum(),
     r"aten.sum.dim_IntList is not supported by fusion: a reduction over "
     r"all dimensions"),
    (lambda y, m: y.amax(0, keepdim=True),
     r"aten.amax.default is not supported by fusion: .*across the batch"),
    (lambda y, m: F.softmax(y, 0),
     r"aten._softmax.default is not supported by fusion: .*across the "
     r"batch"),
    (lambda y, m: y.view(-1, 3, 4).sum(1),
     r"aten.sum.dim_IntList is not supported by fusion: a reduction over "
     r"dimensions \[1\] of a \(s\d+, 3, 4\) value: fusion reduces the last "
     r"dimensions"),
    (lambda y, m: y.view(-1, 3, 4).mean((1, 2)) + y.view(-1, 3, 4).sum(1),
     r"aten.sum.dim_IntList is not supported by fusion: a reduction over "
     r"dimensions \[1\]"),
    (lambda y, m: torch.argmax(y, 1, keepdim=True) * 1.0,
     r"aten.argmax.default is not supported by fusion"),
    (lambda y, m: y.max(1).indices * 1.0,
     r"aten.max.dim is not supported by fusion: its result 1 is not one "
     r"fusion computes"),
    (lambda y, m: y.sum(1, keepdim=True) * m.scale,
     r"aten.mul.Tensor is not supported by fusion: it broadcasts per-row "
     r"values to \(s\d+, 12\), with no \[batch, features\] value"),
    (lambda y, m: m.norm(y.view(-1, 3, 4)),
     r"aten.native_layer_norm.default is not supported by fusion: a norm "
     r"with a weight over the last dimensions"),
    (lambda y, m: torch.cumsum(y, 1).sum(1),
     r"aten.cumsum.default is not supported by fusion"),
])
def test_unsupported_reductions_name_op_and_line(body, message):
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=message + r".*\(.*test_importer\.py:\d+\)"):
        import_module(Located(body), (torch.randn(4, 8),), training=False)


def test_bf16_reductions_import_in_bf16():
    model = Apply(lambda y, m, x: F.softmax(m.norms["n"](y), 1),
                  n=nn.LayerNorm(12)).to(torch.bfloat16)
    f = import_module(model, (torch.randn(4, 8, dtype=torch.bfloat16),),
                      training=False)
    assert {a["dtype"] for a in f.program.arguments} == {"bf16"}
    # The layer norm's four reductions (test_normalizations) and its sum of
    # squares' correction, softmax's maximum, sum and the sum's correction
    # (16-bit inner sums, _inner_sum).
    assert ops(f) == ["linear"] + ["reduce"] * 8 + ["elementwise"]


class ShiftedByLogsumexp(nn.Module):
    """`h - logsumexp(h)` of h = x @ w + b (a GEMM, then its bias added)."""

    def __init__(self):
        super().__init__()
        generator = torch.Generator().manual_seed(0)
        self.weight = nn.Parameter(torch.randn(64, 48, generator=generator)
                                   / 8)
        self.bias = nn.Parameter(torch.randn(48, generator=generator))

    def forward(self, x):
        h = x @ self.weight + self.bias
        return h - torch.logsumexp(h, -1, keepdim=True)


def test_bf16_value_whose_float32_copy_is_reduced_is_rounded():
    """A 16-bit logsumexp reads its input's float32 copy (the decomposition
    upcasts it): h is rounded where it is computed, so that `h -
    logsumexp(h)` reads the h the reduction read and is at most 0, as in
    eager. An unrounded h above its rounded maximum came out positive (the
    model fuzzer's seed 330, where `floor` of it was one off)."""
    model = ShiftedByLogsumexp().to(torch.bfloat16)
    generator = torch.Generator().manual_seed(1)
    x = (torch.randn(64, 64, generator=generator) * 100).to(torch.bfloat16)
    f = import_module(model, (x,), training=False)
    assert "fusion.round_to_element" in body(f.program.data["ops"][-1])
    for rows in (x, (torch.randn(33, 64, generator=generator) * 100)
                 .to(torch.bfloat16)):
        torch._dynamo.reset()
        got = torch.compile(model, backend="fusion",
                            options={"target": "cpu"})(rows)
        assert got.max() <= 0, got.max()
        # Within an ulp of h, whose values are in the hundreds.
        torch.testing.assert_close(got, model(rows), rtol=1e-2, atol=1.0)


@pytest.mark.parametrize("model", [
    LinearScaleBatchNorm(8, 6),
    nn.Sequential(nn.Linear(8, 6), nn.BatchNorm1d(6))])
def test_bf16_batch_norm_reads_its_input_rounded(model):
    """A 16-bit training batch norm's statistics are of its input as it is
    stored (rounded to bf16, as eager's are), the GEMM's output included:
    its backward reads that stored input with those statistics."""
    f = import_module(model.to(torch.bfloat16),
                      (torch.randn(4, 8, dtype=torch.bfloat16),),
                      training=True)
    assert ops(f) == ["linear", "elementwise", "batch_norm"]
    rounding = f.program.data["ops"][1]
    assert body(rounding)[-1] == "fusion.round_to_element"
    assert rounding["results"] == f.program.data["ops"][2]["operands"][:1]


# Pooling along the features: non-overlapping windows of a [B, 1, N] view
# (the 1-D functions arrive as 2-D pools of a [B, 1, 1, N] view).
def test_max_pool_is_one_max_reduce():
    f = program(lambda y, m, x: F.max_pool1d(y.unsqueeze(1), 4).squeeze(1))
    assert ops(f) == ["linear", "reduce"]
    linear, pool = f.program.data["ops"]
    assert (pool["kind"], pool["groups"], body(pool)) == ("max", 3, ["x"])
    assert operands(pool) == (linear["results"][0], [], [])
    assert f.program.results == pool["results"]
    assert f.output_shapes == [[3]]
    assert pool["loc"][0].endswith("test_importer.py")


@pytest.mark.parametrize("pool, kind, groups, divisor, shape", [
    (lambda y: nn.MaxPool1d(3)(y.view(-1, 1, 12)), "max", 4, None, [1, 4]),
    (lambda y: F.max_pool1d(y.unsqueeze(1), 2, stride=2, ceil_mode=True),
     "max", 6, None, [1, 6]),
    (lambda y: F.max_pool1d(y.view(-1, 3, 4), 2), "max", 6, None, [3, 2]),
    (lambda y: F.max_pool2d(y.view(-1, 1, 4, 3), (2, 3)), "max", 2, None,
     [1, 2, 1]),
    (lambda y: F.avg_pool1d(y.unsqueeze(1), 4).squeeze(1), "sum", 3, 4.0,
     [3]),
    (lambda y: nn.AvgPool1d(6)(y.unsqueeze(1)), "sum", 2, 6.0, [1, 2]),
    (lambda y: F.avg_pool2d(y.view(-1, 1, 1, 12), (1, 4),
                            divisor_override=3), "sum", 3, 3.0, [1, 1, 3]),
    (lambda y: F.adaptive_max_pool1d(y.unsqueeze(1), 6).squeeze(1), "max",
     6, None, [6]),
    (lambda y: F.adaptive_avg_pool1d(y.unsqueeze(1), 3), "sum", 3, 4.0,
     [1, 3]),
    (lambda y: nn.AdaptiveAvgPool1d(1)(y.unsqueeze(1)), "sum", 1, 12.0,
     [1, 1]),
])
def test_pools_are_reductions_of_windows(pool, kind, groups, divisor, shape):
    """Max pools are max reduces of the windows; average pools sums divided
    by the window (or divisor_override); the result keeps PyTorch's
    shape."""
    f = program(lambda y, m, x: pool(y))
    reductions = [op for op in f.program.data["ops"] if op["op"] == "reduce"]
    assert [(op["kind"], op["groups"]) for op in reductions] == \
        [(kind, groups)]
    if divisor is None:
        assert ops(f) == ["linear", "reduce"]
    else:
        assert ops(f) == ["linear", "reduce", "elementwise"]
        out = f.program.data["ops"][-1]
        assert body(out) == ["x", "aten.div.Tensor"]
        assert out["body"][1]["args"][1] == divisor
    assert f.output_shapes == [shape]


def test_ops_after_a_pool_read_the_pooled_values():
    """gelu(pool) * 2 is one elementwise op on the reduce; a softmax of the
    pooled values reduces them again."""
    f = program(lambda y, m, x: F.softmax(F.gelu(F.avg_pool1d(
        (y * m.scale).unsqueeze(1), 3)) * 2.0, dim=-1).squeeze(1))
    assert ops(f) == ["linear", "reduce", "reduce", "reduce", "elementwise"]
    linear, pool, top, total, out = f.program.data["ops"]
    assert (pool["kind"], pool["groups"]) == ("sum", 4)
    assert len(operands(pool)[1]) == 1  # the scale, a column of the map
    assert (top["kind"], top["groups"]) == ("max", 1)
    assert operands(top)[0] == pool["results"][0]
    assert f.output_shapes == [[4]]


def test_pool_after_a_layer_norm_and_grouped_ops_on_it():
    f = program(lambda y, m, x: (y.view(-1, 3, 4) - F.max_pool1d(
        m.norms["n"](y).unsqueeze(1), 4).view(-1, 3, 1)).view(-1, 12),
        n=nn.LayerNorm(12))
    assert ops(f) == ["linear"] + ["reduce"] * 5 + ["elementwise"]
    pool = f.program.data["ops"][5]
    assert (pool["kind"], pool["groups"]) == ("max", 3)
    assert "aten.rsqrt.default" in body(pool)
    assert f.program.data["ops"][-1]["operands"][-1] == pool["results"][0]


@pytest.mark.parametrize("body, message", [
    (lambda y, m: F.max_pool1d(y.unsqueeze(1), 4, stride=2),
     r"aten.max_pool2d_with_indices.default is not supported by fusion: "
     r"windows of \[1, 4\] with stride \[1, 2\], overlapping: fusion pools "
     r"non-overlapping windows"),
    (lambda y, m: F.avg_pool1d(y.unsqueeze(1), 2, stride=3),
     r"aten.avg_pool2d.default is not supported by fusion: windows of "
     r"\[1, 2\] with stride \[1, 3\], with gaps between them"),
    (lambda y, m: F.max_pool1d(y.unsqueeze(1), 4, padding=1),
     r"aten.max_pool2d_with_indices.default is not supported by fusion: "
     r"padding \[0, 1\]: fusion pools windows of the features themselves"),
    (lambda y, m: F.avg_pool1d(y.unsqueeze(1), 4, padding=2,
                               count_include_pad=False),
     r"aten.avg_pool2d.default is not supported by fusion: padding"),
    (lambda y, m: F.max_pool1d(y.unsqueeze(1), 2, stride=2, dilation=2),
     r"aten.max_pool2d_with_indices.default is not supported by fusion: "
     r"dilation \[1, 2\]: fusion pools windows of contiguous values"),
    (lambda y, m: F.max_pool1d(y.unsqueeze(1), 5, ceil_mode=True),
     r"aten.max_pool2d_with_indices.default is not supported by fusion: "
     r"windows of 5 of 12 values, not a multiple: PyTorch drops \(or with "
     r"ceil_mode pools\) a partial last window"),
    (lambda y, m: F.avg_pool1d(y.unsqueeze(1), 5),
     r"aten.avg_pool2d.default is not supported by fusion: windows of 5 of "
     r"12 values, not a multiple"),
    (lambda y, m: F.adaptive_avg_pool1d(y.unsqueeze(1), 5),
     r"aten._adaptive_avg_pool2d.default is not supported by fusion: an "
     r"adaptive pooling of 12 values into 5 windows: 5 does not divide 12, "
     r"so PyTorch's windows differ in size and overlap"),
    (lambda y, m: F.adaptive_max_pool1d(y.unsqueeze(1), 8),
     r"aten.adaptive_max_pool2d.default is not supported by fusion: an "
     r"adaptive pooling of 12 values into 8 windows"),
    (lambda y, m: F.max_pool1d(y.unsqueeze(1), 4,
                               return_indices=True)[1] * 1.0,
     r"aten.max_pool2d_with_indices.default is not supported by fusion: "
     r"its indices are used \(return_indices=True"),
    (lambda y, m: F.max_pool2d(y.unsqueeze(0), (2, 1)),
     r"aten.max_pool2d_with_indices.default is not supported by fusion: a "
     r"pooling over dimension 1 of a \(1, s\d+, 12\) value, across the "
     r"batch: fusion pools the features of each row"),
    (lambda y, m: F.adaptive_avg_pool2d(y.unsqueeze(0), (1, 12)),
     r"aten._adaptive_avg_pool2d.default is not supported by fusion: an "
     r"adaptive pooling of dimension 1 .*across the batch"),
    (lambda y, m: F.max_pool2d(y.view(-1, 1, 2, 6), (2, 3)),
     r"aten.max_pool2d_with_indices.default is not supported by fusion: "
     r"windows of \[2, 3\] over the last 2 dimensions of a "
     r"\(s\d+, 1, 2, 6\) value, not contiguous features of a row"),
])
def test_unsupported_pools_name_op_and_line(body, message):
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=message + r".*\(.*test_importer\.py:\d+\)"):
        import_module(Located(body), (torch.randn(4, 8),), training=False)


def fake_gpu_graph(forward, *shapes):
    """The ATen graph of `forward` of bfloat16 tensors of `shapes` on a fake
    CUDA device: a GPU's graph, traced without one."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    with FakeTensorMode(allow_non_fake_inputs=True):
        args = [torch.empty(shape, dtype=torch.bfloat16, device="cuda")
                for shape in shapes]
        return make_fx(forward, tracing_mode="fake")(*args).graph


def linear_batch_norm(x, w, mean, var):
    return torch.ops.aten._native_batch_norm_legit_functional.default(
        F.linear(x, w), None, None, mean, var, True, 0.1, 1e-5)


def test_batch_statistics_keep_pytorchs_gpu_dtype():
    """On GPUs a bfloat16 batch norm's batch mean and inverse standard
    deviation (what its backward reads) are float32: the program's batch
    norm returns them so, and they are results of that dtype; an op that
    reads one as a vector of the model's dtype is refused."""
    from fusion.importer import Importer
    from fusion.errors import UnsupportedOperationError

    graph = fake_gpu_graph(linear_batch_norm, (9, 16), (24, 16), (24,),
                           (24,))
    nodes = list(graph.nodes)
    inputs = [n for n in nodes if n.op == "placeholder"]
    computed = [n for n in nodes if n.op == "call_function"]
    (norm,) = [n for n in nodes if "batch_norm" in str(n.target)]
    items = {n.args[1]: n for n in norm.users}
    assert items[1].meta["val"].dtype == torch.float32
    program = Importer(computed, inputs, [items[0], items[1], items[2]]).run()
    (bn,) = [op for op in program.data["ops"] if op["op"] == "batch_norm"]
    assert bn["batch_stats"] == "f32" and len(bn["results"]) == 5
    assert program.data["results"] == [bn["results"][0]] + bn["results"][3:]

    def centered_again(x, w, mean, var):
        out = linear_batch_norm(x, w, mean, var)
        return out[0] - out[1].to(torch.bfloat16)

    graph = fake_gpu_graph(centered_again, (9, 16), (24, 16), (24,), (24,))
    nodes = list(graph.nodes)
    output = [n for n in nodes if n.op == "output"][0].args[0]
    with pytest.raises(UnsupportedOperationError,
                       match="batch statistic in f32"):
        Importer([n for n in nodes if n.op == "call_function"],
                 [n for n in nodes if n.op == "placeholder"], [output]).run()


@pytest.mark.parametrize("view, problem", [
    (lambda mean: mean.unsqueeze(0), None),
    (lambda mean: mean.view(24, 1),
     r"a view of a vector of 24 features as \(24, 1\)"),
])
def test_views_of_batch_statistics(view, problem):
    """A vector result viewed with leading dimensions of size 1 (what
    inductor's partitioner saves of a batch mean) is returned flat, its
    features' length (not its first dimension's) the library's shape; a
    view that does not keep it per column is refused."""
    from fusion.importer import Importer
    from fusion.errors import UnsupportedOperationError

    def viewed_mean(x, w, mean, var):
        out = linear_batch_norm(x, w, mean, var)
        return out[0], view(out[1])

    graph = fake_gpu_graph(viewed_mean, (9, 16), (24, 16), (24,), (24,))
    nodes = list(graph.nodes)
    outputs = [n for n in nodes if n.op == "output"][0].args[0]
    importer = Importer([n for n in nodes if n.op == "call_function"],
                        [n for n in nodes if n.op == "placeholder"],
                        list(outputs))
    if problem is not None:
        with pytest.raises(UnsupportedOperationError, match=problem):
            importer.run()
        return
    importer.run()
    assert importer.result_shapes == [[None, 24], [24]]
