"""The random-model fuzzer's models on a GPU, through each GEMM strategy.

The GPU machine has no compiler: its libraries come from the library cache,
filled on the build machine.

    # On the build machine (the compiler, no GPU): compile every seed's
    # libraries for the target, both front ends, both modes, every batch.
    python model_fuzz_gpu.py prepare --seeds 0:100 --cache DIR
    # On the GPU machine (the cache carried there as DIR):
    python model_fuzz_gpu.py run --seeds 0:100 --cache DIR

`run` checks each seed as model_fuzz.py does on the CPU (against float64
eager; torch.compile never fails; fusion.compile gives eager's result or
refuses by name), once per strategy, and prints one table. A library
missing from the cache makes torch.compile leave its partition to PyTorch
and fusion.compile refuse: the table counts the models whose partitions
fused, so such gaps show.
"""
import argparse
import json
import os
import sys
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_fuzz  # noqa: E402

STRATEGIES = ("cublas", "tiled", "wgmma")
TARGET = "sm_90"


def prepare(seeds, strategies, target=TARGET, extra=None):
    """Compiles the libraries each seed needs into the cache: torch.compile
    with compile_only (the graph runs as PyTorch on the CPU, the libraries
    are built for `target`) and fusion.compile, in both modes. Prints each
    partition fusion failed to compile (a FusionBackendWarning: on the GPU
    it would run as PyTorch) and fusion.compile's errors other than
    refusals; returns how many there were. `extra`: more backend
    options (fusion.compile takes those it knows)."""
    import fusion
    warnings.simplefilter("always", fusion.FusionBackendWarning)
    problems = 0

    def show(message, category, *args, **kwargs):
        nonlocal problems
        if issubclass(category, fusion.FusionBackendWarning):
            problems += 1
            print(f"seed {seed} {strategy}: {message}", flush=True)

    warnings.showwarning = show
    for seed in seeds:
        case = model_fuzz.generate(seed)
        for strategy in strategies:
            options = {"target": target, "strategy": strategy,
                       **(extra or {})}
            for train in (False, True):
                torch._dynamo.reset()
                compiled = torch.compile(
                    case.model().train(train), backend="fusion",
                    options={**options, "compile_only": True})
                try:
                    for call in range(len(case.batches)):
                        x = case.input(call).to(case.torch_dtype)
                        with torch.set_grad_enabled(train):
                            compiled(x)
                except Exception as error:  # noqa: BLE001
                    print(f"seed {seed} {strategy}: eager fails: "
                          f"{model_fuzz.describe(error)}")
                    break
            try:
                fusion.compile(case.model(),
                               (case.input(0).to(case.torch_dtype),),
                               **model_fuzz.package_options(options))
            except fusion.UnsupportedOperationError:
                pass  # A refusal: `run` reports it.
            except Exception as error:  # noqa: BLE001
                problems += 1
                print(f"seed {seed} {strategy}: fusion.compile: "
                      f"{model_fuzz.describe(error)}", flush=True)
        print(f"seed {seed} prepared", flush=True)
    return problems


def run(seeds, strategies, target=TARGET, jobs=1, extra=None):
    """{strategy: [result of model_fuzz.check_seed]}, checked in `jobs`
    worker processes at a time (a crash is a finding)."""
    results = {}
    for strategy in strategies:
        settings = model_fuzz.Settings(target=target,
                                       options={"strategy": strategy,
                                                **(extra or {})},
                                       jobs=jobs)
        started = time.monotonic()
        results[strategy] = model_fuzz.fuzz(seeds, settings)
        print(f"== {strategy}: {len(seeds)} models in "
              f"{time.monotonic() - started:.0f} s", flush=True)
        print(model_fuzz.summary(results[strategy],
                                 time.monotonic() - started), flush=True)
        fused = sum(bool(r.get("fused")) for r in results[strategy])
        print(f"torch.compile fused a partition of {fused} of "
              f"{len(seeds)} models")
        for result in results[strategy]:
            if model_fuzz.failures(result):
                print(model_fuzz.failure_line(result))
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("prepare", "run"))
    parser.add_argument("--seeds", default="0:100")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--target", default=TARGET)
    parser.add_argument("--cache", required=True,
                        help="the library cache (FUSION_CACHE_DIR)")
    parser.add_argument("--json", help="write the results here (run)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="worker processes at a time (run)")
    parser.add_argument("--options", type=json.loads, default={},
                        help="more backend options, JSON (both steps: "
                             "their libraries differ)")
    args = parser.parse_args(argv)
    os.environ["FUSION_CACHE_DIR"] = os.path.abspath(args.cache)
    # The cache must hold every library: none is evicted while preparing.
    os.environ.setdefault("FUSION_CACHE_MAX_BYTES", str(1 << 40))
    warnings.simplefilter("ignore")
    seeds = model_fuzz._seeds(args.seeds)
    strategies = args.strategies.split(",")
    if args.step == "prepare":
        return int(prepare(seeds, strategies, args.target,
                           args.options) > 0)
    results = run(seeds, strategies, args.target, args.jobs, args.options)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out)
    return int(any(model_fuzz.failures(r) for rs in results.values()
                   for r in rs))


if __name__ == "__main__":
    sys.exit(main())
