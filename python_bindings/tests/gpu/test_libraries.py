"""The libraries that fusion-compile builds (scripts/gpu-check.sh build)
against PyTorch: fresh random inputs, outputs poisoned with NaN,
||out - ref|| / ||ref|| against float64 within the precision's bound
(running statistics included), several batch sizes through each library;
the examples; bad arguments answered by an error status; 64 training batch
norms in one function; the multi-target library; the residual epilogues and
the divisions bit for bit.

Artifacts: backend 1 (cublas) at the top, backend 2 in tiled/, its fp32 on
the CUDA cores in simt/, backend 3 in wgmma/, multi/ (sm_80 + sm_90, and
each alone), many/, epilogues/. scripts/run-example.sh's examples
directory serves too (the workloads skip there).
"""
import json
import re
import pathlib
import sys
import tempfile

import pytest
import torch
from fusion.dtypes import TORCH_DTYPES

from gpu.epilogues import K as EPILOGUE_K
from gpu.epilogues import MODELS as EPILOGUES
from gpu.epilogues import N as EPILOGUE_N
from gpu.epilogues import shaped_models
from gpu.helpers import (DTYPES, LIBRARY_BOUNDS, MODELS, ROOT, Library,
                         cuda_malloc, make_inputs, model_a, model_b, need,
                         poisoned, poisoned_outputs, precision_setup,
                         relative_error, workload_kind)

sys.path.insert(0, str(ROOT / "scripts" / "gpu"))
from make_models import SHAPES  # noqa: E402

pytestmark = pytest.mark.gpu

# Where each strategy's libraries are.
FOLDERS = {"cublas": "", "tiled": "tiled", "simt": "simt", "wgmma": "wgmma"}
# The workload libraries: stem -> (dtype, precision).
WORKLOAD_LIBRARIES = {
    "workloads_f32_fp32": (torch.float32, "fp32"),
    "workloads_f32_tf32": (torch.float32, "tf32"),
    "workloads_f32_bf16": (torch.float32, "bf16"),
    "workloads_f32_f16": (torch.float32, "f16"),
    "workloads_bf16": (torch.bfloat16, "bf16"),
    "workloads_f16": (torch.float16, "f16")}
STRATEGY_LIBRARIES = {"cublas": tuple(WORKLOAD_LIBRARIES),
                      "tiled": tuple(WORKLOAD_LIBRARIES),
                      "simt": ("workloads_f32_fp32",)}
# The wgmma (and multi-target) libraries by precision.
PRECISION_LIBRARIES = {"fp32": "workloads_f32_fp32",
                       "tf32": "workloads_f32_tf32",
                       "bf16": "workloads_bf16"}
# The wgmma kernels' cases (function, batches): ragged M, N (4000, 129)
# and K (1000, 513); more tiles than an H100's 132 blocks (2000, 1500,
# 4100 rows), so that the persistent kernel's blocks run several each;
# batch norms past the batch configs' rows (1500, 1000) take the kernel
# with swapped operands, and so do batches of at most 32 rows (1, 7, 16,
# 20, 30) of the other workloads (tiles 64 of w's rows wide, at 16384
# columns 128); at 4000 and 4096 columns batches of at most 64 rows (and
# batch norms of at most 128) take split_k, blocks that share each tile's
# K slices (1, 7, 16, 40, 48, 64, 77, 128); batch norms of at most 64 rows
# finish in 64-row tiles (7, 40, 64).
WGMMA_CHECKS = [("a_8192x8192", [256, 77, 2000, 1, 30]),
                ("a_1000x4000", [333, 7, 40]),
                ("a_513x129", [97]),
                ("b_4096x4096", [512, 77, 1500, 128, 7, 64]),
                ("b_1000x4000", [300, 1000, 40]), ("b_513x129", [97]),
                ("g_4096x4096", [130, 4100, 16, 1, 48, 64]),
                ("g_16384x16384", [20])]


def shape_of(name):
    k, n = (int(v) for v in name.split("_")[1].split("x"))
    return k, n


def default_batches(kind, k, n):
    """The batches of the cublas, tiled and simt libraries' check."""
    if (k, n) in [(1000, 4000), (513, 129)]:
        return [1000, 77]
    return [1024, 16384] if kind == "b" and k == 4096 else [1024]


def workload_cases():
    for strategy, stems in STRATEGY_LIBRARIES.items():
        for stem in stems:
            for kind, shapes in SHAPES.items():
                for k, n in shapes:
                    for m in default_batches(kind, k, n):
                        yield strategy, stem, f"{kind}_{k}x{n}", m


def check_entry(lib, name, m, dtype, precision, within):
    """One call of a workload entry point (or an example's) at batch m
    against float64."""
    entry = lib.entries[name]
    kind = workload_kind(name)
    k = entry["inputs"][0]["shape"][1]
    n = entry["outputs"][0]["shape"][1]
    inputs = make_inputs(kind, m, k, n, dtype)
    outputs = poisoned_outputs(entry, m, dtype)
    lib.run(name, m, inputs, outputs)
    torch.cuda.synchronize()
    refs = MODELS[kind](*[t.double() for t in inputs])
    errors = [relative_error(o, r) for o, r in zip(outputs, refs)]
    within(max(errors), LIBRARY_BOUNDS[precision],
           f"{lib.path.name}:{name} M={m} errors "
           + " ".join(f"{e:.2e}" for e in errors))


@pytest.fixture(autouse=True)
def references_in_float64():
    yield
    precision_setup("fp32")


@pytest.mark.parametrize("strategy,stem,name,m", list(workload_cases()))
def test_workload(artifacts, within, strategy, stem, name, m):
    dtype, precision = WORKLOAD_LIBRARIES[stem]
    lib = Library(need(artifacts / FOLDERS[strategy] / f"{stem}.so"))
    precision_setup(precision)
    check_entry(lib, name, m, dtype, precision, within)


@pytest.mark.parametrize("precision", list(PRECISION_LIBRARIES))
@pytest.mark.parametrize("name,m", [(name, m) for name, batches in
                                    WGMMA_CHECKS for m in batches])
def test_wgmma_workload(artifacts, within, sm90, precision, name, m):
    lib = Library(need(artifacts / "wgmma" /
                       f"{PRECISION_LIBRARIES[precision]}.so"))
    check_entry(lib, name, m, DTYPES[precision], precision, within)


@pytest.mark.parametrize("strategy", ["cublas", "tiled"])
@pytest.mark.parametrize("model", ["linear_leaky_relu",
                                   "linear_scale_batch_norm"])
@pytest.mark.parametrize("precision", ["fp32", "tf32"])
def test_example(artifacts, within, strategy, model, precision):
    """examples/*.mlir, as scripts/run-example.sh and gpu-check.sh build
    compile them."""
    lib = Library(need(artifacts / FOLDERS[strategy] /
                       f"{model}_{precision}.so"))
    precision_setup(precision)
    for name in lib.entries:
        check_entry(lib, name, 1024, torch.float32, precision, within)


BAD_ARGUMENTS = ["null input", "too small output", "misaligned output",
                 "host output"]


@pytest.mark.parametrize("strategy", ["cublas", "tiled", "wgmma"])
@pytest.mark.parametrize("what", BAD_ARGUMENTS)
def test_bad_argument(artifacts, strategy, what):
    """Bad arguments get an error status with a message, not a crash: the
    ragged workload's library, or the example's."""
    folder = artifacts / FOLDERS[strategy]
    candidates = ([("workloads_f32_fp32", "a_1000x4000")]
                  if strategy == "wgmma" else
                  [("workloads_f32_fp32", "a_513x129"),
                   ("linear_leaky_relu_fp32", "linear_leaky_relu")])
    found = [(folder / f"{stem}.so", name) for stem, name in candidates
             if (folder / f"{stem}.so").exists()]
    if not found:
        need(folder / f"{candidates[0][0]}.so")
    path, name = found[0]
    lib = Library(path)
    entry = lib.entries[name]
    k = entry["inputs"][0]["shape"][1]
    n = entry["outputs"][0]["shape"][1]
    x = torch.randn(8, k, device="cuda")
    w = torch.randn(n, k, device="cuda")
    b = torch.randn(n, device="cuda")
    out = torch.empty(8, n, device="cuda")
    # Half of the 8 rows the call writes, in the library's output type.
    element = torch.empty(0, dtype=TORCH_DTYPES[
        entry["outputs"][0]["dtype"]]).element_size()
    cases = {
        "null input": lambda: ([x, 0, b], [out]),
        "too small output": lambda: ([x, w, b],
                                     [cuda_malloc(4 * n * element)]),
        "misaligned output": lambda: (
            [x, w, b], [torch.empty(8 * n + 1, device="cuda")[1:]]),
        "host output": lambda: ([x, w, b], [torch.empty(8, n)]),
    }
    inputs, outputs = cases[what]()
    status, message = lib.call(name, 8, inputs, outputs)
    assert status != 0, f"{path.name}:{name}: {what} was accepted"
    assert message, f"{path.name}:{name}: {what}: status {status}, no message"


@pytest.mark.parametrize("strategy", ["cublas", "tiled"])
def test_many_batch_norms(artifacts, within, strategy):
    """The function of 64 training batch norms (test/Tools/fusion-compile/
    many-batch-norms.mlir): one x, per batch norm (w, b, s, gamma, beta,
    running mean, running var) in, (y, new mean, new var) out."""
    lib = Library(need(artifacts / "many" / f"{strategy}.so"))
    m = 77
    entry = lib.entries["many"]
    groups = len(entry["outputs"]) // 3
    k = entry["inputs"][0]["shape"][1]
    n = entry["outputs"][0]["shape"][1]
    x = torch.randn(m, k, device="cuda")
    inputs = [x]
    for _ in range(groups):
        inputs += make_inputs("b", m, k, n, torch.float32)[1:]
    outputs = poisoned_outputs(entry, m, torch.float32)
    lib.run("many", m, inputs, outputs)
    torch.cuda.synchronize()
    refs = []
    for i in range(groups):
        params = inputs[1 + 7 * i:1 + 7 * (i + 1)]
        refs += model_b(x.double(), *[t.double() for t in params])
    errors = [relative_error(o, r) for o, r in zip(outputs, refs)]
    within(max(errors), LIBRARY_BOUNDS["fp32"], f"{groups} batch norms")


# -------------------------------------------------- the multi-target library
# One library for sm_80 and sm_90 (--target=sm_80,sm_90, `auto`): each
# entry point runs the variant of the newest target the device runs. The
# single-target libraries too: the sm_80 one runs through the driver's JIT
# of its PTX here, as the sm_80 variant would on an sm_8x device.

@pytest.mark.parametrize("sub", ["", "sm_90", "sm_80"])
@pytest.mark.parametrize("precision", list(PRECISION_LIBRARIES))
@pytest.mark.parametrize("name,m", [(name, m) for name, batches in
                                    WGMMA_CHECKS for m in batches])
def test_multi_target(artifacts, within, sm90, sub, precision, name, m):
    lib = Library(need(artifacts / "multi" / sub /
                       f"{PRECISION_LIBRARIES[precision]}.so"))
    check_entry(lib, name, m, DTYPES[precision], precision, within)


# A generated GEMM kernel's name: the op config's, or a batch config's
# (`..._gemm_rows_le_N`), which the batch of gemm_launch takes.
GEMM_KERNEL = re.compile(r"_gemm(_rows_le_\d+)?$")


def gemm_launch(lib, name, precision):
    """The launch (grid, block, shared memory) of `name`'s GEMM kernel."""
    k, n = shape_of(name)
    m = 333
    inputs = make_inputs(name[0], m, k, n, DTYPES[precision])
    outputs = [torch.empty(m, n, device="cuda", dtype=DTYPES[precision])]
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        lib.run(name, m, inputs, outputs)
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as trace:
        prof.export_chrome_trace(trace.name)
        events = json.loads(pathlib.Path(trace.name).read_text())
    launches = [(tuple(e["args"].get("grid", ())),
                 tuple(e["args"].get("block", ())),
                 e["args"].get("shared memory"))
                for e in events["traceEvents"]
                if e.get("cat") == "kernel"
                and GEMM_KERNEL.search(e["name"])]
    return launches[0] if launches else None


@pytest.mark.parametrize("precision", ["fp32"])
def test_multi_target_variant(artifacts, sm90, precision):
    """The multi-target library's GEMM launch of workload A is the sm_90
    variant's, not the sm_80 one's, in the precision whose `auto` choice
    differs: fp32, the tiled mma.sync kernel against the wgmma kernel (in
    tf32 `auto` takes cuBLASLt on both chips, which launches no generated
    GEMM to tell the variants apart)."""
    stem = PRECISION_LIBRARIES[precision]
    multi, sm90_alone, sm80_alone = (
        gemm_launch(Library(need(artifacts / "multi" / sub / f"{stem}.so")),
                    "a_1000x4000", precision)
        for sub in ("", "sm_90", "sm_80"))
    assert multi is not None, "no GEMM kernel launch traced"
    assert multi == sm90_alone, (multi, sm90_alone)
    assert multi != sm80_alone, (multi, sm80_alone)


# ------------------------------------------------- the residual epilogues

@pytest.mark.parametrize("precision", ["tf32", "fp32", "bf16", "f16"])
@pytest.mark.parametrize("name", shaped_models(4096, 4096))
@pytest.mark.parametrize("m", [1024, 16384])
def test_epilogue(artifacts, within, sm90, precision, name, m):
    """Epilogues reading a residual or a row statistic (and the others of
    epilogues.py), wgmma, against float64."""
    lib = Library(need(artifacts / "epilogues" / f"{precision}.so"))
    k = n = 4096
    dtype = DTYPES[precision]
    precision_setup(precision)
    x = torch.randn(m, k, device="cuda", dtype=dtype)
    w = (torch.randn(n, k, device="cuda") / 64).to(dtype)
    b = torch.randn(n, device="cuda", dtype=dtype)
    # Magnitudes 0.5 to 1.5 of either sign, never 0: y / r and y / s stay
    # within f16's range.
    extras = {e: ((torch.rand(m, columns, device="cuda") + 0.5) *
                  (torch.randint(0, 2, (m, columns), device="cuda")
                   * 2 - 1)).to(dtype)
              for e, columns in (("r", n), ("s", 1))}
    _, extra, _, model = EPILOGUES[name]
    inputs = [x, w, b] + ([extras[extra]] if extra else [])
    y64 = torch.addmm(b.double(), x.double(), w.double().t())
    ref = model(y64, x.double(), extras["r"].double(), extras["s"].double())
    out = poisoned((m, n), dtype)
    lib.run(name, m, inputs, [out])
    torch.cuda.synchronize()
    within(relative_error(out, ref), LIBRARY_BOUNDS[precision], name)


# Divisions in the epilogues against IEEE division: `y / c`, `y / s` (a
# row statistic s: [M, 1]) and the approximate `y / r` (r: [M, N]) on f32
# inputs whose rows are scaled by powers of two from 2^-40 to 2^40; the
# quotients must be `plain / c`, `plain / s` and `plain / r` as PyTorch
# divides CUDA tensors (div.rn.f32), NaN for NaN. The divisors s and r span
# 2^-60 to 2^60 (r: 2^-140 to 2^127, subnormals included) and hold zeros
# of either sign, infinities, NaN, a subnormal and the largest f32. The
# correctly rounded quotients must be the same bits, but where |y| or
# |y / s| is below 2^-100, where they may be an ulp off
# (fusion-expand-divisions); the approximate ones within 2 ulps
# (div.full.f32).
DIVISION_CONSTANTS = {"y_div_c": -0.7, "y_div_3": 3.0}
SPECIAL_DIVISORS = [0.0, -0.0, float("inf"), float("-inf"), float("nan"),
                    1e-40, -3.4028235e38]
TINY = 2.0 ** -100


def divisors(m, n, low, high):
    """An [m, n] f32 matrix of random signs and powers of two from 2^low to
    2^high, its first elements the special divisors."""
    d = torch.randn(m, n, device="cuda", dtype=torch.float64) * torch.exp2(
        torch.randint(low, high + 1, (m, n), device="cuda").double())
    d = d.float()
    d.view(-1)[:len(SPECIAL_DIVISORS)] = torch.tensor(SPECIAL_DIVISORS)
    return d


@pytest.mark.parametrize("precision", ["tf32", "fp32"])
@pytest.mark.parametrize("m", [1000, 333])
@pytest.mark.parametrize("name", ["y_div_c", "y_div_3", "y_div_s",
                                  "y_div_r_approx"])
def test_division(artifacts, within, sm90, precision, m, name):
    lib = Library(need(artifacts / "epilogues" / f"{precision}.so"))
    k, n = EPILOGUE_K, EPILOGUE_N
    precision_setup(precision)
    torch.manual_seed(0)
    scale = torch.exp2(torch.randint(-40, 41, (m, 1), device="cuda").float())
    x = torch.randn(m, k, device="cuda") * scale
    w = torch.randn(n, k, device="cuda") / 64
    b = torch.randn(n, device="cuda") * 1e-3
    y = poisoned((m, n))
    lib.run("plain", m, [x, w, b], [y])
    if name in DIVISION_CONSTANTS:
        extra, divisor = [], torch.tensor(DIVISION_CONSTANTS[name],
                                          device="cuda")
    else:
        divisor = (divisors(m, 1, -60, 60) if name == "y_div_s" else
                   divisors(m, n, -140, 127))
        extra = [divisor]
    q = poisoned((m, n))
    lib.run(name, m, [x, w, b] + extra, [q])
    torch.cuda.synchronize()
    ref = y / divisor
    nans = q.isnan() & ref.isnan()
    ulps = (q.view(torch.int32).long() - ref.view(torch.int32).long()).abs()
    ulps[nans] = 0
    if name.endswith("_approx"):
        beyond_bound = ulps > 2
    else:
        tiny = (y.abs() < TINY) | (ref.abs() < TINY)
        beyond_bound = ~((ulps == 0) | (tiny & (ulps <= 1)))
    beyond = int(beyond_bound.sum())
    within(beyond, 0, f"{name}: elements beyond the bound (max ulps "
           f"{ulps.max().item()})")


# Infinite operands of fp32's 3xTF32 GEMM (the wgmma kernel's "plain"):
# x and w exact in tf32 (their remainders 0), an infinity in each, at 16
# rows (the kernel with swapped operands: x in shared memory) and 333 (w
# there). Every output element is eager's nonfinite value where eager's is
# one (inf of its sign, or NaN where the infinities meet), never NaN where
# fp32 gives an infinity, and finite ones within the fp32 bound.
def tf32_exact(t):
    return (t.view(torch.int32) & -8192).view(torch.float32)


@pytest.mark.parametrize("m", [16, 333])
def test_infinite_operands(artifacts, within, sm90, m):
    lib = Library(need(artifacts / "epilogues" / "fp32.so"))
    precision_setup("fp32")
    torch.manual_seed(m)
    x = tf32_exact(torch.randn(m, EPILOGUE_K, device="cuda"))
    w = tf32_exact(torch.randn(EPILOGUE_N, EPILOGUE_K, device="cuda") / 64)
    b = torch.randn(EPILOGUE_N, device="cuda") * 1e-3
    w[5, 7] = float("inf")
    x[3, 11] = float("-inf")
    y = poisoned((m, EPILOGUE_N))
    lib.run("plain", m, [x, w, b], [y])
    torch.cuda.synchronize()
    eager = torch.addmm(b, x, w.t())
    special = ~eager.isfinite()
    assert special.any()
    same = (y.isnan() & eager.isnan()) | (y == eager)
    within(int((special & ~same).sum()), 0,
           "elements another nonfinite value than eager's")
    ref = torch.addmm(b.double(), x.double(), w.double().t())
    within(relative_error(y[~special], ref[~special]),
           LIBRARY_BOUNDS["fp32"], "finite elements")


# NaN operands of the tensor-core GEMMs: a tf32 operand rounded in
# registers (convertToTf32: cvt.rna.tf32.f32) and a 3xTF32 operand's parts
# (splitTf32) keep its NaN; adding half a unit to the bits, as the tiled
# kernel's tf32 did, made the GPU's canonical NaN 0x7fffffff -0.0. x holds that NaN and a negative quiet one, w one: the output is NaN
# in exactly eager's rows and columns, at 16 rows (wgmma: x in shared
# memory) and 333 (w there), and the other elements are within the bound.
# At fp32, x also holds a NaN whose payload is all in the low 13 bits,
# which the tensor cores read as an infinity; at tf32 the wgmma kernel
# reads its operands from shared memory as they are, so that one is
# tf32's infinity there.
NAN_BITS = {"fp32": (0x7fffffff, -0x400000, 0x7f800001),  # -: 0xffc00000
            "tf32": (0x7fffffff, -0x400000)}


@pytest.mark.parametrize("precision", ["fp32", "tf32"])
@pytest.mark.parametrize("strategy", ["tiled", "wgmma"])
@pytest.mark.parametrize("m", [16, 333])
def test_nan_operands(artifacts, within, sm90, precision, strategy, m):
    lib = Library(need(artifacts / FOLDERS[strategy] /
                       f"workloads_f32_{precision}.so"))
    precision_setup(precision)
    torch.manual_seed(m)
    name = "a_1000x4000"
    x, w, b = make_inputs("a", m, *shape_of(name), torch.float32)
    for row, bits in enumerate(NAN_BITS[precision]):
        x.view(torch.int32)[5 * row + 1, 17 * row + 3] = bits
    w.view(torch.int32)[129, 999] = NAN_BITS[precision][0]
    y = poisoned((m, w.shape[0]))
    lib.run(name, m, [x, w, b], [y])
    torch.cuda.synchronize()
    (ref,) = model_a(x.double(), w.double(), b.double())
    within(int((y.isnan() != ref.isnan()).sum()), 0,
           "elements NaN where eager's are not, or not where they are")
    finite = ~ref.isnan()
    within(relative_error(y[finite], ref[finite]), LIBRARY_BOUNDS[precision],
           "the other elements")


# A 16-bit GEMM's bias is added in the compute type: cuBLASLt's bias
# epilogue rounded the product to bf16 first (pytorch/pytorch#180875), so
# that where the bias cancels the product the output was exactly 0 (fuzzer
# seeds 115 and 277). Row 0's bias is minus its rounded product: what is
# left is the product's rounding, which float64 keeps.
@pytest.mark.parametrize("m", [1, 77])
def test_bias_cancelling_the_product(artifacts, within, m):
    lib = Library(need(artifacts / "workloads_bf16.so"))
    torch.manual_seed(m)
    name = "g_4096x4096"
    x, w, b = make_inputs("g", m, *shape_of(name), torch.bfloat16)
    product = x[:1].double() @ w.double().t()
    b = (-product[0]).to(torch.bfloat16)
    y = poisoned((m, w.shape[0]), torch.bfloat16)
    lib.run(name, m, [x, w, b], [y])
    torch.cuda.synchronize()
    ref = torch.addmm(b.double(), x.double(), w.double().t())
    assert ref[0].abs().max() > 0
    within(relative_error(y[0], ref[0]), LIBRARY_BOUNDS["bf16"],
           "row 0 (the bias cancels the product)")


# ------------------------------------------------------ back-to-back calls
# Kernels launched to overlap their predecessor (programmatic dependent
# launch) still wait for it: each entry point called 24 times back to back,
# with no synchronization, on two input sets in turn, each call into its
# own poisoned outputs; every output must have the bits of the same
# inputs' call alone (the kernels are deterministic: any difference is a
# kernel reading its predecessor's output, or a workspace, too early).
BACK_TO_BACK = [("fp32", "g_4096x4096", m) for m in (1, 16, 48)] + \
    [("fp32", "b_4096x4096", m) for m in (64, 128)] + \
    [("fp32", "a_1000x4000", m) for m in (7, 40)] + \
    [("fp32", "b_1000x4000", 77)] + \
    [("tf32", "b_4096x4096", m) for m in (77, 128)]


@pytest.mark.parametrize("precision,name,m", BACK_TO_BACK)
def test_back_to_back(artifacts, sm90, precision, name, m, calls=24):
    lib = Library(need(artifacts / "wgmma" /
                       f"{PRECISION_LIBRARIES[precision]}.so"))
    precision_setup(precision)
    k, n = shape_of(name)
    entry = lib.entries[name]
    input_sets = [make_inputs(workload_kind(name), m, k, n, DTYPES[precision])
                  for _ in range(2)]
    alone = []
    for inputs in input_sets:
        outputs = poisoned_outputs(entry, m)
        lib.run(name, m, inputs, outputs)
        torch.cuda.synchronize()
        alone.append(outputs)
    runs = [poisoned_outputs(entry, m) for _ in range(calls)]
    for i, outputs in enumerate(runs):
        lib.run(name, m, input_sets[i % 2], outputs)
    torch.cuda.synchronize()
    differ = sum(not all(torch.equal(o.nan_to_num(7.0), r.nan_to_num(7.0))
                         for o, r in zip(outputs, alone[i % 2]))
                 for i, outputs in enumerate(runs))
    assert differ == 0, f"{differ} of {calls} calls differ from alone"
