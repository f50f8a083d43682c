#!/usr/bin/env python3
"""Times the tiled strategy's tilings on the headline workloads.

  tile_sweep.py build DIR   (build machine) compiles workloads (A) and (B)
      once per candidate tiling and precision into DIR/<tiling>/.
  tile_sweep.py run DIR     (GPU machine) times the libraries of every
      folder of DIR (a tiling, or any other variant built the same way),
      prints a table per workload and precision, and writes DIR/best.json:
      the fastest folder of each, for `fusion-compile --tile`.
"""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
# BMxBN,WARPSMxWARPSN,STAGES
CANDIDATES = {
    "mma": ["128x256,2x4,3", "128x256,2x4,4", "256x128,4x2,3",
            "256x128,4x2,4", "128x128,2x2,3", "128x128,2x4,4"],
    # Two sets of accumulators: warp tiles of at most 64x32.
    "tf32x3": ["128x128,2x4,3", "128x128,2x4,4", "128x64,2x2,4",
               "64x128,2x2,4"],
}
LIBRARIES = [("f32", "fp32", "tf32x3"), ("f32", "tf32", "mma"),
             ("f32", "bf16", "mma"), ("bf16", "", "mma")]
WORKLOADS = [("A", "a", 1024, 8192, 8192), ("B", "b", 16384, 4096, 4096)]
# The H100 the sweep runs on.
TARGET = "sm_90"


def library_name(type_, precision):
    return f"workloads_{type_}{'_' + precision if precision else ''}"


def build(out):
    sys.path.insert(0, str(ROOT / "scripts" / "gpu"))
    import make_models
    out.mkdir(parents=True, exist_ok=True)
    compile_ = ROOT / "build" / "bin" / "fusion-compile"
    for type_, precision, family in LIBRARIES:
        model = out / f"sweep_{type_}.mlir"
        model.write_text(make_models.workload_a(8192, 8192, type_) +
                         make_models.workload_b(4096, 4096, type_))
        for tile in CANDIDATES[family]:
            folder = out / tile.replace(",", "_")
            folder.mkdir(exist_ok=True)
            command = [str(compile_), str(model), "--strategy=tiled",
                       f"--tile={tile}", f"--target={TARGET}", "-o",
                       str(folder / f"{library_name(type_, precision)}.so")]
            if precision:
                command.append(f"--precision={precision}")
            # A tiling the target cannot hold is refused with a diagnostic.
            if subprocess.run(command).returncode:
                print(f"skipped {tile} for {type_} {precision}")


def run(folder):
    import torch
    sys.path.insert(0, str(ROOT / "scripts" / "gpu"))
    from check_and_bench import Library, make_inputs, precision_setup, timed
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16}
    best = {}
    for type_, precision, family in LIBRARIES:
        label = precision or type_
        precision_setup(label)
        for workload, kind, m, k, n in WORKLOADS:
            name = f"{kind}_{k}x{n}"
            inputs = make_inputs(kind, m, k, n, dtypes[type_])
            results = []
            for variant in sorted(folder.iterdir()):
                path = variant / f"{library_name(type_, precision)}.so"
                if not path.exists():
                    continue
                lib = Library(path)
                outputs = [torch.empty([m if d is None else d
                                        for d in o["shape"]], device="cuda",
                                       dtype=dtypes[type_])
                           for o in lib.entries[name]["outputs"]]
                ms = timed(lambda: lib.run(name, m, inputs, outputs),
                           warmup=3, iters=10)
                results.append((ms, variant.name.replace("_", ",")))
            if not results:
                continue
            results.sort()
            print(f"{workload} {label} {m}x{k}x{n}:")
            for ms, tile in results:
                print(f"  {tile:16s} {ms:8.3f} ms "
                      f"{2 * m * n * k / ms / 1e9:6.0f} TFLOP/s")
            best[f"{workload}:{label}"] = results[0][1]
    (folder / "best.json").write_text(json.dumps(best, indent=1) + "\n")
    print(json.dumps(best))


if __name__ == "__main__":
    step, folder = sys.argv[1], pathlib.Path(sys.argv[2])
    build(folder) if step == "build" else run(folder)
