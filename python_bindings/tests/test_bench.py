"""The benchmark driver (scripts/bench) without a GPU: its arguments, its
tables, and the order of operations of its two timers, through a stub
clock."""
import importlib
import pathlib
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "bench"
sys.path.insert(0, str(BENCH))
report = importlib.import_module("report")
timers = importlib.import_module("timers")
run = importlib.import_module("run")


class StubEvent:
    def __init__(self, clock):
        self.clock = clock
        self.time = None

    def record(self):
        self.clock.log.append("record")
        self.time = self.clock.now

    def synchronize(self):
        self.clock.log.append("event sync")

    def elapsed_time(self, end):
        return end.time - self.time


class StubClock:
    """Logs what the timers do; each call of the timed function advances
    its time by the next of `durations` (ms)."""

    def __init__(self, durations):
        self.durations = list(durations)
        self.now = 0.0
        self.log = []

    def event(self):
        return StubEvent(self)

    def synchronize(self):
        self.log.append("sync")

    def flush_l2(self):
        self.log.append("flush")

    def call(self):
        self.log.append("call")
        self.now += self.durations.pop(0) if self.durations else 1.0


def test_cold_l2_flushes_and_times_each_call_alone():
    clock = StubClock([9.0] * 3 + [1.0, 5.0, 2.0, 4.0, 3.0])
    ms = timers.cold_l2({"f": clock.call}, clock, warmup=3, calls=5)
    assert ms == {"f": 3.0}  # the median of 1, 5, 2, 4, 3 (warm-up untimed)
    timed = clock.log[clock.log.index("sync") + 1:]
    one = ["flush", "sync", "record", "call", "record", "event sync"]
    assert timed == one * 5


def test_throughput_times_back_to_back_calls():
    clock = StubClock([1.0] * 3 + [2.0] * 4 + [4.0] * 4 + [3.0] * 4)
    ms = timers.throughput({"f": clock.call}, clock, warmup=3, rounds=3,
                           calls=4)
    assert ms == {"f": 3.0}  # rounds of 2, 4 and 3 ms a call
    timed = clock.log[clock.log.index("sync") + 1:]
    assert "flush" not in timed
    assert timed[:6] == ["record"] + ["call"] * 4 + ["record"]


def test_timers_take_the_calls_in_turn():
    """Each round times one round of every call, so that drift over a run
    (the device's clocks under a sustained load) reaches each alike."""
    clock = StubClock([])
    order = []

    def call(key):
        def fn():
            order.append(key)
            clock.call()
        return fn
    timers.throughput({"a": call("a"), "b": call("b")}, clock, warmup=1,
                      rounds=3, calls=2)
    assert order == ["a", "b"] + ["a", "a", "b", "b"] * 3
    order.clear()
    timers.cold_l2({"a": call("a"), "b": call("b")}, clock, warmup=1,
                   calls=2)
    assert order == ["a", "b"] + ["a", "b"] * 2


def test_a_call_that_raises_is_left_out_and_reported():
    clock = StubClock([])
    calls = 0

    def flaky():
        nonlocal calls
        calls += 1
        if calls == 3:  # in the first timed round
            raise RuntimeError("lost")
    errors = []
    ms = timers.throughput({"flaky": flaky, "fine": clock.call}, clock,
                           warmup=2, rounds=3, calls=1,
                           on_error=lambda key, e: errors.append((key,
                                                                  str(e))))
    assert list(ms) == ["fine"]
    assert errors == [("flaky", "lost")]
    calls = 0  # Without on_error, the error propagates.
    with pytest.raises(RuntimeError, match="lost"):
        timers.throughput({"flaky": flaky}, clock, warmup=2, rounds=3)


def test_unknown_timer_is_refused():
    with pytest.raises(ValueError, match="no timer"):
        timers.together({"f": lambda: None}, "warm", StubClock([]))


def test_table_has_times_and_ratios_against_fusion():
    rows = [(("A", "1024x8192x8192", "tf32"),
             {"wgmma": 2.0, "gemm": 1.6, "eager": 5.0,
              "torch.compile": 3.0}),
            (("G", "128x8192x8192", "bf16"),
             {"wgmma": 1.0, "gemm": 1.0, "eager": 1.5})]
    lines = report.table(rows, "wgmma").splitlines()
    assert lines[0] == ("| case | M x K x N | precision | wgmma ms | gemm ms"
                        " | eager ms | torch.compile ms | eager / fusion | "
                        "torch.compile / fusion | fusion / gemm |")
    assert lines[2] == ("| A | 1024x8192x8192 | tf32 | 2.000 | 1.600 | "
                        "5.000 | 3.000 | 2.50 | 1.50 | 1.250 |")
    # No torch.compile time (workload G): a dash, not an error.
    assert lines[3] == ("| G | 128x8192x8192 | bf16 | 1.000 | 1.000 | "
                        "1.500 | - | 1.50 | - | 1.000 |")


def test_heading_names_device_date_and_commit(tmp_path):
    (tmp_path / "BUILD_INFO").write_text("commit=abc1234\ndate=2026-11-28\n")
    info = report.build_info(tmp_path)
    text = report.heading("workloads", "cold-l2", "NVIDIA H200", info,
                          "2.11.0", today="2026-11-29")
    assert text == ("## workloads (cold-l2): NVIDIA H200, 2026-11-29, "
                    "fusion commit abc1234 (built 2026-11-28), torch 2.11.0")
    assert report.build_info(tmp_path / "none")["commit"] == "unknown"


def test_arguments(tmp_path):
    args = run.parse(["--artifacts", str(tmp_path), "--suite",
                      "workloads,host-overhead", "--timer", "cold-l2"])
    assert args.suites == ["workloads", "host-overhead"]
    assert args.timers == ["cold-l2"]
    args = run.parse(["--artifacts", str(tmp_path)])
    assert args.suites == list(run.SUITE_NAMES)
    assert args.timers == ["throughput", "cold-l2"]
    with pytest.raises(SystemExit):
        run.parse(["--artifacts", str(tmp_path), "--suite", "speed"])


def test_one_table_per_timer():
    rows = [(("A", "tf32"), {"fusion dynamo": {"throughput": 1.0,
                                               "cold-l2": 2.0},
                             "eager": {"throughput": 3.0, "cold-l2": 4.0}})]
    text = run.render("models", "models", "fusion dynamo", rows,
                      ["throughput", "cold-l2"],
                      lambda title, timer: f"## {title} {timer}")
    assert "## models, fusion = fusion dynamo throughput" in text
    assert "| A | tf32 | 1.000 | 3.000 | 3.00 |" in text
    assert "| A | tf32 | 2.000 | 4.000 | 2.00 |" in text


def test_summary_has_geomeans_and_slower_counts_by_precision():
    rows = [(("9_Matmul", "fp32", 1), {"fusion": 1.0, "eager": 4.0,
                                       "torch.compile": 2.0}),
            (("12_Gemm", "fp32", 1), {"fusion": 2.0, "eager": 2.0,
                                      "torch.compile": 1.0}),
            (("9_Matmul", "bf16", 1), {"fusion": 1.0, "eager": 0.5,
                                       "torch.compile": 3.0}),
            # A problem that failed: no times, counted nowhere.
            (("14_Gemm", "bf16", "-"), {})]
    lines = report.summary(rows, "fusion", 1).splitlines()
    assert lines[0] == ("| precision | timed | geomean eager / fusion | "
                        "geomean torch.compile / fusion | slower than "
                        "eager | slower than torch.compile |")
    # eager: 4 and 1 (geomean 2); torch.compile: 2 and 0.5 (geomean 1).
    assert lines[2] == "| fp32 | 2 | 2.00 | 1.00 | 0 of 2 | 1 of 2 |"
    assert lines[3] == "| bf16 | 1 | 0.50 | 3.00 | 1 of 1 | 0 of 1 |"


def test_kernelbench_tables_are_followed_by_the_summary():
    rows = [(("12_Gemm", "tf32", 1),
             {"fusion": {"cold-l2": 1.0}, "eager": {"cold-l2": 3.0}})]
    text = run.render("kernelbench", "kernelbench", "fusion", rows,
                      ["cold-l2"], lambda title, timer: f"## {title}")
    assert "| problem | precision | fused | fusion ms | eager ms |" in text
    assert "| 12_Gemm | tf32 | 1 | 1.000 | 3.000 | 3.00 |" in text
    assert "| tf32 | 1 | 3.00 | 0 of 1 |" in text


def test_kernelbench_training_tables_are_followed_by_the_summary():
    rows = [(("12_Gemm", "bf16"),
             {"fusion": {"throughput": 2.0},
              "torch.compile": {"throughput": 3.0}})]
    text = run.render("kernelbench-train", "kernelbench training step",
                      "fusion", rows, ["throughput"],
                      lambda title, timer: f"## {title}")
    assert "| problem | precision | fusion ms | torch.compile ms |" in text
    assert "| 12_Gemm | bf16 | 2.000 | 3.000 | 1.50 |" in text
    assert "| bf16 | 1 | 1.50 | 0 of 1 |" in text


def test_distributed_bench_runs_on_the_cpu(tmp_path):
    """distributed.py's own check (`run --cpu`): the tiny GPT-2 trained
    under DDP and FSDP2 (with FSDP2's explicit prefetching too) in two
    processes through fusion's CPU target matches one process on the whole
    batch, with no library missing."""
    import os
    import subprocess
    environment = dict(os.environ, FUSION_CACHE_DIR=str(tmp_path))
    table = subprocess.run(
        [sys.executable, str(BENCH / "distributed.py"), "run", "--cpu",
         "--size", "tiny", "--rows", "ddp,fsdp2,fsdp2-prefetch"],
        env=environment,
        capture_output=True, text=True, timeout=600, check=True).stdout
    rows = {cells[0]: cells[1:] for cells in (
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in table.splitlines() if line.startswith("| "))}
    for label in ("DDP, fusion", "FSDP2, fusion",
                  "FSDP2, fusion, explicit prefetching"):
        ms, _, loss_error, update_error, misses = rows[label]
        assert float(ms) > 0
        assert float(loss_error) < 1e-5 and float(update_error) < 1e-4, \
            rows[label]
        assert misses == "0"


def test_missing_libraries_fail_the_suite():
    """A partition that ran as PyTorch for want of its library (the
    artifacts lack a group) makes the suite fail, as its rows would time
    PyTorch under fusion's name; other warnings are only shown."""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("fusion left the partition of addmm_1 to PyTorch: "
                      "LibraryNotCachedError: the library is not in the "
                      "cache (/cache/14d8)")
        warnings.warn("an unrelated warning")
    with pytest.warns(UserWarning, match="an unrelated warning"):
        assert run.missing_libraries(caught[1:]) == []
    with pytest.warns(UserWarning, match="an unrelated warning"):
        failures = run.missing_libraries(caught)
    assert len(failures) == 1
    assert failures[0].startswith("1 partitions ran as PyTorch")
    assert "addmm_1" in failures[0]


def test_each_case_logs_its_times(capsys):
    """A suite logs each case's times as it goes (a run stopped before its
    tables leaves them in the log)."""
    suites = importlib.import_module("suites")
    suites.timed("gpt2 fp32", {"fusion (default)": {"throughput": 43.571,
                                                    "cold-l2": 43.81},
                               "eager": {"throughput": 74.48,
                                         "cold-l2": 74.55}})
    assert capsys.readouterr().out == (
        "timed gpt2 fp32: fusion (default) 43.571 43.810; "
        "eager 74.480 74.550 ms\n")


def test_step_profile_splits_kernels_by_kind_and_finds_gaps(capsys):
    """profile_step.py's table from kernels (name, start us, duration us):
    fusion's kernels are told from cuBLAS's (both have "gemm" in their
    names), overlapping kernels count once in the busy time, and the gaps
    between them are the idle time."""
    profile_step = importlib.import_module("profile_step")
    assert profile_step.kind_of("fused_0_gemm_rows_le_128") == "fusion"
    assert profile_step.kind_of("fused_1_rows") == "fusion"
    assert profile_step.kind_of(
        "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN") == "cuBLAS GEMM"
    assert profile_step.kind_of("triton_poi_fused_add_mul_4") == \
        "inductor (Triton)"
    assert profile_step.kind_of(
        "cudnn_generated_fort_native_sdpa_sm90_flash_bprop") == "attention"
    kernels = [("fused_0_gemm", 0, 100), ("triton_poi_fused_1", 50, 100),
               ("nvjet_sm90_tst", 200, 100)]
    profile_step.summarize("case", kernels, steps=1)
    out = capsys.readouterr().out
    assert "span 0.300, GPU busy 0.250, idle 0.050 of which 0.050 in 1 " \
        "gaps over 20 us" in out
    assert "| fusion | 0.100 |" in out and "| cuBLAS GEMM | 0.100 |" in out


def test_step_profile_splits_the_gaps_by_host_op():
    """profile_step.py --host: a gap between kernels is split by the host
    ops overlapping it, each counted under its scope (outer > inner) down
    to HOST_DEPTH names; ops outside the gaps, and gaps of 20 us or less,
    count nothing."""
    import types

    import torch
    profile_step = importlib.import_module("profile_step")
    cuda, cpu = torch.autograd.DeviceType.CUDA, torch.autograd.DeviceType.CPU

    def event(name, start, end, device=cpu, parent=None):
        return types.SimpleNamespace(
            name=name, device_type=device, cpu_parent=parent,
            time_range=types.SimpleNamespace(start=start, end=end))
    step = event("step", 0, 400)
    backward = event("backward", 120, 180, parent=step)
    launch = event("launch", 150, 160, parent=backward)
    deep = event("deep", 150, 155, parent=launch)
    events = [event("k0", 0, 100, cuda), event("k1", 200, 300, cuda),
              event("k2", 310, 400, cuda), step, backward, launch, deep,
              event("late", 210, 220)]
    time_in, gaps = profile_step.host_in_gaps(events)
    assert gaps == [(100, 200)]
    assert time_in == {"step": 100, "step > backward": 60,
                       "step > backward > launch": 10}


def test_step_profile_prepares_a_kernelbench_problems_step(library_lookups,
                                                           fresh_dynamo):
    """profile_step.py's kbN cases: KernelBench problem N's training step
    (its forward in training mode and the backward), compiled for sm_90
    from the meta device as `prepare` does: problem 12's forward is one
    program, its GEMM followed by the multiply and leaky ReLU."""
    profile_step = importlib.import_module("profile_step")
    profile_step.make_step("kb12:bf16:fusion", "meta")()
    [(programs, options)] = library_lookups
    assert options["target"] == "sm_90"
    assert [op["op"] for op in programs["fused"].data["ops"]] == \
        ["linear", "elementwise"]


@pytest.mark.parametrize("suite, cells", [("kernelbench", ("-",)),
                                          ("kernelbench-train", ())])
def test_kernelbench_suites_record_each_problem(monkeypatch, suite, cells):
    """The KernelBench suites' rows: a problem's times as its case gives
    them; a case that raises is a failure and a row with no times, and the
    next problem is still timed; precisions the suite does not time are
    skipped."""
    import argparse
    suites = importlib.import_module("suites")
    calls = []

    def case(problems, problem, pname, *rest):
        calls.append((problem.number, pname))
        if problem.number == 12:
            raise RuntimeError("no library")
        times = {"fusion": {"throughput": 1.0}}
        return ("1", times) if suite == "kernelbench" else times
    monkeypatch.setattr(suites, "_kernelbench_case" if suite == "kernelbench"
                        else "_kernelbench_step_times", case)
    args = argparse.Namespace(models="12,14", precisions="fp32,bf16")
    title, key, rows, failures = suites.SUITES[suite](args, None)
    timed = ["fp32", "bf16"] if suite == "kernelbench" else ["bf16"]
    assert calls == [(n, p) for n in (12, 14) for p in timed]
    names = {12: "12_Gemm_Multiply_LeakyReLU",
             14: "14_Gemm_Divide_Sum_Scaling"}
    assert [cells_ for cells_, _ in rows] == [
        (names[n], p, *(cells if n == 12 else
                        ("1",) if suite == "kernelbench" else ()))
        for n in (12, 14) for p in timed]
    assert [times for _, times in rows] == [
        {} if n == 12 else {"fusion": {"throughput": 1.0}}
        for n in (12, 14) for p in timed]
    assert len(failures) == len(timed) and \
        all("RuntimeError: no library" in f for f in failures)
