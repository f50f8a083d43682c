"""The benchmarks' two timers, and the host-time measure.

throughput: CUDA events around `calls` back-to-back calls, as a training
    or serving loop issues them (the host's time per call hides behind the
    GPU's when it is shorter), after warm-up; the median over `rounds` of
    the time per call.
cold-l2: KernelBench's protocol: before each single call, L2 is flushed by
    writing a buffer twice its size, the device synchronized, then the one
    call timed between two events; the median over `calls` calls. Every
    call reads its operands from DRAM, as the first layer of a model after
    other work does.
host: the CPU time per call of many calls (the GPU work far shorter).

Each timer takes several calls ({key: fn}) and interleaves them (a round
or call of each in turn), and a `clock` (CudaClock here; the tests' stub
records the order of operations) so that the protocols are testable
without a GPU.
"""
import statistics
import time

TIMERS = ("throughput", "cold-l2")


class CudaClock:
    """CUDA events, synchronization and an L2 flush on the current
    device."""

    def __init__(self):
        import torch
        self.torch = torch
        self._flush_buffer = None

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def synchronize(self):
        self.torch.cuda.synchronize()

    def flush_l2(self):
        """Writes a buffer of twice L2's size (allocated once)."""
        if self._flush_buffer is None:
            l2 = self.torch.cuda.get_device_properties().L2_cache_size
            self._flush_buffer = self.torch.empty(
                max(2 * l2, 1 << 20) // 4, dtype=self.torch.int32,
                device="cuda")
        self._flush_buffer.fill_(0x5A5A5A5A)


def _interleaved(fns, clock, warmup, samples, sample, on_error):
    """{key: median of `samples` samples} of each of `fns` ({key: fn}),
    each round taking one sample of each in turn after every one's
    warm-up, so that they see the device alike (timed one after another,
    two columns of the same kernels measured 0.176 and 0.193 ms, problem
    12 in bf16, run 157). A fn that raises is dropped after
    on_error(key, error), or the error propagates."""
    live = dict(fns)

    def attempt(key, action):
        try:
            return action()
        except Exception as error:  # noqa: BLE001 (reported, the rest goes on)
            if on_error is None:
                raise
            on_error(key, error)
            del live[key]
            return None

    for key, fn in list(live.items()):
        attempt(key, lambda fn=fn: [fn() for _ in range(warmup)])
    clock.synchronize()
    times = {key: [] for key in live}
    for _ in range(samples):
        for key in list(live):
            ms = attempt(key, lambda: sample(live[key]))
            if key in live:
                times[key].append(ms)
    return {key: statistics.median(times[key]) for key in live}


def throughput(fns, clock=None, warmup=3, rounds=10, calls=10,
               on_error=None):
    """{key: median ms per call} over `rounds` of `calls` back-to-back
    calls between two events, the rounds of `fns` ({key: fn})
    interleaved."""
    clock = clock or CudaClock()

    def one_round(fn):
        start, end = clock.event(), clock.event()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / calls
    return _interleaved(fns, clock, warmup, rounds, one_round, on_error)


def cold_l2(fns, clock=None, warmup=3, calls=50, on_error=None):
    """{key: median ms of one call} with a cold L2: flush, synchronize, one
    call between two events, `calls` times (KernelBench's protocol), the
    calls of `fns` ({key: fn}) interleaved."""
    clock = clock or CudaClock()

    def one_call(fn):
        clock.flush_l2()
        clock.synchronize()
        start, end = clock.event(), clock.event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)
    return _interleaved(fns, clock, warmup, calls, one_call, on_error)


def together(fns, timer, clock=None, on_error=None):
    """{key: ms per call} of each of `fns` ({key: fn}) by the timer named
    `timer`, interleaved."""
    if timer == "throughput":
        return throughput(fns, clock, on_error=on_error)
    if timer == "cold-l2":
        return cold_l2(fns, clock, on_error=on_error)
    raise ValueError(f"no timer {timer!r} (timers: {', '.join(TIMERS)})")


def host_time(fn, clock=None, calls=3000, warmup=50, runs=5):
    """Host time per call in us: the median over `runs` of the CPU time of
    `calls` calls, the device synchronized before each run and after."""
    clock = clock or CudaClock()
    for _ in range(warmup):
        fn()
    results = []
    for _ in range(runs):
        clock.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        results.append((time.perf_counter() - start) / calls * 1e6)
        clock.synchronize()
    return statistics.median(results)
