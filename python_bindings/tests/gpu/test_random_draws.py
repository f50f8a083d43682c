"""Dropout drawn in the kernels on the GPU (`fusion.random_uniform`):
training-mode dropout without gradients through
torch.compile(backend="fusion") and fusion.compile, the draw computed
where the fused op reads it (the wgmma and tiled GEMMs' epilogues,
cuBLASLt's epilogue kernel, the row programs after them) from a seed the
call draws from PyTorch's generator. The kernels' masks are the
definition's (fusion/random.py, checked against Random123's answers on
the CPU) element for element, and the results those of a float64 copy
with that mask, on ragged shapes (N = 200 against 128- and 256-column
tiles; 7, 333 and 1000 rows; a rank-3 input). prepare() compiles the
libraries for sm_90 from CPU tensors, with KernelBench 66's
(test_kernelbench.py checks and the bench times it)."""
from copy import deepcopy

import pytest
import torch
import torch.nn as nn

import fusion
import fusion.dynamo
from fusion.random import draw_seed, dropout_keeps
from gpu import kernelbench
from gpu.helpers import (DTYPES, LIBRARY_BOUNDS, TARGET, compile_only_cases,
                         precision_setup, relative_error)
from dropout_models import DropoutSoftmax, KeptBy, LinearDropout

pytestmark = pytest.mark.gpu

K, N, P = 96, 200, 0.3


class PostNormBlock(nn.Module):
    """BERT's output block, `norm(dropout(dense(h)) + h)`."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(K, K)
        self.dropout = nn.Dropout(P)
        self.norm = nn.LayerNorm(K)

    def forward(self, x):
        return self.norm(self.dropout(self.dense(x)) + x)


MODELS = {"linear_dropout": lambda: LinearDropout(K, N, P),
          "softmax": lambda: DropoutSoftmax(K, N, P),
          "post_norm": PostNormBlock}
STRATEGIES = ("auto", "tiled", "cublas")
CASES = ([("linear_dropout", precision, strategy)
          for precision in ("fp32", "bf16") for strategy in STRATEGIES] +
         [(model, precision, "auto") for model in ("softmax", "post_norm")
          for precision in ("fp32", "bf16")])
SHAPES = [(7, K), (333, K), (1000, K), (3, 111, K)]


def case_id(case):
    return "-".join(case)


def options(precision, strategy):
    result = {"target": TARGET}
    if strategy != "auto":
        result["strategy"] = strategy
    return result


def model_of(case, device, shape=SHAPES[1]):
    model, precision, strategy = case
    torch.manual_seed(0)
    dtype = DTYPES[precision]
    module = MODELS[model]().to(device=device, dtype=dtype).train()
    x = torch.randn(shape, device=device, dtype=dtype)
    return module, x, options(precision, strategy)


def features(module):
    return module.dense.out_features if hasattr(module, "dense") else N


def keep_of(x, columns, seed, dtype):
    """The elements the kernels keep: the draw of stream 0 under the seed
    the call draws after torch.manual_seed(seed)."""
    torch.manual_seed(seed)
    return dropout_keeps(draw_seed(x.device), (*x.shape[:-1], columns), P,
                         dtype)


def reference(module, keep):
    copy = deepcopy(module)
    copy.dropout = KeptBy(keep, P)
    return copy.double().to(keep.device)


def check(within, module, x, out, keep, what):
    """The kernels' mask is the definition's, and the result the float64
    reference's of that mask."""
    if isinstance(module, LinearDropout) and \
            not isinstance(module, DropoutSoftmax):
        dropped = out == 0
        assert torch.equal(dropped, ~keep), \
            f"{what}: {(dropped == keep).sum().item()} elements' masks " \
            f"differ from the definition's draw"
    expected = reference(module, keep)(x.double())
    within(relative_error(out, expected), LIBRARY_BOUNDS[
        "fp32" if out.dtype == torch.float32 else "bf16"], what)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_compiled_inference_draws_in_the_kernels(library_cache, sm90, within,
                                                 case, shape):
    precision_setup("fp32")
    module, x, backend_options = model_of(case, "cuda", shape)
    torch._dynamo.reset()
    compiled = torch.compile(module, backend="fusion",
                             options=backend_options)
    with torch.no_grad():
        compiled(x)  # compiled, then poisoned memory for the output
        torch.empty(1 << 24, device="cuda").fill_(float("nan"))
        torch.manual_seed(11)
        out = compiled(x)
        assert any("aten.native_dropout.default" in members
                   for members in fusion.dynamo.last_fused), \
            "no epilogue drew the dropout"
    keep = keep_of(x, features(module), 11, x.dtype)
    assert 0.2 < 1 - keep.double().mean().item() < 0.4
    check(within, module, x, out, keep, f"{case_id(case)} {shape}")


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_fusion_compile_draws_per_call(library_cache, sm90, within,
                                       precision):
    """fusion.compile's module in train() mode: each call draws its seed,
    torch.manual_seed repeats it."""
    module, x, _ = model_of(("linear_dropout", precision, "auto"), "cuda",
                            (1000, K))
    compiled = fusion.compile(module, (x,), target=TARGET)
    with torch.no_grad():
        torch.manual_seed(11)
        out = compiled(x)
        again = compiled(x)
        torch.manual_seed(11)
        assert torch.equal(compiled(x), out)
    assert not torch.equal(again, out)
    check(within, module, x, out, keep_of(x, N, 11, x.dtype),
          f"fusion.compile {precision}")


def prepare():
    """The cases' libraries (sm_90, from CPU tensors), fusion.compile's,
    and KernelBench 66's in every precision and mode."""
    for shape in (SHAPES[0], SHAPES[-1]):  # rank 2 and rank 3 programs
        yield from compile_only_cases(
            f"random draws {shape}", CASES,
            lambda case, device, shape=shape: model_of(case, device, shape),
            case_id)
    for precision in ("fp32", "bf16"):
        def compile_module(precision=precision):
            module, x, _ = model_of(("linear_dropout", precision, "auto"),
                                    "cpu", (1000, K))
            fusion.compile(module, (x,), target=TARGET)
        yield f"random draws fusion.compile {precision}", compile_module
    yield from ((label, compile_one)
                for label, compile_one in kernelbench.prepare()
                if kernelbench.DROPOUT in label)


PREPARE = {"random-draws": prepare}
