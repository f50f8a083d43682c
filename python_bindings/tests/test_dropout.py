"""Training-mode dropout under torch.compile(backend="fusion"): the
backend decomposes it into a draw of uniform numbers and a comparison
(`rand(x.shape) > p`, as inductor's table does), and the GEMM before it
applies the mask in its epilogue, with what follows (a residual and a
norm, a softmax). Where a backward reads the mask, the draw is PyTorch's,
which the GEMM reads as an input; where nothing else reads it (an
inference graph's), the epilogue draws it (`fusion.random_uniform` of a
seed the call draws from PyTorch's generator). Either draw is known
outside the graph, so that a float64 reference of the same draw is exact:
these tests compare every result and gradient with one."""
from copy import deepcopy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
import fusion.dynamo
from fusion.dtypes import rounded
from fusion.random import draw_seed, dropout_keeps
from dropout_models import DropoutSoftmax, KeptBy, LinearDropout

pytestmark = pytest.mark.usefixtures("fresh_dynamo")

P = 0.2


class PostNormBlock(nn.Module):
    """BERT's output block: `norm(dropout(dense(h)) + x)`."""

    def __init__(self):
        super().__init__()
        self.up = nn.Linear(32, 64)
        self.down = nn.Linear(64, 32)
        self.dropout = nn.Dropout(P)
        self.norm = nn.LayerNorm(32)

    def forward(self, x):
        return self.norm(self.dropout(self.down(F.gelu(self.up(x)))) + x)


class InnerDropout(nn.Module):
    """A dropout between two GEMMs (GPT-2's MLP with dropout inside, as
    some FFNs have it): the second GEMM reads the dropped activation."""

    def __init__(self):
        super().__init__()
        self.up = nn.Linear(32, 64)
        self.dropout = nn.Dropout(P)
        self.down = nn.Linear(64, 32)

    def forward(self, x):
        return self.down(self.dropout(F.gelu(self.up(x))))


def dropout_fused():
    """Whether a partition of the last forward graph compares a draw (its
    own, in an inference graph)."""
    return any({"aten.gt.Scalar", "aten.native_dropout.default"} &
               set(members) for members in fusion.dynamo.last_fused)


def relative_error(value, reference):
    return ((value.double() - reference).abs().max() /
            reference.abs().max()).item()


def run_with_gradients(model, x, seed):
    """`model`'s output for `x` and the gradients of a random weighting of
    it (a norm's output has a constant sum of squares), the draws made
    after seeding PyTorch's generator with `seed`."""
    x = x.detach().requires_grad_()
    model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)
    out = model(x)
    weights = torch.randn(out.shape, dtype=torch.float64,
                          generator=torch.Generator().manual_seed(1))
    (out * weights.to(out.dtype)).sum().backward()
    return out, [x.grad] + [p.grad for p in model.parameters()]


def the_same_draw(x, features, seed, dtype):
    """The elements the dropout keeps: PyTorch's draw after `seed`, above p
    as `dtype` holds it."""
    torch.manual_seed(seed)
    return torch.rand(*x.shape[:-1], features, dtype=dtype) > \
        rounded(P, dtype)


def the_epilogues_draw(x, features, seed, dtype):
    """The elements the dropout keeps where the epilogue draws: the draw of
    stream 0 under the seed drawn after `seed` (the graph's one seed),
    above p as `dtype` holds it."""
    torch.manual_seed(seed)
    return dropout_keeps(draw_seed(x.device), (*x.shape[:-1], features), P,
                         dtype)


def with_mask(model, keep, dtype):
    """A copy of `model` in `dtype` whose dropout keeps `keep`."""
    copy = deepcopy(model)
    copy.dropout = KeptBy(keep, P)
    return copy.to(dtype)


def errors(model, x, keep, out, grads):
    """The relative errors of `out` and `grads` against float64."""
    ref_out, ref_grads = run_with_gradients(
        with_mask(model, keep, torch.float64), x.double(), 0)
    return [relative_error(out, ref_out)] + [
        relative_error(g, r) for g, r in zip(grads, ref_grads)]


MODELS = {"post_norm": (PostNormBlock, 32),
          "softmax": (lambda: DropoutSoftmax(32, 48, P), 48),
          "inner": (InnerDropout, 64)}


@pytest.mark.parametrize("kind", list(MODELS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape", [(37, 32), (3, 7, 32)])
def test_dropout_and_its_gradients_match_float64_of_the_same_draw(
        kind, dtype, shape):
    """Fusion's results and gradients as close to float64's as eager's
    (f32: 1e-5), the dropout applying the draw's mask in the forward and
    the backward alike."""
    make, features = MODELS[kind]
    model = make().to(dtype)
    x = torch.randn(*shape, dtype=dtype)
    compiled = torch.compile(model, backend="fusion")
    out, grads = run_with_gradients(compiled, x, seed=5)
    assert dropout_fused(), "no GEMM's epilogue took the dropout"
    keep = the_same_draw(x, features, 5, dtype)
    fused = errors(model, x, keep, out, grads)
    eager = errors(model, x, keep,
                   *run_with_gradients(with_mask(model, keep, dtype), x, 0))
    for error, bound in zip(fused, eager):
        assert error <= max(2 * bound, 1e-5)


def test_inductor_fallback_applies_one_mask_forward_and_backward():
    """With the inductor fallback the draw is inductor's own (its seeds,
    not reproducible outside the graph): the elements the output dropped
    are those whose gradients the backward drops, and the rest are the
    float64 GEMM's scaled."""
    model = LinearDropout(32, 48, P)
    x = torch.randn(37, 32)
    compiled = torch.compile(model, backend="fusion",
                             options={"fallback": "inductor"})
    out, grads = run_with_gradients(compiled, x, seed=5)
    assert dropout_fused(), "no GEMM's epilogue took the dropout"
    keep = out != 0
    assert 0.1 < 1 - keep.double().mean().item() < 0.3
    for error in errors(model, x, keep, out, grads):
        assert error <= 1e-5


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_threshold_compares_alike_in_the_dtype_and_in_float32(dtype):
    """The decomposition's threshold, p as the dtype holds it: every draw
    the dtype can hold compares with it alike in the dtype (PyTorch's CPU
    kernels round a scalar to it) and in float32 (fusion's epilogues,
    PyTorch's CUDA kernels, Triton's), so that the mask a backward graph
    computes again is the forward's. p itself would split them where the
    draw is p rounded up."""
    draws = torch.arange(0, 1 << 16, dtype=torch.int32).to(
        torch.int16).view(dtype)
    draws = draws[(draws >= 0) & (draws < 1)]
    rounded_up = 0
    for p in (0.1, 0.2, 0.3, 0.45, 0.9):
        threshold = rounded(p, dtype)
        assert threshold == torch.tensor(p, dtype=dtype).item()
        assert torch.equal(draws > threshold, draws.float() > threshold)
        if threshold > p:
            rounded_up += 1
            assert not torch.equal(draws > p, draws.float() > p)
    assert rounded_up


def test_dropout_of_p_one_drops_everything():
    model = LinearDropout(32, 48, P)
    model.dropout.p = 1.0
    out = torch.compile(model, backend="fusion")(torch.randn(5, 32))
    assert torch.equal(out, torch.zeros(5, 48))


def test_graph_of_a_call_and_its_seed_skips_inductor(inductor_calls):
    """KernelBench 66's graph under the inductor fallback, without
    gradients: the seed's draw and fusion's call, which run without
    inductor's wrapper; with an op fusion leaves, the graph is
    inductor's."""
    model = DropoutSoftmax(32, 48, P)
    x = torch.randn(37, 32)
    options = {"fallback": "inductor"}
    with torch.no_grad():
        torch.manual_seed(5)
        out = torch.compile(model, backend="fusion", options=options)(x)
        assert dropout_fused()
        assert inductor_calls == []
        keep = the_epilogues_draw(x, 48, 5, torch.float32)
        expected = with_mask(model, keep, torch.float64)(x.double())
        assert relative_error(out, expected) <= 1e-5
        torch._dynamo.reset()
        torch.compile(lambda x: model(x).cumsum(-1), backend="fusion",
                      options=options)(x)
    assert len(inductor_calls) == 1


class DropoutBefore(LinearDropout):
    """A dropout that no GEMM's epilogue takes: the GEMM reads it."""

    def forward(self, x):
        return F.gelu(self.linear(self.dropout(x)))


@pytest.fixture
def graphs_run(monkeypatch):
    """The ATen ops of each graph the backend runs as a graph module."""
    graphs = []
    original = fusion.dynamo.make_boxed_func

    def observe(forward):
        graph = getattr(forward, "__self__", None)
        if graph is not None:
            graphs.append([str(n.target) for n in graph.graph.nodes
                           if n.op == "call_function"])
        return original(forward)

    monkeypatch.setattr(fusion.dynamo, "make_boxed_func", observe)
    return graphs


@pytest.mark.parametrize("grad", [False, True])
def test_dropout_no_epilogue_takes_is_pytorchs_one_kernel(graphs_run, grad):
    """Under the eager fallback a dropout left to PyTorch runs as
    aten.native_dropout (one kernel), not as its decomposition's draw,
    comparison and products; its result and mask are those of one draw
    (the dropped inputs' gradients are 0, the others scaled)."""
    model = DropoutBefore(32, 48, P)
    x = torch.randn(37, 32, requires_grad=grad)
    with torch.set_grad_enabled(grad):
        out = torch.compile(model, backend="fusion",
                            options={"fallback": "eager"})(x)
    forward = graphs_run[0]
    assert "aten.native_dropout.default" in forward
    assert not {"aten.rand.default", "aten.gt.Scalar"} & set(forward)
    assert out.shape == (37, 48)
    assert torch.isfinite(out).all()
    if grad:
        # The inputs the mask dropped, and only those, get no gradient.
        out.sum().backward()
        assert 0.1 < (x.grad == 0).double().mean().item() < 0.3


@pytest.mark.parametrize("kind", list(MODELS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_inference_graphs_draw_in_the_epilogue(graphs_run, kind, dtype):
    """Without gradients, nothing but the epilogue reads the mask: the
    epilogue draws it, so that the graph neither draws nor reads a matrix
    of PyTorch's; the results are the float64 reference's of that draw,
    as close as eager's."""
    make, features = MODELS[kind]
    model = make().to(dtype)
    x = torch.randn(3, 7, 32, dtype=dtype)
    with torch.no_grad():
        torch.manual_seed(5)
        out = torch.compile(model, backend="fusion",
                            options={"fallback": "eager"})(x)
        assert dropout_fused(), "no GEMM's epilogue took the dropout"
        keep = the_epilogues_draw(x, features, 5, dtype)
        expected = with_mask(model, keep, torch.float64)(x.double())
        eager = with_mask(model, keep, dtype)(x)
    assert 0.1 < 1 - keep.double().mean().item() < 0.3
    assert relative_error(out, expected) <= \
        max(2 * relative_error(eager, expected), 1e-5)
    assert not {"aten.rand.default", "aten.native_dropout.default"} & \
        set(graphs_run[0])
    assert "aten.randint.low" in graphs_run[0]


def test_inductor_draws_the_seed_where_it_compiles_the_graph(
        inductor_calls):
    """A graph that inductor compiles (the second GEMM is PyTorch's) draws
    the epilogue's seed as inductor draws (its seeds from PyTorch's
    generator, not torch.randint's sequence): calls repeat after
    torch.manual_seed and differ without it."""
    model = InnerDropout()
    x = torch.randn(37, 32)
    compiled = torch.compile(model, backend="fusion",
                             options={"fallback": "inductor"})
    with torch.no_grad():
        torch.manual_seed(5)
        first = compiled(x)
        assert dropout_fused() and len(inductor_calls) == 1
        second = compiled(x)
        torch.manual_seed(5)
        assert torch.equal(compiled(x), first)
        assert not torch.equal(second, first)
        assert torch.isfinite(first).all()


@pytest.mark.parametrize("kind", ["post_norm", "softmax"])
def test_the_draw_is_read_once_for_the_reductions_after_it(monkeypatch,
                                                           kind):
    """The value a norm or a softmax reduces (the dropout's output, with
    the residual added to it) reads the draw: one op computes it (the
    GEMM's epilogue, after the compiler's passes) and the reductions and
    the normalizing op read it, rather than each drawing again (Philox's
    ten rounds an element, three times)."""
    programs = []
    original = fusion.dynamo.compiled_library

    def record(compiled_programs, options):
        programs.extend(compiled_programs.values())
        return original(compiled_programs, options)

    monkeypatch.setattr(fusion.dynamo, "compiled_library", record)
    make, _ = MODELS[kind]
    with torch.no_grad():
        torch.compile(make(), backend="fusion")(torch.randn(5, 32))
    assert dropout_fused(), "no GEMM's epilogue took the dropout"
    ops = [op for program in programs for op in program.data["ops"]]
    (draw,) = [op["results"][0] for op in ops
               if op["op"] == "random_uniform"]
    readers = [op["op"] for op in ops if draw in op["operands"]]
    assert readers == ["elementwise"]
