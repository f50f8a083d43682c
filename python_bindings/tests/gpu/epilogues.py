"""Epilogues that read a residual [M, N] matrix or a row statistic [M, 1]
(sums, differences and quotients), beside the plain GEMM and epilogues
without either (gelu, divisions by constants, softsign's quotient by a
value of each element, a softmax's row program, and y * sigmoid(y) with an
approximate and a correctly rounded reciprocal): the fusion-dialect
functions that scripts/gpu/make_models.py writes (K = N = 4096) and
scripts/gpu-check.sh build compiles into epilogues/{tf32,fp32,bf16,f16}.so
(wgmma, sm_90), and PyTorch's model of each, which test_libraries.py
checks them against (and the divisions bit for bit).

No import of torch at import time: make_models.py runs without it.
"""
import pathlib

K = N = 4096

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
    "y_div_c": ("%c = arith.constant -0.7 : f32\n"
                "    %o = arith.divf %v, %c : f32",
                None, None, lambda y, x, r, s: y / -0.7),
    "y_div_3": ("%c = arith.constant 3.0 : f32\n"
                "    %o = arith.divf %v, %c : f32",
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


def write_modules(out, k=K, n=N):
    """OUT/epilogues_{f32,bf16,f16}.mlir: every model at K x N (a residual
    that is x needs N = K)."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for t in sorted(set(PRECISIONS.values())):
        (out / f"epilogues_{t}.mlir").write_text(
            "".join(model_mlir(m, t, k, n) for m in shaped_models(k, n)))
