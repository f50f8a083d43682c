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

Each timer takes a `clock` (CudaClock here; the tests' stub records the
order of operations) so that the protocols are testable without a GPU.
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


def throughput(fn, clock=None, warmup=3, rounds=10, calls=10):
    """Median ms per call over `rounds` of `calls` back-to-back calls
    between two events."""
    clock = clock or CudaClock()
    for _ in range(warmup):
        fn()
    clock.synchronize()
    times = []
    for _ in range(rounds):
        start, end = clock.event(), clock.event()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    return statistics.median(times)


def cold_l2(fn, clock=None, warmup=3, calls=50):
    """Median ms of one call with a cold L2: flush, synchronize, one call
    between two events, `calls` times (KernelBench's protocol)."""
    clock = clock or CudaClock()
    for _ in range(warmup):
        fn()
    clock.synchronize()
    times = []
    for _ in range(calls):
        clock.flush_l2()
        clock.synchronize()
        start, end = clock.event(), clock.event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def timed(fn, timer, clock=None):
    """ms per call of `fn` by the timer named `timer`."""
    if timer == "throughput":
        return throughput(fn, clock)
    if timer == "cold-l2":
        return cold_l2(fn, clock)
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
