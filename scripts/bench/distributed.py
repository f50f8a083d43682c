"""A transformer-zoo model's training step on two GPUs (issue 67):
torch.compile(backend="fusion") under DDP (DDPOptimizer's graph pieces) and
under FSDP2 (each block `fully_shard`ed and compiled), against one GPU.

    distributed.py prepare [--model M --size S --dtype D]   (the build
        machine: compile_only, for sm_90, the libraries of every graph a
        run compiles, into $FUSION_CACHE_DIR)
    distributed.py run [--model M --size S --dtype D]   (2 GPUs)
    distributed.py run --cpu ...   (the same on the CPU, gloo and fusion's
        CPU target: the script's own check)

`--options JSON` adds fusion's compile options to every fusion row, and
`--bucket-cap-mb` sets DDP's buckets (give both to `prepare` too).

The run trains 5 SGD steps (mean squared error against a fixed target)
per row (`--rows`, ROWS): one GPU's fusion run on the whole batch (the
reference), then DDP and FSDP2 each GPU its half of every batch, one GPU
on the half batch (the timing's base), their variants (DDPOptimizer off,
FSDP2 without resharding) and eager's and inductor's runs. A row gives
the largest relative error of a step's loss and of a parameter's update
(final - initial weights) against the reference, then the median step
time (forward, backward, SGD) against one GPU's of the same backend, and
how many libraries were missing from the cache; with `--profile`, each
timed row's kernels (rank 0's) too.

The preparation traces what a run's fusion rows compile without GPUs
(the unsplit DDP's graph is one GPU's, the unsharded FSDP2's its blocks'
as sharded): the one-GPU graphs on the meta device; DDP and FSDP2 as
rank 0 of a fake process group (torch's `fake` backend: collectives that
move nothing) on the CPU, whose graphs hold the same GEMMs as the
GPU's."""
import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

import fusion  # noqa: F401  (registers the backend in every process)
from fusion.errors import FusionBackendWarning
from run import is_missing_library

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python_bindings" / "tests"))

WORLD = 2
STEPS = 5
LEARNING_RATE = 1e-3
TIMED_STEPS = 10
# Equal batch shapes in every process: no dynamic-shape recompiles.
torch._dynamo.config.automatic_dynamic_shapes = False


DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def make(args, device, rows=None):
    """(model, input ids, target) of the zoo model, `rows` of its batch."""
    import transformer_zoo
    model, inputs = transformer_zoo.make(args.model, args.size)
    ids = inputs["input_ids"]
    generator = torch.Generator().manual_seed(1)
    target = torch.randn(*ids.shape, model.config.hidden_size,
                         generator=generator)
    if rows is not None:
        ids, target = ids[rows], target[rows]
    dtype = DTYPES[args.dtype]
    return (model.train().to(device=device, dtype=dtype), ids.to(device),
            target.to(device=device, dtype=dtype))


def loss_of(forward, ids, target):
    return F.mse_loss(forward(input_ids=ids).last_hidden_state.float(),
                      target.float())


CPU_RUN = False  # set by `run --cpu`, in every process
OPTIONS = {}  # set by `--options`, in every process
BUCKET_CAP_MB = [25]  # set by `--bucket-cap-mb`, in every process
TRACE_DIR = [None]  # set by `--trace`, in every process


def options(compile_only=False):
    """fusion's options: `--options` and the target."""
    if compile_only:
        return {**OPTIONS, "target": "sm_90", "compile_only": True}
    return {**OPTIONS, "target": "cpu"} if CPU_RUN else dict(OPTIONS)


def device(rank=0):
    return "cpu" if CPU_RUN else f"cuda:{rank}"


def synchronize():
    if not CPU_RUN:
        torch.cuda.synchronize()


# mode: (how the model is spread: "one" GPU, "ddp" or "fsdp2"; its
# torch.compile backend, None for eager; settings). "unsplit": dynamo's
# DDPOptimizer off (one graph, the gradients all-reduced after the whole
# backward); "unsharded": FSDP2 keeps each block's gathered weights from
# the forward to the backward (reshard_after_forward=False); "prefetch":
# each block's all-gather is issued from the block before it (after it, in
# the backward: FSDP2's explicit prefetching), where FSDP2 by default
# issues it as the block starts.
MODES = {"one": ("one", "fusion", {}), "eager": ("one", None, {}),
         "inductor": ("one", "inductor", {}),
         "ddp": ("ddp", "fusion", {}), "ddp-eager": ("ddp", None, {}),
         "ddp-inductor": ("ddp", "inductor", {}),
         "ddp-unsplit": ("ddp", "fusion", {"optimize_ddp": False}),
         "fsdp2": ("fsdp2", "fusion", {}), "fsdp2-eager": ("fsdp2", None, {}),
         "fsdp2-unsharded": ("fsdp2", "fusion",
                             {"reshard_after_forward": False}),
         "fsdp2-prefetch": ("fsdp2", "fusion", {"prefetch": True}),
         "fsdp2-eager-prefetch": ("fsdp2", None, {"prefetch": True})}


def compiled(model, mode, device_mesh=None, compile_only=False,
             device_ids=None):
    """The forward to call for `mode`."""
    spread, backend, settings = MODES[mode]
    torch._dynamo.config.optimize_ddp = settings.get("optimize_ddp", True)

    arguments = {"backend": backend} if backend != "fusion" else {
        "backend": backend, "options": options(compile_only)}

    def with_backend(module):
        return torch.compile(module, **arguments) if backend else module
    if spread == "one":
        return with_backend(model)
    if spread == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        return with_backend(DistributedDataParallel(
            model, device_ids=device_ids, bucket_cap_mb=BUCKET_CAP_MB[0]))
    from torch.distributed.fsdp import fully_shard
    reshard = settings.get("reshard_after_forward", True)
    for block in blocks(model):
        if backend is not None:  # In place: the parameters keep their names.
            block.compile(**arguments)
        fully_shard(block, mesh=device_mesh, reshard_after_forward=reshard)
    fully_shard(model, mesh=device_mesh, reshard_after_forward=reshard)
    if settings.get("prefetch"):
        sharded = list(blocks(model))
        for before, after in zip(sharded, sharded[1:]):
            before.set_modules_to_forward_prefetch([after])
            after.set_modules_to_backward_prefetch([before])
    return model


def blocks(model):
    return model.h if hasattr(model, "h") else model.layers


def full(value):
    return value.full_tensor() if hasattr(value, "full_tensor") else value


def train(model, forward, ids, target):
    """Losses of STEPS SGD steps, each parameter's update, the optimizer,
    and how many of fusion's libraries were missing from the cache (the
    partitions that ran as PyTorch instead)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FusionBackendWarning)
        trained = _train(model, forward, ids, target)
    missing = [w for w in caught if is_missing_library(w)]
    for warning in missing[:3]:  # Which partitions, to prepare them.
        print(f"missing: {str(warning.message)[:600]}", flush=True)
    return (*trained, len(missing))


def _train(model, forward, ids, target):
    initial = {name: full(p.detach()).double().cpu().clone()
               for name, p in model.named_parameters()}
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(forward, ids, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach().double())
    updates = {name: full(p.detach()).double().cpu() - initial[name]
               for name, p in model.named_parameters()}
    return torch.stack(losses).cpu(), updates, optimizer


def step_ms(forward, ids, target, optimizer, profile=None, show=True):
    """Median ms of a step over rounds of back-to-back steps (every rank
    times its own; the collectives keep them in step); then, with
    `profile` (a label), one step's kernels under torch.profiler, which
    `show` prints (every rank steps, one prints)."""
    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_of(forward, ids, target).backward()
        optimizer.step()
    for _ in range(2):
        step()
    times = []
    for _ in range(3):
        synchronize()
        start = time.perf_counter()
        for _ in range(TIMED_STEPS):
            step()
        synchronize()
        times.append((time.perf_counter() - start) * 1e3 / TIMED_STEPS)
    if profile:
        print_profile(profile, step, show)
    return statistics.median(times)


def print_profile(label, step, show):
    """One step's kernels: their span and busy time on the GPU, and the
    kernels by total time (the explanation of a miss)."""
    activity, kind = ((torch.profiler.ProfilerActivity.CPU, "CPU")
                      if CPU_RUN else
                      (torch.profiler.ProfilerActivity.CUDA, "CUDA"))
    activities = [activity]
    if TRACE_DIR[0] and not CPU_RUN:  # The host's side too.
        activities.append(torch.profiler.ProfilerActivity.CPU)
    with torch.profiler.profile(activities=activities) as profile:
        step()
        synchronize()
    if not show:
        return
    if TRACE_DIR[0]:  # torch.profiler gzips a path ending in .gz.
        profile.export_chrome_trace(
            str(pathlib.Path(TRACE_DIR[0]) / f"{label}.json.gz"))
    intervals = sorted((e.time_range.start, e.time_range.end)
                       for e in profile.events() if e.device_type ==
                       getattr(torch.autograd.DeviceType, kind))
    busy, end = 0, intervals[0][0]
    for start, stop in intervals:
        busy += max(0, stop - max(start, end))
        end = max(end, stop)
    span = intervals[-1][1] - intervals[0][0]
    lines = [f"== {label}: kernels span {span / 1e3:.2f} ms, the GPU busy "
             f"{busy / 1e3:.2f} ms (streams overlapping counted once)"]
    def total(event):
        return event.self_cpu_time_total if CPU_RUN else \
            event.device_time_total
    events = sorted(profile.key_averages(), key=lambda e: -total(e))
    lines += [f"  {total(e) / 1e3:8.2f} ms {e.count:4d}x {e.key[:100]}"
              for e in events[:12] if total(e)]
    print("\n".join(lines), flush=True)


def _one_gpu(rank, args, mode, whole, directory):
    """One GPU: trains on the whole batch (the reference) or times a step
    at the per-GPU batch."""
    set_place(args)
    rows = None if whole else slice(0, half(args))
    model, ids, target = make(args, device(), rows)
    forward = compiled(model, mode)
    losses, updates, optimizer, misses = train(model, forward, ids, target)
    result = {"losses": losses, "updates": updates, "misses": misses}
    if not whole:
        result["ms"] = step_ms(forward, ids, target, optimizer,
                               args.profile and mode)
    torch.save(result, directory / f"{mode}-{whole}.pt")


def half(args):
    import transformer_zoo
    return transformer_zoo.SIZES[args.size]["batch"] // WORLD


def set_place(args, rank=0):
    global CPU_RUN
    CPU_RUN = args.cpu
    take_settings(args)
    if not CPU_RUN:
        torch.cuda.set_device(rank)


def take_settings(args):
    """`--options` and `--bucket-cap-mb`, in this process."""
    OPTIONS.update(json.loads(args.options))
    BUCKET_CAP_MB[0] = args.bucket_cap_mb
    TRACE_DIR[0] = args.trace


def _distributed(rank, args, mode, directory):
    set_place(args, rank)
    dist.init_process_group("gloo" if CPU_RUN else "nccl",
                            init_method=f"file://{directory}/store-{mode}",
                            rank=rank, world_size=WORLD)
    try:
        rows = slice(rank * half(args), (rank + 1) * half(args))
        model, ids, target = make(args, device(rank), rows)
        mesh = None
        if MODES[mode][0] == "fsdp2":
            from torch.distributed.device_mesh import init_device_mesh
            mesh = init_device_mesh("cpu" if CPU_RUN else "cuda", (WORLD,))
        forward = compiled(model, mode, mesh,
                           device_ids=None if CPU_RUN else [rank])
        losses, updates, optimizer, misses = train(model, forward, ids,
                                                   target)
        losses = losses.to(device(rank))
        dist.all_reduce(losses)
        ms = torch.tensor(step_ms(forward, ids, target, optimizer,
                                  args.profile and mode, rank == 0),
                          device=device(rank))
        dist.all_reduce(ms, op=dist.ReduceOp.MAX)
        if rank == 0:
            torch.save({"losses": losses.cpu() / WORLD, "updates": updates,
                        "ms": ms.item(), "misses": misses},
                       directory / f"{mode}-False.pt")
    finally:
        dist.destroy_process_group()
    # Gloo's group, freed with DDP's reducer at exit, can deadlock (its
    # thread drops a tensor, waiting for the GIL its destructor holds).
    sys.stdout.flush()
    os._exit(0)


def _error(result, reference):
    """(the largest relative error of a step's loss, of a parameter's
    update) against `reference`."""
    losses = ((result["losses"] - reference["losses"]).abs()
              / reference["losses"].abs()).max().item()
    updates = max(((result["updates"][n] - u).norm() / u.norm()).item()
                  for n, u in reference["updates"].items() if u.norm() > 0)
    return losses, updates


# name: (label, mode, whole batch: one GPU's run on it), the table's rows
# in the order they run, the reference first; each printed once it ran.
ROWS = {
    "reference": ("one GPU, fusion (whole batch: the reference)", "one",
                  True),
    "one-half": ("one GPU, fusion (half batch)", "one", False),
    "ddp": ("DDP, fusion", "ddp", False),
    "fsdp2": ("FSDP2, fusion", "fsdp2", False),
    "ddp-unsplit": ("DDP, fusion, DDPOptimizer off", "ddp-unsplit", False),
    "fsdp2-unsharded": ("FSDP2, fusion, reshard_after_forward=False",
                        "fsdp2-unsharded", False),
    "fsdp2-prefetch": ("FSDP2, fusion, explicit prefetching",
                       "fsdp2-prefetch", False),
    "eager-whole": ("one GPU, eager (whole batch)", "eager", True),
    "eager-half": ("one GPU, eager (half batch)", "eager", False),
    "ddp-eager": ("DDP, eager", "ddp-eager", False),
    "fsdp2-eager": ("FSDP2, eager", "fsdp2-eager", False),
    "fsdp2-eager-prefetch": ("FSDP2, eager, explicit prefetching",
                             "fsdp2-eager-prefetch", False),
    "inductor-half": ("one GPU, inductor (half batch)", "inductor", False),
    "ddp-inductor": ("DDP, inductor", "ddp-inductor", False)}


def run(args):
    set_place(args)
    assert CPU_RUN or torch.cuda.device_count() >= WORLD, "needs 2 GPUs"
    directory = pathlib.Path(tempfile.mkdtemp())
    print(f"\n{args.model} ({args.size}, {args.dtype}, {device()}), batch "
          f"{2 * half(args)} split in {WORLD}. ms a step at the half batch; "
          f"errors: the largest relative error of a step's loss / of a "
          f"parameter's update after {STEPS} SGD steps, against the "
          f"reference\n")
    print("| configuration | ms a step | vs one GPU (same backend) | "
          "loss error | "
          "update error | library misses |")
    print("|---|---|---|---|---|---|", flush=True)
    reference, alone = None, {}  # backend: ms of one GPU's half batch
    for name in ["reference"] + [n for n in ROWS
                                 if n in args.rows.split(",")]:
        label, mode, whole = ROWS[name]
        backend = MODES[mode][1]
        if MODES[mode][0] == "one":
            mp.start_processes(_one_gpu, args=(args, mode, whole, directory),
                               nprocs=1, start_method="spawn")
        else:
            mp.start_processes(_distributed, args=(args, mode, directory),
                               nprocs=WORLD, start_method="spawn")
        result = torch.load(directory / f"{mode}-{whole}.pt")
        (directory / f"{mode}-{whole}.pt").unlink()
        reference = reference or result
        ms = result.get("ms")
        if ms and MODES[mode][0] == "one":
            alone[backend] = ms
        base = alone.get(backend, alone.get("fusion"))
        timing = " | ".join(f"{value:{form}}" if value else "-" for value, form
                            in ((ms, ".2f"), (ms and base and ms / base,
                                              ".3f")))
        # A one-GPU run on half the batch trains other steps: timed only.
        compared = result is not reference and (
            whole or MODES[mode][0] != "one")
        errors = "{:.1e} | {:.1e}".format(*_error(result, reference)) \
            if compared else "- | -"
        print(f"| {label} | {timing} | {errors} | {result['misses']} |",
              flush=True)


def _prepare_one(args, rows):
    model, ids, target = make(args, "meta", rows)
    loss_of(compiled(model, "one", compile_only=True), ids,
            target).backward()


def _prepare_distributed(args, mode):
    from torch.testing._internal.distributed.fake_pg import FakeStore
    dist.init_process_group("fake", store=FakeStore(), rank=0,
                            world_size=WORLD)
    try:
        model, ids, target = make(args, "cpu", slice(0, half(args)))
        mesh = None
        if MODES[mode][0] == "fsdp2":
            from torch.distributed.device_mesh import init_device_mesh
            mesh = init_device_mesh("cpu", (WORLD,))
        loss_of(compiled(model, mode, mesh, compile_only=True), ids,
                target).backward()
    finally:
        dist.destroy_process_group()


def _prepare(rank, args, what):
    import fusion  # noqa: F401
    take_settings(args)
    if what == "whole":
        _prepare_one(args, None)
    elif what == "half":
        _prepare_one(args, slice(0, half(args)))
    else:
        _prepare_distributed(args, what)
    print("prepared", what, flush=True)


def prepare(args):
    for what in ("whole", "half", "ddp", "fsdp2"):
        mp.start_processes(_prepare, args=(args, what), nprocs=1,
                           start_method="spawn")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("prepare", "run"))
    parser.add_argument("--model", default="gpt2")
    parser.add_argument("--size", default="bench")
    parser.add_argument("--dtype", choices=DTYPES, default="fp32")
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--options", default="{}",
                        help="fusion's compile options (JSON) of every "
                        "fusion row, e.g. '{\"tile_scheduler\": "
                        "\"per_block\"}'")
    parser.add_argument("--bucket-cap-mb", type=float, default=25,
                        help="DDP's gradient buckets, at which DDPOptimizer "
                        "splits the graph (give the same to `prepare`)")
    parser.add_argument("--profile", action="store_true",
                        help="a timed row's kernels (rank 0's)")
    parser.add_argument("--trace", default=None,
                        help="with --profile: a folder for each profiled "
                        "row's chrome trace (CPU and CUDA, gzipped)")
    parser.add_argument("--rows", default="one-half,ddp,fsdp2,eager-whole,"
                        "ddp-eager", help=f"after the reference: {list(ROWS)}")
    args = parser.parse_args()
    {"prepare": prepare, "run": run}[args.action](args)


if __name__ == "__main__":
    main()
