#!/usr/bin/env python3
"""Row programs after the GEMM, by batch: fusion.compile's strategies
(`auto` and the backends it chooses between) on layer_norm(linear(x)),
group_norm, y - y.mean(1) and softmax (outputs that norms and softmax
read after they are written; --models takes any of epilogue_family.py's
bench models), K = N, from 1 row to a few thousand, each library's first
call at each batch checked against float64 (outputs poisoned first), then
timed through the bare C ABI call (no Python front end), rounds
interleaved between the strategies so that clock drift falls on all
alike.

    row_batches.py prepare [STRATEGIES] [--sizes N,...] [--models M;...]
        [--precisions P,...]   (build machine) compiles every library the
        run loads into the cache ($FUSION_CACHE_DIR), sm_90;
    row_batches.py run [STRATEGIES] [--sizes N,...] [--models M;...]
        [--precisions P,...] [--rows R,...] [--rounds R] [--compile]
        (GPU machine) checks and times them (--rounds 0: checks only),
        and torch.compile with --compile; prints the table last, each
        side's median ms and its ratio to the first strategy's.
"""
import argparse
import statistics
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import fusion  # noqa: E402
from epilogue_family import (BENCH, PRECISIONS, TARGET, bench_model,  # noqa
                             error)
from frontend_bench import bare_call  # noqa: E402
from check_and_bench import timed  # noqa: E402

MODELS = ("layer_norm(y)", "group_norm(y, 32)", "y - y.mean(1)",
          "softmax(y)")
SIZES = (4096, 8192, 16384)
ROWS = (1, 16, 32, 64, 128, 256, 512, 1024, 2048)
TIMED_PRECISIONS = ("tf32", "bf16")


def cases(sizes=SIZES, models=MODELS, precisions=TIMED_PRECISIONS):
    for category, name, body, norm, training, _ in BENCH:
        if name not in models:
            continue
        for n in sizes:
            for pname in precisions:
                yield name, body, norm, training, n, pname


def compiled_model(strategy, body, norm, training, n, pname, device):
    """The model and its library; a strategy `S@BMxBN:WMxWN:STAGES` is S
    with fusion.compile's tile="BMxBN,WMxWN,STAGES" (a tiling given: no
    batch configs)."""
    dtype, precision, _ = PRECISIONS[pname]
    model = bench_model(body, norm, training, n, n, dtype, device)
    x = torch.randn(4, n, dtype=dtype, device=device)
    strategy, _, tile = strategy.partition("@")
    return model, fusion.compile(model, (x,), target=TARGET,
                                 strategy=strategy, precision=precision,
                                 tile=tile.replace(":", ",") or None)


def prepare(strategies, sizes, models, precisions):
    for name, body, norm, training, n, pname in cases(sizes, models,
                                                      precisions):
        for strategy in strategies:
            compiled_model(strategy, body, norm, training, n, pname, "cpu")
        print(f"prepared {name} {n} {pname}", flush=True)


def poisoned_call(compiled, x):
    """The entry point on `x` with NaN-filled outputs (an element it does not
    write shows); returns the first output."""
    library, entry = compiled._library, compiled._entries[compiled._mode()]
    spec = library.entries[entry.name]
    tensors = compiled._arguments(entry, (x,))
    outputs = [torch.full([x.shape[0] if d is None else d for d in
                           o["shape"]], float("nan"), device="cuda",
                          dtype=x.dtype) for o in spec["outputs"]]
    status = library._function(entry.name)(
        torch.cuda.current_stream().cuda_stream,
        *([x.shape[0]] if spec["batch"] else []),
        *[t.data_ptr() for t in tensors + outputs])
    assert status == 0, library._lib.fusion_last_error_message()
    torch.cuda.synchronize()
    return outputs[0]


def run(strategies, sizes, models, precisions, rows, rounds, with_compile):
    table, failures, checked = [], [], 0
    with torch.no_grad():
        for name, body, norm, training, n, pname in cases(sizes, models,
                                                          precisions):
            dtype, _, bound = PRECISIONS[pname]
            tf32 = pname == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = tf32
            compiled = {}
            for strategy in strategies:
                model, compiled[strategy] = compiled_model(
                    strategy, body, norm, training, n, pname, "cuda")
            reference = bench_model(body, norm, training, n, n, dtype,
                                    "cuda").double()
            reference.load_state_dict(model.state_dict())
            # One dynamic-batch compilation serves every batch, as fusion's
            # libraries do.
            torch._dynamo.reset()
            inductor = (torch.compile(model, dynamic=True) if with_compile
                        else None)
            for m in rows:
                x = torch.randn(m, n, device="cuda", dtype=dtype)
                expected = reference(x.double())
                for strategy, c in compiled.items():
                    # The library's [M, 1] for a model's [M].
                    out = poisoned_call(c, x).reshape(expected.shape)
                    e = error(out, expected)
                    checked += 1
                    if not e <= bound:
                        failures.append(f"{name} {m}x{n} {pname} {strategy}:"
                                        f" {e:.3g}")
                if not rounds:
                    continue
                calls = {s: bare_call(c, (x,)) for s, c in compiled.items()}
                if inductor is not None:
                    calls["compile"] = lambda: inductor(x)
                times = {s: [] for s in calls}
                for _ in range(rounds):
                    for strategy, call in calls.items():
                        times[strategy].append(timed(call, iters=3))
                medians = {s: statistics.median(t) for s, t in times.items()}
                table.append((name, m, n, pname, medians))
                print(f"timed {name} {m}x{n}x{n} {pname}: " + ", ".join(
                    f"{s} {t:.4f}" for s, t in medians.items()), flush=True)
    if table:
        first = strategies[0]
        strategies = strategies + ["compile"] * with_compile
        print(f"\n## Row programs after the GEMM, by batch, on "
              f"{torch.cuda.get_device_name()}: ms per call (median of "
              f"{rounds} interleaved rounds), K = N; ratios to `{first}`")
        print("| model | M x K x N | prec | " + " | ".join(strategies) +
              " | " + " | ".join(f"{s} / {first}" for s in strategies[1:]) +
              " |")
        print("|---|---|---|" + "---|" * (2 * len(strategies) - 1))
        for name, m, n, pname, t in table:
            print(f"| {name} | {m}x{n}x{n} | {pname} | " +
                  " | ".join(f"{t[s]:.4f}" for s in strategies) + " | " +
                  " | ".join(f"{t[s] / t[first]:.3f}"
                             for s in strategies[1:]) + " |")
    print(f"\n{checked - len(failures)}/{checked} first calls within "
          f"bounds; failures: {failures or 'none'}")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("action", choices=("prepare", "run"))
    parser.add_argument("strategies", nargs="?", default="cublas,wgmma")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--rows", default=",".join(map(str, ROWS)))
    parser.add_argument("--models", default=";".join(MODELS),
                        help="epilogue_family.py's bench models, "
                        "\";\"-separated")
    parser.add_argument("--precisions", default=",".join(TIMED_PRECISIONS),
                        help="of fp32 (3xTF32), tf32, bf16")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--compile", action="store_true",
                        help="also time torch.compile (default mode, "
                        "dynamic batch)")
    args = parser.parse_args()
    strategies = args.strategies.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    models = args.models.split(";")
    precisions = args.precisions.split(",")
    if args.action == "prepare":
        return prepare(strategies, sizes, models, precisions)
    return run(strategies, sizes, models, precisions,
               [int(r) for r in args.rows.split(",")], args.rounds,
               args.compile)


if __name__ == "__main__":
    sys.exit(main())
