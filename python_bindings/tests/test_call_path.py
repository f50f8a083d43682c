"""The call path of a compiled partition: fusion::run is a C++ operator
(python_bindings/TorchOperator.cpp), so a call of a torch.compile'd graph
runs no Python of the package, and a fusion.compile'd module's no more than
its forward's own; the operator's checks refuse bad tensors by name."""
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
import fusion.dynamo
from fusion import runtime


pytestmark = pytest.mark.usefixtures("fresh_dynamo")
PACKAGE = str(runtime.__file__).rsplit("/", 1)[0]


class TwoLayers(nn.Module):
    """The issue's tiny layer: 8 x 64 -> 64, gelu, twice."""

    def __init__(self):
        super().__init__()
        self.first = nn.Linear(64, 64)
        self.second = nn.Linear(64, 64)

    def forward(self, x):
        return F.gelu(self.second(F.gelu(self.first(x))))


def package_frames(call):
    """The Python functions of the fusion package that `call()` runs."""
    frames = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(PACKAGE):
            frames.append(f"{frame.f_code.co_filename.rsplit('/', 1)[1]}:"
                          f"{frame.f_code.co_name}")

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return frames


def test_torch_compile_call_runs_no_package_python():
    torch.manual_seed(0)
    model = TwoLayers().eval()
    compiled = torch.compile(model, backend="fusion",
                             options={"target": "cpu", "fallback": "eager"})
    x = torch.randn(8, 64)
    with torch.no_grad():
        compiled(x)
        assert len(fusion.dynamo.last_fused) == 2
        assert package_frames(lambda: compiled(x)) == []
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5,
                                   atol=1e-5)


def test_compiled_module_call_runs_only_its_forward():
    """fusion.compile's module: its forward checks the module and its
    inputs in Python, then calls the operator straight from
    runtime.Library.call. The frames are pinned so that any growth shows."""
    torch.manual_seed(0)
    model = TwoLayers().eval()
    compiled = fusion.compile(model, (torch.randn(8, 64),), target="cpu")
    x = torch.randn(8, 64)
    compiled(x)
    frames = package_frames(lambda: compiled(x))
    # With gradients (the parameters require them): the autograd.Function
    # whose backward recomputes the module. A generator's frames show once
    # a resumption.
    assert frames == [
        "module.py:forward", "module.py:_check_unchanged",
        "module.py:_unchanged", "module.py:_mode", "module.py:<setcomp>",
        "module.py:<genexpr>", "module.py:<genexpr>",
        "module.py:_check_batch_statistics", "module.py:_arguments",
        "module.py:<genexpr>", "module.py:<genexpr>", "module.py:forward",
        "module.py:<listcomp>", "module.py:<listcomp>",
        "module.py:_library_inputs", "runtime.py:call",
        "module.py:<listcomp>", "module.py:_write_back"], frames


@pytest.fixture
def entry(fusion_run_keys):
    """The key and signature of a compiled partition's entry point."""
    keys = fusion_run_keys
    torch.manual_seed(0)
    compiled = torch.compile(TwoLayers().eval(), backend="fusion",
                             options={"target": "cpu", "fallback": "eager"})
    with torch.no_grad():
        compiled(torch.randn(8, 64))
    library = fusion.dynamo._LIBRARIES[keys[0]][0]
    yield keys[0], library.entries[fusion.dynamo.ENTRY]
    del compiled


def good_inputs(signature, batch=5):
    return [torch.randn([batch if d is None else d for d in spec["shape"]])
            for spec in signature["inputs"]]


def test_operator_runs_any_batch(entry):
    key, signature = entry
    for batch in (1, 5, 33):
        outputs = torch.ops.fusion.run(key, good_inputs(signature, batch))
        assert outputs[0].shape[0] == batch
        assert torch.isfinite(outputs[0]).all()


def replaced(inputs, index, tensor):
    return inputs[:index] + [tensor] + inputs[index + 1:]


def test_operator_refuses_bad_tensors_by_name(entry):
    key, signature = entry
    run = torch.ops.fusion.run
    inputs = good_inputs(signature)
    rows = [i for i, spec in enumerate(signature["inputs"])
            if spec["shape"][0] is None]
    assert rows, "the partition takes its batch's rows"
    x = rows[0]
    with pytest.raises(RuntimeError, match=r"fused takes \d+ tensors, got 1"):
        run(key, inputs[:1])
    with pytest.raises(RuntimeError,
                       match=f"input {x} must be torch.float32, got "
                             f"torch.float64"):
        run(key, replaced(inputs, x, inputs[x].double()))
    strided = torch.randn(inputs[x].shape[1], 5).t()
    with pytest.raises(RuntimeError, match=f"input {x} must be contiguous"):
        run(key, replaced(inputs, x, strided))
    with pytest.raises(RuntimeError,
                       match=f"input {x} must have 2 dimensions, got shape "
                             r"\(320,\)"):
        run(key, replaced(inputs, x, inputs[x].flatten()))
    narrow = torch.randn(5, inputs[x].shape[1] + 1)
    with pytest.raises(RuntimeError,
                       match=f"input {x} must have size 64 in dimension 1"):
        run(key, replaced(inputs, x, narrow))
    if len(rows) > 1:
        with pytest.raises(RuntimeError, match="has batch size 4, other "
                                               "inputs 5"):
            run(key, replaced(inputs, rows[1], inputs[rows[1]][:4]))
    with pytest.raises(RuntimeError, match="no library is loaded as nothing"):
        run("nothing", inputs)
    if torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="runs on cpu tensors"):
            run(key, [t.cuda() for t in inputs])


def test_closed_library_is_unregistered(entry):
    key, signature = entry
    library = fusion.dynamo._LIBRARIES[key][0]
    library.close()
    with pytest.raises(RuntimeError, match="no library is loaded as"):
        torch.ops.fusion.run(key, good_inputs(signature))
    with pytest.raises(fusion.FusionRuntimeError, match="was unloaded"):
        library.call(fusion.dynamo.ENTRY, good_inputs(signature))


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


class MinSubtract(nn.Module):
    """KernelBench 68's: a single value (a 0-d parameter), which the call
    broadcasts to the per-column vector the library takes."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(64, 64)
        self.constant = nn.Parameter(torch.tensor(0.25))

    def forward(self, x):
        return torch.min(self.linear(x), self.constant) - self.constant


@pytest.mark.parametrize("make", [TwoLayers, MinSubtract],
                         ids=["layers", "broadcast single value"])
def test_inductor_fallback_skips_a_graph_left_empty(inductor_calls, make):
    """A graph that fusion takes whole (its call's arguments' copies
    included) runs without inductor's wrapper (its host time a call)."""
    torch.manual_seed(0)
    x = torch.randn(8, 64)
    whole = make().eval()
    with torch.no_grad():
        out = torch.compile(whole, backend="fusion", options={
            "target": "cpu", "fallback": "inductor"})(x)
        torch.testing.assert_close(out, whole(x), rtol=1e-5, atol=1e-5)
    assert inductor_calls == []


class CumulativeAfter(TwoLayers):
    def forward(self, x):
        return torch.cumsum(super().forward(x), dim=-1)


def test_inductor_fallback_compiles_what_is_left(inductor_calls):
    """A graph with an op fusion leaves keeps inductor for it."""
    torch.manual_seed(0)
    x = torch.randn(8, 64)
    rest = CumulativeAfter().eval()
    with torch.no_grad():
        out = torch.compile(rest, backend="fusion", options={
            "target": "cpu", "fallback": "inductor"})(x)
        torch.testing.assert_close(out, rest(x), rtol=1e-4, atol=1e-4)
    assert len(inductor_calls) == 1
    assert any("cumsum" in op for op in inductor_calls[0]), inductor_calls
