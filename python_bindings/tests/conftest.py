"""Shared models of the fusion Python tests: the two workloads users bring,
as plain PyTorch modules, at small sizes."""
import pytest
import torch
import torch.nn as nn


class LinearLeakyRelu(nn.Module):
    """(A): leaky_relu(linear(x) * 2.0, 0.1)."""

    def __init__(self, in_features, out_features, bias=True, multiplier=2.0,
                 slope=0.1):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)
        self.multiplier = multiplier
        self.act = nn.LeakyReLU(slope)

    def forward(self, x):
        return self.act(self.linear(x) * self.multiplier)


class GatedLinear(nn.Module):
    """A gated layer on one GEMM of 2 * features outputs, as SwiGLU MLPs
    and GLU blocks write it: glu, or silu of one chunk times the other."""

    def __init__(self, in_features, features, gate="glu"):
        super().__init__()
        self.linear = nn.Linear(in_features, 2 * features)
        self.gate = gate

    def forward(self, x):
        y = self.linear(x)
        if self.gate == "glu":
            return nn.functional.glu(y, dim=-1)
        value, gate = y.chunk(2, dim=-1)
        return nn.functional.silu(value) * gate


class LinearScaleBatchNorm(nn.Module):
    """(B): batch_norm(linear(x) * scale), BatchNorm1d."""

    def __init__(self, in_features, out_features, **bn):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.rand(out_features) * 3 - 1.5)
        self.bn = nn.BatchNorm1d(out_features, **bn)

    def forward(self, x):
        return self.bn(self.linear(x) * self.scale)


@pytest.fixture(autouse=True)
def seed():
    torch.manual_seed(0)


@pytest.fixture
def no_grad():
    """fusion computes no gradients yet, so compiled modules run under
    torch.no_grad() (test_compiled_module.py checks the refusal)."""
    with torch.no_grad():
        yield


@pytest.fixture
def fresh_dynamo(tmp_path, monkeypatch):
    """A library cache of the test's own and dynamo's caches emptied before
    and after it (test files of torch.compile use it for every test); the
    signatures of the libraries compile_only compiled, which the backend
    keeps for the process, too (a test that observes the compiler would
    otherwise see nothing compiled where an earlier test, in whatever
    order pytest-xdist runs them, compiled the same program)."""
    import fusion.dynamo
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(fusion.dynamo, "_SIGNATURES", {})
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def fusion_run_keys(monkeypatch):
    """The keys of the fusion::run calls of the graphs the backend compiles
    while the test runs, in order."""
    import fusion.dynamo
    keys = []
    original = fusion.dynamo.fuse_graph

    def observe(gm, *args, **kwargs):
        fused = original(gm, *args, **kwargs)
        keys.extend(n.args[0] for n in gm.graph.nodes
                    if str(n.target) in fusion.dynamo._RUNS)
        return fused

    monkeypatch.setattr(fusion.dynamo, "fuse_graph", observe)
    return keys


@pytest.fixture
def library_lookups(monkeypatch):
    """(programs, compile options) of each library the backend looks up
    while the test runs, in order."""
    import fusion.dynamo
    lookups = []
    original = fusion.dynamo.library_key

    def observe(programs, options):
        lookups.append((programs, options))
        return original(programs, options)

    monkeypatch.setattr(fusion.dynamo, "library_key", observe)
    return lookups


@pytest.fixture
def fused_graphs(monkeypatch):
    """The ops of each forward graph the backend compiles, after fusion."""
    import fusion.dynamo
    graphs = []
    original = fusion.dynamo.fuse_graph

    def observe(gm, *args, **kwargs):
        fused = original(gm, *args, **kwargs)
        if not kwargs.get("backward"):
            graphs.append([str(n.target) for n in gm.graph.nodes])
        return fused

    monkeypatch.setattr(fusion.dynamo, "fuse_graph", observe)
    return graphs


@pytest.fixture
def built_modules(monkeypatch):
    """The text of each fusion module compiled (as imported, before the
    compiler's passes)."""
    import fusion.cache
    texts = []
    original = fusion.cache.build

    def observe(programs):
        module = original(programs)
        texts.append(str(module))
        return module

    monkeypatch.setattr(fusion.cache, "build", observe)
    return texts


@pytest.fixture
def inductor_calls(monkeypatch):
    """The forward graphs handed to inductor (compile_fx_inner)."""
    import torch._inductor.compile_fx as compile_fx
    graphs = []
    original = compile_fx.compile_fx_inner

    def observe(gm, *args, **kwargs):
        graphs.append([str(n.target) for n in gm.graph.nodes
                       if n.op == "call_function"])
        return original(gm, *args, **kwargs)

    monkeypatch.setattr(compile_fx, "compile_fx_inner", observe)
    return graphs


@pytest.fixture(autouse=True, scope="session")
def private_library_cache(tmp_path_factory):
    """The tests compile into a cache of their own, never the user's."""
    import os
    os.environ["FUSION_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))


def pytest_configure(config):
    # test_model_fuzz.py: deselect with -m "not fuzz".
    config.addinivalue_line(
        "markers", "fuzz: the random-model differential fuzzer "
                   "(model_fuzz.py) on its CI budget of seeds")
