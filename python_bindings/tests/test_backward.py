"""The backward graph through fusion (issue 67's first step): AOTAutograd's
backward graph is partitioned as the forward is, each data-gradient GEMM
(dX = dZ @ W) fused with the derivative of the activation below it, which
reads the forward's saved value; the gradients of every parameter and of
the input against float64 on ragged batches, with PyTorch's ops for the
rest (fallback "eager", where the activations' backward ops stay whole) and
inductor's (which decomposes them)."""
import copy
import math

import pytest
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

import fusion
import fusion.dynamo

pytestmark = pytest.mark.usefixtures("fresh_dynamo")

ACTIVATIONS = {
    "gelu": (F.gelu, "aten.gelu_backward.default"),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  "aten.gelu_backward.default"),
    "relu": (F.relu, "aten.threshold_backward.default"),
    "silu": (F.silu, "aten.silu_backward.default"),
    "sigmoid": (torch.sigmoid, "aten.sigmoid_backward.default"),
    "tanh": (torch.tanh, "aten.tanh_backward.default"),
}


def gelu_new(x):
    """GPT-2's GELU, written out as transformers writes it: its backward
    reads the tanh from two terms, each a product with the gradient."""
    return 0.5 * x * (1.0 + torch.tanh(
        math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class ThreeLayers(nn.Module):
    """Three linear layers with an activation after the first two: the
    backward's data gradients of the second and third are each followed
    by the derivative of the activation below."""

    def __init__(self, activation):
        super().__init__()
        self.first = nn.Linear(40, 96)
        self.second = nn.Linear(96, 48)
        self.third = nn.Linear(48, 24)
        self.activation = ACTIVATIONS[activation][0] \
            if activation in ACTIVATIONS else activation

    def forward(self, x):
        return self.third(self.activation(
            self.second(self.activation(self.first(x)))))


def gradients(model, x):
    x = x.detach().requires_grad_()
    model.zero_grad(set_to_none=True)
    weights = torch.linspace(-1, 1, 24, dtype=x.dtype)
    (model(x) * weights).square().sum().backward()
    return [x.grad] + [p.grad for p in model.parameters()]


def gradient_errors(activation, options, batches=(13, 5)):
    """The largest relative error of the compiled model's gradients (the
    input's and every parameter's) against float64 at each batch."""
    torch.manual_seed(0)
    model = ThreeLayers(activation)
    reference = copy.deepcopy(model).double()
    compiled = torch.compile(model, backend="fusion", options=options)
    errors = []
    for batch in batches:
        x = torch.randn(batch, 40, dtype=torch.float64)
        found = gradients(compiled, x.float())
        expected = gradients(reference, x)
        errors.append(max(((f.double() - e).norm() / e.norm()).item()
                          for f, e in zip(found, expected)))
    return max(errors)


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_derivative_fused_into_data_gradient(activation):
    """Fallback "eager": the activation's backward op is fused whole into
    the data gradient of the layer above it, twice."""
    error = gradient_errors(activation, {
        "target": "cpu", "fallback": "eager", "fuse_backward": "on"})
    assert error < 1e-5
    fused = fusion.dynamo.last_fused_backward
    derivative = ACTIVATIONS[activation][1]
    assert sum(derivative in members and "aten.mm.default" in members
               for members in fused) == 2, fused


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_decomposed_derivative_fused_with_inductor(activation):
    """Fallback "inductor": the derivative's decomposition (erf and exp of
    the saved value; its comparison with 0 and a where) is pulled into the
    data gradient's partition, the saved value read from outside."""
    error = gradient_errors(activation, {
        "target": "cpu", "fallback": "inductor", "fuse_backward": "on"})
    assert error < 1e-5
    fused = fusion.dynamo.last_fused_backward
    expected = {"gelu": "aten.erf.default",
                "relu": "aten.where.self"}[activation]
    assert sum(expected in members and "aten.mm.default" in members
               for members in fused) == 2, fused


def test_backward_left_to_pytorch_when_off():
    error = gradient_errors("gelu", {
        "target": "cpu", "fallback": "eager", "fuse_backward": "off"})
    assert error < 1e-5
    assert fusion.dynamo.last_fused_backward == []
    assert fusion.dynamo.last_fused  # the forward still fuses


@pytest.mark.parametrize("dtype,fused", [(torch.float32, True),
                                         (torch.bfloat16, False)])
def test_auto_fuses_backward_where_fusion_is_faster(dtype, fused):
    """"auto" (the default): the backward's GEMMs that fusion computes
    faster than PyTorch even alone, f32 in fp32 precision on a GPU (3xTF32,
    here compiled for sm_90 without running); not bf16's, nor the CPU's."""
    model = ThreeLayers("gelu").to(dtype)
    x = torch.randn(8, 40, dtype=dtype, requires_grad=True)
    torch.compile(model, backend="fusion", options={
        "target": "sm_90", "compile_only": True})(x).float().sum().backward()
    assert bool(fusion.dynamo.last_fused_backward) == fused
    torch._dynamo.reset()
    gradient_errors("gelu", {"target": "cpu"})
    assert fusion.dynamo.last_fused_backward == []


@pytest.mark.parametrize("option", ["fuse_backward", "k_major_copies"])
def test_bad_backend_option_value_refused(option):
    compiled = torch.compile(ThreeLayers("relu"), backend="fusion", options={
        "target": "cpu", option: "sometimes"})
    with pytest.raises(Exception, match=f"{option}='sometimes': auto, "
                                        "on, off"):
        compiled(torch.randn(4, 40))


def saved_value_graph(shared):
    """A backward graph's data gradient `mm` and the ReLU derivative read
    from the saved output: where(le(saved, 0), 0, mm); with `shared`,
    another op reads the comparison too."""
    graph = torch.fx.Graph()
    grad, weight, saved = (graph.placeholder(n)
                           for n in ("grad", "weight", "saved"))
    mm = graph.call_function(torch.ops.aten.mm.default, (grad, weight))
    le = graph.call_function(torch.ops.aten.le.Scalar, (saved, 0.0))
    where = graph.call_function(torch.ops.aten.where.self, (le, 0.0, mm))
    results = [where]
    if shared:
        results.append(graph.call_function(
            torch.ops.aten.logical_not.default, (le,)))
    graph.output(tuple(results))
    for node, value in ((grad, torch.empty(8, 16)),
                        (weight, torch.empty(16, 32)),
                        (saved, torch.empty(8, 32)),
                        (mm, torch.empty(8, 32)),
                        (le, torch.empty(8, 32, dtype=torch.bool)),
                        (where, torch.empty(8, 32))):
        node.meta["val"] = value
    return graph, mm, le, where


@pytest.mark.parametrize("shared", [False, True])
def test_saved_values_ops_pulled_in_backward_graphs(shared):
    """An elementwise op of an outside matrix is pulled into a backward
    partition, also where something else reads it (it stays in the graph
    for that reader: computed twice rather than written for the partition
    to read); never in forward graphs."""
    _, mm, le, _ = saved_value_graph(shared)
    assert fusion.dynamo._pulled(le, {mm}, {}, True, backward=True) == [le]
    assert fusion.dynamo._pulled(le, {mm}, {}, True) == []


def test_shared_derivative_values_computed_in_the_epilogue():
    """GPT-2's GELU written out: its derivative's two terms, each a product
    with the data gradient, read one tanh of the saved value. The tanh is
    taken into the partition with the first term (the second's ops read it
    from outside at that point) and the second term joins after: the
    whole derivative is the epilogue's, the GEMM's output written once."""
    torch.manual_seed(0)
    model = ThreeLayers(gelu_new)
    reference = copy.deepcopy(model).double()
    compiled = torch.compile(model, backend="fusion", options={
        "target": "cpu", "fallback": "inductor", "fuse_backward": "on"})
    for batch in (13, 5):
        x = torch.randn(batch, 40, dtype=torch.float64)
        for found, expected in zip(gradients(compiled, x.float()),
                                   gradients(reference, x)):
            assert ((found.double() - expected).norm() /
                    expected.norm()).item() < 1e-5
    fused = fusion.dynamo.last_fused_backward
    assert sum("aten.tanh.default" in members and
               "aten.mm.default" in members for members in fused) == 2, fused


class SequenceLayers(nn.Module):
    """A linear layer, GELU and GPT-2's Conv1D ([in, out] weight) on
    [batch, sequence, features] activations: the backward's weight
    gradients read views of the saved activations and of the gradients."""

    def __init__(self):
        super().__init__()
        self.first = nn.Linear(40, 96)
        self.second_weight = nn.Parameter(torch.randn(96, 24) / 10)
        self.second_bias = nn.Parameter(torch.randn(24) / 10)

    def forward(self, x):
        h = F.gelu(self.first(x))
        return torch.addmm(self.second_bias, h.view(-1, 96),
                           self.second_weight).view(*x.shape[:-1], 24)


@pytest.mark.parametrize("model,shape", [(ThreeLayers("gelu"), (8, 40)),
                                         (SequenceLayers(), (2, 6, 40))])
def test_weight_gradients_fused_for_gpu_targets(model, shape):
    """fp32 for sm_90 ("auto"): every GEMM of the backward graph is fused,
    the weight gradients (dW = dZ^T @ x, K the batch) included: each data
    gradient's and each weight gradient's (compiled without running)."""
    x = torch.randn(*shape, requires_grad=True)
    torch.compile(model, backend="fusion", options={
        "target": "sm_90", "compile_only": True})(x).sum().backward()
    gemms = [members for members in fusion.dynamo.last_fused_backward
             if "aten.mm.default" in members]
    parameters = len([p for p in model.parameters() if p.dim() == 2])
    # A data gradient a layer (the first's, as x requires it) and a
    # weight gradient a layer.
    assert len(gemms) == 2 * parameters, fusion.dynamo.last_fused_backward


def k_major_graph(rows, dtype=torch.float32):
    """mm(x, w) of placeholders x [rows, 16] and w [16, 32] (an [in, out]
    operand) in a graph: the graph and the mm."""
    graph = torch.fx.Graph()
    x, w = graph.placeholder("x"), graph.placeholder("w")
    x.meta["val"] = torch.empty(rows, 16, dtype=dtype)
    w.meta["val"] = torch.empty(16, 32, dtype=dtype)
    mm = graph.call_function(torch.ops.aten.mm.default, (x, w))
    mm.meta["val"] = torch.empty(rows, 32, dtype=dtype)
    graph.output(mm)
    return graph, mm


@pytest.mark.parametrize("rows,options,copied", [
    (1024, {}, True),
    (1023, {}, False),
    (8, {"k_major_copies": "on"}, True),
    (1024, {"k_major_copies": "off"}, False),
    (1024, {"precision": "tf32"}, False),
    (1024, {"target": "cpu"}, False),
    (8, {"target": "cpu", "k_major_copies": "on"}, True),
])
def test_3xtf32_gemm_reads_in_out_operand_from_k_major_copy(rows, options,
                                                            copied):
    """A 3xTF32 GEMM (f32, fp32 precision, a GPU target) reads its [in,
    out] operand from a K-major copy made in the graph, which
    linear_operands reads [out, in]: by default where x has at least 1024
    static rows; "on" every GEMM (the CPU's too), "off" none; "auto" not
    for other precisions or the CPU."""
    graph, mm = k_major_graph(rows)
    w = mm.args[1]
    fusion.dynamo._copy_k_major(graph, {"target": "sm_90", **options})
    graph.lint()
    _, operand, _, layout = fusion.importer.linear_operands(mm)
    if copied:
        copy = operand.args[0]  # operand: the copy's transpose
        assert layout == "out_in"
        assert fusion.importer.op_name(copy) == "aten.clone.default"
        assert copy.args[0].args[0] is w
        assert copy.meta["val"].shape == (32, 16)
        assert copy.meta["val"].is_contiguous()
    else:
        assert layout == "in_out" and operand is w


def test_gemms_of_one_in_out_operand_read_one_copy():
    graph, mm = k_major_graph(1024)
    x, w = mm.args
    with graph.inserting_after(mm):
        other = graph.call_function(torch.ops.aten.mm.default, (x, w))
    other.meta["val"] = mm.meta["val"]
    fusion.dynamo._copy_k_major(graph, {"target": "sm_90"})
    graph.lint()
    assert mm.args[1] is other.args[1] and mm.args[1] is not w
    assert sum(fusion.importer.op_name(n) == "aten.clone.default"
               for n in graph.nodes) == 1


def test_bf16_gemm_reads_in_out_operand_in_place():
    # wgmma reads 16-bit operands N-major itself.
    graph, mm = k_major_graph(4096, torch.bfloat16)
    fusion.dynamo._copy_k_major(graph, {"target": "sm_90"})
    assert fusion.importer.linear_operands(mm)[3] == "in_out"


def linear_layouts(lookups):
    """The weight layout of each linear op of the libraries looked up
    (the library_lookups fixture)."""
    return [op.get("weight_layout", "out_in")
            for programs, _ in lookups for program in programs.values()
            for op in program.data["ops"] if op["op"] == "linear"]


def test_explain_names_k_major_copies():
    census = fusion.explain(SequenceLayers(), torch.randn(2, 6, 40),
                            options={"target": "cpu",
                                     "k_major_copies": "on"})
    copied = [report.name for report in census if report.k_major_copy]
    assert copied == ["addmm_1"], str(census)
    assert "from a K-major copy" in str(census)
    census = fusion.explain(SequenceLayers(), torch.randn(2, 6, 40),
                            options={"target": "cpu"})
    assert not any(report.k_major_copy for report in census)


def test_k_major_copies_match_float64(library_lookups):
    """The data gradients that fuse the GELU derivative read their [in,
    out] weight (an nn.Linear's [out, in] weight, dX = dZ @ W) from a copy
    ("on"; the CPU's reference lowering computes them): gradients against
    float64 on ragged batches."""
    error = gradient_errors("gelu", {
        "target": "cpu", "fallback": "eager", "fuse_backward": "on",
        "k_major_copies": "on"})
    assert error < 1e-5
    assert sum("aten.mm.default" in members
               for members in fusion.dynamo.last_fused_backward) == 2
    layouts = linear_layouts(library_lookups)
    assert layouts and set(layouts) == {"out_in"}


@pytest.mark.parametrize("mode", ["on", "off"])
def test_k_major_copies_in_a_training_step(library_lookups, mode):
    """The step of a Conv1D layer for sm_90 (compiled without running):
    with "on" every GEMM's library reads its weight [out, in] (the forward's
    Conv1D weight, the first layer's data gradient's weight and both
    weight gradients' second operands copied K-major); with "off" those
    four read it [in, out]."""
    x = torch.randn(2, 6, 40, requires_grad=True)
    torch.compile(SequenceLayers(), backend="fusion", options={
        "target": "sm_90", "compile_only": True, "k_major_copies": mode})(
        x).sum().backward()
    layouts = linear_layouts(library_lookups)
    assert len(layouts) == 6, layouts
    assert layouts.count("in_out") == (0 if mode == "on" else 4), layouts


def mm_graph(second, second_meta, transposed=False):
    """mm(a, b) of placeholder a [8, 16] and b [16, 32]: placeholder p of
    meta `second_meta` (`transposed`: b is its transpose), or p * 2
    (`second` "computed")."""
    graph = torch.fx.Graph()
    a = graph.placeholder("a")
    a.meta["val"] = torch.empty(8, 16)
    b = graph.placeholder("b")
    b.meta["val"] = second_meta
    if transposed:
        b = graph.call_function(torch.ops.aten.t.default, (b,))
        b.meta["val"] = second_meta.t()
    if second == "computed":
        b = graph.call_function(torch.ops.aten.mul.Tensor, (b, 2.0))
        b.meta["val"] = second_meta * 2
    mm = graph.call_function(torch.ops.aten.mm.default, (a, b))
    mm.meta["val"] = torch.empty(8, 32)
    return mm


def test_gemm_reads_computed_static_matrix_in_out():
    """A matrix the graph computes, of static shape (a weight gradient's
    saved activation), is read [K, N] as it is."""
    from fusion import importer
    mm = mm_graph("computed", torch.empty(16, 32))
    _, operand, _, layout = importer.linear_operands(mm)
    assert layout == "in_out" and operand is mm.args[1]


def test_gemm_reads_transposed_view_transposed_back_in_place():
    """t(b) where b is a transposed view of a dense [16, 32] matrix (the
    forward's saved w.t()) is dense: read "in_out", not b copied for
    "out_in"; the transpose of a dense weight stays "out_in"."""
    from fusion import importer
    mm = mm_graph("input", torch.empty(32, 16), transposed=True)
    assert importer.linear_operands(mm)[3] == "out_in"
    mm = mm_graph("input", torch.empty(16, 32).t(), transposed=True)
    _, operand, _, layout = importer.linear_operands(mm)
    assert layout == "in_out" and operand is mm.args[1]


def test_gemm_refuses_computed_matrix_of_dynamic_shape():
    """A computed matrix whose K is symbolic (a dynamic batch's weight
    gradient) is refused: fusion's GEMMs take a static K."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    from fusion import importer
    from fusion.errors import UnsupportedOperationError
    mode = FakeTensorMode(shape_env=ShapeEnv())
    size = mode.shape_env.create_unbacked_symint()
    with mode:
        dynamic = torch.empty(size, 32)
    mm = mm_graph("computed", dynamic)
    with pytest.raises(UnsupportedOperationError,
                       match="nor a matrix of static shape"):
        importer.linear_operands(mm)


def test_gemm_of_computed_weight_matches_float64():
    """The forward's GEMM of a weight it computes (w * scale, [in, out]),
    with GELU after it, fused and within fp32 of float64, on 2-D and 3-D
    inputs."""

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(40, 24) / 6)
            self.scale = nn.Parameter(torch.rand(40, 24) + 0.5)

        def forward(self, x):
            return F.gelu(x @ (self.weight * self.scale))

    torch.manual_seed(0)
    model = Scaled()
    reference = copy.deepcopy(model).double()
    compiled = torch.compile(model, backend="fusion", options={
        "target": "cpu"})
    for shape in ((13, 40), (3, 5, 40)):
        x = torch.randn(*shape, dtype=torch.float64)
        with torch.no_grad():
            found, expected = compiled(x.float()), reference(x)
        assert ((found.double() - expected).norm() / expected.norm()) < 1e-6
        assert any("aten.gelu.default" in members
                   for members in fusion.dynamo.last_fused)


class NormBetween(nn.Module):
    """An RMS norm between two linear layers: the second's data gradient
    is followed by the norm's backward, whose weight gradient (a column
    sum over the batch) fusion does not compute after it."""

    def __init__(self):
        super().__init__()
        self.first = nn.Linear(40, 96)
        self.norm = nn.RMSNorm(96)
        self.second = nn.Linear(96, 24)

    def forward(self, x):
        return self.second(self.norm(self.first(x)))


@pytest.mark.parametrize("rule", [True, False])
def test_backward_partition_read_back_by_pytorch_is_left(monkeypatch, rule):
    """A data gradient's partition that grows halfway into a norm's
    backward would write two matrices that PyTorch's kernels then read
    back (Llama's bf16 step, 3% slower): the GEMM's output alone moves
    fewer bytes, so the partition is left to PyTorch. Without the rule
    (the control), it fuses the norm's products."""
    if not rule:
        monkeypatch.setattr(fusion.dynamo, "_read_back", lambda _: [])
    torch.manual_seed(0)
    model = NormBetween()
    reference = copy.deepcopy(model).double()
    compiled = torch.compile(model, backend="fusion", options={
        "target": "cpu", "fallback": "inductor", "fuse_backward": "on"})
    x = torch.randn(13, 40, dtype=torch.float64)
    found, expected = (
        torch.autograd.grad(m(x.to(dtype)).square().sum(),
                            [p for p in m.parameters()])
        for m, dtype in ((compiled, torch.float32),
                         (reference, torch.float64)))
    for f, e in zip(found, expected):
        assert ((f.double() - e).norm() / e.norm()).item() < 1e-5
    norm_fused = [members for members in fusion.dynamo.last_fused_backward
                  if "aten.pow.Tensor_Scalar" in members]
    assert bool(norm_fused) == (not rule), fusion.dynamo.last_fused_backward


def test_explain_lists_the_backward_graphs_gemms():
    """fusion.explain(backward=True): the backward graph's GEMMs too, each
    data gradient fused with the activation's derivative, marked as a
    backward graph's; without it, the forward graphs' alone."""
    model = ThreeLayers("gelu")
    x = torch.randn(8, 40)
    options = {"target": "cpu", "fallback": "eager", "fuse_backward": "on"}
    forward = fusion.explain(model, x, options=options)
    assert forward and not any(report.backward for report in forward)
    census = fusion.explain(model, x, options=options, backward=True)
    backward = [report for report in census if report.backward]
    assert len(census) == len(forward) + len(backward)
    derivatives = [report for report in backward
                   if "aten.gelu_backward.default" in report.fused]
    assert len(derivatives) == 2, str(census)
    assert all(report.graph == 0 for report in backward)
    assert "backward graph 0 " in str(census)
    with torch.no_grad(), pytest.raises(fusion.UnsupportedOperationError,
                                        match="no output requires"):
        fusion.explain(model, x, options=options, backward=True)
