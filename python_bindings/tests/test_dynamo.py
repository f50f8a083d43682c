"""torch.compile(model, backend="fusion"): partitioning, the fallback to
PyTorch, the dynamic batch, the disk cache across processes, train/eval
modes with running statistics, gradients against eager, rank-3 inputs and
CUDA-graph capture."""
import copy
import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
import fusion.dynamo

from conftest import GatedLinear, LinearScaleBatchNorm


GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


@pytest.fixture
def library_arguments(monkeypatch):
    """The arguments of each fusion::run call of the graphs compiled:
    "input" for the graph's inputs, else the ATen op that makes them."""
    calls = []
    original = fusion.dynamo.fuse_graph

    def observe(gm, *args, **kwargs):
        fused = original(gm, *args, **kwargs)
        calls.extend(["input" if a.op == "placeholder" else str(a.target)
                      for a in n.args[1]]
                     for n in gm.graph.nodes
                     if n.target is torch.ops.fusion.run.default)
        return fused

    monkeypatch.setattr(fusion.dynamo, "fuse_graph", observe)
    return calls


def relative_error(out, reference):
    return ((out.double() - reference.double()).norm() /
            reference.double().norm()).item()


def assert_results_at_batches(model, compiled, features):
    """Each result of `compiled` has the shape of the model's and its
    values in float64, at batches 3 and 8 of inputs [batch, *features]."""
    with torch.no_grad():
        for batch in (3, 8):
            x = torch.randn(batch, *features)
            outs = compiled(x)
            references = model.double()(x.double())
            model.float()
            for out, reference in zip(outs, references):
                assert out.shape == reference.shape
                assert relative_error(out, reference) <= 1e-5


def compiled_error(model, x):
    """The relative error of torch.compile(model, backend="fusion") on `x`
    against the model in float64."""
    compiled = torch.compile(model, backend="fusion")
    with torch.no_grad():
        out = compiled(x)
        reference = model.double()(x.double())
    return relative_error(out, reference)


class Mixed(nn.Module):
    """Two fusible chains around an op fusion does not compute."""

    def __init__(self):
        super().__init__()
        self.first = nn.Linear(24, 20)
        self.second = nn.Linear(20, 12)
        self.scale = nn.Parameter(torch.randn(12))

    def forward(self, x):
        h = F.gelu(self.first(x) * -0.5)
        h = torch.cumsum(h, dim=1)  # not fusible: stays with PyTorch
        return F.silu(self.second(h) * self.scale + 1.0)


def test_mixed_model_runs_with_its_chains_fused():
    model = Mixed()
    x = torch.randn(9, 24)
    assert compiled_error(model, x) <= 1e-5
    fused = fusion.dynamo.last_fused
    assert len(fused) == 2
    assert fused[0][:2] == ["aten.permute.default", "aten.addmm.default"]
    assert "aten.gelu.default" in fused[0]
    assert "aten.cumsum.default" not in sum(fused, [])
    assert "aten.sigmoid.default" in fused[1] or "aten.silu.default" in \
        fused[1]


def test_dynamic_batch():
    model = Mixed()
    compiled = torch.compile(model, backend="fusion", dynamic=True)
    with torch.no_grad():
        for batch in (5, 17, 3):
            x = torch.randn(batch, 24)
            assert relative_error(compiled(x),
                                  model.double()(x.double())) <= 1e-5
            model.float()


def test_unfusible_model_runs_unchanged():
    model = nn.Sequential(nn.Linear(8, 8), nn.Softmax(dim=0))
    compiled = torch.compile(model, backend="fusion")
    x = torch.randn(4, 8)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
    assert fusion.dynamo.last_fused == []


def test_library_missing_from_the_cache_warns(monkeypatch):
    """On a machine without the compiler (a GPU machine the cache was
    carried to), a partition whose library is not in the cache runs as
    PyTorch with a warning that says so, not silently as a refusal."""
    monkeypatch.delattr(fusion, "_fusion", raising=False)
    monkeypatch.setitem(sys.modules, "fusion._fusion", None)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU()).eval()
    x = torch.randn(8, 16)
    compiled = torch.compile(model, backend="fusion")
    with torch.no_grad(), pytest.warns(fusion.FusionBackendWarning,
                                       match="is not in the cache"):
        out = compiled(x)
    torch.testing.assert_close(out, model(x))
    assert fusion.dynamo.last_fused == []


def test_cache_trace_shows_what_a_miss_lacked(monkeypatch, tmp_path):
    """$FUSION_CACHE_TRACE: each library lookup's key text, a miss's
    marked, so that a library prepared on one machine and missed on
    another can be compared with what was prepared."""
    trace = tmp_path / "trace"
    monkeypatch.setenv("FUSION_CACHE_TRACE", str(trace))
    x = torch.randn(8, 16)
    with torch.no_grad():
        # A miss compiles (this machine has the compiler), and is traced
        # as a miss; the second compile of it is a hit.
        for _ in range(2):
            torch._dynamo.reset()
            torch.compile(nn.Sequential(nn.Linear(16, 32), nn.ReLU()),
                          backend="fusion")(x)
        torch._dynamo.reset()
        monkeypatch.delattr(fusion, "_fusion", raising=False)
        monkeypatch.setitem(sys.modules, "fusion._fusion", None)
        with pytest.warns(fusion.FusionBackendWarning,
                          match="is not in the cache"):
            torch.compile(nn.Sequential(nn.Linear(16, 48), nn.ReLU()),
                          backend="fusion")(x)
    hits = sorted(p for p in trace.iterdir()
                  if not p.name.endswith(".miss.json"))
    misses = sorted(trace.glob("*.miss.json"))
    assert len(hits) == 1 and len(misses) == 2, sorted(trace.iterdir())
    hit = json.loads(hits[0].read_text())
    assert misses[0].name.replace(".miss", "") == hits[0].name or \
        misses[1].name.replace(".miss", "") == hits[0].name
    wide = [json.loads(p.read_text()) for p in misses
            if p.name.replace(".miss", "") != hits[0].name][0]
    assert hit["compiler"] == wide["compiler"]
    assert "[32, 16]" in json.dumps(hit["programs"]) and \
        "[48, 16]" in json.dumps(wide["programs"])


def test_refused_partition_does_not_warn(recwarn):
    """A partition fusion refuses (nothing wrong: it cannot hold the op)
    runs as PyTorch without a warning."""
    model = nn.Sequential(nn.Linear(8, 8), nn.Softmax(dim=0))
    with torch.no_grad():
        torch.compile(model, backend="fusion")(torch.randn(4, 8))
    assert not [w for w in recwarn
                if issubclass(w.category, fusion.FusionBackendWarning)]


@pytest.mark.parametrize("dtype, bound", [(torch.float32, 1e-5),
                                          (torch.bfloat16, 2e-2)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_modes_and_running_statistics(training, dtype, bound):
    model = LinearScaleBatchNorm(16, 10, momentum=0.3).train(training)
    twin = LinearScaleBatchNorm(16, 10, momentum=0.3).train(training)
    model.to(dtype)
    with torch.no_grad():
        model.bn.running_mean.uniform_(-1, 1)
        model.bn.running_var.uniform_(0.5, 2)
    twin.load_state_dict(model.state_dict())
    compiled = torch.compile(model, backend="fusion")
    twin.double()
    with torch.no_grad():
        for _ in range(2):
            x = torch.randn(7, 16)
            assert relative_error(compiled(x.to(dtype)), twin(x.double())) \
                <= bound
    for name in ("running_mean", "running_var"):
        assert relative_error(getattr(model.bn, name),
                              getattr(twin.bn, name)) <= bound
    assert model.bn.num_batches_tracked == twin.bn.num_batches_tracked
    assert any("aten._native_batch_norm_legit" in op
               for op in sum(fusion.dynamo.last_fused, []))


class BatchNormMish(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)
        self.bn = nn.BatchNorm1d(6)

    def forward(self, x):
        return F.mish(self.bn(self.linear(x)))


def test_ops_after_a_batch_norm_join_its_partition(fused_graphs):
    """The decomposed mish (with a comparison) after a training batch norm
    joins the partition, and no batch norm is left for PyTorch to compute
    again (for its running statistics)."""
    model = BatchNormMish()
    twin = BatchNormMish()
    twin.load_state_dict(model.state_dict())
    with torch.no_grad():
        x = torch.randn(9, 8)
        out = torch.compile(model, backend="fusion")(x)
        reference = twin(x)
    assert relative_error(out, reference) <= 1e-5
    assert relative_error(model.bn.running_var, twin.bn.running_var) <= 1e-5
    assert "aten.where.self" in fusion.dynamo.last_fused[0]
    assert not [op for op in fused_graphs[0] if "batch_norm" in op]


def test_training_step_gradients_match_eager():
    model = Mixed()
    twin = Mixed()
    twin.load_state_dict(model.state_dict())
    compiled = torch.compile(model, backend="fusion")
    x = torch.randn(6, 24, requires_grad=True)
    x_twin = x.detach().clone().requires_grad_()
    compiled(x).square().sum().backward()
    twin(x_twin).square().sum().backward()
    assert relative_error(x.grad, x_twin.grad) <= 1e-5
    for (name, p), q in zip(model.named_parameters(), twin.parameters()):
        assert p.grad is not None, name
        assert relative_error(p.grad, q.grad) <= 1e-5, name


@pytest.mark.parametrize("gate", ["glu", "swiglu"])
def test_gated_layer_takes_the_weights_halves_as_views(gate,
                                                       library_arguments):
    """chunk and glu: one partition whose library takes the halves of the
    weight and bias as slices of the graph's inputs (the bias's second
    half, 40 bytes in, copied to keep it aligned); gradients as eager."""
    model = GatedLinear(24, 10, gate)
    x = torch.randn(6, 24)
    assert compiled_error(model, x) <= 1e-5
    assert library_arguments[0][-4:] == ["aten.slice.Tensor"] * 3 + [
        "aten.clone.default"]
    torch._dynamo.reset()
    model.float()
    twin = GatedLinear(24, 10, gate)
    twin.load_state_dict(model.state_dict())
    torch.compile(model, backend="fusion")(x).square().sum().backward()
    twin(x).square().sum().backward()
    for (name, p), q in zip(model.named_parameters(), twin.parameters()):
        assert relative_error(p.grad, q.grad) <= 1e-5, name


def test_rank_3_inputs():
    model = nn.Sequential(nn.Linear(16, 12), nn.GELU(approximate="tanh"))
    compiled = torch.compile(model, backend="fusion")
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        assert relative_error(compiled(x), model.double()(x.double())) \
            <= 1e-5
    assert len(fusion.dynamo.last_fused) == 1


class MLPBlock(nn.Module):
    """LayerNorm -> linear -> GELU -> linear -> residual."""

    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(16)
        self.up = nn.Linear(16, 40)
        self.down = nn.Linear(40, 16)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


def test_transformer_mlp_block(fused_graphs):
    """The up projection and its GELU fuse, and the down projection with
    the residual, a [batch, sequence, features] input read as [rows,
    features]; the layer norm stays one PyTorch kernel (not decomposed)."""
    model = MLPBlock()
    x = torch.randn(2, 7, 16)
    assert compiled_error(model, x) <= 1e-5
    assert [ops[1:4] for ops in fusion.dynamo.last_fused] == [
        ["aten.addmm.default", "aten.view.default", "aten.gelu.default"],
        ["aten.addmm.default", "aten.view.default", "aten.add.Tensor"]]
    assert "aten.native_layer_norm.default" in fused_graphs[0]


def test_inductor_compiles_the_rest():
    """fallback="inductor": the partitions are fusion's, inductor compiles
    the other ops (and calls fusion::run); forward and gradients as eager."""
    model = MLPBlock()
    twin = MLPBlock()
    twin.load_state_dict(model.state_dict())
    compiled = torch.compile(model, backend="fusion",
                             options={"fallback": "inductor"})
    with torch.no_grad():
        compiled(torch.randn(2, 7, 16))
    assert len(fusion.dynamo.last_fused) == 2  # up + GELU, down + residual
    # With gradients the GEMM's output, saved for GELU's backward, leaves
    # the partition as an intermediate result: the layer still fuses (GELU
    # as inductor's decomposition).
    x = torch.randn(2, 7, 16, requires_grad=True)
    x_twin = x.detach().clone().requires_grad_()
    out = compiled(x)
    reference = twin(x_twin)
    up, _ = fusion.dynamo.last_fused
    assert {"aten.addmm.default", "aten.erf.default"} <= set(up)
    assert relative_error(out, reference) <= 1e-5
    out.square().sum().backward()
    reference.square().sum().backward()
    assert relative_error(x.grad, x_twin.grad) <= 1e-5
    for p, q in zip(model.parameters(), twin.parameters()):
        assert relative_error(p.grad, q.grad) <= 1e-5


def test_inductor_rest_in_bf16():
    """Inductor's decompositions compute low-precision pointwise ops in
    float32 between conversions; the partition takes those in."""
    model = MLPBlock().to(torch.bfloat16)
    compiled = torch.compile(model, backend="fusion",
                             options={"fallback": "inductor"})
    x = torch.randn(3, 5, 16)
    with torch.no_grad():
        out = compiled(x.to(torch.bfloat16))
        reference = model.double()(x.double())
    assert len(fusion.dynamo.last_fused) == 2
    assert relative_error(out, reference) <= 2e-2


@pytest.mark.parametrize("options, message", [
    ({"tiles": "64x64"}, "unknown fusion backend options"),
    ({"fallback": "triton"}, "fallback='triton'"),
    ({"strategy": "fastest"}, "invalid --strategy='fastest'"),
    ({"math16": "fast"}, "invalid --math16='fast'"),
    ({"target": "sm_75"}, "sm_75"),
])
def test_bad_options_are_refused(options, message):
    compiled = torch.compile(nn.Sequential(nn.Linear(4, 4), nn.GELU()),
                             backend="fusion", options=options)
    with pytest.raises(Exception, match=message):
        compiled(torch.randn(2, 4))


def test_cache_hit_in_a_second_process(tmp_path):
    """The second process finds the library in the disk cache: it runs with
    the compiler made unavailable."""
    script = textwrap.dedent("""
        import sys, torch, torch.nn as nn, torch.nn.functional as F
        import fusion, fusion.program
        if sys.argv[1] == "without-compiler":
            def refuse(programs):
                raise RuntimeError("compiled again")
            fusion.program.build = refuse
            import fusion.cache
            fusion.cache.build = refuse
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 6), nn.Hardswish())
        with torch.no_grad():
            out = torch.compile(model, backend="fusion")(torch.randn(3, 8))
        assert len(fusion.dynamo.last_fused) == 1, fusion.dynamo.last_fused
        print("ok")
    """)
    env = dict(os.environ, FUSION_CACHE_DIR=str(tmp_path / "shared"))
    for mode in ("with-compiler", "without-compiler"):
        result = subprocess.run([sys.executable, "-c", script, mode],
                                env=env, capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0 and "ok" in result.stdout, \
            result.stderr[-2000:]
    assert len(list((tmp_path / "shared").iterdir())) == 1


@GPU
def test_cuda_graph_capture():
    model = nn.Sequential(nn.Linear(64, 48), nn.GELU()).cuda()
    compiled = torch.compile(model, backend="fusion")
    x = torch.randn(32, 64, device="cuda")
    with torch.no_grad():
        reference = model.double()(x.double())
        model.float()
        compiled(x)  # compiles outside the capture
        graph = torch.cuda.CUDAGraph()
        out = torch.full((32, 48), float("nan"), device="cuda")
        with torch.cuda.graph(graph):
            out.copy_(compiled(x))
        assert len(fusion.dynamo.last_fused) == 1
        x.copy_(torch.randn(32, 64, device="cuda"))
        graph.replay()
        reference = model.double()(x.double())
    torch.cuda.synchronize()
    assert relative_error(out, reference) <= 1e-5


class SingleValues(nn.Module):
    """A 0-d buffer and a (1,) parameter as elementwise operands."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)
        self.register_buffer("temperature", torch.tensor(-1.7))
        self.shift = nn.Parameter(torch.tensor([0.3]))

    def forward(self, x):
        return torch.tanh(self.linear(x) * self.temperature) - self.shift


def test_single_value_operands_are_broadcast():
    model = SingleValues()
    x = torch.randn(5, 8)
    assert compiled_error(model, x) <= 1e-5
    assert len(fusion.dynamo.last_fused) == 1


def test_single_value_operands_through_fusion_compile():
    model = SingleValues()
    twin = SingleValues()
    twin.load_state_dict(model.state_dict())
    compiled = fusion.compile(model, (torch.randn(4, 8),), target="cpu")
    x = torch.randn(7, 8)
    out = compiled(x)
    reference = twin(x)
    assert relative_error(out, reference.detach()) <= 1e-5
    (out * torch.arange(6.0)).sum().backward()
    (reference * torch.arange(6.0)).sum().backward()
    for p, q in zip(model.parameters(), twin.parameters()):
        assert relative_error(p.grad, q.grad) <= 1e-5


class OneValueManyWidths(nn.Module):
    """One learned scale read by layers of 6 and 10 features, by a row
    statistic and by the halves of the wider layer: a single value suits
    every width (a [1] column operand, nothing broadcast before the
    call)."""

    def __init__(self):
        super().__init__()
        self.narrow = nn.Linear(8, 6)
        self.wide = nn.Linear(8, 10)
        self.scale = nn.Parameter(torch.tensor(0.7))

    def forward(self, x):
        first, second = (self.wide(x) * self.scale).chunk(2, dim=-1)
        narrow = self.narrow(x)
        return (torch.relu(narrow - self.scale),
                narrow.amax(1) * self.scale, first * second)


@pytest.mark.parametrize("front_end", ["torch.compile", "fusion.compile"])
def test_one_single_value_read_at_every_width(front_end, library_arguments):
    model = OneValueManyWidths()
    x = torch.randn(5, 8)
    with torch.no_grad():
        reference = model.double()(x.double())
        model.float()
        if front_end == "torch.compile":
            out = torch.compile(model, backend="fusion")(x)
            # The narrow layer's call takes x, its weight and bias and the
            # parameter as the graph's inputs: nothing broadcast or copied
            # before it.
            assert ["input"] * 4 in library_arguments
        else:
            out = fusion.compile(model, (x,), target="cpu")(x)
    for got, expected in zip(out, reference):
        assert relative_error(got, expected) <= 1e-5


class NormOfOneValue(nn.Module):
    """A 2-norm over the one value of a row statistic (the model fuzzer's
    seed 5115)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 8)

    def forward(self, x):
        h = torch.logsumexp(self.linear(x), -1, keepdim=True)
        return torch.linalg.vector_norm(h, 2, dim=-1, keepdim=True)


def test_norm_of_one_value_is_its_magnitude():
    """|x|, as PyTorch computes it: a huge input row (1e30) gives a finite
    norm where squaring would overflow f32."""
    x = torch.randn(5, 4)
    x[0, 0] = 1e30
    assert compiled_error(NormOfOneValue(), x) <= 1e-5
    assert len(fusion.dynamo.last_fused) == 1


class RowBroadcastParameters(nn.Module):
    """Parameters of shape (1, features) and (1, 1) that elementwise ops
    broadcast over the batch (model fuzzer seeds 5601-5651: fusion.compile
    refused them as matrices of one row)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 32)
        self.scale = nn.Parameter(torch.randn(1, 32))
        self.shift = nn.Parameter(torch.randn(1, 1))

    def forward(self, x):
        return torch.relu(self.linear(x) * self.scale - self.shift)


@pytest.mark.parametrize("shape", [(8, 16), (1, 16), (2, 5, 16)])
def test_row_broadcast_parameters_are_vectors(shape):
    """Such parameters are per-column vectors and single values in both
    front ends, the library reading the (1, N) tensors as they are; an
    input of one row (a batch of 1) stays the GEMM's matrix. Training
    gradients of the parameters match float64."""
    torch.manual_seed(0)
    model = RowBroadcastParameters()
    x = torch.randn(*shape)
    reference = copy.deepcopy(model).double()
    want = reference(x.double())
    compiled = fusion.compile(model, (x,), target="cpu")
    assert relative_error(compiled(x), want) <= 1e-5
    train = torch.compile(copy.deepcopy(model), backend="fusion",
                          options={"target": "cpu"})
    got = train(x)
    assert len(fusion.dynamo.last_fused) == 1
    assert relative_error(got, want) <= 1e-5
    weights = torch.randn(want.shape, dtype=torch.float64)
    (got.double() * weights).sum().backward()
    (want * weights).sum().backward()
    for (name, p), q in zip(train.named_parameters(),
                            reference.parameters()):
        assert relative_error(p.grad, q.grad) <= 1e-5, name


class ChunkReadingARowBroadcastParameter(nn.Module):
    """A chunk of a value that read a (1, features) parameter (model fuzzer
    seed 5630, which crashed the importer)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 32)
        self.floor = nn.Parameter(torch.randn(1, 32))

    def forward(self, x):
        a, b = torch.maximum(self.linear(x), self.floor).chunk(2, -1)
        return a * torch.sigmoid(b)


def test_chunk_reading_a_row_broadcast_parameter_refused_by_name():
    """fusion.compile refuses it by the op and the model's line (callers
    slice a vector's first dimension, which such a parameter does not
    hold its features in); torch.compile runs it as PyTorch would."""
    torch.manual_seed(0)
    model = ChunkReadingARowBroadcastParameter()
    x = torch.randn(8, 16)
    with pytest.raises(fusion.UnsupportedOperationError,
                       match=r"aten\.split.* reads a \(1, \.\.\., features\) "
                             r"parameter.*test_dynamo\.py"):
        fusion.compile(model, (x,), target="cpu")
    compiled = torch.compile(copy.deepcopy(model), backend="fusion",
                             options={"target": "cpu"})
    with torch.no_grad():
        assert relative_error(compiled(x), model.double()(x.double())) \
            <= 1e-5


class VectorsAlone(nn.Module):
    """Ops of parameters alone: a learned temperature's exp, a gate's
    sigmoid (inside xlogy, whose decomposition tests it for NaN)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)
        self.log_scale = nn.Parameter(torch.tensor(0.4))
        self.gate = nn.Parameter(torch.randn(6))

    def forward(self, x):
        return torch.xlogy(self.linear(x), torch.sigmoid(self.gate)) * \
            self.log_scale.exp()


@pytest.mark.parametrize("front_end", ["torch.compile", "fusion.compile"])
def test_ops_of_parameters_alone_fuse_and_keep_their_gradients(front_end):
    model = VectorsAlone()
    twin = VectorsAlone()
    twin.load_state_dict(model.state_dict())
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="fusion") \
        if front_end == "torch.compile" else \
        fusion.compile(model, (torch.randn(4, 8),), target="cpu")
    x = torch.randn(7, 8)
    with torch.no_grad():
        assert relative_error(compiled(x), twin(x)) <= 1e-5
    if front_end == "torch.compile":
        (fused,) = fusion.dynamo.last_fused
        assert {"aten.exp.default", "aten.sigmoid.default",
                "aten.isnan.default"} <= set(fused)
    # With gradients (the backward reads the layer's output, which then
    # leaves the partition).
    out = compiled(x)
    reference = twin(x)
    assert relative_error(out, reference.detach()) <= 1e-5
    (out * torch.arange(6.0)).sum().backward()
    (reference * torch.arange(6.0)).sum().backward()
    for (name, p), q in zip(model.named_parameters(), twin.parameters()):
        assert relative_error(p.grad, q.grad) <= 1e-5, name


class NumbersMadeInForward(nn.Module):
    """Tensors of one number made in forward (on the CPU, whatever the
    model's device): `y * torch.tensor(-1.5)`; with `also_reduced`, the
    tensor is also summed, which reads it as a tensor."""

    def __init__(self, also_reduced=False):
        super().__init__()
        self.linear = nn.Linear(8, 6)
        self.also_reduced = also_reduced

    def forward(self, x):
        scale = torch.tensor(-1.5)
        y = self.linear(x) * scale + torch.tensor(0.5)
        return F.elu(y + scale.sum() if self.also_reduced else y)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=GPU)])
def test_numbers_made_in_forward_fold_into_the_program(library_arguments,
                                                      device):
    model = NumbersMadeInForward().to(device)
    x = torch.randn(5, 8, device=device)
    assert compiled_error(model, x) <= 1e-5
    assert fusion.dynamo.last_fused == [[
        "aten.permute.default", "aten.addmm.default", "aten.mul.Tensor",
        "aten.add.Tensor", "aten.elu.default"]]
    # The weight, the bias and x: the numbers are in the program.
    assert library_arguments == [["input"] * 3]


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=GPU)])
def test_numbers_read_as_tensors_stay_inputs_of_their_device(
        library_arguments, device):
    model = NumbersMadeInForward(also_reduced=True).to(device)
    x = torch.randn(5, 8, device=device)
    assert compiled_error(model, x) <= 1e-5
    # On the CPU the tensor and its sum are single values the partition
    # reads as they are; on the GPU the ops reading them stay PyTorch's (a
    # library takes tensors of one device), and with them the whole chain.
    if device == "cpu":
        assert library_arguments == [["input"] * 3 + [
            "_tensor_constant0", "aten.sum.dim_IntList"]]
    else:
        assert library_arguments == []


class NormSoftmax(nn.Module):
    """LayerNorm -> GELU -> softmax after a linear layer, and a second
    linear layer of the same input added to it."""

    def __init__(self, residual=False):
        super().__init__()
        self.linear = nn.Linear(16, 24)
        self.side = nn.Linear(16, 24) if residual else None
        self.norm = nn.LayerNorm(24)

    def forward(self, x):
        y = F.softmax(F.gelu(self.norm(self.linear(x))), dim=-1)
        return y + self.side(x) if self.side is not None else y


def test_norm_and_softmax_fuse_into_the_partition(fused_graphs):
    """The layer norm and the softmax (core ATen keeps them whole) join the
    GEMM's partition: no PyTorch kernel of theirs is left."""
    model = NormSoftmax()
    x = torch.randn(9, 16)
    assert compiled_error(model, x) <= 1e-5
    (fused,) = fusion.dynamo.last_fused
    assert {"aten.native_layer_norm.default", "aten.gelu.default",
            "aten._softmax.default"} <= set(fused)
    assert not [op for op in fused_graphs[0]
                if "layer_norm" in op or "softmax" in op]


def test_residual_of_another_linear_layer_fuses():
    model = NormSoftmax(residual=True)
    x = torch.randn(9, 16)
    assert compiled_error(model, x) <= 1e-5
    assert any("aten.add.Tensor" in fused
               for fused in fusion.dynamo.last_fused)


class Reductions(nn.Module):
    """Per-row results ([..., ] and [..., 1]) of a linear layer."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 20)

    def forward(self, x):
        y = self.linear(x)
        return torch.logsumexp(y, -1), y.amax(-1, keepdim=True) * 2.0, \
            F.softmax(y, dim=-1)


@pytest.mark.parametrize("shape", [(7, 16), (2, 5, 16)])
def test_reduced_results_with_a_dynamic_batch(shape):
    model = Reductions()
    compiled = torch.compile(model, backend="fusion", dynamic=True)
    assert_results_at_batches(model, compiled, shape[1:])
    assert len(fusion.dynamo.last_fused) == 1


@pytest.mark.parametrize("fallback", ["eager", "inductor"])
def test_bf16_norms_and_reductions(fallback):
    """Low-precision norms and softmax compute in float32 (explicitly so in
    inductor's decompositions) and round once."""
    model = NormSoftmax().to(torch.bfloat16)
    compiled = torch.compile(model, backend="fusion",
                             options={"fallback": fallback})
    x = torch.randn(9, 16)
    with torch.no_grad():
        out = compiled(x.to(torch.bfloat16))
        reference = model.double()(x.double())
    assert out.dtype == torch.bfloat16
    assert relative_error(out, reference) <= 2e-2
    assert len(fusion.dynamo.last_fused) == 1
    assert any("softmax" in op or "aten.amax.default" == op
               for op in fusion.dynamo.last_fused[0])


class GroupNormCentre(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 24)
        self.norm = nn.GroupNorm(4, 24)

    def forward(self, x):
        y = torch.tanh(self.norm(self.linear(x)))
        return y - y.mean(dim=1, keepdim=True)


def assert_training_step_matches_eager(make, *shapes, options=None):
    """One forward and backward of make()'s model through
    torch.compile(backend="fusion", options=options) and eagerly, from the
    same parameters and inputs (of `shapes`): the outputs and the gradients
    of the inputs and of the parameters agree within 1e-5."""
    model, twin = make(), make()
    twin.load_state_dict(model.state_dict())
    inputs = [torch.randn(*shape, requires_grad=True) for shape in shapes]
    twin_inputs = [i.detach().clone().requires_grad_() for i in inputs]
    outs = torch.compile(model, backend="fusion", options=options)(*inputs)
    references = twin(*twin_inputs)
    if not isinstance(outs, tuple):
        outs, references = (outs,), (references,)
    for out, reference in zip(outs, references):
        assert relative_error(out, reference) <= 1e-5
    weights = [torch.randn_like(r) for r in references]
    sum((o * w).sum() for o, w in zip(outs, weights)).backward()
    sum((r * w).sum() for r, w in zip(references, weights)).backward()
    for i, j in zip(inputs, twin_inputs):
        assert relative_error(i.grad, j.grad) <= 1e-5
    for (name, p), q in zip(model.named_parameters(), twin.parameters()):
        assert relative_error(p.grad, q.grad) <= 1e-5, name


class ScaledGeluResidual(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 24)
        self.shift = nn.Parameter(torch.randn(24))

    def forward(self, x, r):
        return torch.tanh(F.gelu(self.linear(x) * -1.5) + r) - self.shift


def test_training_step_fuses_the_values_the_backward_saves(fused_graphs):
    """With gradients the backward saves the GELU's input and the tanh's
    output: both leave the partition as intermediate results beside the
    result, so the whole chain still fuses into one call; outputs and
    gradients are eager's."""
    assert_training_step_matches_eager(ScaledGeluResidual, (9, 16), (9, 24))
    (fused,) = fusion.dynamo.last_fused
    assert {"aten.addmm.default", "aten.mul.Tensor", "aten.gelu.default",
            "aten.add.Tensor", "aten.tanh.default",
            "aten.sub.Tensor"} <= set(fused)
    (graph,) = fused_graphs
    assert graph.count("fusion.run.default") == 1
    assert not {"aten.gelu.default", "aten.tanh.default"} & set(graph)


class GeluBatchNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 24)
        self.bn = nn.BatchNorm1d(24, momentum=0.3)

    def forward(self, x):
        return self.bn(F.gelu(self.linear(x) * -1.5))


def test_training_batch_norm_returns_what_its_backward_reads(fused_graphs):
    """With gradients a training batch norm's backward reads its input, its
    batch mean and its inverse standard deviation: the fused op returns
    them beside the result, so the whole layer is one call; outputs,
    gradients and running statistics are eager's."""
    models = []

    def make():
        models.append(GeluBatchNorm())
        return models[-1]

    assert_training_step_matches_eager(make, (9, 16))
    model, twin = models
    for name in ("running_mean", "running_var"):
        assert relative_error(getattr(model.bn, name),
                              getattr(twin.bn, name)) <= 1e-5
    (fused,) = fusion.dynamo.last_fused
    assert {"aten.gelu.default",
            "aten._native_batch_norm_legit_functional.default"} <= set(fused)
    (graph,) = fused_graphs
    assert graph.count("fusion.run.default") == 1
    assert not [op for op in graph if "batch_norm" in op or "gelu" in op]


class NormedInputGeluBatchNorm(nn.Module):
    """A batch norm of the input, which fusion leaves (no GEMM before it),
    then GeluBatchNorm's layer."""

    def __init__(self):
        super().__init__()
        self.input_bn = nn.BatchNorm1d(16)
        self.layer = GeluBatchNorm()

    def forward(self, x):
        return self.layer(self.input_bn(x))


def test_inductor_fallback_fuses_batch_norms(fused_graphs):
    """fallback="inductor": a batch norm after a linear layer stays whole
    for fusion, which takes it; one that fusion leaves is decomposed for
    inductor afterwards (inductor refuses an op its table decomposes).
    Outputs, gradients and both norms' running statistics are eager's."""
    models = []

    def make():
        models.append(NormedInputGeluBatchNorm())
        return models[-1]

    assert_training_step_matches_eager(make, (9, 16),
                                       options={"fallback": "inductor"})
    model, twin = models
    for norm in ("input_bn", "layer.bn"):
        for name in ("running_mean", "running_var"):
            assert relative_error(
                model.get_submodule(norm).get_buffer(name),
                twin.get_submodule(norm).get_buffer(name)) <= 1e-5, norm
    (fused,) = fusion.dynamo.last_fused
    assert {"aten.addmm.default", "aten.erf.default",
            "aten._native_batch_norm_legit_functional.default"} <= set(fused)
    # The input's norm leaves fusion's graph whole, the layer's norm as
    # fusion::run.
    (graph,) = fused_graphs
    assert graph.count("fusion.run.default") == 1
    assert graph.count(
        "aten._native_batch_norm_legit_functional.default") == 1


class TwoBranches(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 24)

    def forward(self, x):
        y = self.linear(x)
        return F.relu(y), torch.sigmoid(y) * y


def test_gemm_output_that_the_backward_saves_fuses():
    """The backward of sigmoid(y) * y saves the GEMM output y itself (and
    the sigmoid's, and relu's output): all three leave the one partition as
    intermediate results."""
    assert_training_step_matches_eager(TwoBranches, (9, 16))
    (fused,) = fusion.dynamo.last_fused
    assert {"aten.addmm.default", "aten.relu.default", "aten.sigmoid.default",
            "aten.mul.Tensor"} <= set(fused)


def test_training_step_through_norms_matches_eager():
    """With gradients, what the backward needs leaves the partition."""
    assert_training_step_matches_eager(GroupNormCentre, (6, 16))


class BatchSoftmax(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)

    def forward(self, x):
        h = F.gelu(self.linear(x))
        return F.softmax(h, dim=0), h.max(1)  # over the batch; indices


def test_partition_stops_before_what_the_importer_refuses(fused_graphs):
    """A softmax over the batch and max with its indices stay PyTorch's;
    the GELU before them fuses."""
    model = BatchSoftmax()
    x = torch.randn(5, 8)
    with torch.no_grad():
        out, (values, indices) = torch.compile(model, backend="fusion")(x)
        reference, (ref_values, ref_indices) = model(x)
    torch.testing.assert_close(out, reference)
    torch.testing.assert_close(values, ref_values)
    assert torch.equal(indices, ref_indices)
    (fused,) = fusion.dynamo.last_fused
    assert "aten.gelu.default" in fused
    assert "aten._softmax.default" not in fused
    assert "aten._softmax.default" in fused_graphs[0]


class Pools(nn.Module):
    """Max, adaptive max and average pools of a linear layer's features
    ([B, 1, N] views), with ops after them."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 30)

    def forward(self, x):
        y = self.linear(x)
        return F.max_pool1d(y.unsqueeze(1), 5).squeeze(1) * -2.0, \
            nn.AdaptiveMaxPool1d(3)(y.view(-1, 1, 30)), \
            torch.tanh(F.avg_pool1d(y.unsqueeze(1), 3)).sum(-1)


@pytest.mark.parametrize("fallback", ["eager", "inductor"])
def test_pools_fuse_into_the_partition(fused_graphs, fallback):
    """Pools arrive whole (max_pool2d_with_indices, avg_pool2d, ...; with
    inductor's decompositions max pools are _low_memory_max_pool...) and
    join the GEMM's partition; results keep PyTorch's shapes at any batch."""
    model = Pools()
    compiled = torch.compile(model, backend="fusion", dynamic=True,
                             options={"fallback": fallback})
    assert_results_at_batches(model, compiled, (16,))
    (fused,) = fusion.dynamo.last_fused
    assert len([op for op in fused if "pool" in op]) == 3
    assert not [op for op in fused_graphs[0] if "pool" in op]


def test_pool_indices_stay_with_pytorch():
    """Indices (return_indices=True) are PyTorch's: the pool is not fused,
    the ops before it are."""
    model = nn.Sequential(nn.Linear(8, 12), nn.GELU(),
                          nn.Unflatten(1, (1, 12)),
                          nn.MaxPool1d(4, return_indices=True))
    x = torch.randn(5, 8)
    with torch.no_grad():
        values, indices = torch.compile(model, backend="fusion")(x)
        ref_values, ref_indices = model(x)
    torch.testing.assert_close(values, ref_values)
    assert torch.equal(indices, ref_indices)
    (fused,) = fusion.dynamo.last_fused
    assert "aten.gelu.default" in fused
    assert not [op for op in fused if "pool" in op]


class GemmForm(nn.Module):
    """A layer written as one of the GEMM forms users write, then GELU:
    `addmm(b, x, w)` with w stored [in_features, out_features] (GPT-2's
    Conv1D), `x @ w`, addmm with alpha and beta, and F.linear."""

    def __init__(self, form):
        super().__init__()
        self.form = form
        self.weight = nn.Parameter(torch.randn(16, 24) / 4)  # [in, out]
        self.linear_weight = nn.Parameter(torch.randn(24, 16) / 4)
        self.bias = nn.Parameter(torch.randn(24))

    def forward(self, x):
        flat = x.reshape(-1, 16)
        if self.form == "conv1d":
            y = torch.addmm(self.bias, flat, self.weight)
        elif self.form == "matmul":
            y = x @ self.weight
        elif self.form == "scaled_addmm":
            y = torch.addmm(self.bias, flat, self.weight, beta=0.5,
                            alpha=-2.0)
        elif self.form == "scaled_linear_addmm":
            y = torch.addmm(self.bias, flat, self.linear_weight.t(),
                            beta=0.0, alpha=3.0)
        else:
            y = F.linear(x, self.linear_weight, self.bias)
        return F.gelu(y.reshape(*x.shape[:-1], 24))


@pytest.mark.parametrize("form", ["conv1d", "matmul", "scaled_addmm",
                                  "scaled_linear_addmm", "linear"])
def test_gemm_forms_fuse(form):
    """Each form fuses with its GELU and matches float64; the weight stored
    [in_features, out_features] is read as it is (no transpose in the
    partition's graph)."""
    torch._dynamo.reset()
    model = GemmForm(form)
    x = torch.randn(3, 5, 16)
    assert compiled_error(model, x) <= 1e-5
    (fused,) = fusion.dynamo.last_fused
    assert "aten.gelu.default" in fused
    if form in ("conv1d", "matmul"):
        assert fused[0] in ("aten.addmm.default", "aten.mm.default")


@pytest.mark.parametrize("form", ["conv1d", "scaled_addmm"])
def test_gemm_forms_through_fusion_compile(form):
    model = GemmForm(form)
    x = torch.randn(3, 5, 16)
    compiled = fusion.compile(model, (x,), target="cpu")
    with torch.no_grad():
        assert relative_error(compiled(x), model.double()(x.double())) \
            <= 1e-5


class GatedMLP(nn.Module):
    """Llama's MLP: down(silu(gate(x)) * up(x)), the gate and up
    projections two GEMMs of one input."""

    def __init__(self, hidden=16, intermediate=24):
        super().__init__()
        self.gate = nn.Linear(hidden, intermediate, bias=False)
        self.up = nn.Linear(hidden, intermediate)
        self.down = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def test_shared_input_gemm_joins_the_partition_reading_it():
    """The up projection, which only the gate's partition reads, is
    computed in it (the compiler makes the two one dual GEMM), in eval;
    a training step's forward writes the up projection for the backward,
    so there it stays apart. Outputs match float64 either way."""
    model = GatedMLP()
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        census = fusion.explain(model, x, options={"target": "cpu"})
    torch._dynamo.reset()
    assert compiled_error(copy.deepcopy(model), x) <= 1e-5
    (gate, up, down) = census
    assert up.dual_of == gate.name and "aten.addmm.default" in gate.fused
    assert "fused into" in str(up)
    torch._dynamo.reset()
    census = fusion.explain(model, x, options={"target": "cpu"})
    assert not any(report.dual_of for report in census)


def test_a_gemm_alone_is_fusions_only_where_3xtf32_beats_sgemm():
    """A linear layer with nothing to fuse after it: fusion computes it
    alone for a GPU target in f32 (3xTF32), not for the CPU, in bf16 or
    in tf32 precision."""
    model = nn.Linear(64, 48)

    def alone(dtype, **options):
        torch._dynamo.reset()
        x = torch.randn(8, 64, dtype=dtype)
        with torch.no_grad():
            (report,) = fusion.explain(model.to(dtype), x, options={
                "compile_only": True, **options})
        return bool(report.members)

    assert alone(torch.float32, target="sm_90")
    assert "computed alone" in str(fusion.explain(
        model.float(), torch.randn(8, 64), options={
            "target": "sm_90", "compile_only": True}))
    assert not alone(torch.float32, target="cpu")
    assert not alone(torch.bfloat16, target="sm_90")
    assert not alone(torch.float32, target="sm_90", precision="tf32")


class InOutGemm(nn.Module):
    """x @ W with W stored [in, out] (GPT-2's Conv1D), N columns."""

    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(64, n))

    def forward(self, x):
        return x @ self.weight


@pytest.mark.parametrize("n,alone", [(48, True), (50, False)])
def test_an_in_out_gemm_alone_is_fusions_where_its_rows_are_tma_strides(
        n, alone):
    """An [in, out] weight with nothing to fuse: 3xTF32's splitters
    transpose it where its rows of N are 16-byte chunks (48 f32), else
    cuBLASLt's SGEMM, PyTorch's own, computes it (50)."""
    torch._dynamo.reset()
    with torch.no_grad():
        (report,) = fusion.explain(InOutGemm(n), torch.randn(8, 64), options={
            "target": "sm_90", "compile_only": True})
    assert bool(report.members) == alone, str(report)


@pytest.fixture
def matmul_precision():
    """torch.set_float32_matmul_precision for this test alone."""
    saved = torch.get_float32_matmul_precision()
    try:
        yield torch.set_float32_matmul_precision
    finally:
        torch.set_float32_matmul_precision(saved)


@pytest.fixture
def library_precisions(library_lookups):
    """The precision of each library the backend has looked up, as its
    cache key holds it (a call, after the compilations)."""
    return lambda: [options["precision"] for _, options in library_lookups]


def compile_for_sm90(**options):
    """Compiles (only) a fusible f32 layer for sm_90."""
    model = nn.Sequential(nn.Linear(64, 48), nn.GELU())
    with torch.no_grad():
        torch.compile(model, backend="fusion", options={
            "target": "sm_90", "compile_only": True, **options})(
            torch.randn(8, 64))


@pytest.mark.parametrize("setting,precision", [
    ("highest", "fp32"), ("high", "tf32"), ("medium", "tf32")])
def test_gpu_precision_follows_pytorchs_matmul_setting(
        matmul_precision, library_precisions, setting, precision):
    """Without a precision option, f32 chains for a GPU are computed as
    inductor's GEMMs would be: fp32-accurate under "highest", tf32 under
    "high" and "medium"."""
    matmul_precision(setting)
    compile_for_sm90()
    assert library_precisions() == [precision]
    assert fusion.dynamo.last_options["precision"] == precision


def test_allow_tf32_is_the_high_setting(matmul_precision,
                                        library_precisions):
    """PyTorch's older switch sets the same precision, so it counts too."""
    matmul_precision("highest")
    torch.backends.cuda.matmul.allow_tf32 = True
    compile_for_sm90()
    assert library_precisions() == ["tf32"]


@pytest.mark.parametrize("setting,precision", [
    ("high", "fp32"), ("highest", "tf32"), ("high", "bf16")])
def test_precision_option_wins_over_the_setting(
        matmul_precision, library_precisions, setting, precision):
    """The user's precision option is taken as it is, either way."""
    matmul_precision(setting)
    compile_for_sm90(precision=precision)
    assert library_precisions() == [precision]


def test_a_changed_setting_compiles_the_graph_again(matmul_precision,
                                                    library_precisions):
    """The setting is read when a graph compiles; dynamo guards on it, so
    the compiled graph does not keep the old precision."""
    matmul_precision("highest")
    compiled = torch.compile(nn.Sequential(nn.Linear(64, 48), nn.GELU()),
                             backend="fusion", options={
                                 "target": "sm_90", "compile_only": True})
    x = torch.randn(8, 64)
    with torch.no_grad():
        compiled(x)
        matmul_precision("high")
        compiled(x)
    assert library_precisions() == ["fp32", "tf32"]


def test_cpu_target_stays_fp32_under_high(matmul_precision,
                                          library_precisions):
    """PyTorch's CPU matmuls stay fp32 under "high"; so do fusion's, whose
    tf32 there would only round the operands."""
    matmul_precision("high")
    model = nn.Sequential(nn.Linear(64, 48), nn.GELU())
    assert compiled_error(model, torch.randn(8, 64)) <= 1e-5
    assert library_precisions() == ["fp32"]


def test_explain_names_a_precision_other_than_fp32(matmul_precision):
    """Under "high" a linear layer alone is cuBLAS's (fusion's tf32 GEMM
    is no faster), and the census says in which precision it compiled."""
    model, x = nn.Linear(64, 48), torch.randn(8, 64)
    options = {"target": "sm_90", "compile_only": True}
    matmul_precision("high")
    with torch.no_grad():
        census = fusion.explain(model, x, options=options)
    assert census.precision == "tf32" and not census[0].members
    assert str(census).startswith(
        "0 of 1 GEMMs fused, f32 GEMMs in tf32 precision\n")
    matmul_precision("highest")
    with torch.no_grad():
        census = fusion.explain(model, x, options=options)
    assert census.precision == "fp32" and census[0].members
    assert str(census).startswith("0 of 1 GEMMs fused\n")


class EinsumForm(nn.Module):
    """A linear layer written as an einsum, then a bias and GELU."""

    def __init__(self, equation, weight_shape):
        super().__init__()
        self.equation = equation
        self.weight = nn.Parameter(torch.randn(weight_shape) / 4)
        self.bias = nn.Parameter(torch.randn(24))

    def forward(self, x):
        if self.equation.startswith("mk"):
            flat = torch.einsum(self.equation, x.reshape(-1, 16), self.weight)
            y = flat.reshape(*x.shape[:-1], 24)
        else:
            y = torch.einsum(self.equation, x, self.weight)
        return F.gelu(y + self.bias)


@pytest.mark.parametrize("equation,weight_shape", [
    ("bsk,nk->bsn", (24, 16)), ("mk,nk->mn", (24, 16)),
    ("bsk,kn->bsn", (16, 24))])
def test_einsum_forms_fuse(equation, weight_shape):
    """PyTorch decomposes each into a batched product of a batch of one
    between permutes and views; fusion reads it as the linear layer it is
    (an mm of x's rows and the weight, transposed or as stored), fuses the
    bias and GELU after it, and matches float64."""
    model = EinsumForm(equation, weight_shape)
    x = torch.randn(3, 5, 16)
    assert compiled_error(model, x) <= 1e-5
    (fused,) = fusion.dynamo.last_fused
    assert fused[fused.index("aten.mm.default") + 1:].count(
        "aten.gelu.default") == 1


class BatchedEinsum(nn.Module):
    def forward(self, a, b):
        return F.gelu(torch.einsum("bij,bjk->bik", a, b))


def test_batched_einsum_stays_a_batched_product():
    """A product of a batch of two matrices each (attention's kind) is no
    linear layer: left as it is, and right."""
    a, b = torch.randn(2, 5, 16), torch.randn(2, 16, 24)
    compiled = torch.compile(BatchedEinsum(), backend="fusion")
    with torch.no_grad():
        out = compiled(a, b)
    assert fusion.dynamo.last_fused == []
    assert relative_error(out, BatchedEinsum()(a.double(), b.double())) \
        <= 1e-5


class SharedWeight(nn.Module):
    """One linear layer applied twice: its weight shared by two GEMMs."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(16, 16)

    def forward(self, x):
        return F.gelu(self.layer(F.relu(self.layer(x))))


def test_shared_weight_fuses_in_each_gemm():
    model = SharedWeight()
    x = torch.randn(3, 5, 16)
    assert compiled_error(model, x) <= 1e-5
    assert len(fusion.dynamo.last_fused) == 2


def library_keys(monkeypatch, options):
    """The cache keys of the libraries a training step of the tiny Llama
    (its gated MLP: a dual GEMM whose product a later partition reads)
    compiles or calls, forward and backward, with `options`."""
    import transformer_zoo
    keys = set()
    original = fusion.dynamo.library_key

    def recording(programs, compile_options):
        key = original(programs, compile_options)
        keys.add(key)
        return key
    monkeypatch.setattr(fusion.dynamo, "library_key", recording)
    torch._dynamo.reset()
    model, inputs = transformer_zoo.make("llama", "tiny")
    torch.compile(model.train(), backend="fusion", options=options)(
        **inputs).last_hidden_state.mean().backward()
    return keys


def test_compile_only_compiles_the_libraries_a_run_calls(monkeypatch):
    """compile_only puts each partition's call in the graph as a run does
    (then runs the graph it saved), so later partitions grow on the same
    graph: the libraries it compiles are exactly those a run calls (it
    compiled programs of ops an earlier partition had taken, and a run
    on another machine missed the cache)."""
    options = {"target": "cpu", "fuse_backward": "on"}
    only = library_keys(monkeypatch, dict(options, compile_only=True))
    assert only == library_keys(monkeypatch, options)


def test_library_shared_with_a_dying_graph_stays_loaded(monkeypatch):
    """A graph compiled while an earlier one that calls the same library
    dies (its cycles collected mid-compile, after torch._dynamo.reset())
    still finds the library loaded when it runs."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU())
    x = torch.randn(5, 16)
    options = {"target": "cpu"}
    torch.compile(copy.deepcopy(model), backend="fusion",
                  options=options)(x)
    earlier = [key for key, count in fusion.dynamo._CALLERS.items()
               if count > 0]
    assert earlier
    run_rest = fusion.dynamo._run_rest

    def earlier_graph_dies(*args):
        fusion.dynamo._release(earlier)
        return run_rest(*args)
    monkeypatch.setattr(fusion.dynamo, "_run_rest", earlier_graph_dies)
    torch._dynamo.reset()
    found = torch.compile(copy.deepcopy(model), backend="fusion",
                          options=options)(x)
    torch.testing.assert_close(found, model(x), rtol=1e-5, atol=1e-5)
