#!/usr/bin/env python3
"""The benchmark driver: on a GPU machine with the artifacts of
`scripts/gpu-check.sh build` (no compiler needed), times a suite and prints
a markdown table per timer, headed by the device, the date and the
compiler commit (the artifacts' BUILD_INFO): fusion's time and the ratios
of eager PyTorch's, torch.compile's and the raw cuBLAS GEMM's of the same
shape and precision.

    python3 scripts/bench/run.py --artifacts DIR --suite SUITE[,SUITE]
        [--timer throughput|cold-l2|both] [--out FILE]

Suites (suites.py): workloads, family, models, transformers,
transformers-train, kernelbench, kernelbench-train, host-overhead (or
all). kernelbench and kernelbench-train (the problems' training steps)
also print, per timer, the geometric means of eager's and torch.compile's
ratios to fusion by precision and the number of problems where fusion is
the slower.
Timers (timers.py): throughput, CUDA events around back-to-back calls
after warm-up, median of rounds; cold-l2, KernelBench's protocol, L2
flushed before each single timed call, median of 50 calls. A case's
columns are timed in turn, a round (or call) of each.
scripts/gpu-check.sh run DIR --bench [SUITES] runs it after the checks.
"""
import argparse
import importlib.util
import os
import pathlib
import shutil
import sys
import tempfile
import warnings

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT / "python_bindings" / "tests"))

import report  # noqa: E402
import timers  # noqa: E402

SUITE_NAMES = ("workloads", "family", "models", "transformers",
               "transformers-train", "kernelbench", "kernelbench-train",
               "host-overhead")
# The label cells of each suite's rows (the others': case, M x K x N,
# precision).
LABELS = {"models": ("model", "precision"),
          "transformers": ("model", "precision"),
          "transformers-train": ("model", "precision"),
          "kernelbench": ("problem", "precision", "fused"),
          "kernelbench-train": ("problem", "precision")}
# The suites whose tables are followed by the ratios' summary by precision.
SUMMARIZED = ("kernelbench", "kernelbench-train")


def parse(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--artifacts", type=pathlib.Path, required=True)
    parser.add_argument("--suite", default="all",
                        help="comma-separated of " + ", ".join(SUITE_NAMES)
                        + ", or all")
    parser.add_argument("--timer", default="both",
                        choices=timers.TIMERS + ("both",))
    parser.add_argument("--precisions", default="fp32,tf32,bf16",
                        help="workloads, models, transformers, "
                        "kernelbench: the precisions timed")
    parser.add_argument("--compile-modes", default="default",
                        help="torch.compile modes timed, comma-separated "
                        "(e.g. default,max-autotune-no-cudagraphs; none)")
    parser.add_argument("--cases", default=None,
                        help="workloads: the cases timed (A,B,B',G)")
    parser.add_argument("--baseline", type=pathlib.Path, default=None,
                        help="workloads: an earlier commit's artifacts "
                        "(scripts/gpu-check.sh baseline), timed beside")
    parser.add_argument("--sizes", default="1024x8192x8192",
                        help="family: MxKxN,... of its SIZES ('' all)")
    parser.add_argument("--family-precisions", default="tf32",
                        help="family: the precisions timed (prepared: "
                        "fp32,tf32,bf16)")
    parser.add_argument("--models", default=None,
                        help="family, transformers: the models, "
                        "';'-separated; kernelbench: the problems, numbers "
                        "or names (e.g. 12,33,99)")
    parser.add_argument("--dropout", type=float, default=0.0,
                        help="transformers-train: the hidden states' "
                        "dropout (prepared: 0 and 0.1)")
    parser.add_argument("--transformer-size", default="bench",
                        help="transformers: the zoo's size (bench: 8 x "
                        "1024 tokens; prefill: one prompt of 512)")
    parser.add_argument("--strategies", default="auto",
                        help="family, kernelbench: fusion's strategies, "
                        "the first the one the ratios take (kernelbench: "
                        "each STRATEGY[+OPTION=VALUE...], e.g. "
                        "auto+cluster=2, from prepare.py's group "
                        "kernelbench:VARIANT)")
    parser.add_argument("--out", type=pathlib.Path, default=None,
                        help="also write the tables to this file")
    args = parser.parse_args(argv)
    args.suites = (list(SUITE_NAMES) if args.suite == "all"
                   else args.suite.split(","))
    unknown = set(args.suites) - set(SUITE_NAMES)
    if unknown:
        parser.error(f"unknown suites {sorted(unknown)} (suites: "
                     f"{', '.join(SUITE_NAMES)})")
    args.timers = list(timers.TIMERS) if args.timer == "both" \
        else [args.timer]
    return args


def use_cache(artifacts):
    """The artifacts' library cache, read by a copy of the package's
    sources that carries the compiler id of the build machine (part of
    every cache key) where the package imported here does not."""
    os.environ.setdefault("FUSION_CACHE_DIR", str(artifacts / "cache"))
    os.environ.setdefault("FUSION_CACHE_MAX_BYTES", str(1 << 40))
    carried = artifacts / "compiler_id"
    if not carried.exists():
        return
    # Not imported yet (it registers its torch ops once a process): its
    # compiler_id file read beside it.
    spec = importlib.util.find_spec("fusion")
    if spec is not None and spec.origin:
        present = pathlib.Path(spec.origin).with_name("compiler_id")
        if present.exists() and \
                present.read_text().strip() == carried.read_text().strip():
            return
    package = pathlib.Path(tempfile.mkdtemp(prefix="fusion-bench-"))
    shutil.copytree(ROOT / "python_bindings" / "fusion",
                    package / "fusion")
    shutil.copy(carried, package / "fusion" / "compiler_id")
    shutil.copy(ROOT / "include" / "fusion" / "Compiler" /
                "CompileOptions.def", package / "fusion" /
                "compile_options.def")
    sys.path.insert(0, str(package))


def split_by_timer(rows, names):
    """[(cells, {key: {timer: ms}})] -> {timer: [(cells, {key: ms})]}."""
    return {t: [(cells, {k: v[t] for k, v in times.items()})
                for cells, times in rows] for t in names}


def render(suite, title, fusion_key, rows, names, heading):
    labels = LABELS.get(suite, ("case", "M x K x N", "precision"))
    parts = []
    for timer, timer_rows in split_by_timer(rows, names).items():
        parts.append(heading(f"{title}, fusion = {fusion_key}", timer))
        parts.append("")
        parts.append(report.table(timer_rows, fusion_key, labels))
        parts.append("")
        if suite in SUMMARIZED:
            parts.append(report.summary(timer_rows, fusion_key,
                                        labels.index("precision")))
            parts.append("")
    return "\n".join(parts)


def render_host(results, heading):
    lines = [heading("host overhead", "host us per call, median of 5 x "
                     "3000 calls"), "", "| path | host us per call |",
             "|---|---|"]
    lines += [f"| {case} | {us:.2f} |" for case, us in results.items()]
    return "\n".join(lines + [""])


def is_missing_library(warning):
    """Whether a caught warning is fusion's of a partition left to PyTorch
    for want of its library in the cache."""
    return "LibraryNotCachedError" in str(warning.message)


def missing_libraries(caught):
    """A failure naming the partitions that ran as PyTorch because their
    libraries were not in the cache (a machine without the compiler: the
    artifacts lack a group), so that their rows time PyTorch as fusion;
    the other warnings shown (after the suite, as caught)."""
    missing = []
    for warning in caught:
        if is_missing_library(warning):
            missing.append(str(warning.message))
        else:
            warnings.showwarning(warning.message, warning.category,
                                 warning.filename, warning.lineno)
    if not missing:
        return []
    return [f"{len(missing)} partitions ran as PyTorch, their libraries not "
            f"in the cache (first: {missing[0][:300]})"]


def main(argv=None):
    args = parse(argv)
    import torch
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to time")
        return 0
    use_cache(args.artifacts.resolve())
    import suites
    device = torch.cuda.get_device_name()
    info = report.build_info(args.artifacts)

    def heading(title, timer):
        return report.heading(title, timer, device, info, torch.__version__)

    def measure(calls, on_error=None):
        """{key: {timer: ms}} of `calls` ({key: fn}), interleaved; a call
        that raises is left out after on_error(key, error)."""
        times = {key: {} for key in calls}
        for timer in args.timers:
            ms = timers.together({key: calls[key] for key in times}, timer,
                                 on_error=on_error)
            times = {key: dict(times[key], **{timer: ms[key]})
                     for key in ms}
        return times

    text, failures = [], []
    for suite in args.suites:
        if suite == "host-overhead":
            results = suites.host_overhead(args, timers.host_time)
            text.append(render_host(results, heading))
        else:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                title, fusion_key, rows, failed = suites.SUITES[suite](
                    args, measure)
            missing = missing_libraries(caught)
            failures += failed + missing
            text.append(render(suite, title, fusion_key, rows, args.timers,
                               heading) + "".join(
                                   f"\nINVALID: {m}\n" for m in missing))
        print("\n" + text[-1], flush=True)
    if failures:
        print("FAILED (a first call beyond its bound, or fusion's libraries "
              "missing): " + "; ".join(failures))
    if args.out:
        args.out.write_text("\n".join(text))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
