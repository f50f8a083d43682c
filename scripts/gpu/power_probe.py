#!/usr/bin/env python3
"""Whether an epilogue's cost is time or energy: each side's kernels of
`epilogue_ab.py`'s libraries (and cuBLAS's GEMM, alone and with
cuBLASLt's own ReLU and GELU epilogues, torch._addmm_activation) run back
to back for a while, with the GPU's SM clock, power draw and throttle reasons sampled
meanwhile (nvidia-smi); then, under ncu with its default clock control
(the clocks locked at base), the same kernels' durations at one fixed
clock. An epilogue that costs the same at the locked clock as at the
free one costs time; one whose cost goes away costs clock, which the
power cap takes back.

  power_probe.py OUT [--rows 16384] [--precisions bf16,tf32]
      [--epilogues plain,two_gelu,y_plus_x] [--seconds 2]
      (GPU machine) OUT is epilogue_ab.py pack's output. Prints a table
      last.
  power_probe.py one OUT SIDE PRECISION EPILOGUE M
      one call (ncu's target).
  power_probe.py kernels LIBRARY ENTRY M PRECISION
      the mean time of each kernel of one entry's calls (torch profiler)
      once its calls have run back to back for 2 s: under the power cap,
      as users run them.
"""
import argparse
import pathlib
import statistics
import subprocess
import sys
import threading
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_and_bench import (BOUNDS, TORCH_DTYPES, Library,  # noqa
                             precision_setup, relative_error)
from epilogue_ab import K, MODELS, N, PRECISIONS  # noqa

# PyTorch's calls beside fusion's: cuBLAS's GEMM (addmm), and cuBLASLt's
# with its own ReLU or GELU (tanh) epilogue, which _addmm_activation asks
# for: each call and its float64 reference from y.
TORCH_SIDES = {
    "addmm": lambda x, w, b: (lambda: torch.addmm(b, x, w.t()),
                              lambda y: y),
    "cublaslt_relu": lambda x, w, b: (
        lambda: torch._addmm_activation(b, x, w.t(), use_gelu=False),
        torch.relu),
    "cublaslt_gelu": lambda x, w, b: (
        lambda: torch._addmm_activation(b, x, w.t(), use_gelu=True),
        lambda y: torch.nn.functional.gelu(y, approximate="tanh")),
}


def make_inputs(precision, m):
    torch.manual_seed(0)
    dtype = TORCH_DTYPES[PRECISIONS[precision]]
    x = torch.randn(m, K, device="cuda", dtype=dtype)
    w = (torch.randn(N, K, device="cuda") / 64).to(dtype)
    b = torch.randn(N, device="cuda", dtype=dtype)
    extras = {"r": torch.randn(m, N, device="cuda", dtype=dtype),
              "s": torch.randn(m, 1, device="cuda", dtype=dtype)}
    return x, w, b, extras


def make_call(out, side, precision, epilogue, m, inputs, check=True):
    """The call to time and its relative error against float64 (outputs
    poisoned first; None unless `check`)."""
    x, w, b, extras = inputs
    if side in TORCH_SIDES:
        call, reference = TORCH_SIDES[side](x, w, b)
        if not check:
            return call, None
        y64 = torch.addmm(b.double(), x.double(), w.double().t())
        return call, relative_error(call(), reference(y64))
    lib = Library(pathlib.Path(out) / side / f"{precision}.so")
    _, extra, _, model = MODELS[epilogue]
    args = [x, w, b] + ([extras[extra]] if extra else [])
    result = torch.full((m, N), float("nan"), device="cuda", dtype=x.dtype)
    call = lambda: lib.run(epilogue, m, args, [result])  # noqa: E731
    if not check:
        return call, None
    call()
    torch.cuda.synchronize()
    y64 = torch.addmm(b.double(), x.double(), w.double().t())
    ref = model(y64, x.double(), extras["r"].double(), extras["s"].double())
    return call, relative_error(result, ref)


class Sampler:
    """nvidia-smi's SM clock (MHz), power draw (W) and active throttle
    reasons every 50 ms, in a thread."""

    QUERY = "clocks.sm,power.draw,clocks_throttle_reasons.active"

    def __init__(self):
        self.process = subprocess.Popen(
            ["nvidia-smi", f"--query-gpu={self.QUERY}",
             "--format=csv,noheader,nounits", "-lms", "50",
             "-i", str(torch.cuda.current_device())],
            stdout=subprocess.PIPE, text=True)
        self.samples, self.recording = [], False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.process.stdout:
            if self.recording:
                try:
                    clock, power, reasons = (v.strip() for v in line.split(","))
                    self.samples.append((float(clock), float(power),
                                         int(reasons, 16)))
                except ValueError:
                    pass

    def measure(self, call, seconds):
        """ms per call, mean clock, mean power and the throttle reasons seen
        while `call` runs back to back for `seconds`."""
        for _ in range(20):
            call()
        torch.cuda.synchronize()
        self.samples, self.recording = [], True
        start, calls = time.perf_counter(), 0
        begin = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        begin.record()
        while time.perf_counter() - start < seconds:
            for _ in range(20):
                call()
            calls += 20
            torch.cuda.synchronize()
        end.record()
        torch.cuda.synchronize()
        self.recording = False
        samples = self.samples[2:] or self.samples
        reasons = 0
        for s in samples:
            reasons |= s[2]
        return (begin.elapsed_time(end) / calls,
                statistics.mean(s[0] for s in samples) if samples else 0.0,
                statistics.mean(s[1] for s in samples) if samples else 0.0,
                reasons)

    def close(self):
        self.process.terminate()


# nvidia-smi's clocks_throttle_reasons bits that matter here.
REASONS = {0x4: "sw-power", 0x20: "sw-thermal", 0x40: "hw-thermal",
           0x80: "hw-power-brake", 0x8: "hw-slowdown"}


def reason_names(bits):
    return "+".join(n for b, n in REASONS.items() if bits & b) or "-"


def cases(args, out):
    sides = sorted(p.name for p in pathlib.Path(out).iterdir() if p.is_dir())
    for precision in args.precisions.split(","):
        for m in (int(r) for r in args.rows.split(",")):
            for epilogue in args.epilogues.split(","):
                for side in sides:
                    yield side, precision, epilogue, m
            for side in TORCH_SIDES:
                yield side, precision, "-", m


def ncu_duration(out, side, precision, epilogue, m):
    """The duration (ns) of the GEMM kernel of a call under ncu, clocks
    locked at base (its default), and the SM clock (Hz) it ran at."""
    kernel = "regex:gemm|sm90|cutlass|nvjet|xmma"
    command = ["ncu", "--metrics",
               "gpu__time_duration.sum,smsp__cycles_elapsed.avg.per_second",
               "-k", kernel, "-c", "3", "--csv", "--page", "raw",
               "--print-units", "base",
               sys.executable, __file__, "one", out, side, precision,
               epilogue, str(m)]
    result = subprocess.run(command, capture_output=True, text=True)
    durations, clocks = [], []
    header = None
    for line in result.stdout.splitlines():
        cells = [c.strip('"') for c in line.split('","')]
        if "gpu__time_duration.sum" in cells:
            header = cells
            continue
        if header and len(cells) == len(header):
            try:
                durations.append(float(cells[header.index(
                    "gpu__time_duration.sum")].replace(",", "")))
                clocks.append(float(cells[header.index(
                    "smsp__cycles_elapsed.avg.per_second")].replace(",", "")))
            except ValueError:
                pass
    if not durations:
        return None, None, (result.stdout + result.stderr)[-400:]
    # The GEMM kernel is the longest of a call's kernels.
    longest = sorted(zip(durations, clocks))[-1]
    return longest[0], longest[1], ""


def print_kernels(precision, m):
    """The kernels of PyTorch's calls: whether the activation is in the
    GEMM's epilogue."""
    precision_setup(precision)
    inputs = make_inputs(precision, m)
    for side in TORCH_SIDES:
        call, _ = make_call(None, side, precision, "-", m, inputs,
                            check=False)
        torch.cuda.synchronize()
        with torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            call()
            torch.cuda.synchronize()
        names = sorted({e.name for e in prof.events()
                        if e.device_type == torch.autograd.DeviceType.CUDA})
        print(f"# {side} {precision} kernels: {names}")


def one(args):
    precision_setup(args.precision)
    inputs = make_inputs(args.precision, args.m)
    call, _ = make_call(args.out, args.side, args.precision, args.epilogue,
                        args.m, inputs, check=False)
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    return 0


def probe(args):
    sampler = Sampler()
    rows, failures = [], []
    print(f"# {torch.cuda.get_device_name()}")
    print(subprocess.run(
        ["nvidia-smi", "--query-gpu=power.limit,clocks.max.sm,clocks.sm,"
         "temperature.gpu", "--format=csv"],
        capture_output=True, text=True).stdout)
    print_kernels(args.precisions.split(",")[0], int(args.rows.split(",")[0]))
    for side, precision, epilogue, m in cases(args, args.out):
        precision_setup(precision)
        inputs = make_inputs(precision, m)
        call, error = make_call(args.out, side, precision, epilogue, m, inputs)
        if not error <= BOUNDS[precision]:
            failures.append(f"{side}:{precision}:{epilogue}:{m} ({error:.1e})")
        ms, clock, power, reasons = sampler.measure(call, args.seconds)
        rows.append([side, precision, epilogue, m, ms, clock, power,
                     reason_names(reasons), error])
        print(f"{side} {precision} {epilogue} {m}: {ms:.3f} ms, {clock:.0f} "
              f"MHz, {power:.0f} W, {reason_names(reasons)}", flush=True)
        del inputs
        torch.cuda.empty_cache()
    sampler.close()
    for row in rows:
        side, precision, epilogue, m = row[:4]
        ns, locked, note = ncu_duration(args.out, side, precision, epilogue, m)
        row += [ns, locked]
        if note:
            print(f"ncu {side} {precision} {epilogue}: {note}")
    print("\n| side | prec | epilogue | M | ms (free clock) | SM MHz | W "
          "| throttled by | GEMM kernel ms at ncu's locked clock | its MHz "
          "| max error |")
    print("|" + "---|" * 11)
    for side, precision, epilogue, m, ms, clock, power, why, error, ns, \
            locked in rows:
        locked_cells = (f"{ns / 1e6:.3f} | {locked / 1e6:.0f}" if ns
                        else "- | -")
        print(f"| {side} | {precision} | {epilogue} | {m} | {ms:.3f} | "
              f"{clock:.0f} | {power:.0f} | {why} | {locked_cells} | "
              f"{error:.1e} |")
    print("\nall within bounds" if not failures
          else f"\nFAILED: {', '.join(failures)}")
    return 1 if failures else 0


def kernels(args):
    from run_once import prepare
    lib, inputs, outputs = prepare(args.library, args.entry, args.m,
                                   args.precision)
    start = time.perf_counter()
    while time.perf_counter() - start < 2:
        for _ in range(10):
            lib.run(args.entry, args.m, inputs, outputs)
        torch.cuda.synchronize()
    calls = 20
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            lib.run(args.entry, args.m, inputs, outputs)
        torch.cuda.synchronize()
    totals = {}
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            totals[event.name] = totals.get(event.name, 0) + event.device_time
    print(f"{args.entry} M={args.m} {args.precision}, us per call:")
    for name, total in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"  {total / calls:9.1f}  {name}")
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "kernels":
        parser = argparse.ArgumentParser()
        parser.add_argument("command")
        parser.add_argument("library")
        parser.add_argument("entry")
        parser.add_argument("m", type=int)
        parser.add_argument("precision")
        return kernels(parser.parse_args())
    if len(sys.argv) > 1 and sys.argv[1] == "one":
        parser = argparse.ArgumentParser()
        parser.add_argument("command")
        for name in ("out", "side", "precision", "epilogue"):
            parser.add_argument(name)
        parser.add_argument("m", type=int)
        return one(parser.parse_args())
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--rows", default="16384")
    parser.add_argument("--precisions", default="bf16,tf32")
    parser.add_argument("--epilogues", default="plain,two_gelu,y_plus_x")
    parser.add_argument("--seconds", type=float, default=2.0)
    return probe(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
