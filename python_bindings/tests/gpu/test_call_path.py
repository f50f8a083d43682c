"""fusion::run, the C++ operator that calls a library, on the GPU: the
tiny model of the front end's checks (prepared by its group, `frontend`)
at several batch sizes through one library, the operator captured in a CUDA
graph and replayed on new inputs, and bad tensors refused by name."""
import copy

import pytest
import torch

import fusion.dynamo

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
    misaligned = torch.randn(8 * 64 + 1, device="cuda")[1:].view(8, 64)
    with pytest.raises(RuntimeError,
                       match=f"input {rows} is not 16-byte aligned"):
        run(key, good[:rows] + [misaligned] + good[rows + 1:])
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
