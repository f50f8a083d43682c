"""What the GPU checks share: the ctypes loader of fusion-compiled libraries
(and their .json signatures), poisoned outputs, the float64 comparison,
the workloads' inputs and PyTorch models, the identity layer that feeds
chosen values to an epilogue, and the compiled modules' raw entry point.

Needs PyTorch; a CUDA device only where a function touches one.
"""
import ctypes
import json
import pathlib

import torch
import torch.nn as nn
import torch.nn.functional as F

from fusion.dtypes import TORCH_DTYPES

ROOT = pathlib.Path(__file__).resolve().parents[3]
# The target of the libraries compiled into the cache (the H100/H200).
TARGET = "sm_90"
# ||out - ref|| / ||ref|| bounds of the compiled libraries (fusion-compile:
# workloads, examples, multi-target, residual epilogues) by precision.
LIBRARY_BOUNDS = {"fp32": 1e-5, "tf32": 2e-3, "bf16": 2e-2, "f16": 2e-2}
# The front end's checks (zoo, family, reductions, intermediates): name ->
# (dtype, fusion precision option, bound against float64).
PRECISIONS = {"fp32": (torch.float32, None, 1e-5),
              "tf32": (torch.float32, "tf32", 5e-3),
              "bf16": (torch.bfloat16, None, 2e-2)}
DTYPES = {"fp32": torch.float32, "tf32": torch.float32,
          "bf16": torch.bfloat16, "f16": torch.float16}


def need(path):
    """`path`, or a skip naming it where the artifacts lack it."""
    path = pathlib.Path(path)
    if not path.exists():
        import pytest
        pytest.skip(f"{path} is not in the artifacts (scripts/gpu-check.sh "
                    f"build)")
    return path


class Library:
    """A fusion-compiled library and its signature file, through ctypes."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.lib = ctypes.CDLL(str(self.path))
        self.lib.fusion_last_error_message.restype = ctypes.c_char_p
        signature = json.loads(self.path.with_suffix(".json").read_text())
        self.entries = {e["name"]: e for e in signature["entry_points"]}

    def arguments(self, name, batch, inputs, outputs, stream=None):
        """The ctypes arguments of one call (device pointers or tensors)."""
        entry = self.entries[name]
        args = [ctypes.c_void_p(stream if stream is not None else
                                torch.cuda.current_stream().cuda_stream)]
        if entry["batch"]:
            args.append(ctypes.c_int64(batch))
        args += [ctypes.c_void_p(t if isinstance(t, int) else t.data_ptr())
                 for t in list(inputs) + list(outputs)]
        return args

    def function(self, name):
        fn = getattr(self.lib, name)
        fn.restype = ctypes.c_int32
        return fn

    def call(self, name, batch, inputs, outputs, stream=None):
        """(status, error message) of one call."""
        status = self.function(name)(
            *self.arguments(name, batch, inputs, outputs, stream))
        return status, self.lib.fusion_last_error_message().decode()

    def run(self, name, batch, inputs, outputs):
        status, message = self.call(name, batch, inputs, outputs)
        if status != 0:
            raise RuntimeError(f"{self.path.name}:{name}: status {status}: "
                               f"{message}")

    def bound_call(self, name, batch, inputs, outputs):
        """A call with its arguments converted once: the floor of the host
        time of any front end (the benchmarks' bare call)."""
        fn = self.function(name)
        args = self.arguments(name, batch, inputs, outputs)
        return lambda: fn(*args)


def compile_only_cases(label, cases, make, name):
    """prepare.py's entries of torch.compile checks: each case's libraries
    compiled for sm_90 from CPU tensors (`make(case, "cpu")` gives the
    module, its input and the backend options), named `label` and
    `name(case)`."""
    for case in cases:
        def compile_one(case=case):
            module, x, options = make(case, "cpu")
            torch._dynamo.reset()
            with torch.no_grad():
                torch.compile(module, backend="fusion", options={
                    **options, "compile_only": True})(x)
        yield f"{label} {name(case)}", compile_one


def poisoned(shape, dtype=torch.float32, device="cuda"):
    """A tensor of NaN, so that an element a kernel leaves unwritten
    shows."""
    return torch.full(list(shape), float("nan"), device=device, dtype=dtype)


def poisoned_outputs(entry, batch, dtype=None, device="cuda"):
    """An entry point's outputs at `batch` (its signature's shapes and
    element types, or `dtype`), NaN until written."""
    return [poisoned([batch if d is None else d for d in o["shape"]],
                     dtype or TORCH_DTYPES[o["dtype"]], device)
            for o in entry["outputs"]]


def relative_error(out, reference, floor=None):
    """||out - reference|| / ||reference|| in float64 (the norm of the
    reference at least `floor` where given)."""
    out, reference = out.double(), reference.double()
    norm = reference.norm()
    if floor is not None:
        norm = norm.clamp_min(floor)
    return ((out - reference).norm() / norm).item()


def state_error(model, reference):
    """The largest relative error of `model`'s floating buffers (running
    statistics) against `reference`'s float64 ones."""
    return max([relative_error(model.get_buffer(n), b, 1e-30)
                for n, b in reference.named_buffers()
                if b.dtype == torch.float64], default=0.0)


def precision_setup(precision):
    """PyTorch's GEMMs in tf32 for the tf32 precision alone."""
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"


def cuda_malloc(nbytes):
    """A device allocation of exactly `nbytes`, outside PyTorch's pools (a
    pooled tensor sits in a larger allocation, which hides its size)."""
    cudart = ctypes.CDLL("libcudart.so.13")
    ptr = ctypes.c_void_p()
    assert cudart.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(nbytes)) == 0
    return ptr.value


# ------------------------------------------------------------ the workloads
# scripts/gpu/make_models.py writes them as fusion-dialect modules: (A)
# leaky_relu(linear(x) * 2.0, 0.1), (B) batch_norm_training(linear(x) *
# scale), (G) the GEMM alone; here as PyTorch computes them (inputs in
# entry-point order).

def model_a(x, w, b):
    return [F.leaky_relu(F.linear(x, w, b) * 2.0, 0.1)]


def model_g(x, w, b):
    return [F.linear(x, w, b)]


def model_b(x, w, b, s, g, beta, rm, rv):
    rm, rv = rm.clone(), rv.clone()
    y = F.batch_norm(F.linear(x, w, b) * s, rm, rv, g, beta, training=True,
                     momentum=0.1, eps=1e-5)
    return [y, rm, rv]


MODELS = {"a": model_a, "b": model_b, "g": model_g}


def make_inputs(kind, m, k, n, dtype):
    """Random inputs of workload `kind` at M x K -> N, on the GPU."""
    g = lambda *shape: torch.randn(*shape, device="cuda").to(dtype)
    scale = 1.0 / k ** 0.5
    x, w, b = g(m, k), (g(n, k) * scale).to(dtype), g(n)
    if kind != "b":
        return [x, w, b]
    s = torch.rand(n, device="cuda").mul(3).sub(1.5).to(dtype)  # +/- scales
    gamma, beta = g(n), g(n)
    rm = g(n)
    rv = torch.rand(n, device="cuda").add(0.5).to(dtype)
    return [x, w, b, s, gamma, beta, rm, rv]


def workload_kind(name):
    """The workload of an entry point: a_..., b_..., g_... (and the
    examples)."""
    return ("a" if name.startswith(("a_", "linear_leaky")) else
            "g" if name.startswith("g_") else "b")


class LinearLeakyRelu(nn.Module):
    """(A) as users write it: Linear + multiply by 2.0 + LeakyReLU(0.1)."""

    def __init__(self, in_features=8192, out_features=8192):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.act = nn.LeakyReLU(0.1)

    def forward(self, x):
        return self.act(self.linear(x) * 2.0)


class LinearScaleBatchNorm(nn.Module):
    """(B) as users write it: Linear + `x * self.scale` + BatchNorm1d in
    training mode."""

    def __init__(self, in_features=4096, out_features=4096):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.rand(out_features) * 3 - 1.5)
        self.bn = nn.BatchNorm1d(out_features, eps=1e-5, momentum=0.1)

    def forward(self, x):
        return self.bn(self.linear(x) * self.scale)


# The modules fusion.compile saves for fusion.load (prepare.py): name ->
# (module class, batch size of the check).
SAVED_WORKLOADS = {"A": (LinearLeakyRelu, 1024),
                   "B": (LinearScaleBatchNorm, 16384)}
SAVED_PRECISIONS = ("fp32", "tf32", "bf16")


# ------------------------------------------------------ compiled modules

def run_poisoned(compiled, x, mode=None):
    """A fusion.compile'd module's entry point called on `x` with NaN-filled
    outputs (so that an element it does not write shows); returns the
    first output."""
    library = compiled._library
    entry = compiled._entries[mode or compiled._mode()]
    tensors = compiled._arguments(entry, (x,))
    spec = library.entries[entry.name]
    batch = x.shape[0]
    outputs = [poisoned([batch if d is None else d for d in o["shape"]],
                        x.dtype) for o in spec["outputs"]]
    status = library._function(entry.name)(
        torch.cuda.current_stream().cuda_stream,
        *([batch] if spec["batch"] else []),
        *[t.data_ptr() for t in tensors + outputs])
    assert status == 0, library._lib.fusion_last_error_message()
    torch.cuda.synchronize()
    return outputs[0]


def bare_call(compiled, inputs):
    """A fusion.compile'd module's entry point through ctypes with
    everything prepared: the floor of any Python front end."""
    library = compiled._library
    entry = compiled._entries[compiled._mode()]
    tensors = compiled._arguments(entry, inputs)
    spec = library.entries[entry.name]
    batch = inputs[0].shape[0]
    outputs = [torch.empty([batch if d is None else d for d in o["shape"]],
                           dtype=tensors[0].dtype, device="cuda")
               for o in spec["outputs"]]
    function = library._function(entry.name)
    stream = torch.cuda.current_stream().cuda_stream
    args = [ctypes.c_void_p(stream)] + \
        ([ctypes.c_int64(batch)] if spec["batch"] else []) + \
        [ctypes.c_void_p(t.data_ptr()) for t in tensors + outputs]
    return lambda: function(*args)


# ------------------------------------------------------ the identity layer
# The vehicle of the checks that feed chosen values to an epilogue
# (remainders, trigonometry, special functions): a linear layer whose
# weight is the identity, so that every GEMM precision computes x exactly
# for bf16 x, and the epilogue adds the bias in f32 as PyTorch does.

FEATURES = 512
ROWS = 4096


class IdentityLayer(nn.Module):
    """`body(x + bias, parameter)`, the sum an identity GEMM's epilogue's."""

    def __init__(self, body, bias=None, parameter=None):
        super().__init__()
        self.linear = nn.Linear(FEATURES, FEATURES)
        with torch.no_grad():
            self.linear.weight.copy_(torch.eye(FEATURES))
            self.linear.bias.copy_(torch.zeros(FEATURES) if bias is None
                                   else bias)
        self.parameter = None if parameter is None else nn.Parameter(parameter)
        self.body = body

    def forward(self, x):
        return self.body(self.linear(x), self.parameter)


def spread(count, low, high, generator, bf16=True):
    """`count` values of either sign, mantissas uniform in [1, 2), exponents
    uniform in [low, high]; rounded to bf16's where `bf16`."""
    mantissa = torch.rand(count, generator=generator) + 1.0
    exponent = torch.randint(low, high + 1, (count,),
                             generator=generator).float()
    sign = torch.randint(0, 2, (count,), generator=generator) * 2.0 - 1.0
    values = sign * mantissa * torch.exp2(exponent)
    return values.to(torch.bfloat16).float() if bf16 else values


def ulps(out, exact, magnitude=None):
    """|out - exact| in ulps of the f32 nearest exact (or `magnitude`;
    2^-149 below normals); 0 where both are NaN or both are the same zero,
    infinity where one is NaN alone or a zero's sign differs."""
    nearest = exact.float()
    scale = nearest if magnitude is None else magnitude.float()
    exponent = torch.frexp(scale).exponent.clamp(min=-125).double()
    error = (out.double() - exact).abs() / torch.exp2(exponent - 24)
    both_nan = out.isnan() & exact.isnan()
    error = torch.where(both_nan, torch.zeros_like(error), error)
    error = torch.where(out.isnan() ^ exact.isnan(),
                        torch.full_like(error, float("inf")), error)
    zero = nearest == 0
    same_bits = out.view(torch.int32) == nearest.view(torch.int32)
    return torch.where(zero & ~same_bits, torch.full_like(error, float("inf")),
                       error)
