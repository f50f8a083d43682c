"""torch.compile(backend="fusion") grouping sibling GEMMs (the backend
option group_gemms): linear layers of one input that nothing fuses after
(attention's q, k and v projections) computed as one GEMM of their
concatenated weights and biases, a `fusion.concat` that the GEMM reads in
place, each layer's output a slice of its result. On the CPU target with
group_gemms="on" (the default, "auto", groups for sm_90 alone), against
float64 eager; and the importer's concatenations through fusion.compile,
and sibling layers whose outputs a `cat` joins (one GEMM, its result the
concatenation) through both front ends."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

import fusion
import fusion.dynamo

pytestmark = pytest.mark.usefixtures("fresh_dynamo")

ON = {"target": "cpu", "group_gemms": "on"}


class Projections(nn.Module):
    """Attention over q, k and v, three linear layers of one input x
    ([..., tokens, hidden]) split into heads of `head` features: k and v
    may have fewer heads (grouped-query attention, Llama's), each layer a
    bias or not (`bias`, one for all or one per layer)."""

    def __init__(self, widths=(32, 32, 32), bias=True, hidden=32, head=8):
        super().__init__()
        biases = bias if isinstance(bias, tuple) else (bias,) * 3
        self.q, self.k, self.v = (nn.Linear(hidden, width, bias=b)
                                  for width, b in zip(widths, biases))
        self.head = head

    def forward(self, x):
        def heads(y):
            return y.unflatten(-1, (-1, self.head)).transpose(-2, -3)

        q, k, v = (heads(layer(x)) for layer in (self.q, self.k, self.v))
        out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        return out.transpose(-2, -3).flatten(-2)


class ExplicitAttention(Projections):
    """Attention written out (softmax(q k^T) v; k and v of one head, or
    as many as q): the training step saves copies of the heads for the
    backward, not views of the projections (scaled_dot_product_attention's
    kernels save q, k and v themselves, which keeps them apart)."""

    def forward(self, x):
        q, k, v = (layer(x).unflatten(-1, (-1, self.head)).transpose(-2, -3)
                   for layer in (self.q, self.k, self.v))
        scores = (q @ k.transpose(-1, -2) / self.head ** 0.5).softmax(-1)
        return (scores @ v).transpose(-2, -3).flatten(-2)


def relative_error(out, reference):
    return ((out.double() - reference.double()).norm() /
            reference.double().norm()).item()


def assert_matches_float64(model, shape, options=ON):
    """torch.compile(model) on inputs of `shape` and of a batch of 8 (the
    first dimension; dynamo compiles the graph again with a dynamic
    batch) against the model in float64."""
    compiled = torch.compile(model, backend="fusion", options=options)
    reference = copy.deepcopy(model).double()
    with torch.no_grad():
        for batch in (shape[0], 8):
            x = torch.randn(batch, *shape[1:])
            assert relative_error(compiled(x), reference(x.double())) \
                <= 1e-5


def grouped(census):
    return {report.name: report.grouped_with for report in census
            if report.grouped_with}


@pytest.mark.parametrize("widths, bias, shape", [
    ((32, 32, 32), True, (2, 5, 32)),
    ((32, 32, 32), False, (2, 5, 32)),
    ((32, 8, 8), False, (2, 5, 32)),
    ((32, 16, 16), True, (7, 32)),
], ids=["bias", "no_bias", "gqa", "rank_2"])
def test_sibling_projections_are_one_gemm(widths, bias, shape,
                                          built_modules):
    """BERT's and ViT's projections (biases), Llama's (none, k and v
    narrower with grouped-query attention), of [batch, tokens, hidden] or
    [tokens, hidden] inputs: one GEMM of the concatenated weights (and
    biases), which the program reads as a fusion.concat; each report
    names the others."""
    model = Projections(widths, bias)
    with torch.no_grad():
        census = fusion.explain(model, torch.randn(*shape), options=ON)
    q, k, v = census[:3]
    assert grouped(census) == {q.name: [k.name, v.name],
                               k.name: [q.name, v.name],
                               v.name: [q.name, k.name]}
    assert str(k).splitlines()[0].endswith(
        f"grouped with {q.name} and {v.name} into one GEMM that reads "
        f"their shared input once")
    assert q.members == ["aten.cat.default"] * (1 + bias) + [
        "aten.permute.default",
        "aten.addmm.default" if bias else "aten.mm.default"]
    assert not k.members and not v.members
    # (The math attention of 3-D inputs has batched products.)
    assert str(census).startswith(f"3 of {len(census)} GEMMs fused")
    assert fusion.dynamo.last_fused == [q.members]
    (text,) = [t for t in built_modules if "fusion.concat" in t]
    assert f"dim 0 : (tensor<{widths[0]}x32xf32>, tensor<{widths[1]}x32" \
        f"xf32>, tensor<{widths[2]}x32xf32>) -> tensor<{sum(widths)}x32" \
        f"xf32>" in text
    torch._dynamo.reset()
    assert_matches_float64(model, shape)


@pytest.mark.parametrize("training", [False, True], ids=["eval", "train"])
def test_inductor_compiles_the_rest_around_the_group(training):
    """fallback="inductor" (the GPU targets' default): inductor compiles
    the attention around the group's call and reads the slices; in a
    training step too, its backward inductor's."""
    model = ExplicitAttention((32, 8, 8))
    options = {**ON, "fallback": "inductor"}
    x = torch.randn(2, 5, 32, requires_grad=training)
    with torch.set_grad_enabled(training):
        census = fusion.explain(model, x, options=options)
    assert len(grouped(census)) == 3
    torch._dynamo.reset()
    reference = copy.deepcopy(model).double()
    with torch.set_grad_enabled(training):
        out = torch.compile(model, backend="fusion", options=options)(x)
        expected = reference(x.detach().double())
    assert relative_error(out, expected) <= 1e-5
    if training:
        out.square().sum().backward()
        expected.square().sum().backward()
        q = reference.q.weight.grad
        assert relative_error(model.q.weight.grad, q) <= 1e-5


def test_in_out_weights_concatenate_along_their_columns(built_modules):
    """x @ w with w stored [in, out] (GPT-2's Conv1D form): the weights
    are concatenated along dimension 1, and the GEMM computed alone (its
    result the concatenation) though nothing after it fuses, so that
    PyTorch does not concatenate the weights."""
    class InOut(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.ParameterList(
                [nn.Parameter(torch.randn(32, n) / 6) for n in (16, 8)])

        def forward(self, x):
            return torch.cat([x @ w for w in self.weights], -1).cumsum(-1)

    model = InOut()
    with torch.no_grad():
        census = fusion.explain(model, torch.randn(3, 32), options=ON)
    (report,) = census
    assert len(report.joined) == 2 and report.members, str(report)
    assert "concatenated, as one GEMM; computed alone" in str(report)
    assert any("fusion.concat" in t and "dim 1 : (tensor<32x16xf32>, "
               "tensor<32x8xf32>) -> tensor<32x24xf32>" in t
               for t in built_modules)
    torch._dynamo.reset()
    assert_matches_float64(model, (3, 32))


def test_layers_with_and_without_bias_are_not_grouped():
    """Whisper's attention: q and v have biases, k none. q and v are one
    GEMM, k stays PyTorch's."""
    model = Projections(bias=(True, False, True))
    with torch.no_grad():
        census = fusion.explain(model, torch.randn(2, 5, 32), options=ON)
    q, k, v = census[:3]
    assert grouped(census) == {q.name: [v.name], v.name: [q.name]}
    assert "not fused: nothing after it" in str(k)
    torch._dynamo.reset()
    assert_matches_float64(model, (2, 5, 32))


def test_gemms_fusion_computes_alone_wait_for_the_grouping(monkeypatch):
    """Where fusion computes a GEMM alone (f32 for sm_90: 3xTF32, here
    made so on the CPU), the partitions of siblings wait for the
    grouping; one that no group takes (k, without a bias) is computed
    alone after it."""
    monkeypatch.setattr(fusion.dynamo, "_runs_faster_alone",
                        lambda gemm, options: True)
    model = Projections(bias=(True, False, True))
    with torch.no_grad():
        census = fusion.explain(model, torch.randn(2, 5, 32), options=ON)
    q, k, v = census[:3]
    assert grouped(census) == {q.name: [v.name], v.name: [q.name]}
    assert k.members[:2] == ["aten.permute.default", "aten.mm.default"]
    assert len(fusion.dynamo.last_fused) == 2
    torch._dynamo.reset()
    assert_matches_float64(model, (2, 5, 32))


@pytest.mark.parametrize("options", [
    {"target": "cpu"}, {"target": "cpu", "group_gemms": "auto"},
    {"target": "cpu", "group_gemms": "off"}])
def test_no_grouping_on_the_cpu_by_default(options, fused_graphs):
    """"auto" groups where fusion's GEMM reads the parts in place faster
    than separate GEMMs, never on the CPU target; "off" never."""
    model = Projections()
    with torch.no_grad():
        census = fusion.explain(model, torch.randn(2, 5, 32),
                                options=options)
    assert not grouped(census) and not fusion.dynamo.last_fused
    assert "aten.cat.default" not in fused_graphs[0]


def _linear_node(dtype):
    """The GEMM of an [8, 64] x [48, 64]^T linear layer's ATen graph."""
    graph = make_fx(lambda x, w: torch.mm(x, w.t()), tracing_mode="fake")(
        torch.randn(8, 64, dtype=dtype), torch.randn(48, 64, dtype=dtype))
    return next(n for n in graph.graph.nodes
                if n.target is torch.ops.aten.mm.default)


@pytest.mark.parametrize("dtype, options, groups", [
    (torch.bfloat16, {"target": "sm_90"}, True),
    (torch.float16, {"target": "sm_90", "strategy": "wgmma"}, True),
    (torch.bfloat16, {"target": "sm_80"}, False),
    (torch.bfloat16, {"target": "sm_80,sm_90"}, False),
    (torch.bfloat16, {"target": "sm_90", "strategy": "cublas"}, False),
    (torch.bfloat16, {"target": "sm_90", "strategy": "tiled"}, False),
    (torch.bfloat16, {"target": "cpu"}, False),
    (torch.float32, {"target": "sm_90", "precision": "fp32"}, True),
    (torch.float32, {"target": "sm_90", "precision": "tf32"}, False),
    (torch.float32, {"target": "sm_90", "fp32_math": "simt"}, False),
    (torch.bfloat16, {"target": "sm_90", "group_gemms": "off"}, False),
    (torch.float32, {"target": "cpu", "group_gemms": "on"}, True),
    (torch.bfloat16, {"target": "sm_80", "group_gemms": "on"}, True),
])
def test_auto_groups_where_the_wgmma_gemm_reads_the_parts(dtype, options,
                                                          groups):
    """"auto": an sm_90 target whose strategy may pick the wgmma kernel
    (one TMA map a part; cuBLASLt would run one GEMM a part, as PyTorch
    does), in 16 bits, or in f32 where fusion computes the GEMM alone
    anyway (3xTF32); "on" and "off" whatever the target."""
    assert fusion.dynamo._may_group(_linear_node(dtype), options) == groups


def test_bad_group_gemms_value_is_refused():
    compiled = torch.compile(Projections(), backend="fusion",
                             options={"target": "cpu",
                                      "group_gemms": "always"})
    with pytest.raises(Exception, match="group_gemms='always'.*auto, on, "
                       "off"):
        compiled(torch.randn(2, 5, 32))


@pytest.mark.parametrize("error, warns", [
    (fusion.UnsupportedOperationError("refused"), False),
    (RuntimeError("a bug"), True)])
def test_a_group_that_fails_to_compile_leaves_the_graph(
        monkeypatch, fused_graphs, error, warns, recwarn):
    """Where the group's partition is refused (or fusion fails on it, which
    warns), each layer stays PyTorch's GEMM, the graph as it was."""
    original = fusion.dynamo._compile_partition

    def compile_partition(partition, *args):
        if any(str(n.target) == "aten.cat.default"
               for n in partition.members):
            raise error
        return original(partition, *args)

    monkeypatch.setattr(fusion.dynamo, "_compile_partition",
                        compile_partition)
    model = Projections()
    with torch.no_grad():
        census = fusion.explain(model, torch.randn(2, 5, 32), options=ON)
    assert not grouped(census) and not fusion.dynamo.last_fused
    (ops,) = fused_graphs
    assert ops.count("aten.addmm.default") == 3
    assert "aten.cat.default" not in ops and "aten.slice.Tensor" not in ops
    warned = [w for w in recwarn
              if issubclass(w.category, fusion.FusionBackendWarning)]
    assert bool(warned) == warns
    torch._dynamo.reset()
    fused_graphs.clear()
    assert_matches_float64(model, (2, 5, 32))
    assert "aten.cat.default" not in fused_graphs[0]


class ReturnedHeads(Projections):
    """Attention, and v's heads returned too (a view of its layer's
    output, which the graph returns)."""

    def forward(self, x):
        q, k, v = (layer(x).unflatten(-1, (-1, self.head)).transpose(-2, -3)
                   for layer in (self.q, self.k, self.v))
        return F.scaled_dot_product_attention(q, k, v), v


class Returned(Projections):
    """The three layers' outputs returned as they are."""

    def forward(self, x):
        return self.q(x), self.k(x), self.v(x)


@pytest.mark.parametrize("mode", ["on", "auto"])
def test_a_layer_whose_output_leaves_the_graph(mode, monkeypatch,
                                               fused_graphs):
    """A layer whose output (or a view of it) the graph returns (also a
    training step's saved values, which the backward reads with the
    strides it was traced with; AOTAutograd may rebuild a returned view
    from its base with them) is no strided slice of the group's GEMM:
    "on" gives its readers a contiguous copy of its slice, "auto" (made to
    group on the CPU here) leaves it apart, the copy costing more than
    grouping gains; its parts are whole 64-column tiles, as "auto" asks)."""
    monkeypatch.setattr(fusion.dynamo, "_may_group",
                        lambda gemm, options: True)
    model = ReturnedHeads(widths=(64, 64, 64), hidden=64)
    options = {"target": "cpu", "group_gemms": mode}
    with torch.no_grad():
        census = fusion.explain(model, torch.randn(2, 5, 64),
                                options=options)
        q, k, v = (r.name for r in census[:3])
        if mode == "on":
            assert grouped(census) == {q: [k, v], k: [q, v], v: [q, k]}
            assert fused_graphs[0].count("aten.clone.default") == 1
        else:
            assert grouped(census) == {q: [k], k: [q]}
        torch._dynamo.reset()
        x = torch.randn(2, 5, 64)
        out, heads = torch.compile(model, backend="fusion",
                                   options=options)(x)
        expected, expected_heads = copy.deepcopy(model).double()(
            x.double())
    assert relative_error(out, expected) <= 1e-5
    assert relative_error(heads, expected_heads) <= 1e-5
    assert heads.stride() == model(x)[1].stride()


def test_returned_layers_are_grouped_with_copies():
    """Linear layers of one input whose outputs the graph returns (the GPU
    check's projections): with "on", one GEMM and a copy of each slice,
    contiguous as PyTorch's."""
    model = Returned((32, 16, 16))
    with torch.no_grad():
        census = fusion.explain(model, torch.randn(7, 32), options=ON)
        assert len(grouped(census)) == 3
        torch._dynamo.reset()
        x = torch.randn(7, 32)
        outputs = torch.compile(model, backend="fusion", options=ON)(x)
        expected = copy.deepcopy(model).double()(x.double())
    for out, reference in zip(outputs, expected):
        assert out.is_contiguous() and out.shape == reference.shape
        assert relative_error(out, reference) <= 1e-5


def test_training_step_gradients_match_float64():
    """A training step's forward with the group, its backward PyTorch's."""
    model = ExplicitAttention((32, 8, 8), bias=True)
    census = fusion.explain(model, torch.randn(2, 5, 32, requires_grad=True),
                            options=ON)
    assert len(grouped(census)) == 3
    torch._dynamo.reset()
    reference = copy.deepcopy(model).double()
    x = torch.randn(2, 5, 32, requires_grad=True)
    out = torch.compile(model, backend="fusion", options=ON)(x)
    x64 = x.detach().double().requires_grad_()
    expected = reference(x64)
    assert relative_error(out, expected) <= 1e-5
    projection = torch.randn(out.shape, dtype=torch.float64)
    (out * projection).sum().backward()
    (expected * projection).sum().backward()
    assert relative_error(x.grad, x64.grad) <= 1e-5
    # The key's bias gets a gradient of 0 (softmax cancels it), rounding
    # noise in float32: each is compared to at least 1e-3 of the whole.
    total = torch.stack([q.grad.norm() for q in reference.parameters()])
    for p, q in zip(model.parameters(), reference.parameters()):
        error = (p.grad.double() - q.grad).norm()
        assert error <= 1e-5 * max(q.grad.norm(), 1e-3 * total.norm())


def test_transformers_attention_projections():
    """The transformer zoo's BERT (query, key and value with biases) and
    Llama (q_proj, k_proj and v_proj without, k and v narrower): one GEMM
    per layer's projections, outputs as float64 eager's."""
    pytest.importorskip("transformers")
    import transformer_zoo
    for name in ("bert", "llama"):
        torch._dynamo.reset()
        model, inputs = transformer_zoo.make(name)
        model.eval()
        reference = copy.deepcopy(model).double()
        with torch.no_grad():
            census = fusion.explain(model, **inputs, options=ON)
            torch._dynamo.reset()
            out = torch.compile(model, backend="fusion", options=ON)(
                **inputs)
            expected = reference(**inputs)
        # Two layers of three projections each.
        assert sorted(map(len, grouped(census).values())) == [2] * 6, name
        assert relative_error(out.last_hidden_state,
                              expected.last_hidden_state) <= 1e-5, name


class ConcatenatedWeight(nn.Module):
    """A linear layer of two layers' weights and biases concatenated, as a
    model may write it."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(16, 8), nn.Linear(16, 4)

    def forward(self, x):
        weight = torch.cat([self.a.weight, self.b.weight])
        bias = torch.cat([self.a.bias, self.b.bias])
        return F.gelu(F.linear(x, weight, bias))


@pytest.mark.parametrize("front_end", ["torch.compile", "fusion.compile"])
def test_a_concatenated_weight_is_read_in_place(front_end, built_modules):
    model = ConcatenatedWeight().eval()
    x = torch.randn(6, 16)
    with torch.no_grad():
        if front_end == "fusion.compile":
            out = fusion.compile(model, (x,))(x)
        else:
            out = torch.compile(model, backend="fusion")(x)
            assert fusion.dynamo.last_fused[0][:2] == ["aten.cat.default"] * 2
        expected = copy.deepcopy(model).double()(x.double())
    assert relative_error(out, expected) <= 1e-5
    assert any("fusion.concat" in t for t in built_modules)


class ConcatenatedActivations(nn.Module):
    """Sibling linear layers of one input whose outputs the model
    concatenates along the features (the random-model fuzzer's sibling
    form), then a cheap op: `form` "out_in" (F.linear) or "in_out"
    (GPT-2's Conv1D, `x @ w`), with or without biases."""

    def __init__(self, widths=(8, 8), bias=True, form="out_in"):
        super().__init__()
        shape = (lambda n: (16, n)) if form == "in_out" else \
            (lambda n: (n, 16))
        self.weights = nn.ParameterList(
            nn.Parameter(torch.randn(shape(n)) / 4) for n in widths)
        self.biases = nn.ParameterList(
            nn.Parameter(torch.randn(n)) for n in widths) if bias else None
        self.form = form

    def layer(self, x, index):
        weight = self.weights[index]
        bias = self.biases[index] if self.biases is not None else None
        if self.form == "out_in":
            return F.linear(x, weight, bias)
        if bias is None:
            return x @ weight
        return torch.addmm(bias, x, weight)

    def forward(self, x):
        return torch.relu(torch.cat(
            [self.layer(x, i) for i in range(len(self.weights))], -1))


@pytest.mark.parametrize("widths, bias, form, shape", [
    ((8, 8), True, "out_in", (4, 16)),
    ((8, 5, 3), True, "out_in", (2, 3, 16)),
    ((8, 8), False, "out_in", (2, 3, 16)),
    ((6, 10), True, "in_out", (4, 16)),
    ((6, 10), False, "in_out", (4, 16)),
], ids=["rank_2", "rank_3_three", "no_bias", "in_out", "in_out_no_bias"])
@pytest.mark.parametrize("front_end", ["fusion.compile", "torch.compile"])
def test_concatenated_siblings_are_one_gemm(widths, bias, form, shape,
                                            front_end, built_modules):
    """The concatenation is the one GEMM's result, of the weights and
    biases concatenated, and the relu after it its epilogue."""
    model = ConcatenatedActivations(widths, bias, form).eval()
    x = torch.randn(shape)
    with torch.no_grad():
        if front_end == "fusion.compile":
            compiled = fusion.compile(model, (x,))
        else:
            compiled = torch.compile(model, backend="fusion", options=ON)
        for batch in (shape[0], 9):
            x = torch.randn(batch, *shape[1:])
            assert relative_error(compiled(x), copy.deepcopy(model).double()(
                x.double())) <= 1e-5
    assert built_modules
    for text in built_modules:
        functions = text.count("func.func")
        assert text.count("fusion.linear ") == functions
        assert text.count("fusion.concat ") == (1 + bias) * functions
        assert "arith.select" in text  # The relu, in the same function.


@pytest.mark.parametrize("front_end", ["fusion.compile", "torch.compile"])
def test_concatenated_siblings_train(front_end):
    """A training step through the joined GEMM: the backward reads the
    parts' weights as the model holds them; every gradient matches
    float64."""
    model = ConcatenatedActivations((8, 5, 3)).train()
    reference = copy.deepcopy(model).double()
    x = torch.randn(2, 3, 16)
    compiled = fusion.compile(model, (x,)) \
        if front_end == "fusion.compile" else \
        torch.compile(model, backend="fusion", options=ON)
    weights = torch.randn(2, 3, 16, dtype=torch.float64)
    (compiled(x) * weights).sum().backward()
    (reference(x.double()) * weights).sum().backward()
    if front_end == "torch.compile":
        assert fusion.dynamo.last_fused[0].count("aten.cat.default") == 2
    for (name, value), expected in zip(model.named_parameters(),
                                       reference.parameters()):
        assert relative_error(value.grad, expected.grad) <= 1e-5, name


@pytest.mark.parametrize("mode", ["off", "auto"])
def test_concatenated_siblings_stay_apart_where_not_grouped(mode):
    """Under torch.compile where group_gemms does not group (off; auto on
    the CPU) each layer is a GEMM of its own and the concatenation
    PyTorch's: nothing follows a GEMM alone, so nothing fuses."""
    model = ConcatenatedActivations().eval()
    with torch.no_grad():
        torch.compile(model, backend="fusion", options={
            "target": "cpu", "group_gemms": mode})(torch.randn(4, 16))
    assert fusion.dynamo.last_fused == []


class ConcatenatedOtherInputs(ConcatenatedActivations):
    """Linear layers of two inputs (x and relu(x)): no one GEMM."""

    def forward(self, x):
        return torch.cat([self.layer(x, 0), self.layer(torch.relu(x), 1)],
                         -1)


class ConcatenatedRows(ConcatenatedActivations):
    """Sibling layers' outputs concatenated along the rows."""

    def forward(self, x):
        return torch.cat([self.layer(x, 0), self.layer(x, 1)], 0)


class ConcatenatedAndRead(ConcatenatedActivations):
    """A part that something else reads too."""

    def forward(self, x):
        first = self.layer(x, 0)
        return torch.cat([first, self.layer(x, 1)], -1) + first.sum(-1,
                                                                    True)


class ConcatenatedScaled(ConcatenatedActivations):
    """A part of a scaled addmm (alpha)."""

    def forward(self, x):
        return torch.cat([torch.addmm(self.biases[0], x, self.weights[0].t(),
                                      alpha=2), self.layer(x, 1)], -1)


class ConcatenatedInputFeatures(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(8, 8))
        self.w2 = nn.Parameter(torch.randn(8, 8))

    def forward(self, x):
        return torch.relu(F.linear(x, torch.cat([self.w1, self.w2], 1)))


@pytest.mark.parametrize("model, message", [
    *[(model, r"aten.cat.default is not supported by fusion \(.*"
       r"test_grouped_gemms.py:\d+\)$")
      for model in (ConcatenatedOtherInputs, ConcatenatedRows,
                    ConcatenatedAndRead, ConcatenatedScaled)],
    (ConcatenatedInputFeatures,
     r"aten.cat.default is not supported by fusion: it concatenates "
     r"dimension 1 of 2-D parameters; fusion concatenates a GEMM's "
     r"weights and biases along its output features \(.*"
     r"test_grouped_gemms.py:\d+\)$"),
])
def test_other_concatenations_are_refused_by_name(model, message):
    with pytest.raises(fusion.UnsupportedOperationError, match=message):
        fusion.compile(model().eval(), (torch.randn(4, 16),))


@pytest.mark.parametrize("dtype, options, groups", [
    (torch.bfloat16, {}, True),
    (torch.float32, {"precision": "fp32"}, True),
    (torch.float32, {"precision": "tf32"}, False),
    (torch.bfloat16, {"group_gemms": "off"}, False)])
def test_compile_only_for_sm90(dtype, options, groups, built_modules):
    """The default ("auto") for sm_90: bf16 projections, and f32 ones in
    fp32 (3xTF32, which fusion computes alone anyway), are one GEMM; the
    group's library is compiled (and cached) for the wgmma kernel, the
    graph runs as PyTorch's."""
    model = Projections(widths=(64, 64, 64), hidden=64).to(dtype)
    with torch.no_grad():
        census = fusion.explain(model, torch.randn(2, 8, 64).to(dtype),
                                options={"target": "sm_90",
                                         "compile_only": True, **options})
    assert len(grouped(census)) == 3 * groups, str(census)
    assert any("fusion.concat" in t for t in built_modules) == groups


class Joined(nn.Module):
    """Linear layers of one input whose outputs a cat joins (fusion fuses
    nothing after them)."""

    def __init__(self, widths, hidden=64):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(hidden, width)
                                    for width in widths)

    def forward(self, x):
        return torch.cat([layer(x) for layer in self.layers], -1)


@pytest.mark.parametrize("widths, parts", [
    ((96, 128, 128), ["128", "128", "96"]),
    ((96, 100, 128), ["128", "96"])], ids=["one_ragged", "two_ragged"])
def test_auto_puts_a_ragged_part_last(widths, parts, built_modules):
    """Under "auto" the wgmma kernel must read the parts in place, so they
    start at whole 64-column tiles: the one part that is not whole tiles
    goes last (the last part may end anywhere), another stays apart (it
    would send the group to cuBLASLt's GEMMs, a part each)."""
    model = Joined(widths).to(torch.bfloat16)
    with torch.no_grad():
        census = fusion.explain(model, torch.randn(16, 64).bfloat16(),
                                options={"target": "sm_90",
                                         "compile_only": True})
    assert len(grouped(census)) == len(parts), str(census)
    concat = next(line for text in built_modules for line in
                  text.splitlines() if "fusion.concat" in line and
                  "x64xbf16" in line)
    assert [t.split("x")[0] for t in
            concat.split(": (")[1].split(")")[0].split("tensor<")[1:]] == \
        parts
