#!/usr/bin/env python3
"""Checks fusion-compiled libraries against PyTorch on a GPU and times them.

Needs CUDA, PyTorch and the artifacts of `scripts/gpu-check.sh build`; not
the compiler. Correctness: fresh random inputs, outputs poisoned with NaN,
||out - ref|| / ||ref|| against a float64 reference, per-precision bounds,
running statistics included, several batch sizes through each library,
bad arguments answered by an error status. Timing: CUDA events, warm-up,
median, in one run: fusion, PyTorch eager, torch.compile, and the raw cuBLAS
GEMM (torch.addmm) of the same shape. Prints a table last.
"""
import argparse
import ctypes
import datetime
import json
import pathlib
import statistics
import sys

import torch
import torch.nn.functional as F

BOUNDS = {"fp32": 1e-5, "tf32": 2e-3, "bf16": 2e-2, "f16": 2e-2}
# The signature files' element types (the dialect's names), from the package.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] /
                       "python_bindings"))
from fusion.dtypes import TORCH_DTYPES  # noqa: E402


class Library:
    """A fusion-compiled library and its signature file, through ctypes."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.lib = ctypes.CDLL(str(self.path))
        self.lib.fusion_last_error_message.restype = ctypes.c_char_p
        signature = json.loads(self.path.with_suffix(".json").read_text())
        self.entries = {e["name"]: e for e in signature["entry_points"]}

    def call(self, name, batch, inputs, outputs, stream=None):
        entry = self.entries[name]
        fn = getattr(self.lib, name)
        fn.restype = ctypes.c_int32
        args = [ctypes.c_void_p(stream if stream is not None else
                                torch.cuda.current_stream().cuda_stream)]
        if entry["batch"]:
            args.append(ctypes.c_int64(batch))
        args += [ctypes.c_void_p(t if isinstance(t, int) else t.data_ptr())
                 for t in list(inputs) + list(outputs)]
        status = fn(*args)
        return status, self.lib.fusion_last_error_message().decode()

    def run(self, name, batch, inputs, outputs):
        status, message = self.call(name, batch, inputs, outputs)
        if status != 0:
            raise RuntimeError(f"{self.path.name}:{name}: status {status}: "
                               f"{message}")


# The workloads, as PyTorch computes them (inputs in entry-point order).
def model_a(x, w, b):
    return [F.leaky_relu(F.linear(x, w, b) * 2.0, 0.1)]


def model_g(x, w, b):
    """The GEMM alone (identity epilogue)."""
    return [F.linear(x, w, b)]


MODELS = {"a": model_a, "g": model_g}


def model_b(x, w, b, s, g, beta, rm, rv):
    rm, rv = rm.clone(), rv.clone()
    y = F.batch_norm(F.linear(x, w, b) * s, rm, rv, g, beta, training=True,
                     momentum=0.1, eps=1e-5)
    return [y, rm, rv]


def make_inputs(kind, m, k, n, dtype):
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


def relative_error(out, ref):
    out, ref = out.double(), ref.double()
    return ((out - ref).norm() / ref.norm()).item()


def precision_setup(precision):
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"


def check(lib, name, kind, m, k, n, dtype, precision, failures, rows):
    inputs = make_inputs(kind, m, k, n, dtype)
    entry = lib.entries[name]
    outputs = [torch.full([m if d is None else d for d in o["shape"]],
                          float("nan"), device="cuda", dtype=dtype)
               for o in entry["outputs"]]
    lib.run(name, m, inputs, outputs)
    torch.cuda.synchronize()
    model = MODELS.get(kind, model_b)
    refs = model(*[t.double() for t in inputs])
    errors = [relative_error(o, r) for o, r in zip(outputs, refs)]
    bound = BOUNDS[precision]
    ok = all(e <= bound for e in errors)
    label = f"{lib.path.parent.name}/{lib.path.name}:{name} M={m}"
    rows.append((label, precision, errors, bound, ok))
    if not ok:
        failures.append(label)


def print_correctness(title, rows):
    """The rows `check` appended, as a table under `title`."""
    print(f"\n## Correctness ({title})\n")
    print("| case | precision | rel. errors | bound | ok |")
    print("|---|---|---|---|---|")
    for label, precision, errs, bound, ok in rows:
        print(f"| {label} | {precision} | "
              + ", ".join(f"{e:.2e}" for e in errs)
              + f" | {bound:.0e} | {'yes' if ok else 'NO'} |")


def check_many_batch_norms(lib, m, failures, rows):
    """The function of 64 training batch norms (test/Tools/fusion-compile/
    many-batch-norms.mlir): one x, per batch norm (w, b, s, gamma, beta,
    running mean, running var) in, (y, new mean, new var) out."""
    entry = lib.entries["many"]
    groups = len(entry["outputs"]) // 3
    k = entry["inputs"][0]["shape"][1]
    n = entry["outputs"][0]["shape"][1]
    x = torch.randn(m, k, device="cuda")
    inputs = [x]
    for _ in range(groups):
        inputs += make_inputs("b", m, k, n, torch.float32)[1:]
    outputs = [torch.full([m if d is None else d for d in o["shape"]],
                          float("nan"), device="cuda")
               for o in entry["outputs"]]
    precision_setup("fp32")
    lib.run("many", m, inputs, outputs)
    torch.cuda.synchronize()
    refs = []
    for i in range(groups):
        params = inputs[1 + 7 * i:1 + 7 * (i + 1)]
        refs += model_b(x.double(), *[t.double() for t in params])
    errors = [relative_error(o, r) for o, r in zip(outputs, refs)]
    bound = BOUNDS["fp32"]
    ok = all(e <= bound for e in errors)
    label = f"{lib.path.parent.name}/{lib.path.name}:many ({groups} BNs) M={m}"
    rows.append((label, "fp32", [max(errors)], bound, ok))
    if not ok:
        failures.append(label)


def cuda_malloc(nbytes):
    """A device allocation of exactly `nbytes`, outside PyTorch's pools (a
    pooled tensor sits in a larger allocation, which hides its size)."""
    cudart = ctypes.CDLL("libcudart.so.13")
    ptr = ctypes.c_void_p()
    assert cudart.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(nbytes)) == 0
    return ptr.value


def check_errors(lib, name, failures):
    """Bad arguments get an error status with a message, not a crash."""
    entry = lib.entries[name]
    k = entry["inputs"][0]["shape"][1]
    n = entry["outputs"][0]["shape"][1]
    x = torch.randn(8, k, device="cuda")
    w = torch.randn(n, k, device="cuda")
    b = torch.randn(n, device="cuda")
    out = torch.empty(8, n, device="cuda")
    # Half of the 8 rows the call writes, in the library's output type.
    element = torch.empty(
        0, dtype=TORCH_DTYPES[entry["outputs"][0]["dtype"]]).element_size()
    small = cuda_malloc(4 * n * element)
    misaligned = torch.empty(8 * n + 1, device="cuda")[1:].view(8, n)
    host = torch.empty(8, n)
    cases = {
        "null input": ([x, 0, b], [out]),
        "too small output": ([x, w, b], [small]),
        "misaligned output": ([x, w, b], [misaligned]),
        "host output": ([x, w, b], [host]),
    }
    results = []
    for what, (inputs, outputs) in cases.items():
        status, message = lib.call(name, 8, inputs, outputs)
        results.append((what, status, message))
        if status == 0:
            failures.append(f"{name}: {what} was accepted")
    return results


def profile(lib, name, kind, m, k, n, dtype, precision):
    """The kernels of one call and their GPU times."""
    precision_setup(precision)
    inputs = make_inputs(kind, m, k, n, dtype)
    outputs = [torch.empty([m if d is None else d for d in o["shape"]],
                           device="cuda", dtype=dtype)
               for o in lib.entries[name]["outputs"]]
    lib.run(name, m, inputs, outputs)
    torch.cuda.synchronize()
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        lib.run(name, m, inputs, outputs)
        torch.cuda.synchronize()
    return [(e.name, e.device_time) for e in prof.events()
            if e.device_time > 0]


def timed(fn, warmup=3, iters=10, back_to_back=10):
    """Median ms per call over `back_to_back` calls queued between two
    events, as a training or serving loop issues them: the host's time per
    call hides behind the GPU's when it is shorter. (One call between two
    events would time the idle GPU waiting for the host too.)"""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(back_to_back):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / back_to_back)
    return statistics.median(times)


def bench(libs, name, kind, m, k, n, dtype, precision, modes):
    """Times of one workload: fusion's libraries (by strategy), the cuBLAS
    GEMM alone, eager, torch.compile."""
    precision_setup(precision)
    inputs = make_inputs(kind, m, k, n, dtype)
    x, w, b = inputs[:3]
    model = MODELS.get(kind, model_b)
    times = {}
    for strategy, lib in libs.items():
        outputs = [torch.empty([m if d is None else d for d in o["shape"]],
                               device="cuda", dtype=dtype)
                   for o in lib.entries[name]["outputs"]]
        times[strategy] = timed(
            lambda: lib.run(name, m, inputs, outputs))
    times["gemm"] = timed(lambda: torch.addmm(b, x, w.t()))
    times["eager"] = timed(lambda: model(*inputs))
    for mode in modes:
        torch._dynamo.reset()
        compiled = torch.compile(model, mode=mode)
        times[f"compile:{mode or 'default'}"] = timed(lambda: compiled(*inputs))
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--artifacts", type=pathlib.Path, required=True)
    parser.add_argument("--out", type=pathlib.Path)
    parser.add_argument("--max-autotune", action="store_true",
                        help="also time torch.compile max-autotune-no-cudagraphs")
    parser.add_argument("--no-bench", action="store_true")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--precisions", default="fp32,tf32,bf16",
                        help="precisions to time, comma-separated")
    parser.add_argument("--workloads", default="A,B,B'",
                        help="workloads to time, comma-separated")
    parser.add_argument("--baseline", type=pathlib.Path,
                        help="artifacts of an earlier commit, timed beside "
                             "these in the same run (strategy@base)")
    parser.add_argument("--profile", action="store_true",
                        help="print the kernels of the batch-norm cases")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 0
    torch.manual_seed(0)
    info = dict(line.split("=", 1) for line in
                (args.artifacts / "BUILD_INFO").read_text().split())
    device = torch.cuda.get_device_name()

    failures, rows = [], []
    # Backend 1 libraries at the top, backend 2 (--strategy=tiled) in tiled/,
    # its fp32 on the CUDA cores (--fp32-math=simt) in simt/.
    strategies = {"cublas": args.artifacts, "tiled": args.artifacts / "tiled"}
    if (args.artifacts / "simt").is_dir():
        strategies["simt"] = args.artifacts / "simt"
    libs = {(strategy, p.stem): Library(p)
            for strategy, folder in strategies.items()
            for p in sorted(folder.glob("*.so"))}
    # The earlier commit's libraries: timed only, beside these.
    baseline = {}
    if args.baseline:
        base_info = dict(line.split("=", 1) for line in
                         (args.baseline / "BUILD_INFO").read_text().split())
        for strategy, folder in strategies.items():
            for p in sorted((args.baseline /
                             folder.relative_to(args.artifacts)).glob("*.so")):
                baseline[strategy + "@base", p.stem] = Library(p)
    dtype_of = {"f32": torch.float32, "bf16": torch.bfloat16,
                "f16": torch.float16}
    for (strategy, stem), lib in libs.items():
        if stem.startswith("workloads_"):
            parts = stem.split("_")
            dtype = dtype_of[parts[1]]
            precision = parts[2] if len(parts) > 2 else parts[1]
        else:
            dtype, precision = torch.float32, stem.rsplit("_", 1)[1]
        precision_setup(precision)
        for name, entry in lib.entries.items():
            kind = ("a" if name.startswith(("a_", "linear_leaky")) else
                    "g" if name.startswith("g_") else "b")
            k = entry["inputs"][0]["shape"][1]
            n = entry["outputs"][0]["shape"][1]
            batches = [1000, 77] if (k, n) in [(1000, 4000), (513, 129)] \
                else ([1024, 16384] if kind == "b" and k == 4096 else [1024])
            for m in batches if not args.no_check else []:
                check(lib, name, kind, m, k, n, dtype, precision, failures,
                      rows)
    for lib_path in sorted((args.artifacts / "many").glob("*.so")):
        if not args.no_check:
            check_many_batch_norms(Library(lib_path), 77, failures, rows)
    print("\ncorrectness: ||out - ref|| / ||ref|| per output (f64 reference)")
    for label, precision, errors, bound, ok in rows:
        print(f"  {'ok  ' if ok else 'FAIL'} {label:66s} {precision:5s} "
              + " ".join(f"{e:.2e}" for e in errors) + f" (bound {bound:.0e})")
    error_rows = []
    # The ragged workload's library, or the example's (scripts/run-example.sh
    # compiles only the examples).
    for strategy in ("cublas", "tiled"):
        for stem, name in [("workloads_f32_fp32", "a_513x129"),
                           ("linear_leaky_relu_fp32", "linear_leaky_relu")]:
            if (strategy, stem) in libs:
                error_rows += check_errors(libs[strategy, stem], name,
                                           failures)
                break
    print("\nbad arguments (expect a non-zero status and a message):")
    for what, status, message in error_rows:
        print(f"  {what:20s} status {status}: {message}")

    if args.profile:
        for stem, dtype, precision in [("workloads_f32_tf32", torch.float32,
                                        "tf32"),
                                       ("workloads_bf16", torch.bfloat16,
                                        "bf16")]:
            for m, k, n in [(16384, 4096, 4096), (1024, 8192, 8192)]:
                print(f"\nkernels of b_{k}x{n} M={m} {precision}:")
                for strategy in ("cublas", "tiled"):
                    for kernel, us in profile(libs[strategy, stem],
                                              f"b_{k}x{n}", "b", m, k, n,
                                              dtype, precision):
                        print(f"  {strategy:6s} {us:9.1f} us  {kernel[:80]}")

    table = []
    if not args.no_bench:
        modes = [None] + (["max-autotune-no-cudagraphs"]
                          if args.max_autotune else [])
        cases = [("A", "a", 1024, 8192, 8192, "a_8192x8192"),
                 ("B", "b", 16384, 4096, 4096, "b_4096x4096"),
                 ("B'", "b", 1024, 8192, 8192, "b_8192x8192")]
        for precision, stem, dtype in [("fp32", "workloads_f32_fp32",
                                        torch.float32),
                                       ("tf32", "workloads_f32_tf32",
                                        torch.float32),
                                       ("bf16", "workloads_bf16",
                                        torch.bfloat16)]:
            if precision not in args.precisions.split(","):
                continue
            for label, kind, m, k, n, name in cases:
                if label not in args.workloads.split(","):
                    continue
                timed_libs = {strategy: libs[strategy, stem]
                              for strategy in strategies
                              if (strategy, stem) in libs}
                timed_libs.update({key: lib for (key, lib_stem), lib
                                   in baseline.items() if lib_stem == stem})
                times = bench(timed_libs, name, kind, m, k, n, dtype,
                              precision, modes)
                table.append((label, f"{m}x{k}x{n}", precision, times))
                print(f"  timed {label} {precision}: " + ", ".join(
                    f"{key} {value:.3f} ms" for key, value in times.items()),
                    flush=True)

    lines = [f"device: {device}; torch {torch.__version__}; "
             f"date {datetime.date.today()}; fusion commit {info['commit']} "
             f"(built {info['date']})"
             + (f"; baseline (@base) commit {base_info['commit']}"
                if args.baseline else ""), ""]
    if table:
        # Times in ms; ratios against cublas (backend 1) and tiled (backend
        # 2); TFLOP/s of each whole fused op.
        keys = list(dict.fromkeys(k for row in table for k in row[3]))
        compiles = [k for k in keys if k.startswith("compile")]
        lines.append("| workload | MxKxN | precision | " +
                     " | ".join(f"{k} ms" for k in keys) +
                     " | tiled TFLOP/s | gemm TFLOP/s | "
                     "cublas/gemm | tiled/gemm | eager/tiled | " +
                     " | ".join(f"{k}/tiled" for k in compiles) + " |")
        lines.append("|" + "---|" * (3 + len(keys) + 5 + len(compiles)))
        for label, shape, precision, t in table:
            m, k, n = map(int, shape.split("x"))
            tflops = lambda ms: 2 * m * n * k / (ms * 1e-3) / 1e12
            tiled = t["tiled"]
            lines.append(
                f"| {label} | {shape} | {precision} | " +
                " | ".join(f"{t[k]:.3f}" if k in t else "" for k in keys) +
                f" | {tflops(tiled):.0f} | {tflops(t['gemm']):.0f}"
                f" | {t['cublas'] / t['gemm']:.3f}"
                f" | {tiled / t['gemm']:.3f} | {t['eager'] / tiled:.2f} | " +
                " | ".join(f"{t[k] / tiled:.2f}" for k in compiles) + " |")
    if table and baseline:
        # This commit against the baseline, same run: time ratios (< 1:
        # faster now).
        bases = sorted({key for key, _ in baseline})
        lines.append("")
        lines.append("| workload | precision | " + " | ".join(
            f"{b.split('@')[0]} ms now / base" for b in bases) + " |")
        lines.append("|" + "---|" * (2 + len(bases)))
        for label, shape, precision, t in table:
            cells = []
            for b in bases:
                now = b.split("@")[0]
                cells.append(f"{t[now]:.3f} / {t[b]:.3f} = "
                             f"{t[now] / t[b]:.3f}"
                             if now in t and b in t else "")
            lines.append(f"| {label} | {precision} | " + " | ".join(cells)
                         + " |")
    lines.append("")
    lines.append(f"correctness: {len(rows) - sum(not r[4] for r in rows)}/"
                 f"{len(rows)} cases within bounds; "
                 f"{len(error_rows)} bad-argument cases rejected: "
                 f"{'yes' if not any(f.endswith('accepted') for f in failures) else 'NO'}")
    if failures:
        lines.append("FAILURES: " + "; ".join(failures))
    text = "\n".join(lines)
    print("\n" + text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "benchmarks.md").write_text(text + "\n")
        (args.out / "results.json").write_text(json.dumps(
            {"device": device, "rows": [(r[0], r[1], r[2], r[3], r[4])
                                        for r in rows],
             "table": table}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
