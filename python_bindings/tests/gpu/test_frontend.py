"""The Python front end on the GPU machine, which has no compiler:
fusion.load of the modules saved by fusion.compile on the build machine;
torch.compile(backend="fusion") and fusion.compile of the front end's
models from the library cache, a training step's gradients, CUDA-graph
capture; one library and fusion.load on several GPUs."""
import copy

import pytest
import torch

import fusion
import fusion.dynamo

from gpu import frontend
from gpu.helpers import (SAVED_PRECISIONS, SAVED_WORKLOADS, TARGET, Library,
                         model_a, need, relative_error)
from model_fuzz import EAGER_ERROR_FACTOR

pytestmark = pytest.mark.gpu
# The saved modules' bounds (fusion-compile's library bounds).
SAVED_BOUNDS = {"fp32": 1e-5, "tf32": 2e-3, "bf16": 2e-2}


@pytest.fixture(autouse=True)
def no_tf32_after():
    yield
    torch.backends.cuda.matmul.allow_tf32 = False


@pytest.mark.parametrize("name", list(SAVED_WORKLOADS))
@pytest.mark.parametrize("precision", SAVED_PRECISIONS)
def test_saved_module(artifacts, within, name, precision):
    """fusion.load binds a saved library to a freshly built module; outputs
    and, for batch norm, running statistics after two training steps,
    against a float64 copy of the module."""
    saved = need(artifacts / "python" / f"{name}_{precision}")
    cls, batch = SAVED_WORKLOADS[name]
    dtype = {"bf16": torch.bfloat16}.get(precision, torch.float32)
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.manual_seed(0)
    module = cls().to("cuda", dtype)
    reference = copy.deepcopy(module).double()
    loaded = fusion.load(saved, module)
    errors = []
    for _ in range(2):  # Two steps: the running stats accumulate.
        x = torch.randn(batch, module.linear.in_features, device="cuda",
                        dtype=dtype)
        with torch.no_grad():
            y = loaded(x)
        errors.append(relative_error(y, reference(x.double())))
    if hasattr(module, "bn"):
        errors.append(relative_error(module.bn.running_mean,
                                     reference.bn.running_mean))
        errors.append(relative_error(module.bn.running_var,
                                     reference.bn.running_var))
        assert int(module.bn.num_batches_tracked) == 2
    within(max(errors), SAVED_BOUNDS[precision], "outputs, running stats")


@pytest.mark.parametrize("workload", frontend.workloads(),
                         ids=lambda w: w[0].split()[0])
@pytest.mark.parametrize("precision", frontend.PRECISIONS,
                         ids=lambda p: p[0])
def test_frontend_model(library_cache, within, sm90, workload, precision):
    """torch.compile(backend="fusion") (and fusion.compile where the whole
    module compiles; with fallback="inductor" for the MLP block) against
    float64; something fused, workload B's batch norm among it."""
    name, make, shape, aot = workload
    pname, dtype, option, allow_tf32 = precision
    bound = frontend.BOUNDS[pname]
    torch.backends.cuda.matmul.allow_tf32 = allow_tf32
    torch.manual_seed(0)
    model = make().to(dtype).cuda()
    reference_model = make().double().cuda()
    reference_model.load_state_dict(model.state_dict())
    x = torch.randn(*shape, device="cuda", dtype=dtype)
    torch._dynamo.reset()
    with torch.no_grad():
        reference = reference_model(x.double())
        dynamo = torch.compile(model, backend="fusion",
                               options=frontend.options(option))
        out = dynamo(x)
        fused = fusion.dynamo.last_fused
        assert fused, "nothing fused"
        if name.startswith("B"):
            assert any("batch_norm" in op for op in sum(fused, [])), fused
        errors = [relative_error(out, reference)]
        if aot:
            compiled = fusion.compile(model, (x,), target=TARGET,
                                      precision=option or None)
            errors.append(relative_error(compiled(x), reference))
        if name.startswith("MLP"):
            torch._dynamo.reset()
            rest = torch.compile(model, backend="fusion",
                                 options=frontend.options(
                                     option, fallback="inductor"))
            errors.append(relative_error(rest(x), reference))
            # The fallback leaves the partitions as they were.
            assert fusion.dynamo.last_fused == fused
        torch._dynamo.reset()
    within(max(errors), bound, "dynamo, fusion.compile, + inductor")


@pytest.mark.parametrize("workload", frontend.workloads(),
                         ids=lambda w: w[0].split()[0])
def test_training_step(library_cache, within, sm90, workload):
    """torch.compile(backend="fusion") on a training step, fp32: the
    gradients of the inputs and parameters against float64, within 1e-5
    plus the fuzzer's factor of eager fp32's own error (model_fuzz's
    rule): leaky_relu's gradient of A changes its slope where y is 0 up to
    rounding, which leaves eager's own gradient 1.3e-4 off (H200)."""
    error, eager_error, fused = frontend.training_step(*workload)
    assert fused >= 1
    within(error, 1e-5 + EAGER_ERROR_FACTOR * eager_error, "gradients")


def test_cuda_graph_capture(library_cache, within, sm90):
    """The torch.compile'd model captured in a CUDA graph, replayed on new
    inputs, against float64."""
    within(frontend.cuda_graph_capture(), 1e-5, "graph replay")


# ------------------------------------------------------------ several GPUs

@pytest.fixture
def two_gpus():
    if torch.cuda.device_count() < 2:
        pytest.skip("fewer than two GPUs")


@pytest.mark.parametrize("device", ["cuda:1", "cuda:0", "cuda:1"],
                         ids=["cuda:1", "cuda:0", "cuda:1-again"])
def test_multi_device_call(artifacts, within, two_gpus, device):
    """One library serves every device (the runtime loads its kernels per
    device on first use), through the C ABI."""
    lib = Library(need(artifacts / "workloads_f32_fp32.so"))
    x = torch.randn(77, 513, device=device)
    w = torch.randn(129, 513, device=device) / 513 ** 0.5
    b = torch.randn(129, device=device)
    out = torch.full((77, 129), float("nan"), device=device)
    with torch.cuda.device(device):
        stream = torch.cuda.current_stream().cuda_stream
        status, message = lib.call("a_513x129", 77, [x, w, b], [out],
                                   stream=stream)
    torch.cuda.synchronize(device)
    assert status == 0, message
    within(relative_error(out, model_a(x.double(), w.double(),
                                       b.double())[0]), 1e-5, device)


def test_multi_device_refused(artifacts, two_gpus):
    """Inputs on cuda:1, the stream of cuda:0: refused with a status."""
    lib = Library(need(artifacts / "workloads_f32_fp32.so"))
    x = torch.randn(8, 513, device="cuda:1")
    w = torch.randn(129, 513, device="cuda:1")
    b = torch.randn(129, device="cuda:1")
    out = torch.empty(8, 129, device="cuda:1")
    with torch.cuda.device(0):
        status, message = lib.call(
            "a_513x129", 8, [x, w, b], [out],
            stream=torch.cuda.current_stream().cuda_stream)
    assert status != 0 and "device 1" in message, (status, message)


def test_multi_device_load(artifacts, within, two_gpus):
    """fusion.load with a module on cuda:1, cuda:0 current."""
    saved = need(artifacts / "python" / "B_fp32")
    torch.cuda.set_device(0)
    cls, _ = SAVED_WORKLOADS["B"]
    torch.manual_seed(0)
    module = cls().to("cuda:1")
    reference = copy.deepcopy(module).double()
    loaded = fusion.load(saved, module)
    x = torch.randn(1024, 4096, device="cuda:1")
    with torch.no_grad():
        y = loaded(x)
    error = relative_error(y, reference(x.double()))
    stats = relative_error(module.bn.running_var, reference.bn.running_var)
    within(max(error, stats), 1e-5, "output, running_var")
