#!/usr/bin/env python3
"""Fills the library cache that the GPU checks and the benchmark suites load
(build machine: the fusion package with its compiler, no GPU needed), and
saves the modules fusion.load binds there. scripts/gpu-check.sh build runs
it; the libraries compile for sm_90 from CPU tensors of the same shapes and
dtypes (the graphs do not depend on the device).

    prepare.py ARTIFACTS [--groups G,...] [--jobs N]

fills ARTIFACTS/cache, one group after another (each in N processes),
listing the entries each group uses in ARTIFACTS/cache-groups/GROUP
(scripts/gpu-check.sh packs the large groups' entries apart: a device
call carries at most 64 MiB), writes ARTIFACTS/python (the saved
modules) and ARTIFACTS/compiler_id (the compiler's identity, part of
every cache key, which the GPU machine's package copy needs). Groups
(default all): """
import argparse
import functools
import os
import pathlib
import shutil
import subprocess
import sys
import time
import traceback

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

# The bench suites' cases (scripts/bench): the family suite's default size
# and precisions.
FAMILY_BENCH = {"sizes": [(1024, 8192, 8192)],
                "precisions": ["fp32", "tf32", "bf16"],
                "strategies": ("auto",)}


def groups():
    """name -> a function yielding (label, compile) pairs."""
    from gpu import family, frontend, intermediates, kernelbench
    import gpu.test_dual_gemm as dual_gemm_checks
    import gpu.test_grouped_gemm as grouped_gemm_checks
    import gpu.test_math as math_checks
    import gpu.test_random_draws as random_draw_checks
    import gpu.test_reductions as reductions
    import gpu.test_tile_scheduler as tile_scheduler_checks
    import gpu.test_transformers as transformers_checks
    import gpu.test_weight_layout as weight_layout_checks
    import gpu.test_zoo as zoo_checks
    table = {}
    table.update(transformers_checks.PREPARE)
    table.update(dual_gemm_checks.PREPARE)
    table.update(grouped_gemm_checks.PREPARE)
    table.update(weight_layout_checks.PREPARE)
    table.update(zoo_checks.PREPARE)
    table.update(math_checks.PREPARE)
    table.update(random_draw_checks.PREPARE)
    table.update(reductions.PREPARE)
    table.update(tile_scheduler_checks.PREPARE)
    table["intermediates"] = intermediates.prepare
    table["frontend"] = lambda: iter([("frontend models", frontend.prepare)])
    table["family-bench"] = lambda: family.prepare(**FAMILY_BENCH)
    table["kernelbench"] = kernelbench.prepare
    table["kernelbench-train"] = kernelbench.prepare_training
    return table


GROUPS = ("zoo", "zoo-tf32-bf16", "table", "special-values", "remainders",
          "trigonometry", "special-functions", "activations",
          "tile-reductions", "row-batches", "intermediates", "frontend",
          "family-bench", "transformers", "transformers-bench", "dual-gemm",
          "transformers-prefill", "transformers-train-dropout",
          "grouped-gemm", "weight-layout", "random-draws",
          "kernelbench", "kernelbench-train", "tile-scheduler", "saved")
# Groups only asked for by name: the KernelBench problems under a strategy
# variant of the kernelbench suite's --strategies (e.g. kernelbench:wgmma,
# kernelbench:auto+cluster=2).
VARIANT_GROUP = "kernelbench:"
__doc__ += ", ".join(GROUPS) + "; by name only: " + VARIANT_GROUP + \
    "VARIANT."


def group(table, name):
    """The function yielding group `name`'s (label, compile) pairs."""
    if name.startswith(VARIANT_GROUP):
        from gpu import kernelbench
        return functools.partial(kernelbench.prepare,
                                 name[len(VARIANT_GROUP):])
    return table[name]


def save_modules(out):
    """The workloads from their PyTorch definitions, compiled with
    fusion.compile (sm_80) and saved, one directory per workload and
    precision (test_frontend.py's test_saved_module loads them)."""
    import torch
    import fusion
    from gpu.helpers import DTYPES, SAVED_PRECISIONS, SAVED_WORKLOADS
    for name, (cls, _) in SAVED_WORKLOADS.items():
        for precision in SAVED_PRECISIONS:
            dtype = DTYPES[precision]
            module = cls().to(dtype)
            example = torch.randn(8, module.linear.in_features, dtype=dtype)
            compiled = fusion.compile(module, (example,), target="sm_80",
                                      precision=precision)
            compiled.save(out / f"{name}_{precision}")


def run_shard(artifacts, names, shard, shards):
    """Compiles every `shards`-th library of the groups, from `shard` on;
    returns the labels that failed."""
    failed = []
    table = groups()
    index = 0
    for name in names:
        if name == "saved":
            continue
        for label, compile_one in group(table, name)():
            index += 1
            if (index - 1) % shards != shard:
                continue
            try:
                compile_one()
                print(f"prepared {label}", flush=True)
            except Exception:  # noqa: BLE001 (reported, the rest goes on)
                failed.append(label)
                print(f"FAILED {label}:\n{traceback.format_exc()}",
                      flush=True)
    return failed


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("artifacts", type=pathlib.Path)
    parser.add_argument("--groups", default=",".join(GROUPS))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--shard", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = [g for g in args.groups.split(",") if g]
    unknown = {g for g in names
               if g not in GROUPS and not g.startswith(VARIANT_GROUP)}
    if unknown:
        sys.exit(f"unknown groups {sorted(unknown)} (known: "
                 f"{', '.join(GROUPS)}, {VARIANT_GROUP}VARIANT)")
    artifacts = args.artifacts.resolve()
    os.environ["FUSION_CACHE_DIR"] = str(artifacts / "cache")
    os.environ["FUSION_CACHE_MAX_BYTES"] = str(1 << 40)
    if args.shard:
        shard, shards = map(int, args.shard.split("/"))
        return 1 if run_shard(artifacts, names, shard, shards) else 0

    import fusion.cache
    (artifacts / "cache").mkdir(parents=True, exist_ok=True)
    (artifacts / "compiler_id").write_text(fusion.cache.compiler_id() + "\n")
    start = time.time()
    if "saved" in names:
        shutil.rmtree(artifacts / "python", ignore_errors=True)
        save_modules(artifacts / "python")
    jobs = max(1, args.jobs)
    listed = artifacts / "cache-groups"
    listed.mkdir(exist_ok=True)
    status = 0
    for name in names:
        if name == "saved":
            continue
        begun = time.time() - 1
        workers = [subprocess.Popen(
            [sys.executable, __file__, str(artifacts), "--groups", name,
             "--shard", f"{i}/{jobs}"]) for i in range(jobs)]
        status = max([status] + [w.wait() for w in workers])
        # The entries the group compiled or found (a hit marks an entry
        # used now).
        used = sorted(e.name for e in (artifacts / "cache").iterdir()
                      if not e.name.startswith(".") and
                      e.stat().st_mtime >= begun)
        (listed / name).write_text("".join(f"{e}\n" for e in used))
    entries = sum(1 for _ in (artifacts / "cache").iterdir())
    print(f"prepared {', '.join(names)}: {entries} cache entries in "
          f"{time.time() - start:.0f} s" +
          ("; some failed (FAILED above)" if status else ""))
    return status


if __name__ == "__main__":
    sys.exit(main())
