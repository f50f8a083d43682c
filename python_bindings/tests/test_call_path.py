"""The call path of a compiled partition: fusion::run is a C++ operator
(python_bindings/TorchOperator.cpp), so a call of a torch.compile'd graph
runs no Python of the package, and a fusion.compile'd module's no more than
its forward's own; the operator's checks refuse bad tensors by name."""
import contextlib
import operator
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


def all_frames(call):
    """(file, function) of every Python function `call()` runs."""
    frames = []

    def profile(frame, event, arg):
        if event == "call":
            frames.append((frame.f_code.co_filename, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return frames


def package_frames(call):
    """The Python functions of the fusion package that `call()` runs."""
    return [f"{file.rsplit('/', 1)[1]}:{name}"
            for file, name in all_frames(call) if file.startswith(PACKAGE)]


def aot_wrapper_ran(call):
    return any(file.endswith("runtime_wrappers.py") and
               name == "runtime_wrapper" for file, name in all_frames(call))


def graph_module_frames(call):
    """The frames of FX's graph modules that `call()` runs: their
    generated forward (`<eval_with_key>`) and their machinery's."""
    return [f"{file.rsplit('/', 1)[-1]}:{name}"
            for file, name in all_frames(call)
            if file.startswith("<eval_with_key>") or
            file.endswith("graph_module.py")]


def test_torch_compile_call_runs_no_package_python():
    """An inference graph's call: its graph module's generated forward,
    called straight (no AOTAutograd runtime wrapper, which would do nothing
    here; no lazy graph module's forward, nn.Module call or FX wrapper
    around it), and no frame of the package's."""
    torch.manual_seed(0)
    model = TwoLayers().eval()
    compiled = torch.compile(model, backend="fusion",
                             options={"target": "cpu", "fallback": "eager"})
    x = torch.randn(8, 64)
    with torch.no_grad():
        compiled(x)
        assert len(fusion.dynamo.last_fused) == 2
        assert package_frames(lambda: compiled(x)) == []
        frames = graph_module_frames(lambda: compiled(x))
        assert len(frames) == 1 and frames[0].endswith(":forward"), frames
        assert not aot_wrapper_ran(lambda: compiled(x))
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5,
                                   atol=1e-5)


class ReturnsAnInput(TwoLayers):
    def forward(self, x):
        return super().forward(x), x.view(-1)


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(64, 64)

    def forward(self, x, y):
        return F.gelu(self.linear(x)) + y


@pytest.mark.parametrize("case", ["gradients", "autocast", "aliased output",
                                  "shared input"])
def test_aot_wrapper_kept_where_it_works(case):
    """Where AOTAutograd's runtime wrapper has work (gradients to record,
    autocast to turn off, an output that views an input, inputs sharing
    memory) the call keeps it, and matches eager."""
    torch.manual_seed(0)
    model = (ReturnsAnInput() if case == "aliased output" else
             TwoInputs() if case == "shared input" else TwoLayers()).eval()
    compiled = torch.compile(model, backend="fusion",
                             options={"target": "cpu", "fallback": "eager"})
    x = torch.randn(8, 64)
    inputs = (x, x.view(8, 64)) if case == "shared input" else (x,)
    recording = torch.enable_grad if case == "gradients" else torch.no_grad
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) \
        if case == "autocast" else contextlib.nullcontext()
    with recording(), autocast:
        compiled(*inputs)
        assert aot_wrapper_ran(lambda: compiled(*inputs))
        got, expected = compiled(*inputs), model(*inputs)
    for g, e in zip(*(v if isinstance(v, tuple) else (v,)
                      for v in (got, expected))):
        torch.testing.assert_close(g, e, rtol=2e-2, atol=2e-2)
    if case == "aliased output":
        assert got[1]._base is x
    if case == "gradients":
        assert got.requires_grad
        got.sum().backward()
        assert model.first.weight.grad is not None


def test_direct_call_guarded_by_gradient_mode():
    """A graph compiled without gradients, called with them: dynamo's guard
    compiles it again with AOTAutograd's training wrapper, which records
    the gradients."""
    torch.manual_seed(0)
    model = TwoLayers().eval()
    compiled = torch.compile(model, backend="fusion",
                             options={"target": "cpu", "fallback": "eager"})
    x = torch.randn(8, 64)
    with torch.no_grad():
        assert not compiled(x).requires_grad
    out = compiled(x)
    assert out.requires_grad
    out.sum().backward()
    reference = TwoLayers().eval()
    reference.load_state_dict(model.state_dict())
    reference(x).sum().backward()
    torch.testing.assert_close(model.first.weight.grad,
                               reference.first.weight.grad, rtol=1e-4,
                               atol=1e-5)


def compiled_two_layers():
    torch.manual_seed(0)
    model = TwoLayers().eval()
    return model, fusion.compile(model, (torch.randn(8, 64),), target="cpu")


C_CALL = ["module.py:forward"]


def test_compiled_module_call_is_cpp_without_gradients():
    """fusion.compile's module with no gradient to record: its forward hands
    the call to C++ (python_bindings/ModuleCall.cpp), which checks the
    module and reads its parameters as the Python forward does."""
    model, compiled = compiled_two_layers()
    x = torch.randn(8, 64)
    for context in (torch.no_grad, torch.inference_mode):
        with context():
            assert package_frames(lambda: compiled(x)) == C_CALL
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5,
                                       atol=1e-5)


def test_compiled_dropout_draws_its_seed_in_cpp():
    """A train() module with dropout, without gradients: the C++ call draws
    the library's seed as the Python forward does (the same bits after
    torch.manual_seed), with no Python frames past the forward."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 32), nn.Dropout(0.5)).train()
    compiled = fusion.compile(model, (torch.randn(8, 64),), target="cpu")
    x = torch.randn(8, 64)
    with torch.no_grad():
        assert package_frames(lambda: compiled(x)) == C_CALL
        torch.manual_seed(5)
        fast = compiled(x)
        torch.manual_seed(5)
        python = compiled._checked_forward((x,), {})
    assert torch.equal(fast, python)
    assert (fast == 0).any() and (fast != 0).any()


def test_compiled_module_call_with_gradients_runs_its_python_forward():
    """With gradients (the parameters require them): the autograd.Function
    whose backward recomputes the module, from the Python forward, which
    calls the operator straight from runtime.Library.call. The frames are
    pinned so that any growth shows."""
    model, compiled = compiled_two_layers()
    x = torch.randn(8, 64)
    compiled(x)
    frames = package_frames(lambda: compiled(x))
    # A generator's frames show once a resumption.
    assert frames == [
        "module.py:forward", "module.py:_checked_forward",
        "module.py:_check_unchanged",
        "module.py:_unchanged", "module.py:_mode", "module.py:<setcomp>",
        "module.py:<genexpr>", "module.py:<genexpr>",
        "module.py:_check_batch_statistics", "module.py:_arguments",
        "module.py:<genexpr>", "module.py:<genexpr>", "module.py:forward",
        "module.py:<listcomp>", "module.py:<listcomp>",
        "module.py:_library_inputs", "runtime.py:call",
        "module.py:<listcomp>", "module.py:_write_back"], frames


class Marked(torch.Tensor):
    """A tensor subclass: what it overrides is the Python forward's to
    honor."""


class SeenOps(torch.utils._python_dispatch.TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def test_compiled_module_c_call_reads_parameters_now():
    """A replaced parameter is read at the call; rank-3 inputs flatten into
    the batch and the outputs take their leading dimensions back."""
    model, compiled = compiled_two_layers()
    model.first.weight = nn.Parameter(torch.randn(64, 64))
    x = torch.randn(2, 3, 64)
    with torch.no_grad():
        assert package_frames(lambda: compiled(x)) == C_CALL
        out = compiled(x)
        assert out.shape == (2, 3, 64)
        torch.testing.assert_close(out, model(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["subclass", "dispatch mode", "gradients",
                                  "keyword"])
def test_compiled_module_c_call_leaves_to_python(case):
    """What the Python forward's ops would show to PyTorch (a tensor
    subclass, an active mode, an input that records gradients, keywords)
    runs the Python forward."""
    model, compiled = compiled_two_layers()
    x = torch.randn(8, 64)
    call = lambda: compiled(x)  # noqa: E731
    if case == "subclass":
        call = lambda: compiled(x.as_subclass(Marked))  # noqa: E731
    if case == "gradients":
        x.requires_grad_()
    if case == "keyword":
        call = lambda: compiled(x=x)  # noqa: E731
    mode = SeenOps()
    recording = torch.enable_grad if case == "gradients" else torch.no_grad
    with recording(), (mode if case == "dispatch mode"
                       else contextlib.nullcontext()):
        if case == "keyword":
            with pytest.raises(fusion.FusionRuntimeError,
                               match="keyword arguments x"):
                call()
            assert "module.py:_checked_forward" in package_frames(
                lambda: pytest.raises(fusion.FusionRuntimeError, call))
            return
        assert "module.py:_checked_forward" in package_frames(call)
        out = call()
    torch.testing.assert_close(out.as_subclass(torch.Tensor),
                               model(x).detach(), rtol=1e-5, atol=1e-5)
    if case == "dispatch mode":
        assert "fusion.run.default" in mode.ops, mode.ops


@pytest.mark.parametrize("case, error", [
    ("dtype", r"input \d must be torch.float32, got torch.float64"),
    ("count", "forward takes 1 inputs, got 2"),
    ("constant", r"the module changed after compiling \(first.in_features "
                 r"64 -> 65\)"),
    ("submodule", "submodule second \\(Linear\\) was replaced by Linear"),
    ("closed", "was unloaded"),
])
def test_compiled_module_c_call_refusals_explained(case, error):
    """What the C++ call refuses, the Python forward refuses with its
    reason."""
    model, compiled = compiled_two_layers()
    inputs = (torch.randn(8, 64),)
    if case == "dtype":
        inputs = (inputs[0].double(),)
    if case == "count":
        inputs *= 2
    if case == "constant":
        model.first.in_features = 65
    if case == "submodule":
        model.second = nn.Linear(64, 64)
    if case == "closed":
        compiled._library.close()
    with torch.no_grad(), pytest.raises(fusion.FusionRuntimeError,
                                        match=error):
        compiled(*inputs)


def test_compiled_module_c_call_leaves_a_failed_lookup_to_python():
    """A mode-dependent module without its `training` attribute: the C++
    call's lookup fails and it declines, and the Python forward raises
    what Python's lookup raises."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.Dropout(0.1)).eval()
    compiled = fusion.compile(model, (torch.randn(8, 64),), target="cpu")
    x = torch.randn(8, 64)
    with torch.no_grad():
        assert package_frames(lambda: compiled(x)) == C_CALL
        del model[1].training
        with pytest.raises(AttributeError, match="training"):
            compiled(x)


def test_module_plan_refuses_another_tensor_layout():
    """The C++ call reads torch.Tensor's object as PyTorch lays it out;
    a probe whose data pointer or size it reads otherwise gets no plan."""
    _, compiled = compiled_two_layers()
    probe = torch.empty(3)
    plan = lambda pointer, size: runtime.MODULE_CALL.module_plan(  # noqa
        1, [], [], [], None, None, [[64]], "tensor", probe, pointer, size)
    assert plan(probe.data_ptr(), 3) is not None
    assert plan(probe.data_ptr() + 4, 3) is None
    assert plan(probe.data_ptr(), 4) is None
    assert plan(probe.data_ptr(), 3) is not None


def compiled_partition(model, rows, keys):
    """`model` compiled for the CPU and called once on `rows` rows: the
    compiled model, and the key and loaded library of its first call."""
    torch.manual_seed(0)
    compiled = torch.compile(model, backend="fusion",
                             options={"target": "cpu", "fallback": "eager"})
    with torch.no_grad():
        compiled(torch.randn(rows, 64))
    return compiled, keys[0], fusion.dynamo._LIBRARIES[keys[0]][0]


@pytest.fixture
def entry(fusion_run_keys):
    """The key and signature of a compiled partition's entry point."""
    compiled, key, library = compiled_partition(TwoLayers().eval(), 8,
                                                fusion_run_keys)
    yield key, library.entries[fusion.dynamo.ENTRY]
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


def test_profiler_sees_each_call_with_its_shapes(entry):
    # profile_step.py's --by-shape groups fusion's calls by these shapes.
    from torch.profiler import ProfilerActivity, profile
    key, signature = entry
    inputs = good_inputs(signature, 7)
    with profile(activities=[ProfilerActivity.CPU],
                 record_shapes=True) as prof:
        torch.ops.fusion.run(key, inputs)
        torch.ops.fusion.run(key, inputs)
    calls = [e for e in prof.events() if e.name == "fusion::call"]
    assert [e.input_shapes for e in calls] == [
        [list(t.shape) for t in inputs]] * 2


def test_operator_reads_a_vector_with_leading_ones(entry):
    """A vector input (a bias, a per-column operand) may come as (1, ..., 1,
    N), a parameter PyTorch broadcasts over the rows: the same elements in
    order. Any other shape is refused."""
    key, signature = entry
    run = torch.ops.fusion.run
    inputs = good_inputs(signature)
    v = next(i for i, spec in enumerate(signature["inputs"])
             if len(spec["shape"]) == 1)
    want = run(key, inputs)[0]
    got = run(key, replaced(inputs, v, inputs[v].view(1, 1, -1)))[0]
    assert torch.equal(got, want)
    with pytest.raises(RuntimeError, match=f"input {v} must have 1 "
                                           r"dimensions, got shape \(2, 32\)"):
        run(key, replaced(inputs, v, inputs[v].view(2, 32)))


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


class LinearBatchNorm(nn.Module):
    """A training batch norm after a linear layer (KernelBench 33's form):
    its running statistics and count are buffers the call updates."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(64, 32)
        self.bn = nn.BatchNorm1d(32, momentum=0.2)

    def forward(self, x):
        return self.bn(self.linear(x))


def test_training_batch_norm_graph_skips_inductor(inductor_calls):
    """A training batch norm's buffers are copied into in the graph
    (AOTAutograd's keep_inference_input_mutations), not by AOTAutograd's
    wrapper after it; the copies and the count's increment leave a graph
    that fusion takes whole without inductor's wrapper, and the buffers
    end as eager's."""
    torch.manual_seed(0)
    model = LinearBatchNorm().train()
    eager = LinearBatchNorm().train()
    eager.load_state_dict(model.state_dict())
    compiled = torch.compile(model, backend="fusion", options={
        "target": "cpu", "fallback": "inductor"})
    with torch.no_grad():
        for _ in range(2):
            x = torch.randn(16, 64)
            torch.testing.assert_close(compiled(x), eager(x), rtol=1e-5,
                                       atol=1e-5)
    assert inductor_calls == []
    assert len(fusion.dynamo.last_fused) == 1
    for name, buffer in eager.named_buffers():
        torch.testing.assert_close(model.get_buffer(name), buffer,
                                   rtol=1e-5, atol=1e-6, msg=name)


def version_steps(monkeypatch, direct):
    """How far a training batch norm's running statistics' version counters
    move in one no-grad call of its compiled graph, called directly or
    through AOTAutograd's wrapper (the direct call refused)."""
    if not direct:
        monkeypatch.setattr(fusion.dynamo, "_call_directly",
                            lambda *args: None)
    torch.manual_seed(0)
    model = LinearBatchNorm().train()
    compiled = torch.compile(model, backend="fusion", options={
        "target": "cpu", "fallback": "eager"})
    x = torch.randn(16, 64)
    with torch.no_grad():
        compiled(x)
        assert aot_wrapper_ran(lambda: compiled(x)) != direct
        buffers = [model.bn.running_mean, model.bn.running_var]
        versions = [b._version for b in buffers]
        compiled(x)
    torch._dynamo.reset()
    return [b._version - v for b, v in zip(buffers, versions)]


def test_direct_call_marks_written_buffers(monkeypatch):
    """A training batch norm's graph called without AOTAutograd's wrapper:
    the running statistics the graph writes are marked written as that
    wrapper marks them (the same version steps)."""
    direct = version_steps(monkeypatch, direct=True)
    wrapped = version_steps(monkeypatch, direct=False)
    assert direct == wrapped and min(direct) > 0, (direct, wrapped)


@pytest.fixture
def batch_norm_entry(fusion_run_keys):
    """A CPU library of LinearBatchNorm's training partition registered
    again under a new key with its updated running statistics marked as
    written into their inputs, as GPU libraries' signatures mark them (CPU
    libraries do not: their buffers are restrict), to check the operator's
    plumbing: the key, the signature, and {output: input} of the marks."""
    compiled, _, library = compiled_partition(LinearBatchNorm().train(), 16,
                                              fusion_run_keys)
    signature = library.entries[fusion.dynamo.ENTRY]
    vectors = [s["index"] for s in signature["inputs"] if s["shape"] == [32]]
    outputs = [dict(s) for s in signature["outputs"]]
    updates = {1: vectors[-2], 2: vectors[-1]}  # running mean and variance
    for output, input_index in updates.items():
        assert outputs[output]["shape"] == [32]
        outputs[output]["updates_input"] = input_index
    key = "test batch norm in place"
    assert runtime._OPERATOR.fusion_torch_register(
        key.encode(), str(library.path).encode(), b"fused", False, True,
        runtime._specs(signature["inputs"]),
        runtime._specs(outputs)) is None
    yield key, signature, updates
    runtime._OPERATOR.fusion_torch_unregister(key.encode())
    del compiled


def split_state(inputs, updates):
    state_inputs = sorted(updates.values())
    return ([t for i, t in enumerate(inputs) if i not in state_inputs],
            [inputs[i] for i in state_inputs])


def test_updated_inputs_of_an_empty_batch(batch_norm_entry):
    """No rows: the library is not run; the running statistics stay as
    they are (PyTorch's batch norm leaves them on an empty batch), in
    place or as fusion::run's copies."""
    key, signature, updates = batch_norm_entry
    inputs = good_inputs(signature, batch=0)
    before = [t.clone() for t in inputs]
    outputs = torch.ops.fusion.run(key, inputs)
    for output, input_index in updates.items():
        assert torch.equal(outputs[output], inputs[input_index])
        assert outputs[output].data_ptr() != inputs[input_index].data_ptr()
    args, state = split_state(inputs, updates)
    rest = torch.ops.fusion.run_updating(key, args, state)
    assert len(rest) == len(signature["outputs"]) - len(updates)
    assert rest[0].shape == (0, 32)
    assert all(torch.equal(a, b) for a, b in zip(inputs, before))


def test_run_updating_refuses_bad_state_by_name(batch_norm_entry, entry):
    key, signature, updates = batch_norm_entry
    run_updating = torch.ops.fusion.run_updating
    inputs = good_inputs(signature)
    args, state = split_state(inputs, updates)
    with pytest.raises(RuntimeError, match="updates 2 inputs in place, got "
                                           "1 state tensors"):
        run_updating(key, args, state[:1])
    with pytest.raises(RuntimeError, match=r"takes \d+ tensors besides its "
                                           r"state, got 1"):
        run_updating(key, args[:1], state)
    vector = next(i for i, t in enumerate(args) if t.shape == (32,))
    with pytest.raises(RuntimeError, match="state tensor 1 shares memory "
                                           "with input"):
        run_updating(key, replaced(args, vector, state[1]), state)
    with pytest.raises(RuntimeError, match="must be contiguous"):
        run_updating(key, args, [state[0], torch.randn(32, 2)[:, 0]])
    plain_key, plain_signature = entry
    with pytest.raises(RuntimeError, match="updates no input in place: "
                                           "call fusion::run"):
        run_updating(plain_key, good_inputs(plain_signature), [])


def test_bad_in_place_mark_is_refused_at_registration(batch_norm_entry):
    key, signature, _ = batch_norm_entry
    library = fusion.dynamo._LIBRARIES
    path = next(lib.path for lib, _ in library.values())
    outputs = [dict(s) for s in signature["outputs"]]
    outputs[1]["updates_input"] = 0  # the rows: another shape
    error = runtime._OPERATOR.fusion_torch_register(
        b"bad mark", str(path).encode(), b"fused", False, True,
        runtime._specs(signature["inputs"]), runtime._specs(outputs))
    assert error is not None and b"bad in-place output of fused" in error


class _SignatureOnly:
    """A loaded library as _write_state_in_place reads it: its signature."""

    def __init__(self, outputs):
        self.entries = {fusion.dynamo.ENTRY: {"outputs": outputs}}


def state_graph(variant=""):
    """A graph as AOTAutograd hands a training batch norm's partition over
    once fused: the call, its results' items, and the copies of the
    updated running statistics into their inputs; `variant` breaks one
    condition of writing them in place."""
    graph = torch.fx.Graph()
    x, mean, var = (graph.placeholder(name) for name in ("x", "mean", "var"))
    call = graph.call_function(torch.ops.fusion.run.default,
                               ("key", [x, mean, var]))
    call.meta["val"] = [torch.empty(4, 3), torch.empty(3), torch.empty(3)]
    items = [graph.call_function(operator.getitem, (call, i))
             for i in range(3)]
    graph.call_function(torch.ops.aten.copy_.default,
                        (var if variant == "swapped" else mean, items[1]))
    graph.call_function(torch.ops.aten.copy_.default,
                        (mean if variant == "swapped" else var, items[2]))
    results = [items[0]]
    if variant == "input read again":
        results.append(graph.call_function(torch.ops.aten.neg.default,
                                           (mean,)))
    if variant == "update returned":
        results.append(items[1])
    graph.output(tuple(results))
    return graph


@pytest.mark.parametrize("variant", ["", "swapped", "input read again",
                                     "update returned", "no marks"])
def test_state_written_in_place_only_where_safe(monkeypatch, variant):
    marks = [] if variant == "no marks" else [1, 2]
    outputs = [dict(index=i, **({"updates_input": i} if i in marks else {}))
               for i in range(3)]
    monkeypatch.setitem(fusion.dynamo._LIBRARIES, "key",
                        (_SignatureOnly(outputs), None))
    graph = state_graph(variant)
    before = str(graph)
    fusion.dynamo._write_state_in_place(graph)
    graph.lint()
    if variant:
        assert str(graph) == before
        return
    calls = [n for n in graph.nodes if n.op == "call_function"]
    assert [str(n.target) for n in calls] == [
        "fusion.run_updating.default", "<built-in function getitem>"]
    updating, item = calls
    assert [[a.name for a in arg] for arg in updating.args[1:]] == \
        [["x"], ["mean", "var"]]
    assert item.args == (updating, 0)
    assert len(updating.meta["val"]) == 1


@pytest.mark.parametrize("fallback", ["eager", "inductor"])
def test_state_written_in_place_only_without_inductor(monkeypatch, fallback):
    """Inductor cannot call fusion::run_updating (a mutating op returning a
    list, which it cannot functionalize: "NYI: Can't generate
    FallbackKernel", model fuzzer seed 0 on the GPU, a symbolic batch
    leaving size arithmetic to inductor), so a graph it compiles keeps
    fusion::run and the copies into the running statistics."""
    outputs = [dict(index=i, **({"updates_input": i} if i else {}))
               for i in range(3)]
    monkeypatch.setitem(fusion.dynamo._LIBRARIES, "key",
                        (_SignatureOnly(outputs), None))
    graph = state_graph()
    # An op for inductor after the call.
    result = next(n for n in graph.nodes if n.op == "output")
    with graph.inserting_before(result):
        negated = graph.call_function(torch.ops.aten.neg.default,
                                      (result.args[0][0],))
    result.args = ((negated,),)
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    compiled = []
    monkeypatch.setattr(fusion.dynamo, "_inductor_ready", lambda gm, _: gm)
    monkeypatch.setattr("torch._inductor.compile_fx.compile_fx_inner",
                        lambda gm, _: compiled.append(gm))
    fusion.dynamo._run_rest({"fallback": fallback}, gm, [])
    calls = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    if fallback == "inductor":
        assert compiled == [gm]
        assert calls.count("fusion.run.default") == 1 and \
            calls.count("aten.copy_.default") == 2
    else:
        assert not compiled
        assert "fusion.run_updating.default" in calls and \
            "aten.copy_.default" not in calls


def test_graph_inductor_fails_on_runs_as_aten(monkeypatch):
    """A graph inductor fails to compile (its assertions, on a graph with
    fusion's calls) runs as PyTorch's ATen with a FusionBackendWarning,
    not as an error of the user's call."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output((graph.call_function(torch.ops.aten.neg.default, (x,)),))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)

    def failing(gm, example_inputs):
        raise AssertionError("unexpected group")

    monkeypatch.setattr(fusion.dynamo, "_inductor_ready", lambda gm, _: gm)
    monkeypatch.setattr("torch._inductor.compile_fx.compile_fx_inner",
                        failing)
    with pytest.warns(fusion.FusionBackendWarning,
                      match="inductor failed .* unexpected group"):
        compiled = fusion.dynamo._run_rest({"fallback": "inductor"}, gm,
                                           [torch.ones(3)])
    torch.testing.assert_close(compiled([torch.ones(3)])[0], -torch.ones(3))


@pytest.mark.parametrize("variant", ["", "count read again", "times two"])
def test_count_incremented_in_place_only_where_safe(variant):
    """A graph that runs as PyTorch's ATen adds to a batch norm's count in
    place (one call) where it copies `count + n` into the count and
    nothing else reads the sum."""
    graph = torch.fx.Graph()
    count = graph.placeholder("count")
    add = graph.call_function(torch.ops.aten.add.Tensor, (count, 1))
    if variant == "times two":
        add = graph.call_function(torch.ops.aten.mul.Tensor, (count, 2))
    graph.call_function(torch.ops.aten.copy_.default, (count, add))
    graph.output((add,) if variant == "count read again" else ())
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    before = str(gm.graph)
    fusion.dynamo._increment_in_place(gm)
    gm.graph.lint()
    if variant:
        assert str(gm.graph) == before
        return
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert [(str(n.target), n.args) for n in calls] == [
        ("aten.add_.Tensor", (count, 1))]
    tensor = torch.tensor(4)
    gm(tensor)
    assert int(tensor) == 5
