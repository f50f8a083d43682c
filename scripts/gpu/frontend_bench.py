#!/usr/bin/env python3
"""The PyTorch front end on the GPU: workloads A and B and a
transformer-style MLP block through torch.compile(backend="fusion") and
fusion.compile, against eager, torch.compile (inductor) and the bare library
call; host overhead per call at tiny shapes; CUDA-graph capture.

    frontend_bench.py prepare   (build machine: compiler, no GPU) fills the
        library cache ($FUSION_CACHE_DIR) for sm_90 with every library the
        run needs;
    frontend_bench.py run       (GPU machine, no compiler) checks and times
        everything and prints the tables last.
"""
import copy
import ctypes
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
import fusion.dynamo

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from check_and_bench import timed  # noqa: E402

TARGET = "sm_90"


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
    for name, make, shape, aot in workloads() + [tiny(), graph_case]:
        for pname, dtype, precision, _ in PRECISIONS:
            torch.manual_seed(0)
            model = make().to(dtype)
            x = torch.randn(*([2, 3] if len(shape) == 3 else [4]), shape[-1],
                            dtype=dtype)
            torch._dynamo.reset()
            with torch.no_grad():
                torch.compile(model, backend="fusion", options=options(
                    precision, compile_only=True))(x)
                if name.startswith("MLP"):
                    torch._dynamo.reset()
                    torch.compile(model, backend="fusion", options=options(
                        precision, compile_only=True, fallback="inductor"))(x)
            if aot:
                fusion.compile(model, (x,), target=TARGET,
                               precision=precision or None)
            print(f"prepared {name} {pname}: {fusion.dynamo.last_fused}",
                  flush=True)
            if pname == "fp32" and not name.startswith("graph"):
                # The training step's forward graph (with gradients).
                torch._dynamo.reset()
                torch.compile(model, backend="fusion", options=options(
                    precision, compile_only=True))(x.requires_grad_())
                print(f"prepared {name} training step: "
                      f"{fusion.dynamo.last_fused}", flush=True)


def tiny():
    return ("tiny 8x64x64", lambda: WorkloadA(64, 64), (8, 64), True)


def timed_graph(fn):
    """`fn` captured in a CUDA graph, timed by replays: its GPU time without
    host overhead."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return timed(graph.replay)


def relative_error(out, reference):
    return ((out.double() - reference).norm() / reference.norm()).item()


BOUNDS = {"fp32": 1e-5, "tf32": 5e-3, "bf16": 2e-2}


def bare_call(compiled, inputs):
    """The library's entry point through ctypes with everything prepared:
    the floor of any Python front end."""
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


def run_poisoned(compiled, x):
    """The library's entry point called on `x` with NaN-filled outputs (so
    that an element it does not write shows); returns the first output."""
    library = compiled._library
    entry = compiled._entries["train"]
    tensors = compiled._arguments(entry, (x,))
    spec = library.entries[entry.name]
    batch = x.shape[0]
    outputs = [torch.full([batch if d is None else d for d in o["shape"]],
                          float("nan"), device="cuda", dtype=x.dtype)
               for o in spec["outputs"]]
    status = library._function(entry.name)(
        torch.cuda.current_stream().cuda_stream,
        *([batch] if spec["batch"] else []),
        *[t.data_ptr() for t in tensors + outputs])
    assert status == 0, library._lib.fusion_last_error_message()
    torch.cuda.synchronize()
    return outputs[0]


def run():
    rows, failures = [], []
    device = torch.cuda.get_device_name()
    for name, make, shape, aot in workloads():
        for pname, dtype, precision, allow_tf32 in PRECISIONS:
            torch.backends.cuda.matmul.allow_tf32 = allow_tf32
            torch.manual_seed(0)
            model = make().to(dtype).cuda()
            reference_model = make().double().cuda()
            reference_model.load_state_dict(model.state_dict())
            x = torch.randn(*shape, device="cuda", dtype=dtype)
            torch._dynamo.reset()
            with torch.no_grad():
                reference = reference_model(x.double())
                eager = lambda: model(x)
                dynamo = torch.compile(model, backend="fusion",
                                       options=options(precision))
                out = dynamo(x)
                fused = fusion.dynamo.last_fused
                error = relative_error(out, reference)
                ops = sum(fused, [])
                ok = error <= BOUNDS[pname] and len(fused) >= 1 and (
                    not name.startswith("B") or
                    any("batch_norm" in op for op in ops))
                times = {"eager": timed(eager),
                         "fusion dynamo": timed(lambda: dynamo(x)),
                         "dynamo in CUDA graph": timed_graph(
                             lambda: dynamo(x))}
                if aot:
                    compiled = fusion.compile(model, (x,), target=TARGET,
                                              precision=precision or None)
                    aot_error = relative_error(compiled(x), reference)
                    ok = ok and aot_error <= BOUNDS[pname]
                    times["fusion.compile"] = timed(lambda: compiled(x))
                    times["bare library"] = timed(bare_call(compiled, (x,)))
                if name.startswith("MLP"):
                    torch._dynamo.reset()
                    rest = torch.compile(model, backend="fusion",
                                         options=options(
                                             precision, fallback="inductor"))
                    ok = ok and relative_error(rest(x), reference) <= \
                        BOUNDS[pname] and len(fusion.dynamo.last_fused) == 1
                    times["fusion + inductor"] = timed(lambda: rest(x))
                torch._dynamo.reset()
                inductor = torch.compile(model)
                inductor(x)
                times["torch.compile"] = timed(lambda: inductor(x))
            rows.append((name, pname, error, ok, times, len(fused)))
            if not ok:
                failures.append(f"{name} {pname}: error {error:.3g}, "
                                f"fused {fused}")
            print(name, pname, f"{error:.2e}", times, flush=True)
    steps = [training_step(*w) for w in workloads()]
    failures += [f"training step {row[0]}: gradient error {row[1]:.3g}"
                 for row in steps if not row[1] <= 1e-5]
    overhead = host_overhead()
    graph_ok = cuda_graph_capture()
    print(f"\n## Front end, {device}, torch {torch.__version__}")
    print("| workload | precision | rel. err | eager ms | torch.compile ms "
          "| fusion dynamo ms | dynamo in CUDA graph ms | fusion.compile ms "
          "| bare library ms | fusion + inductor ms | dynamo/bare | graph/bare "
          "| vs eager | vs torch.compile |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, pname, error, ok, t, _ in rows:
        bare = t.get("bare library")
        print(f"| {name} | {pname} | {error:.1e}{'' if ok else ' FAIL'} | "
              f"{t['eager']:.3f} | {t['torch.compile']:.3f} | "
              f"{t['fusion dynamo']:.3f} | {t['dynamo in CUDA graph']:.3f} | "
              f"{t.get('fusion.compile', float('nan')):.3f} | "
              f"{bare if bare else float('nan'):.3f} | "
              f"{t.get('fusion + inductor', float('nan')):.3f} | "
              f"{t['fusion dynamo'] / bare if bare else float('nan'):.3f} | "
              f"{t['dynamo in CUDA graph'] / bare if bare else float('nan'):.3f} | "
              f"{t['eager'] / t['fusion dynamo']:.2f}x | "
              f"{t['torch.compile'] / t['fusion dynamo']:.2f}x |")
    print("\n| training step (fp32, forward + backward) | grad rel. err "
          "fusion | grad rel. err eager fp32 | eager ms | fusion dynamo ms | "
          "partitions fused |")
    print("|---|---|---|---|---|---|")
    for name, error, eager_error, eager_ms, fusion_ms, fused in steps:
        print(f"| {name} | {error:.1e} | {eager_error:.1e} | {eager_ms:.3f} "
              f"| {fusion_ms:.3f} | {fused} |")
    print("\n| host time per call, tiny 8x64x64 (us) | value |")
    print("|---|---|")
    for key, value in overhead.items():
        print(f"| {key} | {value:.2f} |")
    print(f"\nCUDA graph capture of the torch.compile'd model: "
          f"{'ok' if graph_ok else 'FAILED'}")
    print("failures:", failures or "none")
    return 1 if failures or not graph_ok else 0


def training_step(name, make, shape, aot):
    """torch.compile(backend="fusion") on a training step, fp32: gradients
    of the inputs and parameters against float64 eager, and the time of
    forward + backward."""
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

    return (name, error(grads), error(eager),
            timed(lambda: step(model, x), iters=5),
            timed(lambda: step(compiled, x), iters=5), fused)


def host_overhead(calls=3000):
    """Host time per call (us), measured as the CPU time of many calls at a
    shape whose kernels take a few microseconds."""
    name, make, shape, _ = tiny()
    torch.manual_seed(0)
    model = make().cuda()
    x = torch.randn(*shape, device="cuda")
    results = {}
    with torch.no_grad():
        compiled = fusion.compile(model, (x,), target=TARGET)
        dynamo = torch.compile(model, backend="fusion",
                               options=options(""))
        dynamo(x)
        run_bare = bare_call(compiled, (x,))
        linear = model.linear
        inductor = torch.compile(copy.deepcopy(model))
        inductor(x)
        cases = {"torch.compile (inductor)": lambda: inductor(x),
                 "bare C ABI call (ctypes)": run_bare,
                 "fusion.compile module": lambda: compiled(x),
                 "torch.compile(backend=fusion)": lambda: dynamo(x),
                 "eager F.linear alone": lambda: F.linear(x, linear.weight,
                                                          linear.bias),
                 "eager model": lambda: model(x)}
        for case, fn in cases.items():
            try:
                for _ in range(50):
                    fn()
                torch.cuda.synchronize()
                start = time.perf_counter()
                for _ in range(calls):
                    fn()
                results[case] = (time.perf_counter() - start) / calls * 1e6
                torch.cuda.synchronize()
            except Exception as error:  # noqa: BLE001
                print(f"{case}: {error}")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            dynamo(x)
        start = time.perf_counter()
        for _ in range(calls):
            graph.replay()
        results["CUDA graph replay (same model)"] = \
            (time.perf_counter() - start) / calls * 1e6
        torch.cuda.synchronize()
    return results


def cuda_graph_capture():
    """The torch.compile'd model captured in a CUDA graph, replayed on new
    inputs, against float64."""
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
    error = relative_error(out, reference)
    print(f"CUDA graph: relative error {error:.2e}")
    return error <= 1e-5


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare()
    else:
        sys.exit(run())
