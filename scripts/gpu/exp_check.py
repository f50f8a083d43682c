#!/usr/bin/env python3
"""exp(x) on the GPU against float64: libdevice's `__nv_expf` (an
elementwise `exp` without fastmath flags) and `__nv_fast_expf` (one marked
`fastmath<afn>`, as fusion-approximate-16-bit-math marks those whose
results are 16-bit), and PyTorch's own f32 `torch.exp`: the largest
relative error over bands of x, the largest in f32 units in the last place,
and where results flush to 0 (benchmark run 36).

    exp_check.py pack OUT FUSION_COMPILE   (build machine) compiles
        OUT/exact.so and OUT/afn.so;
    exp_check.py run OUT   (GPU machine) checks them.
"""
import pathlib
import subprocess
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_and_bench import Library  # noqa: E402

EXP = """func.func @exp(%x: tensor<?x1024xf32>) -> tensor<?x1024xf32> {{
  %0 = fusion.elementwise %x : tensor<?x1024xf32> {{
  ^bb0(%v: f32):
    %e = math.exp %v{flags} : f32
    fusion.yield %e : f32
  }}
  return %0 : tensor<?x1024xf32>
}}
"""
BANDS = ((-87.0, -10.0), (-10.0, -1.0), (-1.0, 1.0), (1.0, 10.0),
         (10.0, 88.0))


def pack(out, compiler):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, flags in (("exact", ""), ("afn", " fastmath<afn>")):
        (out / f"{name}.mlir").write_text(EXP.format(flags=flags))
        subprocess.run([compiler, str(out / f"{name}.mlir"), "--target=sm_90",
                        "-o", str(out / f"{name}.so")], check=True)
        (out / f"{name}.h").unlink()


def report(name, out, x, ref):
    rel = ((out.double() - ref).abs() / ref)
    ulp = (torch.nextafter(ref.float(), torch.tensor(
        float("inf"), device=x.device)).double() - ref.float().double())
    normal = (ref > 2.0 ** -126) & torch.isfinite(ref.float())
    cells = [f"{(rel[normal] / (ulp[normal] / ref[normal])).max().item():.1f}"]
    for low, high in BANDS:
        band = normal & (x > low) & (x < high)
        cells.append(f"{rel[band].max().item():.1e}")
    flushed = x[(out == 0) & (ref > 0)]
    cells.append(f"{flushed.max().item():.2f}" if flushed.numel() else "-")
    print(f"| {name} | " + " | ".join(cells) + " |")


def run(out):
    out = pathlib.Path(out)
    x = torch.linspace(-104, 89, 1 << 24, dtype=torch.float64).float()
    x = x.reshape(-1, 1024).cuda()
    flat = x.flatten()
    ref = torch.exp(flat.double())
    print(f"# {torch.cuda.get_device_name()}, {flat.numel()} values of x")
    print("| exp | max ulps (normal results) | "
          + " | ".join(f"max rel, x in ({a}, {b})" for a, b in BANDS)
          + " | largest x flushed to 0 |")
    print("|---" * (3 + len(BANDS)) + "|")
    for name in ("exact", "afn"):
        result = torch.full_like(x, float("nan"))
        Library(out / f"{name}.so").run("exp", x.shape[0], [x], [result])
        torch.cuda.synchronize()
        report(name, result.flatten(), flat, ref)
    report("torch f32", torch.exp(flat), flat, ref)


if __name__ == "__main__":
    if sys.argv[1] == "pack":
        pack(sys.argv[2], sys.argv[3])
    else:
        run(sys.argv[2])
