#!/usr/bin/env python3
"""Where a transformer-zoo training step's time goes (issue 67's misses):
the step of transformers-train (forward, the mean of the last hidden
state, backward, AdamW) under torch.profiler, its GPU time split by kernel
kind and its idle time (the GPU waiting for the host).

  profile_step.py prepare CACHE [--cases C;...]
      (build machine) compiles the cases' libraries into CACHE from a
      model on the meta device, as tests/gpu/prepare.py does.
  profile_step.py run [--cases C;...] [--steps N] [--trace DIR]
      (GPU machine, FUSION_CACHE_DIR set) profiles N steps of each case
      after warm-up and prints one table a case: per step the span, the
      GPU's busy and idle time, the idle gaps over 20 us, the kernel time
      by kind, and the longest kernels; with --by-shape, each GEMM op's
      (PyTorch's; fusion's library calls, fusion::call) device time by its
      input shapes; with --host, what the host ran while the GPU waited:
      each idle gap's time split by the host's ops overlapping it (their
      record_function scopes, three levels deep).

A case is MODEL:PRECISION:BACKEND[:FUSE_BACKWARD][:OPTION=VALUE...], e.g.
gpt2:bf16:fusion, gpt2:fp32:fusion:on, gpt2:fp32:fusion:k_major_copies=off,
llama:bf16:inductor, gpt2:bf16:eager, vit:bf16:eager:dropout=0.1 (the
zoo model's hidden-state dropout, not a backend option); MODEL kbN is
KernelBench problem N
at its size (the loss its output's sum; precisions fp32, tf32, bf16), e.g.
kb33:bf16:fusion.
"""
import argparse
import collections
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2] / "python_bindings" / "tests"))

import torch  # noqa: E402

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
DEFAULT_CASES = ("gpt2:bf16:fusion;gpt2:bf16:inductor;llama:bf16:fusion;"
                 "llama:bf16:inductor;gpt2:fp32:fusion;gpt2:fp32:eager")
# Kernel kinds by name, first match wins; "other ATen" where none does.
KINDS = [("fusion", r"^fused_\d+|^\w+_\d+_(gemm|rows|elementwise|epilogue|"
                    r"batch_norm|moments)"),
         ("attention", r"flash|fmha|attention|_efficient_attention"),
         ("cuBLAS GEMM", r"nvjet|sm90_xmma|cutlass|gemm|sgemm|cublas"),
         ("inductor (Triton)", r"^triton_"),
         ("optimizer", r"multi_tensor_apply|adam"),
         ("copies and fills", r"[Cc]opy|fill|memset|Memcpy|Memset|cat")]
TOP_KERNELS = 25


def parse_case(text):
    """(model, precision, backend, backend options): the fourth part and
    those after it are NAME=VALUE options, or a fuse_backward value."""
    parts = text.split(":")
    model, precision, backend = parts[:3]
    options = dict(part.split("=", 1) if "=" in part
                   else ("fuse_backward", part) for part in parts[3:])
    return model, precision, backend, options


def options_of(backend, case_options, target=None):
    if backend != "fusion":
        return None
    options = dict(case_options)
    if target:
        options.update(target=target, compile_only=True)
    return options


def make_step(case, device):
    import fusion.dynamo  # noqa: F401 (registers the backend)
    name, precision, backend, case_options = parse_case(case)
    dropout = float(case_options.pop("dropout", 0.0))
    model, args, kwargs, loss = _model(name, precision, device, dropout)
    torch._dynamo.reset()
    options = options_of(backend, case_options,
                         "sm_90" if device == "meta" else None)
    forward = model if backend == "eager" else torch.compile(
        model, backend=backend, options=options)
    if device == "meta":
        def step():
            loss(forward(*args, **kwargs)).backward()
        return step
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss(forward(*args, **kwargs)).backward()
        optimizer.step()
    return step


def _model(name, precision, device, dropout=0.0):
    """(model in training mode, its positional and keyword inputs, the
    loss of its output): zoo model `name` at the bench size (its hidden
    states' dropout at `dropout`), or KernelBench
    problem N for kbN at its own size, called as the kernelbench-train
    suite calls it, in `precision` (set up as its suites do: tf32 too)."""
    if name.startswith("kb"):
        from gpu import kernelbench as problems
        from gpu.helpers import precision_setup
        problem, = problems.selected([name[2:]])
        precision_setup(precision)
        model, inputs = problems.model_and_inputs(problem, precision, True,
                                                  device)
        return model, inputs, {}, lambda out: out.float().sum()
    import transformer_zoo
    model, inputs = transformer_zoo.make(name, "bench", dropout=dropout)
    dtype = DTYPES[precision]
    model = model.train().to(device=device, dtype=dtype)
    inputs = {k: v.to(device=device, dtype=dtype) if v.is_floating_point()
              else v.to(device) for k, v in inputs.items()}
    return model, (), inputs, \
        lambda out: out.last_hidden_state.float().mean()


def prepare(args):
    import os
    os.environ["FUSION_CACHE_DIR"] = args.cache
    for case in args.cases.split(";"):
        if parse_case(case)[2] != "fusion":
            continue
        print(f"compiling {case}", flush=True)
        make_step(case, "meta")()


def kind_of(name):
    for kind, pattern in KINDS:
        if re.search(pattern, name):
            return kind
    return "other ATen"


def busy_intervals(events):
    """The union of [start, end) intervals, sorted."""
    merged = []
    for start, end in sorted(events):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def long_gaps(intervals):
    """The idle gaps over 20 us between sorted busy `intervals`, as
    (start, end) pairs."""
    return [(a[1], b[0]) for a, b in zip(intervals, intervals[1:])
            if b[0] - a[1] > 20]


def summarize(case, kernels, steps):
    """One case's table from its kernels [(name, start_us, dur_us)]."""
    intervals = busy_intervals((s, s + d) for _, s, d in kernels)
    span = intervals[-1][1] - intervals[0][0]
    busy = sum(e - s for s, e in intervals)
    gaps = [end - start for start, end in long_gaps(intervals)]
    by_kind = collections.Counter()
    by_name = collections.Counter()
    count = collections.Counter()
    for name, _, duration in kernels:
        by_kind[kind_of(name)] += duration
        by_name[name] += duration
        count[name] += 1
    print(f"\n### {case} (per step, {steps} steps, ms)\n")
    print(f"span {span / 1e3 / steps:.3f}, GPU busy {busy / 1e3 / steps:.3f},"
          f" idle {(span - busy) / 1e3 / steps:.3f} of which "
          f"{sum(gaps) / 1e3 / steps:.3f} in "
          f"{len(gaps) / steps:.0f} gaps over 20 us; "
          f"{len(kernels) / steps:.0f} kernels\n")
    print("| kind | ms | share of busy |\n|---|---|---|")
    for kind, total in by_kind.most_common():
        print(f"| {kind} | {total / 1e3 / steps:.3f} | "
              f"{total / max(busy, 1e-9):.1%} |")
    print("\n| kernel | calls | ms |\n|---|---|---|")
    for name, total in by_name.most_common(TOP_KERNELS):
        print(f"| {name[:90]} | {count[name] / steps:.0f} | "
              f"{total / 1e3 / steps:.3f} |")
    if gaps:
        print("\nlongest gaps (us): " +
              ", ".join(f"{g:.0f}" for g in sorted(gaps)[-8:]))


# The ops whose device time by_shape lists: the GEMMs (PyTorch's, and
# fusion's library calls with what they fused: the operator's scope of the
# call, fusion::call, which records the tensors' shapes).
GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "fusion::call")


def by_shape(case, step, steps):
    """The device time of each GEMM op by its input shapes (one table),
    from a second profile with the host's ops (which slows the host, not
    the kernels)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 record_shapes=True) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    rows = [e for e in prof.key_averages(group_by_input_shape=True)
            if e.key in GEMM_OPS]
    rows.sort(key=lambda e: -e.device_time_total)
    print(f"\n#### {case}: GEMM ops by input shapes (per step)\n")
    print("| op | input shapes | calls | device ms | us a call |\n"
          "|---|---|---|---|---|")
    for e in rows:
        shapes = [tuple(s) for s in e.input_shapes if s]
        print(f"| {e.key} | {str(shapes)[:80]} | {e.count / steps:.0f} | "
              f"{e.device_time_total / 1e3 / steps:.3f} | "
              f"{e.device_time_total / max(e.count, 1):.1f} |")


HOST_DEPTH = 3


def host_path(event):
    """`event`'s scope from the outermost CPU op down (at most HOST_DEPTH
    names), or None where it is deeper."""
    names = []
    while event is not None:
        names.append(event.name)
        event = event.cpu_parent
    return None if len(names) > HOST_DEPTH else " > ".join(names[::-1])


def host_in_gaps(events):
    """({host op path: us}, the gaps) of profiler `events`: the GPU's idle
    gaps over 20 us (long_gaps of its kernels) and each one's time split
    by the host ops overlapping it (a gap is the host late with the next
    launch), by scope (host_path)."""
    cuda, cpu = torch.autograd.DeviceType.CUDA, torch.autograd.DeviceType.CPU
    gaps = long_gaps(busy_intervals((e.time_range.start, e.time_range.end)
                                    for e in events if e.device_type == cuda))
    time_in = collections.Counter()
    for e in events:
        path = host_path(e) if e.device_type == cpu else None
        if path is None:
            continue
        for a, b in gaps:
            overlap = min(e.time_range.end, b) - max(e.time_range.start, a)
            if overlap > 0:
                time_in[path] += overlap
    return time_in, gaps


def profile_host(case, step, steps):
    """Where the GPU waited for the host: a second profile with the host's
    ops, its gaps' time by the host ops during them (one table)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU,
                             ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    time_in, gaps = host_in_gaps(prof.events())
    print(f"\n#### {case}: the host during the GPU's idle gaps "
          f"({len(gaps) / steps:.0f} gaps, "
          f"{sum(b - a for a, b in gaps) / 1e3 / steps:.3f} ms a step, "
          f"under the host profiler)\n")
    print("| host op (outer > inner) | ms a step in gaps |\n|---|---|")
    for path, total in time_in.most_common(30):
        print(f"| {path[:150]} | {total / 1e3 / steps:.3f} |")


def run(args):
    from torch.profiler import ProfilerActivity, profile
    for case in args.cases.split(";"):
        try:
            step = make_step(case, "cuda")
            for _ in range(3):
                step()
            torch.cuda.synchronize()
            start, end = (torch.cuda.Event(enable_timing=True)
                          for _ in range(2))
            start.record()
            for _ in range(5):
                step()
            end.record()
            torch.cuda.synchronize()
            print(f"\n{case}: {start.elapsed_time(end) / 5:.3f} ms a step "
                  f"(5 back to back, no profiler)")
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(args.steps):
                    step()
                torch.cuda.synchronize()
            if args.by_shape:
                by_shape(case, step, args.steps)
            if args.host:
                profile_host(case, step, args.steps)
            if args.trace:
                path = pathlib.Path(args.trace)
                path.mkdir(parents=True, exist_ok=True)
                prof.export_chrome_trace(str(
                    path / (case.replace(":", "_") + ".json")))
            kernels = [(e.name, e.time_range.start, e.time_range.elapsed_us())
                       for e in prof.events()
                       if e.device_type == torch.autograd.DeviceType.CUDA]
            summarize(case, kernels, args.steps)
        except Exception as error:  # noqa: BLE001 (reported, go on)
            print(f"\n### {case}: failed: {type(error).__name__}: "
                  f"{str(error)[:400]}")
        torch._dynamo.reset()
        torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("cache")
    p.add_argument("--cases", default=DEFAULT_CASES)
    r = sub.add_parser("run")
    r.add_argument("--cases", default=DEFAULT_CASES)
    r.add_argument("--steps", type=int, default=3)
    r.add_argument("--trace")
    r.add_argument("--by-shape", action="store_true",
                   help="also each GEMM op's device time by input shapes")
    r.add_argument("--host", action="store_true",
                   help="also the host's ops during the GPU's idle gaps")
    args = parser.parse_args()
    (prepare if args.command == "prepare" else run)(args)


if __name__ == "__main__":
    main()
