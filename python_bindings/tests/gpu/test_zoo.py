"""The GEMM-epilogue family on the GPU, from the library cache (sm_90): the
zoo (python_bindings/tests/zoo.py) through fusion.compile with each
strategy and precision and through torch.compile(backend="fusion"),
against PyTorch in float64, running statistics included; every op of the
importer's table; remainders, rounding divisions and sign ops at special
values against PyTorch's CUDA kernels."""
import pytest
import torch

import fusion
import fusion.dynamo

from gpu.helpers import (PRECISIONS, TARGET, precision_setup, relative_error,
                         run_poisoned, state_error)
from model_fuzz import EAGER_ERROR_FACTOR
from test_aten_table import SAMPLES, Apply
from zoo import SPECIAL_VALUES, special_values, zoo

pytestmark = pytest.mark.gpu

# The zoo at its own input features, and at 40 (rows of x and w 16-byte
# multiples, so that the wgmma strategy runs its kernel (TMA) rather than
# falling back to cuBLASLt).
ZOOS = {"zoo": zoo(), "family": zoo(in_features=40)}
# (zoo, precision, strategy) of the check; "dynamo": torch.compile's
# backend, fp32 (auto: wgmma on sm_90).
COLUMNS = ([("zoo", "fp32", s) for s in ("tiled", "cublas", "dynamo")] +
           [("family", p, s) for p in PRECISIONS
            for s in ("tiled", "cublas", "wgmma")] +
           [("family", "fp32", "dynamo")])
STRATEGIES = ("tiled", "cublas", "wgmma")


def twins(models, name, device, dtype=torch.float32):
    make, shape, training = models[name]
    torch.manual_seed(0)
    model = make().train(training).to(device=device, dtype=dtype)
    reference = make().train(training).to(device)
    reference.load_state_dict(model.state_dict())
    x = torch.randn(*shape, device=device).to(dtype)
    return model, reference.double(), x


def zoo_cases():
    for zoo_name, pname, strategy in COLUMNS:
        for name in sorted(ZOOS[zoo_name]):
            yield zoo_name, name, pname, strategy


def compiled(model, x, pname, strategy):
    """fusion.compile of the check's options, or torch.compile's backend."""
    if strategy == "dynamo":
        torch._dynamo.reset()
        return torch.compile(model, backend="fusion",
                             options={"target": TARGET})
    return fusion.compile(model, (x,), target=TARGET, strategy=strategy,
                          precision=PRECISIONS[pname][1])


@pytest.mark.parametrize("zoo_name,name,pname,strategy", list(zoo_cases()))
def test_zoo(library_cache, within, sm90, zoo_name, name, pname, strategy):
    dtype, _, bound = PRECISIONS[pname]
    with torch.no_grad():
        model, reference, x = twins(ZOOS[zoo_name], name, "cuda", dtype)
        out = compiled(model, x, pname, strategy)(x)
        if strategy == "dynamo":
            assert fusion.dynamo.last_fused, "nothing fused"
        error = max(relative_error(out, reference(x.double()), 1e-30),
                    state_error(model, reference))
    within(error, bound, "outputs and running statistics")


def prepare_zoo(precisions=("fp32",)):
    """The zoo's libraries in `precisions` (fp32: the zoo's columns and the
    family's fp32 ones, dynamo's among them)."""
    for zoo_name, name, pname, strategy in zoo_cases():
        if pname not in precisions:
            continue
        def compile_one(zoo_name=zoo_name, name=name, pname=pname,
                        strategy=strategy):
            model, _, x = twins(ZOOS[zoo_name], name, "cpu",
                                PRECISIONS[pname][0])
            if strategy != "dynamo":
                compiled(model, x, pname, strategy)
                return
            torch._dynamo.reset()
            with torch.no_grad():
                torch.compile(model, backend="fusion", options={
                    "target": TARGET, "compile_only": True})(x)
        yield f"zoo {zoo_name} {name} {pname} {strategy}", compile_one


# ------------------------------------------------------------ the op table
# The model of test_aten_table.py (a linear layer, then the op with
# negative constants and a per-column vector) at a ragged shape, fp32
# (3xTF32 tiled; cuBLASLt + epilogue kernel), outputs poisoned first.
TABLE_BATCH, TABLE_K = 77, 19


def table_module(name, strategy, device):
    torch.manual_seed(0)
    model = Apply(name).to(device)
    x = torch.randn(TABLE_BATCH, TABLE_K, device=device)
    return model, x, fusion.compile(model, (x,), target=TARGET,
                                    strategy=strategy)


@pytest.mark.parametrize("strategy", ["tiled", "cublas"])
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_op_table(library_cache, within, sm90, name, strategy):
    """Within 1e-5 plus the fuzzer's factor of eager fp32's own error
    (model_fuzz's rule): lgamma near its zeros amplifies the GEMM's
    rounding, whose summation order is the kernel's own."""
    model, x, module = table_module(name, strategy, "cuda")
    with torch.no_grad():
        out = run_poisoned(module, x)
        precision_setup("fp32")
        eager = model(x)
        reference = model.double()(x.double())
    bound = 1e-5 + EAGER_ERROR_FACTOR * relative_error(eager, reference)
    within(relative_error(out, reference), bound, name)


def prepare_table():
    for name in sorted(SAMPLES):
        for strategy in ("tiled", "cublas"):
            yield (f"table {name} {strategy}",
                   lambda name=name, strategy=strategy:
                   table_module(name, strategy, "cpu"))


# --------------------------------------------------------- special values
# zoo.py's SPECIAL_VALUES (zeros of either sign, infinities, NaN, quotients
# past 2^23) through every strategy in fp32, against PyTorch's CUDA
# kernels: within each case's tolerance, NaNs where PyTorch's are, the
# same signs (but NaNs').

def mismatch(out, expected, tolerance):
    """Why `out` is not `expected`, or None."""
    try:
        torch.testing.assert_close(out, expected, rtol=tolerance, atol=0,
                                   equal_nan=True)
    except AssertionError as e:
        return " ".join(str(e).split())
    numbers = ~expected.isnan()
    if not torch.equal(torch.signbit(out[numbers]),
                       torch.signbit(expected[numbers])):
        return "signs differ"
    return None


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", sorted(SPECIAL_VALUES))
def test_special_values(library_cache, sm90, name, strategy):
    with torch.no_grad():
        model, x, tolerance = special_values(name)
        model, x = model.cuda(), x.cuda()
        out = fusion.compile(model, (x,), target=TARGET,
                             strategy=strategy)(x)
        why = mismatch(out, model(x), tolerance)
    assert why is None, why


def prepare_special_values():
    for name in sorted(SPECIAL_VALUES):
        for strategy in STRATEGIES:
            def compile_one(name=name, strategy=strategy):
                model, x, _ = special_values(name)
                fusion.compile(model, (x,), target=TARGET, strategy=strategy)
            yield f"special values {name} {strategy}", compile_one


PREPARE = {"zoo": prepare_zoo,
           "zoo-tf32-bf16": lambda: prepare_zoo(("tf32", "bf16")),
           "table": prepare_table,
           "special-values": prepare_special_values}
