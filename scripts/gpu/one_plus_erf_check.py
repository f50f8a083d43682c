"""1 + erf(s) on the GPU against float64, for libraries with an
elementwise `1 + erf(v)` entry `cdf` over [?, 1024] f32 given as NAME=LIB,
and PyTorch's own f32 `1 + torch.erf(s)`: the largest absolute error, where
the result is in [1, 2) also in its units in the last place, and the
largest relative error over bands of s <= 0 (benchmark runs 30
and 36).

    one_plus_erf_check.py pack OUT NAME=FUSION_COMPILE...   (build machine)
        compiles the exact erf with each compiler (OUT/NAME.so), and with
        the last one also the approximate erf, marked fastmath<afn> by hand
        (OUT/NAME_afn.so);
    one_plus_erf_check.py NAME=LIB...   (GPU machine) checks them.
"""
import pathlib
import subprocess
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_and_bench import Library  # noqa: E402

CDF = """func.func @cdf(%x: tensor<?x1024xf32>) -> tensor<?x1024xf32> {{
  %0 = fusion.elementwise %x : tensor<?x1024xf32> {{
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    %e = math.erf %v{flags} : f32
    %p = arith.addf %e, %one : f32
    fusion.yield %p : f32
  }}
  return %0 : tensor<?x1024xf32>
}}
"""
BANDS = ((-1.0, 0.0), (-3.0, -1.0), (-4.5, -3.0), (-6.0, -4.5))
SPECIALS = 9


def sweep():
    """Special values (the first SPECIALS), 2^24 values evenly over
    [-6, 6], and values of both signs down to 1e-30: [rows, 1024]."""
    dense = torch.linspace(-6, 6, 1 << 24, dtype=torch.float64)
    tiny = torch.logspace(-30, -3, 1 << 14, dtype=torch.float64)
    special = torch.tensor([0.0, -0.0, -100.0, -1e30, 100.0, 1e30,
                            float("inf"), float("-inf"), float("nan")],
                           dtype=torch.float64)
    s = torch.cat([special, dense, tiny, -tiny]).float()
    pad = -s.numel() % 1024
    return torch.cat([s, s[:pad]]).reshape(-1, 1024).cuda()


def report(name, out, s, ref):
    """Prints the row of `out` (s and ref flat); returns its specials."""
    finite = torch.isfinite(s)
    error = (out.double() - ref).abs()[finite]
    sf, rf = s[finite].double(), ref[finite]
    upper = sf > 0
    ulp = torch.nextafter(rf[upper].float(), torch.tensor(
        float("inf"), device=s.device)).double() - rf[upper].float().double()
    cells = [f"{error.max().item():.2e}",
             f"{(error[upper] / ulp).max().item():.2f}"]
    for low, high in BANDS:
        band = (sf > low) & (sf < high)
        cells.append(f"{(error[band] / rf[band]).max().item():.1e}")
    print(f"| {name} | " + " | ".join(cells) + " |")
    return out[:SPECIALS].tolist()


def pack(out, sides):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for variant, flags, compilers in (("", "", sides),
                                      ("_afn", " fastmath<afn>", sides[-1:])):
        (out / f"cdf{variant}.mlir").write_text(CDF.format(flags=flags))
        for side in compilers:
            name, compiler = side.split("=", 1)
            subprocess.run([compiler, str(out / f"cdf{variant}.mlir"),
                            "--target=sm_90", "-o",
                            str(out / f"{name}{variant}.so")], check=True)


def main():
    if sys.argv[1] == "pack":
        return pack(sys.argv[2], sys.argv[3:])
    s = sweep()
    flat = s.flatten()
    ref = torch.special.erfc(-flat.double())
    specials = {}
    print(f"# {torch.cuda.get_device_name()}, {flat.numel()} values of s")
    print("| 1 + erf(s) | max abs error | max ulps, s > 0 | "
          + " | ".join(f"max rel, s in ({a}, {b})" for a, b in BANDS) + " |")
    print("|---" * (3 + len(BANDS)) + "|")
    for side in sys.argv[1:]:
        name, path = side.split("=", 1)
        out = torch.full_like(s, float("nan"))
        Library(path).run("cdf", s.shape[0], [s], [out])
        torch.cuda.synchronize()
        specials[name] = report(name, out.flatten(), flat, ref)
    specials["torch f32"] = report("torch f32", 1 + torch.erf(flat), flat,
                                   ref)
    values = [f"{v:g}" for v in flat[:SPECIALS].tolist()]
    print("\n| s | " + " | ".join(values) + " |")
    print("|---" * (1 + len(values)) + "|")
    for name, results in specials.items():
        print(f"| {name} | " + " | ".join(f"{v:g}" for v in results) + " |")


if __name__ == "__main__":
    main()
