#!/usr/bin/env python3
"""What fusion libraries cost a process beside their kernels' time: GPU
memory held outside PyTorch's allocator as more libraries are loaded and
called, and the host time of a call (known-issues: many libraries in one
process; benchmark run 36).

    library_memory.py memory DIR [STEP]
        loads each library of a library cache (DIR/*/model.so, e.g. the
        zoo's, gpu-carry/cache.tar.xz), then calls each of its entry points
        once at batch 33 on random inputs; prints, every STEP libraries,
        the memory in use on the device less PyTorch's reservation, and what
        a load and a first call added on average, apart for the libraries
        that call cuBLASLt (their handle's 32 MiB workspace);
    library_memory.py time ENTRY M LIB...
        times ENTRY of each library at batch M: back to back (one
        synchronization at the end) and synchronized after every call; then
        captures a call in a CUDA graph and checks that its replays write
        what a direct call does.
"""
import pathlib
import statistics
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_and_bench import Library  # noqa: E402
from run_once import inputs_of, poisoned_outputs_of  # noqa: E402

MIB = 1 << 20


def outside_torch():
    free, total = torch.cuda.mem_get_info()
    return total - free - torch.cuda.memory_reserved()


def memory(directory, step):
    libraries = sorted(pathlib.Path(directory).glob("*/model.so"))
    torch.cuda.init()
    start = outside_torch()
    added = {True: [0, 0, 0], False: [0, 0, 0]}  # count, load, call bytes
    kept = []
    print(f"# {torch.cuda.get_device_name()}, {len(libraries)} libraries; "
          f"{start / MIB:.0f} MiB outside PyTorch before the first")
    print("| libraries | MiB outside PyTorch | MiB a load | MiB a first call "
          "(cuBLASLt) | MiB a first call (others) |")
    print("|---|---|---|---|---|")
    for count, path in enumerate(libraries, 1):
        cublas = b"cublasLtMatmul" in path.read_bytes()
        before = outside_torch()
        lib = Library(path)
        kept.append(lib)
        loaded = outside_torch()
        for name, entry in lib.entries.items():
            lib.run(name, 33, inputs_of(entry, 33),
                    poisoned_outputs_of(entry, 33))
        torch.cuda.synchronize()
        row = added[cublas]
        row[0] += 1
        row[1] += loaded - before
        row[2] += outside_torch() - loaded
        if count % step == 0 or count == len(libraries):
            loads = sum(r[1] for r in added.values()) / count
            calls = [f"{r[2] / r[0] / MIB:.2f}" if r[0] else "-"
                     for r in (added[True], added[False])]
            print(f"| {count} | {(outside_torch() - start) / MIB:.0f} | "
                  f"{loads / MIB:.2f} | {calls[0]} | {calls[1]} |",
                  flush=True)


def timing(entry_name, m, paths):
    print(f"# {torch.cuda.get_device_name()}, {entry_name} at batch {m}, "
          "us a call, median of 5 rounds")
    print("| library | back to back | synchronized after each | "
          "graph replay equal |")
    print("|---|---|---|---|")
    failures = 0
    for path in paths:
        lib = Library(path)
        entry = lib.entries[entry_name]
        inputs, outputs = inputs_of(entry, m), poisoned_outputs_of(entry, m)
        call = lambda: lib.run(entry_name, m, inputs, outputs)  # noqa: E731
        for _ in range(50):
            call()
        torch.cuda.synchronize()
        rounds = {"back": [], "sync": []}
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(2000):
                call()
            torch.cuda.synchronize()
            rounds["back"].append((time.perf_counter() - start) / 2000)
            start = time.perf_counter()
            for _ in range(500):
                call()
                torch.cuda.synchronize()
            rounds["sync"].append((time.perf_counter() - start) / 500)
        cells = [f"{statistics.median(rounds[k]) * 1e6:.1f}"
                 for k in ("back", "sync")]
        direct = [o.clone() for o in outputs]
        for o in outputs:
            o.fill_(float("nan"))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            call()
        equal = True
        for _ in range(3):
            for o in outputs:
                o.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            equal &= all(torch.equal(o, d) for o, d in zip(outputs, direct))
        failures += not equal
        cells.append("yes" if equal else "NO")
        print(f"| {pathlib.Path(path).name} | " + " | ".join(cells) + " |")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1] == "memory":
        memory(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 100)
    else:
        sys.exit(timing(sys.argv[2], int(sys.argv[3]), sys.argv[4:]))
