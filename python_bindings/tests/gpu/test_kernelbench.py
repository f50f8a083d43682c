"""KernelBench's level-2 GEMM problems (gpu/kernelbench.py, their real
sizes) through torch.compile(backend="fusion") on the GPU, from the
library cache (sm_90), in fp32, tf32 and bf16, in the mode KernelBench
runs them (training; eval for the dropout of 66): the first call and a
call on fresh random inputs against a float64 copy, output and running
statistics, within the precision's bound plus EAGER_ERROR_FACTOR times
eager's own error; something fused and no graph left to PyTorch by an
error (FusionBackendWarning). And 66 as the bench times it, in training
mode (its dropout dropping): each row of its result a softmax."""
import warnings

import pytest
import torch

import fusion
import fusion.dynamo
from fusion.random import draw_seed, dropout_keeps
from gpu import kernelbench
from gpu.helpers import precision_setup, relative_error
from dropout_models import KeptBy

pytestmark = pytest.mark.gpu

CASES = [pytest.param(name, precision, id=f"{name}-{precision}")
         for name in kernelbench.PROBLEMS
         for precision in kernelbench.PRECISIONS]
DROPOUT = kernelbench.DROPOUT


@pytest.fixture
def matmul_precision(request):
    """Sets PyTorch's matmul precision for `precision` (the test's
    parameter), and afterwards fp32 again and the device's memory freed
    (the largest problems hold GBs: a 32768 x 32768 weight and its float64
    copy; other shards share the device)."""
    precision_setup(request.node.callspec.params["precision"])
    yield
    precision_setup("fp32")
    torch._dynamo.reset()
    torch.cuda.empty_cache()


@pytest.mark.parametrize("name,precision", CASES)
def test_kernelbench(library_cache, sm90, within, matmul_precision, name,
                     precision):
    check(kernelbench.PROBLEMS[name], precision, within)


def check(problem, precision, within):
    torch.manual_seed(0)
    model, inputs = kernelbench.model_and_inputs(
        problem, precision, kernelbench.check_mode(problem), "cuda")
    reference = kernelbench.float64_copy(model)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="fusion",
                             options=kernelbench.fusion_options(precision))
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", fusion.FusionBackendWarning)
        for call in ("first call", "fresh inputs"):
            if call == "fresh inputs":
                inputs = problem.get_inputs(device="cuda",
                                            dtype=inputs[0].dtype)
            eager = kernelbench.call_error(model, model, inputs, reference)
            error = kernelbench.call_error(compiled, model, inputs,
                                           reference)
            within(error, kernelbench.bound(precision, eager),
                   f"{problem.name} {precision} {call} (eager {eager:.2g})")
    assert fusion.dynamo.last_fused, "nothing fused"


@pytest.mark.parametrize("precision", list(kernelbench.PRECISIONS))
def test_dropout_in_training_mode(library_cache, sm90, within,
                                  matmul_precision, precision):
    """66 as the bench times it (training mode, the default fallback, the
    draw the epilogue's): each row of its result a softmax."""
    torch.manual_seed(0)
    model, inputs = kernelbench.model_and_inputs(
        kernelbench.PROBLEMS[DROPOUT], precision, True, "cuda")
    torch._dynamo.reset()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", fusion.FusionBackendWarning)
        out = torch.compile(model, backend="fusion",
                            options=kernelbench.fusion_options(precision))(
                                *inputs)
    sums = out.double().sum(dim=1)
    within(relative_error(sums, torch.ones_like(sums)),
           kernelbench.BOUNDS[precision], f"{DROPOUT} {precision} train")


@pytest.mark.parametrize("precision", list(kernelbench.PRECISIONS))
def test_dropout_matches_float64_of_the_same_draw(library_cache, sm90, within,
                                                 matmul_precision, precision):
    """66 in training mode with the eager fallback, without gradients: the
    GEMM's epilogue draws (the definition's draw, fusion/random.py, under
    the seed the call draws after torch.manual_seed) and applies the
    mask (its comparison with p as the dtype holds it) and the softmax,
    within the precision's bound of a float64 copy with that mask, on a
    ragged batch, the output poisoned first."""
    model, inputs = kernelbench.model_and_inputs(
        kernelbench.PROBLEMS[DROPOUT], precision, True, "cuda", batch=77)
    p = model.dropout.p
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="fusion", options=dict(
        kernelbench.fusion_options(precision), fallback="eager"))
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", fusion.FusionBackendWarning)
        compiled(*inputs)  # compiled, then poisoned memory for the output
        torch.empty(1 << 26, device="cuda").fill_(float("nan"))
        torch.manual_seed(3)
        out = compiled(*inputs)
        assert any("aten.native_dropout.default" in members
                   for members in fusion.dynamo.last_fused), "dropout unfused"
        torch.manual_seed(3)
        keep = dropout_keeps(draw_seed("cuda"), out.shape, p, out.dtype)
        reference = kernelbench.float64_copy(model)
        reference.dropout = KeptBy(keep, p)
        expected = reference(inputs[0].double())
        eager_copy = kernelbench.float64_copy(model).to(out.dtype)
        eager_copy.dropout = KeptBy(keep, p)
        eager = relative_error(eager_copy(inputs[0]), expected)
    within(relative_error(out, expected), kernelbench.bound(precision, eager),
           f"{DROPOUT} {precision} train, the same draw")
