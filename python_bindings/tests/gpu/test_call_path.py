"""fusion::run, the C++ operator that calls a library, on the GPU: the
tiny model of the front end's checks (prepared by its group, `frontend`)
at several batch sizes through one library, the operator captured in a CUDA
graph and replayed on new inputs, bad tensors refused by name and inputs
that are not 16-byte aligned read from a copy; the same for the C++ call
of a fusion.compile'd module."""
import copy

import pytest
import torch

import fusion
import fusion.dynamo
import fusion.runtime

from gpu import frontend
from gpu.helpers import relative_error

pytestmark = pytest.mark.gpu


@pytest.fixture
def tiny(library_cache, sm90, fusion_run_keys):
    """The tiny model compiled by torch.compile(backend="fusion") from the
    cache, fp32, and the key of its partition's fusion::run call."""
    keys = fusion_run_keys
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    _, make, shape, _ = frontend.tiny()
    model = make().cuda()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="fusion",
                             options=frontend.options(""))
    with torch.no_grad():
        compiled(torch.randn(*shape, device="cuda"))
    assert keys, "nothing fused"
    library = fusion.dynamo._LIBRARIES[keys[0]][0]
    reference = copy.deepcopy(model).double()
    yield reference, compiled, keys[0], library.entries[fusion.dynamo.ENTRY]
    torch._dynamo.reset()


def arguments(signature, batch, x):
    """The partition's inputs for `x`: its rows where the signature has the
    batch, else random values of the static shape."""
    return [x if spec["shape"][0] is None else
            torch.randn(spec["shape"], device="cuda")
            for spec in signature["inputs"]]


def test_dynamic_batch(tiny, within):
    reference, compiled, _, _ = tiny
    with torch.no_grad():
        for batch in (8, 3, 100, 1, 0):
            x = torch.randn(batch, 64, device="cuda")
            if batch == 0:  # Not run: the entry point refuses no rows.
                assert compiled(x).shape == (0, 64)
                continue
            within(relative_error(compiled(x), reference(x.double())),
                   1e-5, f"batch {batch}")


def test_operator_in_cuda_graph(tiny, within):
    _, _, key, signature = tiny
    static = arguments(signature, 40, torch.randn(40, 64, device="cuda"))
    eager = torch.ops.fusion.run(key, static)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = torch.ops.fusion.run(key, static)
    for tensor in static:
        tensor.copy_(torch.randn_like(tensor))
    for output in captured:
        output.fill_(float("nan"))
    graph.replay()
    expected = torch.ops.fusion.run(key, static)
    torch.cuda.synchronize()
    assert not torch.equal(eager[0], expected[0])
    within(relative_error(captured[0], expected[0].double()), 0.0,
           "replay against a call")


def test_bad_tensors_refused(tiny):
    _, _, key, signature = tiny
    x = torch.randn(8, 64, device="cuda")
    good = arguments(signature, 8, x)
    rows = next(i for i, spec in enumerate(signature["inputs"])
                if spec["shape"][0] is None)
    run = torch.ops.fusion.run
    with pytest.raises(RuntimeError, match="runs on cuda tensors, got cpu"):
        run(key, [t.cpu() for t in good])
    # An input that does not start 16 bytes into its memory is read from
    # an aligned copy (inductor removes the graphs' own aligning copies).
    misaligned = torch.randn(8 * 64 + 1, device="cuda")[1:].view(8, 64)
    assert misaligned.data_ptr() % 16 != 0
    torch.testing.assert_close(
        run(key, good[:rows] + [misaligned] + good[rows + 1:])[0],
        run(key, good[:rows] + [misaligned.clone()] + good[rows + 1:])[0],
        rtol=0, atol=0)
    mixed = [t.cpu() if i == rows else t for i, t in enumerate(good)]
    with pytest.raises(RuntimeError, match="all tensors must be on one "
                                           "device|runs on cuda tensors"):
        run(key, mixed)
    half = [t.half() if i == rows else t for i, t in enumerate(good)]
    with pytest.raises(RuntimeError, match="must be torch.float32, got "
                                           "torch.float16"):
        run(key, half)
    # The operator still runs after refusing.
    assert torch.isfinite(run(key, good)[0]).all()


@pytest.fixture
def tiny_module(library_cache, sm90):
    """The tiny model through fusion.compile from the cache, fp32."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    _, make, shape, _ = frontend.tiny()
    model = make().cuda()
    compiled = fusion.compile(model, (torch.randn(4, shape[-1],
                                                  device="cuda"),),
                              target=frontend.TARGET)
    return copy.deepcopy(model).double(), compiled


def python_forward_ran(*args):
    raise AssertionError("the Python forward ran")


def test_module_call_in_cpp(tiny_module, within, monkeypatch):
    """A fusion.compile'd module's C++ call: dynamic batch, rank-3 inputs,
    CUDA-graph capture and replay on new inputs, and the refusals that its
    Python forward then explains."""
    reference, compiled = tiny_module
    checked_forward = compiled._checked_forward
    monkeypatch.setattr(compiled, "_checked_forward", python_forward_ran)
    with torch.no_grad():
        for shape in ((4, 64), (3, 64), (100, 64), (1, 64), (2, 5, 64)):
            x = torch.randn(*shape, device="cuda")
            out = compiled(x)
            assert out.shape == shape
            within(relative_error(out, reference(x.double())), 1e-5,
                   f"input {shape}")
        static = torch.randn(40, 64, device="cuda")
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = compiled(static)
        static.copy_(torch.randn_like(static))
        captured.fill_(float("nan"))
        graph.replay()
        expected = compiled(static)
        torch.cuda.synchronize()
        within(relative_error(captured, expected.double()), 0.0,
               "replay against a call")
        monkeypatch.setattr(compiled, "_checked_forward", checked_forward)
        x = torch.randn(8, 64, device="cuda")
        for bad, error in ((x.cpu(), "all tensors must be on one device|"
                                     "runs on cuda tensors, got cpu"),
                           (x.half(), "must be torch.float32, got "
                                      "torch.float16")):
            with pytest.raises(fusion.FusionRuntimeError, match=error):
                compiled(bad)
        misaligned = torch.randn(8 * 64 + 1, device="cuda")[1:].view(8, 64)
        assert misaligned.data_ptr() % 16 != 0
        within(relative_error(compiled(misaligned),
                              reference(misaligned.double())), 1e-5,
               "an input not 16-byte aligned (read from a copy)")
        within(relative_error(compiled(x), reference(x.double())), 1e-5,
               "a call after the refusals")


def split_state(inputs, signature):
    """(args, state, {output: input}) of fusion::run_updating's call on
    `inputs`, from the signature's updates_input marks."""
    updates = fusion.runtime.updated_inputs(signature)
    state_inputs = sorted(updates.values())
    return ([t for i, t in enumerate(inputs) if i not in state_inputs],
            [inputs[i] for i in state_inputs], updates)


def test_running_statistics_written_in_place(library_cache, sm90, within,
                                             fusion_run_keys, monkeypatch):
    """A training batch norm's running statistics (workload B's form,
    frontend's "B small train") are written by the kernels into the
    buffers (fusion::run_updating; the graph increments the count in place)
    where the graph runs as its graph module (fallback "eager"; inductor cannot
    call run_updating, so its graphs copy them): over ragged batches, the
    outputs and buffers against float64; the in-place call against
    fusion::run's, bit for bit; captured in a CUDA graph, each replay
    updates the buffers again."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    model = frontend.WorkloadB(256, 192).cuda()
    reference = copy.deepcopy(model).double()
    # Each graph as it runs: after _run_rest, which writes the state in
    # place.
    graphs, run_rest = [], fusion.dynamo._run_rest

    def observe(options, gm, example_inputs):
        compiled = run_rest(options, gm, example_inputs)
        graphs.append([str(n.target) for n in gm.graph.nodes])
        return compiled

    monkeypatch.setattr(fusion.dynamo, "_run_rest", observe)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="fusion",
                             options=frontend.options("", fallback="eager"))
    with torch.no_grad():
        for batch in (100, 37, 256):
            x = torch.randn(batch, 256, device="cuda")
            within(relative_error(compiled(x), reference(x.double())), 1e-5,
                   f"output, batch {batch}")
    for name in ("running_mean", "running_var"):
        within(relative_error(model.bn.get_buffer(name),
                              reference.bn.get_buffer(name)), 1e-5, name)
    assert int(model.bn.num_batches_tracked) == 3
    ops = graphs[0]
    assert "fusion.run_updating.default" in ops, ops
    # No copy back: the count is incremented in place too.
    assert "aten.copy_.default" not in ops, ops

    key = fusion_run_keys[0]
    signature = fusion.dynamo._LIBRARIES[key][0].entries[fusion.dynamo.ENTRY]
    inputs = arguments(signature, 77, torch.randn(77, 256, device="cuda"))
    args, state, updates = split_state(inputs, signature)
    assert len(state) == 2
    expected = torch.ops.fusion.run(key, inputs)
    rest = torch.ops.fusion.run_updating(key, args, state)
    kept = [i for i in range(len(expected)) if i not in updates]
    for index, found in zip(kept, rest):
        assert torch.equal(found, expected[index]), index
    for output, input_index in updates.items():
        assert torch.equal(inputs[input_index], expected[output]), output

    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        torch.ops.fusion.run_updating(key, args, state)
    once = torch.ops.fusion.run(key, inputs)
    twice = torch.ops.fusion.run(key, _with_state(inputs, once, updates))
    graph.replay()
    graph.replay()
    torch.cuda.synchronize()
    for output, input_index in updates.items():
        assert torch.equal(inputs[input_index], twice[output]), output


def _with_state(inputs, outputs, updates):
    """`inputs` with each updated input replaced by its update."""
    by_input = {i: outputs[o] for o, i in updates.items()}
    return [by_input.get(i, t) for i, t in enumerate(inputs)]
