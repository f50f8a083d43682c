#!/usr/bin/env python3
"""Compares the generated kernels of several fusion compilers on epilogues
that read a residual [M, N] matrix or a row statistic [M, 1] (sums,
differences and quotients), beside the plain GEMM and epilogues without
either (gelu, divisions by constants, softsign's quotient by a value of
each element, a softmax's row program, and y * sigmoid(y) with an
approximate and a correctly rounded reciprocal), K = N = 4096 unless asked
otherwise, tf32, 3xTF32, bf16 and f16.

  epilogue_ab.py pack OUT SIDE=FUSION_COMPILE... [--strategy S] [--k K]
      [--n N] [--epilogues E1,E2]
      (build machine) writes the models and compiles them with each
      compiler into OUT/SIDE/{tf32,fp32,bf16,f16}.so (all models, or
      those named; where K != N, without the models whose residual is
      x), the shape and the models in OUT/shape.json;
  epilogue_ab.py run OUT [--rows 1024,16384] [--rounds R]
      [--precisions tf32,fp32,bf16,f16] [--epilogues E1,E2]
      (GPU machine) checks every side's outputs (poisoned first) against
      float64, then times the sides and the raw cuBLAS GEMM interleaved:
      rounds alternate between them, so that clock drift falls on all
      alike. Prints a table of median ms per call last, with each side's
      ratio to the first side.
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys

# The element type and compile precision of each library.
PRECISIONS = {"tf32": "f32", "fp32": "f32", "bf16": "bf16", "f16": "f16"}
GELU = """
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.70710678118654752 : f32
    %s = arith.mulf %v, %rsqrt2 : f32
    %e = math.erf %s : f32
    %p = arith.addf %e, %one : f32
    %h = arith.mulf %v, %half : f32
    %g = arith.mulf %h, %p : f32"""
# y * sigmoid(y), its reciprocal approximate (fastmath<afn>, as the
# importer's sigmoid) or correctly rounded.
SILU = """
    %one = arith.constant 1.0 : f32
    %n = arith.negf %v : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %one, %d{} : f32
    %o = arith.mulf %v, %s : f32"""
# A softmax over each row: a row program reading the GEMM's output, whose
# division by the row's sum each element takes.
SOFTMAX = "softmax"
# name: (epilogue region body after GELU's values, the extra input (a
#        second matrix r: [M, N], or a row statistic s: [M, 1]), the row
#        operand, PyTorch's model)
MODELS = {
    "plain": (None, None, None, lambda y, x, r, s: y),
    "y_plus_x": ("%o = arith.addf %v, %res : f32", None, "x",
                 lambda y, x, r, s: y + x),
    "y_plus_r": ("%o = arith.addf %v, %res : f32", "r", "r",
                 lambda y, x, r, s: y + r),
    "y_minus_s": ("%o = arith.subf %v, %res : f32", "s", "s",
                  lambda y, x, r, s: y - s),
    "two_gelu": (GELU + "\n    %o = arith.addf %g, %g : f32", None, None,
                 lambda y, x, r, s: 2 * gelu(y)),
    "gelu_plus_x": (GELU + "\n    %o = arith.addf %g, %res : f32", None, "x",
                    lambda y, x, r, s: gelu(y) + x),
    "y_div_c": ("%c = arith.constant -0.7 : f32\n    %o = arith.divf %v, %c : f32",
                None, None, lambda y, x, r, s: y / -0.7),
    "y_div_3": ("%c = arith.constant 3.0 : f32\n    %o = arith.divf %v, %c : f32",
                None, None, lambda y, x, r, s: y / 3.0),
    "y_div_s": ("%o = arith.divf %v, %res : f32", "s", "s",
                lambda y, x, r, s: y / s),
    # An approximate quotient by a value of each element (div.full.f32;
    # 16-bit results make every division approximate).
    "y_div_r_approx": ("%o = arith.divf %v, %res fastmath<afn> : f32", "r",
                       "r", lambda y, x, r, s: y / r),
    "softsign": ("""%one = arith.constant 1.0 : f32
    %a = math.absf %v : f32
    %d = arith.addf %a, %one : f32
    %o = arith.divf %v, %d : f32""", None, None,
                 lambda y, x, r, s: y / (1 + y.abs())),
    "softmax": (SOFTMAX, None, None,
                lambda y, x, r, s: y.softmax(1)),
    "silu": (SILU.format(" fastmath<afn>"), None, None,
             lambda y, x, r, s: y * y.sigmoid()),
    "silu_exact": (SILU.format(""), None, None,
                   lambda y, x, r, s: y * y.sigmoid()),
}


def gelu(y):
    import torch.nn.functional as F
    return F.gelu(y)


def shaped_models(k, n):
    """The MODELS that a K x N layer has: a residual that is x needs N = K."""
    return [name for name, (_, _, residual, _) in MODELS.items()
            if residual != "x" or k == n]


def model_mlir(name, t, k, n):
    body, extra, residual, _ = MODELS[name]
    x, w, v = f"tensor<?x{k}x{t}>", f"tensor<{n}x{k}x{t}>", f"tensor<{n}x{t}>"
    y = f"tensor<?x{n}x{t}>"
    types = {"x": y, "r": y, "s": f"tensor<?x1x{t}>"}
    args = f"%x: {x}, %w: {w}, %b: {v}"
    if extra:
        args += f", %{extra}: {types[extra]}"
    text = f"func.func @{name}({args}) -> {y} {{\n"
    text += f"  %y = fusion.linear %x, %w, %b : {x}, {w}, {v} -> {y}\n"
    if body is None:
        return text + f"  return %y : {y}\n}}\n"
    if body is SOFTMAX:
        row = f"tensor<?x1x{t}>"
        return text + f"""  %m = fusion.reduce max %y : {y} -> {row} {{
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }}
  %s = fusion.reduce sum %y rows(%m : {row}) : {y} -> {row} {{
  ^bb0(%v: f32, %a: f32):
    %0 = arith.subf %v, %a : f32
    %1 = math.exp %0 : f32
    fusion.yield %1 : f32
  }}
  %o = fusion.elementwise %y rows(%m, %s : {row}, {row}) : {y} {{
  ^bb0(%v: f32, %a: f32, %t: f32):
    %0 = arith.subf %v, %a : f32
    %1 = math.exp %0 : f32
    %2 = arith.divf %1, %t : f32
    fusion.yield %2 : f32
  }}
  return %o : {y}
}}
"""
    rows = f" rows(%{residual} : {types[residual]})" if residual else ""
    block = "%v: f32" + (", %res: f32" if residual else "")
    text += f"  %0 = fusion.elementwise %y{rows} : {y} {{\n  ^bb0({block}):"
    text += f"\n    {body}\n    fusion.yield %o : f32\n  }}\n"
    return text + f"  return %0 : {y}\n}}\n"


def selected_models(epilogues, k, n):
    """The MODELS named (comma-separated; all where None) that a K x N layer
    has; exits naming any other."""
    models = epilogues.split(",") if epilogues else shaped_models(k, n)
    unknown = set(models) - set(shaped_models(k, n))
    if unknown:
        sys.exit(f"unknown epilogues {sorted(unknown)} (known: "
                 f"{', '.join(shaped_models(k, n))})")
    return models


def packed_sides(out, first=None):
    """The sides packed in `out` (each a compiler's libraries), `first`
    first, then by name."""
    sides = sorted(p.name for p in out.iterdir() if p.is_dir())
    if first:
        sides.remove(first)
        sides.insert(0, first)
    return sides


def torch_dtype(element_type):
    """The torch dtype of a PRECISIONS element type."""
    import torch
    return {"f32": torch.float32, "bf16": torch.bfloat16,
            "f16": torch.float16}[element_type]


def pack(args):
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    models = selected_models(args.epilogues, args.k, args.n)
    (out / "shape.json").write_text(
        json.dumps({"k": args.k, "n": args.n, "models": models}))
    for precision, t in PRECISIONS.items():
        module = out / f"models_{t}.mlir"
        module.write_text("".join(model_mlir(m, t, args.k, args.n)
                                  for m in models))
    for side in args.sides:
        name, compiler = side.split("=", 1)
        (out / name).mkdir(exist_ok=True)
        for precision, t in PRECISIONS.items():
            command = [compiler, str(out / f"models_{t}.mlir"),
                       f"--strategy={args.strategy}", "--target=sm_90",
                       "-o", str(out / name / f"{precision}.so")]
            if t == "f32":
                command.append(f"--precision={precision}")
            subprocess.run(command, check=True)
        for header in (out / name).glob("*.h"):
            header.unlink()


def run(args):
    import torch
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from check_and_bench import (BOUNDS, Library, precision_setup,
                                 relative_error, timed)
    out = pathlib.Path(args.out)
    packed = json.loads((out / "shape.json").read_text())
    k, n = packed["k"], packed["n"]
    unknown = set(args.precisions.split(",")) - set(PRECISIONS)
    if unknown:
        sys.exit(f"unknown precisions {sorted(unknown)} (known: "
                 f"{', '.join(PRECISIONS)})")
    epilogues = selected_models(args.epilogues, k, n)
    if not args.epilogues:  # those packed
        epilogues = packed["models"]
    sides = packed_sides(out, args.first)
    failures, table = [], []
    print(f"# {torch.cuda.get_device_name()}, sides {', '.join(sides)}")
    for precision, t in PRECISIONS.items():
        if precision not in args.precisions.split(","):
            continue
        precision_setup(precision)
        libs = {s: Library(out / s / f"{precision}.so") for s in sides}
        dtype = torch_dtype(t)
        for m in (int(r) for r in args.rows.split(",")):
            x = torch.randn(m, k, device="cuda", dtype=dtype)
            w = (torch.randn(n, k, device="cuda") / 64).to(dtype)
            b = torch.randn(n, device="cuda", dtype=dtype)
            # Magnitudes 0.5 to 1.5 of either sign, never 0: y / r and
            # y / s stay within f16's range.
            extras = {e: ((torch.rand(m, columns, device="cuda") + 0.5) *
                          (torch.randint(0, 2, (m, columns), device="cuda")
                           * 2 - 1)).to(dtype)
                      for e, columns in (("r", n), ("s", 1))}
            y64 = torch.addmm(b.double(), x.double(), w.double().t())
            for name, (_, extra, _, model) in MODELS.items():
                if name not in epilogues:
                    continue
                inputs = [x, w, b] + ([extras[extra]] if extra else [])
                ref = model(y64, x.double(), extras["r"].double(),
                            extras["s"].double())
                outs = {}
                for side, lib in libs.items():
                    outs[side] = torch.full((m, n), float("nan"),
                                            device="cuda", dtype=dtype)
                    lib.run(name, m, inputs, [outs[side]])
                torch.cuda.synchronize()
                errors = {s: relative_error(o, ref) for s, o in outs.items()}
                bad = [s for s, e in errors.items() if not e <= BOUNDS[precision]]
                failures += [f"{s}:{precision}:{name} M={m}" for s in bad]
                if args.rounds == 0:
                    table.append((precision, name, m, None, errors))
                    continue
                calls = {s: (lambda lib=lib, o=outs[s]: lib.run(
                    name, m, inputs, [o])) for s, lib in libs.items()}
                calls["gemm"] = lambda: torch.addmm(b, x, w.t())
                times = {s: [] for s in calls}
                for _ in range(args.rounds):
                    for s, call in calls.items():
                        times[s].append(timed(call, iters=5))
                medians = {s: statistics.median(v) for s, v in times.items()}
                table.append((precision, name, m, medians, errors))
    print(f"\n| prec | epilogue | M | {' | '.join(sides)} | gemm | "
          + " | ".join(f"{s} / {sides[0]}" for s in sides[1:])
          + f" | {sides[-1]} / gemm | max error |")
    print("|" + "---|" * (5 + 2 * len(sides)))
    for precision, name, m, medians, errors in table:
        if medians is None:  # checked, not timed
            cells = ["-"] * (2 * len(sides) + 1)
        else:
            cells = [f"{medians[s]:.3f}" for s in sides + ["gemm"]]
            cells += [f"{medians[s] / medians[sides[0]]:.3f}"
                      for s in sides[1:]]
            cells.append(f"{medians[sides[-1]] / medians['gemm']:.3f}")
        cells.append(f"{max(errors.values()):.1e}")
        print(f"| {precision} | {name} | {m} | " + " | ".join(cells) + " |")
    print("\nall within bounds" if not failures else
          f"\nFAILED: {', '.join(failures)}")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("pack")
    p.add_argument("out")
    p.add_argument("sides", nargs="+", help="NAME=FUSION_COMPILE")
    p.add_argument("--strategy", default="wgmma")
    p.add_argument("--k", type=int, default=4096)
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--epilogues", default=None,
                   help="the MODELS to compile, comma-separated (default: "
                   "all); run then takes these")
    r = commands.add_parser("run")
    r.add_argument("out")
    r.add_argument("--rows", default="1024,16384")
    r.add_argument("--precisions", default=",".join(PRECISIONS))
    r.add_argument("--rounds", type=int, default=7,
                   help="timing rounds (0: check only, e.g. under "
                   "compute-sanitizer)")
    r.add_argument("--epilogues", default=None,
                   help="the MODELS to run, comma-separated (default: those "
                   "packed)")
    r.add_argument("--first", default=None,
                   help="the side the others are compared with")
    args = parser.parse_args()
    if args.command == "pack":
        pack(args)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
