"""The PyTorch front end's models on the GPU: workloads A and B and a
transformer-style MLP block through torch.compile(backend="fusion") and
fusion.compile (test_frontend.py checks them; scripts/bench's `models`
and `host-overhead` suites time them), a training step's gradients, and
CUDA-graph capture.

prepare() (build machine: compiler, no GPU) fills the library cache for
sm_90 with every library the checks and those suites load.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
import fusion.dynamo

from gpu.helpers import TARGET, relative_error

class WorkloadA(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.linear = nn.Linear(k, n)

    def forward(self, x):
        return F.leaky_relu(self.linear(x) * 2.0, 0.1)


class WorkloadB(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.linear = nn.Linear(k, n)
        self.scale = nn.Parameter(torch.rand(n) * 3 - 1.5)
        self.bn = nn.BatchNorm1d(n)

    def forward(self, x):
        return self.bn(self.linear(x) * self.scale)


class MLPBlock(nn.Module):
    """LayerNorm -> linear -> GELU -> linear -> residual."""

    def __init__(self, d, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, hidden)
        self.down = nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


def workloads():
    """(name, model factory, input shape, whole-module AOT possible)."""
    return [("A 1024x8192x8192", lambda: WorkloadA(8192, 8192),
             (1024, 8192), True),
            ("B 16384x4096x4096 train", lambda: WorkloadB(4096, 4096),
             (16384, 4096), True),
            ("MLP 8x512x1024>4096", lambda: MLPBlock(1024, 4096),
             (8, 512, 1024), False)]


# (name, model dtype, fusion precision option, eager allows tf32)
PRECISIONS = [("fp32", torch.float32, "", False),
              ("tf32", torch.float32, "tf32", True),
              ("bf16", torch.bfloat16, "", False)]


def options(precision, **extra):
    return dict({"target": TARGET, "precision": precision}, **extra)


def prepare():
    """Compiles (into the cache) what `run` loads, on CPU tensors of the
    same shapes and dtypes: the graphs do not depend on the device."""
    graph_case = ("graph", lambda: WorkloadB(256, 192).eval(), (100, 256),
                  False)
    # test_call_path's running statistics written in place.
    in_place_case = ("B small train", lambda: WorkloadB(256, 192),
                     (100, 256), False)
    for name, make, shape, aot in workloads() + [tiny(), graph_case,
                                                 in_place_case]:
        for pname, dtype, precision, _ in PRECISIONS:
            torch.manual_seed(0)
            model = make().to(dtype)
            x = torch.randn(*([2, 3] if len(shape) == 3 else [4]), shape[-1],
                            dtype=dtype)
            torch._dynamo.reset()
            with torch.no_grad():
                torch.compile(model, backend="fusion", options=options(
                    precision, compile_only=True))(x)
                # MLP: also with inductor compiling the rest; the in-place
                # case: as its graph module (test_call_path's fallback).
                other = "inductor" if name.startswith("MLP") else \
                    "eager" if name == in_place_case[0] else None
                if other:
                    torch._dynamo.reset()
                    torch.compile(model, backend="fusion", options=options(
                        precision, compile_only=True, fallback=other))(x)
            if aot:
                fusion.compile(model, (x,), target=TARGET,
                               precision=precision or None)
            print(f"prepared {name} {pname}: {fusion.dynamo.last_fused}",
                  flush=True)
            if pname == "fp32" and not name.startswith("graph"):
                # The training step's forward and backward graphs.
                torch._dynamo.reset()
                torch.compile(model, backend="fusion", options=options(
                    precision, compile_only=True))(
                        x.requires_grad_()).sum().backward()
                print(f"prepared {name} training step: "
                      f"{fusion.dynamo.last_fused}", flush=True)


def tiny():
    return ("tiny 8x64x64", lambda: WorkloadA(64, 64), (8, 64), True)


# ||out - ref|| / ||ref|| bounds of the front end's checks.
BOUNDS = {"fp32": 1e-5, "tf32": 5e-3, "bf16": 2e-2}


def training_step(name, make, shape, aot):
    """torch.compile(backend="fusion") on a training step, fp32: the
    relative error of the gradients of the inputs and parameters against
    float64 eager, eager fp32's, and the number of partitions fused."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    model = make().cuda()
    reference = make().double().cuda()
    reference.load_state_dict(model.state_dict())
    x = torch.randn(*shape, device="cuda")
    weights = torch.randn(model(x).shape, device="cuda")
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="fusion", options=options(""))

    def step(module, inputs):
        inputs = inputs.detach().requires_grad_()
        module.zero_grad(set_to_none=True)
        (module(inputs) * weights.to(inputs.dtype)).sum().backward()
        return [inputs.grad] + [p.grad for p in module.parameters()]

    grads = step(compiled, x)
    fused = len(fusion.dynamo.last_fused)
    expected = step(reference, x.double())
    eager = step(model, x)

    def error(found):
        # Over all gradients together: some are zero in exact arithmetic
        # (a bias before a batch norm), which a per-tensor ratio would
        # divide by.
        return (sum((g.double() - e).norm() ** 2
                    for g, e in zip(found, expected)) /
                sum(e.norm() ** 2 for e in expected)).sqrt().item()

    return error(grads), error(eager), fused


def cuda_graph_capture():
    """The relative error against float64 of the torch.compile'd model
    captured in a CUDA graph and replayed on new inputs."""
    torch.manual_seed(0)
    model = WorkloadB(256, 192).cuda().eval()
    x = torch.randn(100, 256, device="cuda")
    with torch.no_grad():
        torch._dynamo.reset()
        dynamo = torch.compile(model, backend="fusion",
                               options=options(""))
        dynamo(x)
        out = torch.full((100, 192), float("nan"), device="cuda")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out.copy_(dynamo(x))
        x.copy_(torch.randn(100, 256, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        reference = model.double()(x.double())
    return relative_error(out, reference)
