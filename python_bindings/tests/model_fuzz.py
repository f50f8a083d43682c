"""A random-model differential fuzzer of fusion's model family (issue 68).

`generate(seed)` writes a random PyTorch model of the family fusion compiles
(one or two linear layers, nn.Linear's or GPT-2's Conv1D form with the
weight stored [in, out], each followed by a random chain of elementwise
ops, row reductions, softmaxes, norms, gates and residual adds) as the
SOURCE TEXT of a class, plus how its inputs are made. Keeping the model as
text makes every case print itself as a standalone reproducer
(`Case.reproducer()`), and keeps it deterministic per seed whatever the
target it later runs on.

`check(case)` runs the model through torch.compile(backend="fusion") and
fusion.compile, in eval mode (torch.no_grad) and in train mode (gradients of
a weighted sum of the outputs), over several batch sizes, and compares every
output, parameter gradient and buffer with a float64 eager copy, calibrated
by eager's own error in the model's dtype (`compare`). `reduce(case,
finding)` makes a failing case smaller while it fails alike.

Command line (PYTHONPATH=build/python_packages):

    python python_bindings/tests/model_fuzz.py --seeds 0:200 --isolate
    python python_bindings/tests/model_fuzz.py --seed 144 --show
    python python_bindings/tests/model_fuzz.py --seed 12 --reduce

docs/model-fuzzing.md describes the rules, the categories and the runs.
"""
import argparse
import collections
import copy
import dataclasses
import faulthandler
import functools
import json
import linecache
import logging
import math
import os
import random
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

# What a failure can be, in the order the summary lists them. "refused"
# (fusion.compile raised UnsupportedOperationError: a clear refusal) and
# "invalid" (eager PyTorch itself failed: a bug of the generator; or
# torch.compile failed as it does with PyTorch's own aot_eager backend) are not
# failures of fusion.
CATEGORIES = ("crash", "compile-failure", "wrong-shape", "wrong-value",
              "nonfinite", "grad")
PATHS = ("torch.compile", "fusion.compile")
MODES = ("eval", "train")
# What check() runs for each model, in this order: each front end in each
# mode.
STAGES = tuple((path, mode) for path in PATHS for mode in MODES)

# Relative L2 error allowed against float64, by the model's dtype: fusion
# computes 16-bit models in float32 inside its kernels, so bf16 gets eager's
# rounding at most; float32 allows for another summation order.
TOLERANCE = {"float32": 1e-4, "bfloat16": 3e-2, "float64": 1e-10}
# GEMM precisions of float32 models on GPUs (options["precision"]).
PRECISION_TOLERANCE = {"tf32": 5e-3, "bf16": 3e-2, "f16": 1e-2}
# How many times eager's own error (in the model's dtype) fusion may have:
# ill-conditioned math (cancellation) is as far off in eager. Where PyTorch's
# decomposition (a second legitimate implementation) is further off than
# eager, or closer, the factor grows by that spread (at most SPREAD_CAP
# times): implementations of that math differ by that much among themselves.
EAGER_ERROR_FACTOR = 4.0
SPREAD_CAP = 16.0
# A gradient that float64 says is zero up to rounding (a loss that does not
# depend on the parameter: softmax, normalizations) is rounding noise in any
# implementation. Its error is also allowed GRADIENT_NOISE * eps(dtype) *
# (the gradient's natural scale, sum|weight * output| / rms(parameter): a
# few roundings of each term of the sum, with no cancellation).
GRADIENT_NOISE = 4.0
# The findings of `compare` that other legitimate implementations (rule 4)
# may excuse.
PEER_CHECKED = ("wrong-value", "nonfinite")
# Eager's own forward error (relative L2 against float64) past which the
# model has left its dtype's range (Check.gradients).
OUT_OF_RANGE = 0.1
# The size of the sets a forward normalization normalizes, by ATen's name
# for it, from its arguments.
NORMALIZED_SET_SIZE = {
    "aten.native_layer_norm.default": lambda args: math.prod(args[1]),
    "aten.native_group_norm.default":
        lambda args: args[4] // args[6] * args[5],  # C / groups * HxW
}
# Ops whose derivative is unbounded at a point: ATen's name -> (the
# argument that reaches it, the point).
SINGULAR_POINTS = {
    "aten.sqrt.default": (0, 0.0), "aten.rsqrt.default": (0, 0.0),
    "aten.log.default": (0, 0.0), "aten.log2.default": (0, 0.0),
    "aten.log10.default": (0, 0.0), "aten.log1p.default": (0, -1.0),
    "aten.reciprocal.default": (0, 0.0), "aten.div.Tensor": (1, 0.0),
}

# The generator's chunk of a layer's features, and the same pieces copied
# (_Run.chunks_copied).
CHUNK = "a, b = h.chunk(2, -1)"
# The share of linear layers written as GPT-2's Conv1D (weight [in, out]).
CONV1D_SHARE = 0.25
# The share of the others written as sibling linears of one input (q, k,
# v), their outputs joined: what torch.compile's partitioner groups into
# one GEMM (option group_gemms).
SIBLINGS_SHARE = 0.2
CHUNK_COPIED = "a, b = (t.contiguous() for t in h.chunk(2, -1))"

# ---------------------------------------------------------------------------
# Inputs. This text is executed here and copied into every reproducer, so
# the reproducer's inputs are the fuzzer's, bit for bit.

INPUT_SOURCE = '''\
SPECIAL_VALUES = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan,
                  "huge": 1e30, "tiny": 1e-30, "negzero": -0.0}


def make_input(seed, shape, scale, special, call):
    """Input number `call` of a case, in float64: randn * scale, with the
    special values written at seeded places (a zero or constant row, or one
    element)."""
    g = torch.Generator().manual_seed(seed * 1000 + call)
    x = torch.randn(shape, generator=g, dtype=torch.float64) * scale
    if x.numel() == 0:
        return x
    flat = x.view(-1, shape[-1])
    r = random.Random(seed * 31 + call)
    for kind in special:
        i, j = r.randrange(flat.shape[0]), r.randrange(flat.shape[1])
        if kind in SPECIAL_VALUES:
            flat[i, j] = SPECIAL_VALUES[kind]
        elif kind == "zerorow":
            flat[i] = 0.0
        elif kind == "constrow":
            flat[i] = 1.5
    return x


def loss_weight(seed, call, index, shape, dtype):
    """The fixed random weights of output `index` in the training loss
    sum(output * weight): a plain sum's gradient vanishes through softmax
    and normalizations, which would leave rounding noise to compare."""
    g = torch.Generator().manual_seed(seed * 7919 + call * 31 + index)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
'''
exec(INPUT_SOURCE)  # noqa: S102 (our text): make_input, loss_weight

# ---------------------------------------------------------------------------
# The generator.


@dataclasses.dataclass
class Case:
    """One generated model and its inputs: everything a reproducer needs."""
    seed: int
    source: str  # `class M(nn.Module)`, standalone
    dtype: str  # "float32", "bfloat16" or "float64"
    in_features: int
    inner: tuple  # dimensions between the batch and the features
    batches: list  # the batch size of each call; the first is >= 2
    special: list  # special values written into each input (make_input)
    scale: float
    reduced: bool = False  # made smaller by reduce(): not generate(seed)'s

    @property
    def torch_dtype(self):
        return getattr(torch, self.dtype)

    def shape(self, batch):
        return (batch, *self.inner, self.in_features)

    def model(self):
        """A fresh instance of the model in its dtype (parameters seeded by
        the case's seed), in training mode as nn.Modules start."""
        filename = f"<model_fuzz seed {self.seed}>"
        # Registered so that tracebacks and fusion's messages (which name
        # the line of the model's source) can show the generated lines.
        linecache.cache[filename] = (len(self.source), None,
                                     self.source.splitlines(True), filename)
        namespace = {"torch": torch, "nn": nn, "F": F}
        exec(compile(self.source, filename, "exec"), namespace)  # noqa: S102
        torch.manual_seed(self.seed)
        return namespace["M"]().to(self.torch_dtype)

    def input(self, call):
        """The float64 input of call number `call`."""
        return make_input(self.seed, self.shape(self.batches[call]),
                          self.scale, self.special, call)

    def spec(self):
        return (f"dtype {self.dtype}, input shape {self.shape('B')} for B "
                f"in {self.batches}, scale {self.scale}, special values "
                f"{self.special or 'none'}")

    def reproducer(self, findings=(), target="cpu", options=None):
        """A standalone script that builds this case and runs it through the
        front ends and modes of `findings` (all four if none) for `target`
        with `options` (as check's)."""
        runs = sorted({(f.path, f.mode) for f in findings if f.path}) or \
            list(STAGES)
        what = "reduced from seed" if self.reduced else "seed"
        header = [f"# model_fuzz {what} {self.seed}: {self.spec()}"]
        header += [f"# {f.line()}" for f in findings]
        header.append(f"# python python_bindings/tests/model_fuzz.py "
                      f"--seed {self.seed} --show" +
                      (" (the model before reduction)" if self.reduced
                       else ""))
        settings = (f"SEED, DTYPE, INNER, IN_FEATURES = {self.seed}, "
                    f"torch.{self.dtype}, {tuple(self.inner)!r}, "
                    f"{self.in_features}\n"
                    f"BATCHES, SCALE, SPECIAL = {self.batches!r}, "
                    f"{self.scale!r}, {self.special!r}\n"
                    f"TARGET, OPTIONS = {target!r}, {dict(options or {})!r}\n")
        calls = "".join(f"run({p!r}, {m!r})\n" for p, m in runs)
        return "\n".join(header) + "\n" + REPRO_IMPORTS + "\n\n" + \
            self.source + "\n\n" + INPUT_SOURCE + "\n\n" + settings + \
            REPRO_DRIVER + "\n\n" + calls


REPRO_IMPORTS = """\
import copy
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion"""

REPRO_DRIVER = '''
def flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def rel_err(got, want):
    """Relative L2 error on the elements finite in both, and how many are
    nonfinite (the float64 reference's count in parentheses)."""
    if got.shape != want.shape:
        return f"shape {tuple(got.shape)}, float64 {tuple(want.shape)}"
    got, want = got.detach().cpu().double(), want.detach()
    ok = got.isfinite() & want.isfinite()
    d = (got[ok] - want[ok]).norm() / want[ok].norm().clamp_min(1e-300)
    return (f"rel err {d.item():.2e}, nonfinite {int((~got.isfinite()).sum())}"
            f" ({int((~want.isfinite()).sum())})")


def run(path, mode):
    """The batches through one front end in one mode, against float64."""
    torch._dynamo.reset()
    torch.manual_seed(SEED)
    model = M().to(DTYPE).train(mode == "train")
    device = "cpu" if TARGET == "cpu" else "cuda"
    ref, eager = copy.deepcopy(model).double(), copy.deepcopy(model).to(device)
    subject = copy.deepcopy(model).to(device)
    xs = [make_input(SEED, (b, *INNER, IN_FEATURES), SCALE, SPECIAL, i)
          .to(DTYPE) for i, b in enumerate(BATCHES)]
    if path == "torch.compile":
        compiled = torch.compile(subject, backend="fusion",
                                 options={"target": TARGET, **OPTIONS})
    else:
        compiled = fusion.compile(
            subject, (xs[0].to(device),), target=TARGET,
            **{k: v for k, v in OPTIONS.items()
               if k not in fusion.dynamo._BACKEND_OPTIONS})
    for call, x in enumerate(xs):
        with torch.set_grad_enabled(mode == "train"):
            want, have = ref(x.double()), eager(x.to(device))
            got = compiled(x.to(device))
        for i, (g, w, e) in enumerate(zip(flat(got), flat(want), flat(have))):
            print(f"{path} {mode} batch {x.shape[0]} output {i}: "
                  f"{rel_err(g, w)}; eager {DTYPE}: {rel_err(e, w)}")
        if mode == "train":
            for m, outs in ((subject, got), (ref, want), (eager, have)):
                m.zero_grad(set_to_none=True)
                # The loss: sum(output * weight), weights fixed by the seed.
                sum((o * loss_weight(SEED, call, i, o.shape, DTYPE).to(o))
                    .sum() for i, o in enumerate(flat(outs))).backward()
            for (name, p), q, r in zip(subject.named_parameters(),
                                       ref.parameters(), eager.parameters()):
                if q.grad is not None:
                    print(f"  grad {name}: " + ("None" if p.grad is None else
                                                rel_err(p.grad, q.grad)) +
                          f"; eager {DTYPE}: {rel_err(r.grad, q.grad)}")
'''


def _num(value):
    """A float as Python source."""
    return repr(float(value))


def _features(rng, zero=True):
    """A feature count: mostly 4..300, often tiny (1..3), rarely 0."""
    r = rng.random()
    if zero and r < 0.015:
        return 0
    if r < 0.15:
        return rng.choice([1, 1, 2, 3])
    if r < 0.45:
        return rng.choice([4, 8, 16, 17, 32, 33, 64, 96, 100, 128, 130, 255,
                           256, 300])
    return rng.randint(4, 300)


def _constant(rng):
    """A scalar of a chain op, sometimes extreme (as users' masks and
    epsilons are)."""
    if rng.random() < 0.08:
        return rng.choice([1e30, -1e30, 1e-30, 0.0, 1e-6, 1e6])
    return rng.choice([0.5, 2.0, -1.0, 0.1, 1.5, -0.5, 3.0, 0.25, -2.0, 1.0])


# Elementwise steps h -> expression; each takes the rng for its constants.
UNARY = [
    lambda r: "F.gelu(h)",
    lambda r: "F.gelu(h, approximate='tanh')",
    lambda r: "F.silu(h)",
    lambda r: "F.relu(h)",
    lambda r: "F.relu6(h)",
    lambda r: f"F.hardtanh(h, {_num(-r.choice([0.0, 1.0, 2.0]))}, "
              f"{_num(r.choice([0.5, 1.0, 3.0]))})",
    lambda r: f"h.clamp({_num(-r.choice([0.0, 1.0, 3.0]))}, "
              f"{_num(r.choice([0.5, 1.0, 3.0]))})",
    lambda r: f"h.clamp_min({_num(_constant(r))}) + 1",
    lambda r: f"h.clamp(max={_num(_constant(r))})",
    lambda r: f"F.leaky_relu(h, {_num(r.choice([0.01, 0.1, 0.2, -0.5]))})",
    lambda r: f"F.elu(h, alpha={_num(r.choice([1.0, 0.5, 2.0]))})",
    lambda r: f"F.softplus(h, beta={_num(r.choice([1.0, 0.5, 2.0, 10.0]))}, "
              f"threshold={_num(r.choice([20.0, 5.0, 1.0]))})",
    lambda r: "F.mish(h)",
    lambda r: "F.hardswish(h)",
    lambda r: "F.hardsigmoid(h)",
    lambda r: "torch.sigmoid(h)",
    lambda r: "torch.tanh(h)",
    lambda r: "torch.exp(h)",
    lambda r: "torch.exp(-h.abs())",
    lambda r: "torch.log(h.abs())",
    lambda r: f"torch.log(h.abs() + {_num(r.choice([1e-6, 1.0]))})",
    lambda r: "torch.sqrt(h.abs())",
    lambda r: f"torch.rsqrt(h.abs() + {_num(r.choice([1e-6, 1.0]))})",
    lambda r: f"torch.where(h > {_num(_constant(r))}, h, "
              f"h * {_num(_constant(r))})",
    lambda r: "torch.where(h > 0, h, torch.exp(h) - 1)",
    lambda r: f"h * {_num(_constant(r))}",
    lambda r: f"h + {_num(_constant(r))}",
    lambda r: f"{_num(_constant(r))} - h",
    lambda r: f"h / {_num(r.choice([2.0, -3.0, 0.5, 1e-30, 7.0]))}",
    lambda r: f"h * {_num(_constant(r))} + {_num(_constant(r))}",
    lambda r: f"{_num(r.choice([1.0, 0.5]))} / h",
    lambda r: "h * h",
    lambda r: "h * torch.sigmoid(h)",
    lambda r: "h.abs()",
    lambda r: "torch.cos(h)",
    lambda r: "torch.trunc(h)",
    lambda r: "torch.floor(h)",
]

# Reductions along the features: (expression with {kd} for ", keepdim=True"
# or "", whether it is defined over zero features).
REDUCTIONS = [
    ("h.sum(-1{kd})", True),
    ("h.mean(-1{kd})", True),
    ("h.amax(-1{kd})", False),
    ("h.amin(-1{kd})", False),
    ("h.max(-1{kd}).values", False),
    ("h.min(-1{kd}).values", False),
    ("torch.logsumexp(h, -1{kd})", True),
    ("h.var(-1{kd})", True),
    ("h.var(-1, unbiased=False{kd})", True),
    ("h.std(-1{kd})", True),
    ("torch.linalg.vector_norm(h, 2, dim=-1{kd})", True),
    ("h.norm(dim=-1{kd})", True),
]

# Row statistics applied to the row, keeping its width ({eps} a constant).
ROW_OPS = [
    "h - h.amax(-1, keepdim=True)",
    "h - h.min(-1, keepdim=True).values",
    "h - h.mean(-1, keepdim=True)",
    "h - torch.logsumexp(h, -1, keepdim=True)",
    "(h - h.mean(-1, keepdim=True)) / (h.std(-1, keepdim=True) + {eps})",
    "h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + {eps})",
    "h / (h.norm(dim=-1, keepdim=True) + {eps})",
    "h / h.sum(-1, keepdim=True)",
    "F.normalize(h, dim=-1)",
]
# Row ops whose rows sum to 0 in exact arithmetic, and the one that divides
# by that sum: its result after them is rounding noise in every
# implementation (fuzzer seed 1164), so the generator does not write it.
CENTRING_ROW_OPS = (
    "h - h.mean(-1, keepdim=True)",
    "(h - h.mean(-1, keepdim=True)) / (h.std(-1, keepdim=True) + {eps})")
DIVIDE_BY_SUM = "h / h.sum(-1, keepdim=True)"
assert {*CENTRING_ROW_OPS, DIVIDE_BY_SUM} <= set(ROW_OPS)


class _Builder:
    """Writes one model's __init__ and forward lines, tracking the shape of
    the chain value h: `features` is its last dimension, None once a
    keepdim=False reduction removed it (then only elementwise steps
    follow)."""

    def __init__(self, rng, rank, in_features, form_rng=None,
                 sibling_rng=None):
        self.rng = rng
        # How each linear layer is written (forms): its own stream, so that
        # a seed's model computes the same numbers whatever form it takes;
        # the sibling form another (None: none), so that the Conv1D forms
        # stay.
        self.form_rng = form_rng or random.Random(0)
        self.sibling_rng = sibling_rng
        self.rank = rank
        self.init = []
        self.body = []
        self.counts = collections.Counter()
        self.features = in_features
        # Values the chain may add back or return: (name, features).
        self.saved = [("x", in_features)]
        self.batch_norm = False  # training needs more than one row
        # Whether h's rows sum to 0 in exact arithmetic (a norm without
        # affine, h - mean): set by the step that made h, and what it was
        # before the current step.
        self.centred = self.after_centring = False

    def name(self, prefix):
        index = self.counts[prefix]
        self.counts[prefix] += 1
        return f"{prefix}{index}"

    def random_affine(self, name):
        """Random weight and bias for norm `name` (not PyTorch's 1 and 0,
        which hide a wrong affine step)."""
        self.init.append(f"with torch.no_grad(): self.{name}.weight."
                         f"normal_(); self.{name}.bias.normal_()")

    def set(self, expression):
        self.body.append(f"h = {expression}")

    def rows(self, module, features):
        """A call of a module of [rows, C] on h of any rank, as models write
        it (BatchNorm1d and GroupNorm read dimension 1 as the channels)."""
        if self.rank == 2:
            return f"self.{module}(h)"
        return f"self.{module}(h.reshape(-1, {features})).reshape(h.shape)"

    # Layers and steps. A step returns False where it does not apply.

    def linear(self, index):
        out_features = _features(self.rng)
        if self.rng.random() < 0.15 and self.features:
            out_features = self.features  # residuals of the layer input
        bias = self.rng.random() < 0.8
        self.init.append(f"self.lin{index} = nn.Linear({self.features}, "
                         f"{out_features}, bias={bias})")
        source = "h" if index else "x"
        if self.form_rng.random() < CONV1D_SHARE:
            # GPT-2's Conv1D: the same weight stored [in, out] and
            # multiplied as it is (addmm, or matmul for rank > 2).
            self.init.append(f"self.lin{index}.weight = nn.Parameter(self."
                             f"lin{index}.weight.detach().t().contiguous())")
            weight, bias_value = f"self.lin{index}.weight", \
                f"self.lin{index}.bias"
            if bias and self.rank == 2:
                self.set(f"torch.addmm({bias_value}, {source}, {weight})")
            else:
                self.set(f"{source} @ {weight}" +
                         (f" + {bias_value}" if bias else ""))
        elif out_features >= 2 and self.sibling_rng and \
                self.sibling_rng.random() < SIBLINGS_SHARE:
            self.siblings(index, source, out_features, bias)
        else:
            self.set(f"self.lin{index}({source})")
        self.body.append(f"y{index} = h")
        self.features = out_features
        self.centred = False
        self.saved.append((f"y{index}", out_features))

    def siblings(self, index, source, out_features, bias):
        """Layer `index` as 2 or 3 linears of `source` (its weight's and
        bias's row blocks, copied: the same numbers), their outputs joined
        along the features, as attention's q, k and v are computed."""
        count = min(self.sibling_rng.choice([2, 3]), out_features)
        cuts = sorted(self.sibling_rng.sample(range(1, out_features),
                                              count - 1))
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [out_features])]
        for name, parts in (("weight", "weights"), ("bias", "biases")):
            if name == "weight" or bias:
                self.init.append(
                    f"self.lin{index}_{parts} = nn.ParameterList(nn."
                    f"Parameter(p.detach().clone()) for p in self.lin{index}"
                    f".{name}.split({sizes}))")
        calls = [f"F.linear({source}, self.lin{index}_weights[{i}]" +
                 (f", self.lin{index}_biases[{i}])" if bias else ")")
                 for i in range(count)]
        self.set(f"torch.cat([{', '.join(calls)}], -1)")

    def unary(self):
        self.set(self.rng.choice(UNARY)(self.rng))
        return True

    def parameter(self):
        """An elementwise op with a parameter: per feature ([f] or [1, f]),
        or a single value (0-d), which also applies after a reduction."""
        name = self.name("v")
        shapes = ["0d"] if self.features is None else ["f", "1f", "0d"]
        shape = self.rng.choice(shapes)
        if shape == "0d":
            value = self.rng.choice([0.5, -1.5, 2.0, 0.0])
            self.init.append(f"self.{name} = nn.Parameter(torch.tensor"
                             f"({_num(value)}))")
        else:
            dims = f"{self.features}" if shape == "f" else \
                f"1, {self.features}"
            self.init.append(f"self.{name} = nn.Parameter(torch.randn"
                             f"({dims}))")
            if self.rng.random() < 0.2:
                self.init.append(f"with torch.no_grad(): self.{name}"
                                 f"[..., ::3] = 0")
        v = f"self.{name}"
        self.set(self.rng.choice([f"h * {v}", f"h + {v}", f"h - {v}",
                                  f"h / {v}", f"{v} - h",
                                  f"torch.maximum(h, {v})"]))
        return True

    def reduce(self):
        """A reduction along the features: keepdim=True leaves one feature,
        keepdim=False removes the dimension."""
        if self.features is None:
            return False
        choices = [e for e, empty_ok in REDUCTIONS
                   if empty_ok or self.features > 0]
        keep = self.rng.random() < 0.6
        self.set(self.rng.choice(choices).format(
            kd=", keepdim=True" if keep else ""))
        self.features = 1 if keep else None
        return True

    def row_op(self):
        if not self.features:
            return False
        op = self.rng.choice(ROW_OPS)
        if op == DIVIDE_BY_SUM and self.after_centring:
            return False
        self.set(op.format(eps=_num(self.rng.choice([1e-5, 1e-6, 1e-3]))))
        self.centred = op in CENTRING_ROW_OPS
        return True

    def softmax(self):
        if self.features is None:
            return False
        self.set(self.rng.choice(["F.softmax(h, dim=-1)",
                                  "F.log_softmax(h, dim=-1)",
                                  "torch.softmax(h, -1)"]))
        return True

    def layer_norm(self):
        if not self.features:
            return False
        eps = _num(self.rng.choice([1e-5, 1e-6, 0.1]))
        if self.rng.random() < 0.5:
            self.set(f"F.layer_norm(h, ({self.features},), eps={eps})")
            self.centred = True
            return True
        name = self.name("ln")
        affine = self.rng.random() < 0.7
        self.init.append(f"self.{name} = nn.LayerNorm({self.features}, "
                         f"eps={eps}, elementwise_affine={affine})")
        if affine:
            self.random_affine(name)
        self.set(f"self.{name}(h)")
        self.centred = not affine
        return True

    def group_norm(self):
        if not self.features:
            return False
        divisors = [g for g in range(1, self.features + 1)
                    if self.features % g == 0]
        groups = self.rng.choice(divisors[:6] + divisors[-2:])
        name = self.name("gn")
        affine = self.rng.random() < 0.7
        self.init.append(f"self.{name} = nn.GroupNorm({groups}, "
                         f"{self.features}, eps=1e-05, affine={affine})")
        if affine:
            self.random_affine(name)
        self.set(self.rows(name, self.features))
        self.centred = not affine
        # A group of one channel needs more than one row, as a batch norm.
        self.batch_norm |= groups == self.features
        return True

    def batch_norm_step(self):
        if not self.features:
            return False
        name = self.name("bn")
        affine = self.rng.random() < 0.6
        tracking = self.rng.random() < 0.85
        eps = _num(self.rng.choice([1e-5, 1e-3, 0.1]))
        self.init.append(f"self.{name} = nn.BatchNorm1d({self.features}, "
                         f"eps={eps}, momentum=0.1, affine={affine}, "
                         f"track_running_stats={tracking})")
        if tracking:
            self.init.append(
                f"with torch.no_grad(): self.{name}.running_mean.normal_(); "
                f"self.{name}.running_var.uniform_(0.5, 2.0); "
                f"self.{name}.num_batches_tracked.fill_(3)")
        if affine:
            self.random_affine(name)
        self.set(self.rows(name, self.features))
        self.batch_norm = True
        return True

    def residual(self):
        """h + an earlier value of the same shape (the layer input, a
        layer's output, a saved chain value) or of one feature."""
        fits = [n for n, f in self.saved if f == self.features or
                (f == 1 and self.features is not None)]
        if not fits:
            return False
        self.set(f"h {self.rng.choice(['+', '+', '*', '-'])} "
                 f"{self.rng.choice(fits)}")
        return True

    def gate(self):
        if not self.features or self.features % 2:
            return False
        form = self.rng.choice(["a * F.silu(b)", "a * b", "glu",
                                "a * torch.sigmoid(b)", "F.gelu(a) * b"])
        if form == "glu":
            self.set("F.glu(h, -1)")
        else:
            self.body.append(CHUNK)
            self.set(form)
        self.features //= 2
        return True

    def save(self):
        name = self.name("t")
        self.body.append(f"{name} = h")
        self.saved.append((name, self.features))
        self.centred = self.after_centring
        return True

    STEPS = [(30, "unary"), (12, "parameter"), (6, "reduce"), (7, "row_op"),
             (4, "softmax"), (4, "layer_norm"), (3, "group_norm"),
             (4, "batch_norm_step"), (6, "residual"), (5, "gate"),
             (5, "save")]

    def chain(self):
        """One to six steps after a linear layer."""
        weights, names = zip(*self.STEPS)
        for _ in range(self.rng.randint(1, 6)):
            while not self.step(self.rng.choices(names, weights)[0]):
                pass

    def step(self, name):
        """Writes step `name` where it applies (then True)."""
        self.after_centring, self.centred = self.centred, False
        if getattr(self, name)():
            return True
        self.centred = self.after_centring
        return False

    def source(self):
        outputs = "h"
        returnable = [n for n, _ in self.saved if n != "x"]
        if self.rng.random() < 0.25 and returnable:
            outputs = f"h, {self.rng.choice(returnable)}"
        return class_source(self.init, self.body + [f"return {outputs}"])


def class_source(init, body):
    """The text of `class M` from its __init__ lines (after super's) and
    its forward lines."""
    return ("class M(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n" +
            "".join(f"        {line}\n" for line in init) +
            "    def forward(self, x):\n" +
            "".join(f"        {line}\n" for line in body))


def class_lines(source):
    """(init lines, forward lines) of a class_source text."""
    init, body, part = [], [], None
    for line in source.splitlines():
        if line.startswith("    def "):
            part = body if "forward" in line else init
        elif line.startswith("        ") and part is not None and \
                line.strip() != "super().__init__()":
            part.append(line.strip())
    return init, body


def _batches(rng, inner, batch_norm):
    """Two or three batch sizes, the first >= 2 (fusion.compile's example),
    later ones sometimes 0 or 1; never a single row where a batch norm
    (which needs more than one in training) is."""
    sizes = [rng.randint(2, 9)]
    for _ in range(rng.randint(1, 2)):
        r = rng.random()
        sizes.append(0 if r < 0.05 else 1 if r < 0.2 else rng.randint(2, 13))
    rows_per_batch = math.prod(inner)
    if batch_norm:
        sizes = [2 if b * rows_per_batch == 1 else b for b in sizes]
    return sizes


def generate(seed, siblings=True):
    """The case of `seed`: the same model and inputs for a seed on every
    machine and target (only random.Random(seed) and torch's seeded CPU
    generators decide them); without `siblings`, no layer takes the
    sibling form (the models of the runs before it)."""
    rng = random.Random(seed)
    rank = rng.choices([2, 3, 4], [50, 35, 15])[0]
    inner = tuple(rng.randint(1, 5) for _ in range(rank - 2))
    in_features = _features(rng)
    builder = _Builder(rng, rank, in_features,
                       form_rng=random.Random(f"{seed} forms"),
                       sibling_rng=random.Random(f"{seed} siblings")
                       if siblings else None)
    for layer in range(2):
        builder.linear(layer)
        builder.chain()
        if builder.features is None or rng.random() < 0.65:
            break
        if rng.random() < 0.3:
            builder.save()  # the second layer's input, for residuals
    special = []
    if rng.random() < 0.35:
        special = rng.sample(["inf", "-inf", "nan", "huge", "tiny", "negzero",
                              "zerorow", "constrow"], rng.randint(1, 2))
    return Case(seed=seed, source=builder.source(),
                dtype=rng.choices(["float32", "bfloat16", "float64"],
                                  [60, 30, 10])[0],
                in_features=in_features, inner=inner,
                batches=_batches(rng, inner, builder.batch_norm),
                special=special,
                scale=rng.choice([1.0, 1.0, 1.0, 0.01, 100.0]))


# ---------------------------------------------------------------------------
# The checker.


@dataclasses.dataclass
class Finding:
    """A failure (category in CATEGORIES), a refusal ("refused") or a case
    eager PyTorch cannot run ("invalid")."""
    seed: int
    category: str
    path: str  # "torch.compile", "fusion.compile", or "" (the whole case)
    mode: str  # "eval", "train" or ""
    message: str

    @property
    def is_failure(self):
        return self.category in CATEGORIES

    def line(self):
        where = f" [{self.path} {self.mode}]" if self.path else ""
        return f"{self.category}{where}: {self.message}"


def tolerance(dtype, options=None):
    """The relative L2 error allowed against float64 (before calibration by
    eager's own error)."""
    tol = TOLERANCE[dtype]
    precision = (options or {}).get("precision")
    if dtype == "float32" and precision in PRECISION_TOLERANCE:
        tol = PRECISION_TOLERANCE[precision]
    return tol


def describe(error):
    """An exception in one line: its type (and the wrapped one's, for
    torch.compile's BackendCompilerFailed) and its first informative
    lines."""
    inner = getattr(error, "inner_exception", None)
    kind = type(error).__name__
    if inner is not None:
        kind += f"({type(inner).__name__})"
    noise = ("Set TORCH_LOGS", "You can suppress", "While executing",
             "Original traceback", "backend='fusion' raised",
             "Use tlparse", "For more information", "To execute this test")
    lines = [line.strip() for line in str(error).splitlines()]
    lines = [line for line in lines if line and not line.startswith(noise)]
    # MLIR diagnostics: the line that says what is wrong.
    errors = [line for line in lines if "error:" in line]
    text = " | ".join((errors or lines)[:2])
    return f"{kind}: {text[:400]}"


def _reordered_linear(layer, order, x):
    """`layer(x)` with the input features summed in `order`."""
    return F.linear(x[..., order], layer.weight[:, order], layer.bias)


class _RoundWhereFusionRounds(TorchDispatchMode):
    """Runs a float32 copy of a 16-bit model with fusion's 16-bit rounding
    rule (docs/architecture.md, "Numerics"): values stay float32 between
    ops, and are rounded to the model's dtype only where fusion stores them
    rounded, which is where a GEMM reads them (its operands are 16-bit) and
    where a reduction, normalization or pool reads them (then every later
    reader sees the rounded value, as fusion stores it once). Inductor's
    upcast codegen computes alike, without the second rule. The rounding is
    below autograd, so gradients pass through it."""

    def __init__(self, dtype):
        super().__init__()
        from fusion.importer.nodes import GEMMS, NORMALIZATIONS, POOLS, \
            REDUCTIONS
        self.dtype = dtype
        # The ops whose inputs fusion rounds, as ATen's dispatcher names them.
        self.rounding = GEMMS | REDUCTIONS | NORMALIZATIONS | set(POOLS) | \
            {"aten.bmm.default"}
        self.rounded = {}  # id(tensor) -> (tensor, its rounded value)

    def _round(self, value):
        if not isinstance(value, torch.Tensor) or \
                value.dtype != torch.float32:
            return value
        key = id(value)
        if key not in self.rounded:
            self.rounded[key] = (value, value.to(self.dtype).float())
        return self.rounded[key][1]

    def _substitute(self, value):
        if isinstance(value, torch.Tensor) and id(value) in self.rounded and \
                self.rounded[id(value)][0] is value:
            return self.rounded[id(value)][1]
        return value

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if str(func) in self.rounding:
            args, kwargs = pytree.tree_map(self._round, (args, kwargs))
        else:
            args, kwargs = pytree.tree_map(self._substitute, (args, kwargs))
        return func(*args, **kwargs)


class _IllPosedInputs(TorchDispatchMode):
    """Keeps, in call order, the arguments whose gradient is ill-posed in
    any finite precision:

    - `one_element`: the inputs of layer and group norms of one-element
      sets (GroupNorm(C, C) of [N, C]). The output is the bias whatever
      the input, so the gradient through it is 0, and every
      implementation's is rounding noise times 1/sqrt(eps) (seed 1384:
      eager's is -42 in one call and exactly 0 in the next, float64's
      1e-9);
    - `singular`: (argument, point) of the ops of SINGULAR_POINTS, whose
      derivative is unbounded there (`_Run.ill_posed` keeps those within
      the dtype's rounding of the point: sqrt(|h|) of an h that one
      rounding takes to 0 and another to 1e-8).

    With `masks` (one per singular argument, or None), it first sets those
    elements to the point, in place (below autograd): the forward then
    computes what an implementation whose rounding reached the point
    does."""

    def __init__(self, masks=None):
        super().__init__()
        self.one_element, self.singular, self.masks = [], [], masks

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func)
        size = NORMALIZED_SET_SIZE.get(name)
        if size is not None and size(args) == 1:
            self.one_element.append(args[0])
        if name in SINGULAR_POINTS:
            at, point = SINGULAR_POINTS[name]
            value = args[at]
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                mask = self.masks[len(self.singular)] if self.masks and \
                    len(self.singular) < len(self.masks) else None
                if mask is not None:
                    try:
                        value.masked_fill_(mask.to(value.device), point)
                    except RuntimeError:
                        pass  # A broadcast view: its elements are shared.
                self.singular.append((value, point))
        return func(*args, **(kwargs or {}))


def _within_rounding(want, have):
    """Per singular argument (_IllPosedInputs.singular of the float64 and
    the eager copy, in call order): the mask of the elements within the
    dtype's rounding of the point, or None; None for all where the two
    copies' ops differ."""
    if len(want) != len(have) or any(w.shape != e.shape for (w, _), (e, _)
                                      in zip(want, have)):
        return None
    masks = []
    for (w, point), (e, _) in zip(want, have):
        w, e = w.detach(), e.detach().cpu().double()
        distance = (w - point).abs()
        mask = (distance > 0) & \
            (distance <= EAGER_ERROR_FACTOR * (e - w).abs())
        masks.append(mask if mask.any() else None)
    return masks if any(m is not None for m in masks) else None


def _rounded(value, dtype):
    """Floating tensors of `value` (a tensor, tuple or list) in `dtype`."""
    return pytree.tree_map(
        lambda t: t.to(dtype) if isinstance(t, torch.Tensor) and
        t.is_floating_point() else t, value)


def _outputs(out):
    """(structure, tensors) of a forward's result."""
    if isinstance(out, torch.Tensor):
        return "tensor", [out]
    if isinstance(out, (tuple, list)):
        return f"{type(out).__name__} of {len(out)}", list(out)
    return type(out).__name__, []


def _nonfinite_class(t):
    """0 finite, 1 nan, 2 +inf, 3 -inf."""
    return (t.isnan().to(torch.int8) + (t == math.inf).to(torch.int8) * 2 +
            (t == -math.inf).to(torch.int8) * 3)


def relative_error(got, want):
    """||got - want|| / ||want|| in float64, scaled so that values near
    float64's range do not overflow the norms; 0 for empty tensors."""
    if want.numel() == 0:
        return 0.0
    diff = got - want
    scale = max(want.abs().max().item(), diff.abs().max().item())
    if scale == 0:
        return 0.0
    num = (diff / scale).norm().item()
    den = (want / scale).norm().item()
    return num / den if den > 0 else math.inf


def compare(got, want, eager, tol, peers=(), atol=0.0):
    """(category, message) where `got` (fusion's) is wrong against `want`
    (float64 eager) and `eager` (eager in the model's dtype), else None.
    Elements finite in both references must be finite in fusion's, unless
    float64's is in the dtype's top binade and fusion's is the infinity of
    its sign (a sum ending there passes the range in another order); where
    both are nonfinite, fusion's must be nan/+inf/-inf as one of them; the
    elements finite in all three are within the relative L2 error
    tol + EAGER_ERROR_FACTOR * eager's own error, so that legitimately
    ill-conditioned math (eager is as far off) is not a failure. `peers`
    are other legitimate results in the model's dtype (PyTorch's
    decomposition, eager with the GEMMs summed in another order, fusion's
    rounding rule): the largest error counts, times its spread from
    eager's, and a nonfinite element of fusion's where a peer has the same
    is no failure (inf * 0 where one implementation's factor underflows).
    An absolute L2 error within `atol` passes too."""
    if tuple(got.shape) != tuple(want.shape):
        return "wrong-shape", f"shape {tuple(got.shape)}, eager " \
                              f"{tuple(want.shape)}"
    if got.dtype != eager.dtype:
        return "wrong-shape", f"dtype {got.dtype}, eager {eager.dtype}"
    top_binade = torch.finfo(got.dtype).max / 2 if got.is_floating_point() \
        else math.inf
    got, want, eager = (t.detach().cpu().double() for t in (got, want, eager))
    kind = _nonfinite_class(got)
    like_a_peer = torch.zeros_like(got, dtype=torch.bool)
    for peer in peers:
        if tuple(peer.shape) == tuple(got.shape):
            peer = peer.detach().cpu().double()
            like_a_peer |= ~peer.isfinite() & (_nonfinite_class(peer) == kind)
    references_finite = want.isfinite() & eager.isfinite()
    overflowed = (want.abs() >= top_binade) & (got == want.sign() * math.inf)
    lost = references_finite & ~got.isfinite() & ~overflowed & ~like_a_peer
    if lost.any():
        index = tuple(lost.nonzero()[0].tolist())
        return "nonfinite", (
            f"{int(lost.sum())} of {got.numel()} elements nonfinite where "
            f"eager and float64 are finite (at {index}: {got[index].item()}, "
            f"float64 {want[index].item():.6g})")
    both_nonfinite = ~want.isfinite() & ~eager.isfinite()
    other = both_nonfinite & (kind != _nonfinite_class(eager)) & \
        (kind != _nonfinite_class(want)) & ~like_a_peer
    if other.any():
        index = tuple(other.nonzero()[0].tolist())
        return "nonfinite", (
            f"{int(other.sum())} elements another value where eager and "
            f"float64 are nonfinite (at {index}: {got[index].item()}, eager "
            f"{eager[index].item()}, float64 {want[index].item()})")
    finite = references_finite & got.isfinite()
    error = relative_error(got[finite], want[finite])
    own = relative_error(eager[finite], want[finite])
    peer = max([_peer_error(p, want, finite) for p in peers], default=0.0)
    low, high = sorted((own, peer))
    # An infinite error (float64 says 0) leaves no ratio: the bound is inf.
    spread = min(high / low, SPREAD_CAP) if peers and 0 < low < math.inf \
        else 1.0
    bound = tol + EAGER_ERROR_FACTOR * high * spread
    if not error <= bound and not \
            (got[finite] - want[finite]).norm().item() <= atol:
        return "wrong-value", (
            f"relative L2 error {error:.3g} > {bound:.3g} (eager's own: "
            f"{own:.3g}" + (f", other implementations': {peer:.3g}"
                            if peers else "") + ")")
    return None


def _peer_error(peer, want, finite):
    """A peer result's error on the elements `compare` measures (none where
    the peer is nonfinite or of another shape)."""
    peer = peer.detach().cpu().double()
    if peer.shape != want.shape:
        return 0.0
    finite = finite & peer.isfinite()
    return relative_error(peer[finite], want[finite])


def _compile(path, module, example, target, options):
    import fusion
    if path == "torch.compile":
        return torch.compile(module, backend="fusion",
                             options={"target": target, **options})
    return fusion.compile(module, (example,), target=target,
                          **package_options(options))


def package_options(options):
    """`options` without the torch.compile backend's own (group_gemms,
    k_major_copies, ...), which fusion.compile does not take."""
    import fusion.dynamo
    return {k: v for k, v in options.items()
            if k not in fusion.dynamo._BACKEND_OPTIONS}


def _forward(module, x, train):
    with torch.set_grad_enabled(train):
        return module(x)


def _backward(module, out, weights):
    """The parameters' gradients of the loss sum(output * weight) over the
    float outputs, as {name: tensor or None}."""
    for p in module.parameters():
        p.grad = None
    terms = [(t * w.to(t)).sum() for t, w in zip(_outputs(out)[1], weights)
             if t.is_floating_point() and t.requires_grad]
    if terms:
        sum(terms).backward()
    return {n: p.grad for n, p in module.named_parameters()}


@dataclasses.dataclass
class _Values:
    """What one copy of the model computed in one call."""
    outputs: object  # the forward's result
    grads: dict = None  # {parameter name: gradient or None} in training
    buffers: dict = None  # {name: running statistic} after the call


class _Run:
    """One front end in one mode over a case's batches: the compiled copy,
    a float64 eager copy and an eager copy in the model's dtype, fed the
    same inputs (in training, batch norms' running statistics evolve in all
    three)."""

    def __init__(self, case, path, mode, target, options):
        self.case, self.path, self.mode = case, path, mode
        self.target, self.options = target, options
        self.train = mode == "train"
        self.device = "cpu" if target == "cpu" else "cuda"
        self.tol = tolerance(case.dtype, options)
        self.xs = [case.input(call).to(case.torch_dtype)
                   for call in range(len(case.batches))]
        model = case.model().train(self.train)
        self.reference = copy.deepcopy(model).double()
        # Eager in the model's dtype runs where fusion does: on a GPU,
        # PyTorch's CUDA kernels are what the user would otherwise get.
        self.eager = copy.deepcopy(model).to(self.device)
        self.subject = copy.deepcopy(model).to(self.device)
        self.fused = None
        self.ill_posed_by_call = {}  # call -> ill_posed(call)

    def finding(self, category, message):
        return [Finding(self.case.seed, category, self.path, self.mode,
                        message)]

    def error(self, error, step):
        """A refusal (fusion.compile's UnsupportedOperationError) or a
        failure: torch.compile must never raise."""
        import fusion
        if self.path == "fusion.compile" and \
                isinstance(error, fusion.UnsupportedOperationError):
            return self.finding("refused", f"{step}: {describe(error)}")
        if self.pytorch_fails_too():
            return self.finding("invalid", f"{step}: {describe(error)}")
        return self.finding("compile-failure", f"{step}: {describe(error)}")

    def pytorch_fails_too(self):
        """Whether torch.compile of the model with PyTorch's own
        aot_eager backend also raises on these calls (a bug of PyTorch's:
        its fake linalg_vector_norm keeps a reduced dimension of size 1,
        and the backward traced with it fails), so that torch.compile's
        failure is not fusion's."""
        if self.path != "torch.compile":
            return False
        torch._dynamo.reset()
        try:
            model = self.case.model().train(self.train)
            compiled = torch.compile(model, backend="aot_eager")
            for call, x in enumerate(self.xs):
                out = _forward(compiled, x, self.train)
                if self.train:
                    _backward(model, out, self.weights(call, _Values(out)))
        except Exception:  # noqa: BLE001
            return True
        finally:
            torch._dynamo.reset()
        return False

    def findings(self):
        import fusion.dynamo
        try:
            compiled = _compile(self.path, self.subject,
                                self.xs[0].to(self.device), self.target,
                                self.options)
        except Exception as error:  # noqa: BLE001
            return self.error(error, "compile")
        for call, x in enumerate(self.xs):
            step = f"call {call} (batch {self.case.batches[call]})"
            try:
                want = self.values(self.reference, x.double(), call)
                have = self.values(self.eager, x.to(self.device), call)
            except Exception as error:  # noqa: BLE001
                return self.finding("invalid", f"eager, {step}: "
                                    f"{describe(error)}")
            try:
                fusion.dynamo.last_fused = []
                got = _forward(compiled, x.to(self.device), self.train)
            except Exception as error:  # noqa: BLE001
                return self.error(error, step)
            if self.path == "torch.compile" and fusion.dynamo.last_fused:
                self.fused = True
            got = _Values(got)
            problem = self.outputs(got, want, have) or \
                self.backward(call, got, want, have)
            if problem and problem[2]:
                # Too far off: unless other legitimate implementations are.
                peers = [p for p in (self.decomposed(call),
                                     self.reordered(call),
                                     self.rounded_as_fusion(call),
                                     self.chunks_copied(call),
                                     self.at_singular_points(call),
                                     self.inductor_alone(call))
                         if p is not None]
                problem = self.outputs(got, want, have, peers) or \
                    self.backward(call, got, want, have, peers)
            if problem:
                return self.finding(problem[0], f"{step}: {problem[1]}")
        problem = self.buffers()
        return self.finding(*problem) if problem else []

    def backward(self, call, got, want, have, peers=()):
        """In training, the compiled copy's gradients (computed once, into
        `got`) checked as `gradients` does; None in eval."""
        if not self.train:
            return None
        if got.grads is None:
            try:
                got.grads = _backward(self.subject, got.outputs,
                                      self.weights(call, want))
            except Exception as error:  # noqa: BLE001
                return ("invalid" if self.pytorch_fails_too() else "grad"), \
                    f"backward: {describe(error)}", False
        return self.gradients(call, got, want, have, peers)

    def weights(self, call, want):
        """The weights of the training loss (loss_weight), by output."""
        return [loss_weight(self.case.seed, call, i, t.shape,
                            self.case.torch_dtype)
                for i, t in enumerate(_outputs(want.outputs)[1])]

    def values(self, module, x, call):
        """An eager copy's outputs (and gradients, in training)."""
        values = _Values(_forward(module, x, self.train))
        if self.train:
            values.grads = _backward(module, values.outputs,
                                     self.weights(call, values))
        return values

    def decomposed(self, upto):
        """What PyTorch's own decomposition of the model computes in the
        model's dtype (torch.compile's aot_eager_decomp_partition backend),
        at call `upto` (calls before it replayed for the batch norms'
        statistics): a second legitimate result for ill-conditioned math.
        None where it fails."""
        return self._compiled_copy("aot_eager_decomp_partition", "cpu", upto)

    def _compiled_copy(self, backend, device, upto):
        """What a fresh copy of the model compiled by PyTorch's `backend`
        computes on `device` at call `upto` (the calls before it replayed),
        its running statistics after it; None where it fails."""
        try:
            # A fresh class from the source: dynamo caches by code object.
            model = self.case.model().train(self.train).to(device)
            compiled = torch.compile(model, backend=backend)
            for call in range(upto + 1):
                values = _Values(_forward(compiled, self.xs[call].to(device),
                                          self.train))
                if self.train:
                    values.grads = _backward(model, values.outputs,
                                             self.weights(call, values))
            values.buffers = dict(model.named_buffers())
            return values
        except Exception:  # noqa: BLE001
            return None

    def reordered(self, upto):
        """What eager computes in the model's dtype with each linear layer's
        input features (and weight columns) in a seeded random order, at
        call `upto`: the GEMMs sum in another order, a third legitimate
        result where math downstream is ill-conditioned in the GEMM's
        rounding (sqrt near 0), which eager and its decomposition share.
        None where it fails."""
        try:
            model = self.case.model().train(self.train)
            generator = torch.Generator().manual_seed(self.case.seed)
            for layer in model.modules():
                if isinstance(layer, nn.Linear):
                    order = torch.randperm(layer.in_features,
                                           generator=generator)
                    layer.forward = functools.partial(_reordered_linear,
                                                      layer, order)
            for call in range(upto + 1):
                values = self.values(model, self.xs[call], call)
            return values
        except Exception:  # noqa: BLE001
            return None

    def inductor_alone(self, upto):
        """What torch.compile's own backend, inductor, computes alone in the
        model's dtype on the compiled copy's device, at call `upto`, where
        fusion's fallback is inductor (the GPU targets' default): the ops
        fusion leaves to it are inductor's math, its reductions' order and
        decompositions included (GPU seed 5026: a float64 training batch
        norm, then log|h + 1e-6|, whose weight gradient inductor alone
        computes 4.5e-8 off where eager is 2.6e-16 off). None for
        fusion.compile, another fallback, or where it fails."""
        import fusion.dynamo
        fallback = self.options.get("fallback") or \
            fusion.dynamo._default_fallback({"target": self.target}, None)
        if self.path != "torch.compile" or fallback != "inductor":
            return None
        return self._compiled_copy("inductor", self.device, upto)

    def chunks_copied(self, upto):
        """What eager computes in the model's dtype with each chunk's pieces
        copied to contiguous tensors, as fusion writes them, at call `upto`:
        a fifth legitimate result, where PyTorch's own CPU kernels give
        other special values on contiguous tensors than on strided views
        (gelu_backward(-inf, -13.1) is NaN through the vectorized path, inf
        through the strided one). None where the model has no chunk or
        fails."""
        if CHUNK not in self.case.source:
            return None
        try:
            copied = dataclasses.replace(self.case, source=self.case.source.
                                         replace(CHUNK, CHUNK_COPIED))
            model = copied.model().train(self.train)
            for call in range(upto + 1):
                values = self.values(model, self.xs[call], call)
            return values
        except Exception:  # noqa: BLE001
            return None

    def rounded_as_fusion(self, upto):
        """What eager computes with fusion's 16-bit rounding rule
        (`_RoundWhereFusionRounds`), at call `upto`, its outputs and
        gradients rounded to the model's dtype: a fourth legitimate result,
        for math ill-conditioned in where the roundings fall (a softmax of
        logits thousands apart in bf16: which of two rounds alike).
        None for other dtypes or where it fails."""
        dtype = self.case.torch_dtype
        if dtype not in (torch.bfloat16, torch.float16):
            return None
        try:
            model = self.case.model().train(self.train).float()
            with _RoundWhereFusionRounds(dtype):
                for call in range(upto + 1):
                    values = self.values(model, self.xs[call].float(), call)
            values.outputs = _rounded(values.outputs, dtype)
            if values.grads is not None:
                values.grads = _rounded(values.grads, dtype)
            return values
        except Exception:  # noqa: BLE001
            return None

    def outputs(self, got, want, have, peers=()):
        """(category, message, whether a value bound failed) for the
        outputs, or None."""
        structure, got = _outputs(got.outputs)
        expected, want = _outputs(want.outputs)
        if structure != expected:
            return "wrong-shape", f"returns a {structure}, eager a " \
                                  f"{expected}", False
        peer_outputs = [_outputs(p.outputs)[1] for p in peers]
        for i, (g, w, e) in enumerate(zip(got, want,
                                          _outputs(have.outputs)[1])):
            problem = compare(g, w, e, self.tol,
                              [o[i] for o in peer_outputs if i < len(o)])
            if problem:
                return problem[0], f"output {i}: {problem[1]}", \
                    problem[0] in PEER_CHECKED
        return None

    def gradients(self, call, got, want, have, peers=()):
        scale = self.loss_scale(call, want)
        # Where eager's own forward is off (its dtype overflows: a norm's
        # variance of values past 1e19 in float32), float64 does not say
        # what the dtype can compute, and PyTorch's backward kernels, fed
        # fusion's right statistics, underflow (a layer norm's rstd^3):
        # gradients are held to rule 2 (finite where eager's are) only.
        # Those through an ill-posed input (_IllPosedInputs) are any value:
        # looked for only where a gradient fails (a float64 forward more).
        tol = math.inf if self.out_of_range(want, have) else self.tol
        for name, w in want.grads.items():
            if w is None:
                continue
            if got.grads[name] is None:
                return "grad", f"{name}: no gradient (eager has one)", False
            peer_grads = [p.grads[name] for p in peers
                          if p.grads.get(name) is not None]
            parameter = self.reference.get_parameter(name).detach()
            rms = parameter.norm().item() / max(1, parameter.numel()) ** 0.5
            atol = GRADIENT_NOISE * torch.finfo(self.case.torch_dtype).eps * \
                scale / max(rms, 1e-2)
            problem = compare(got.grads[name], w, have.grads[name], tol,
                              peer_grads, atol)
            if problem and name not in self.ill_posed(call)[0]:
                return "grad", f"{name}.grad: {problem[0]}: {problem[1]}", \
                    problem[0] in PEER_CHECKED
        return None

    def ill_posed(self, call):
        """`_ill_posed(call)`, computed once: `gradients` asks where a
        gradient fails, `at_singular_points` for the masks."""
        if call not in self.ill_posed_by_call:
            self.ill_posed_by_call[call] = self._ill_posed(call)
        return self.ill_posed_by_call[call]

    def _ill_posed(self, call):
        """(the names of the parameters whose gradient in call `call` passes
        through an ill-posed input, the masks of the singular arguments
        within rounding of their point (_IllPosedInputs), or None). A
        singular argument is within rounding where float64's distance to
        the point is within EAGER_ERROR_FACTOR times eager's own error of
        it (not 0: float64 there too is every implementation's point)."""
        x = self.xs[call]
        reference = copy.deepcopy(self.reference)
        with _IllPosedInputs() as want:
            _forward(reference, x.double(), self.train)
        masks = None
        if want.singular:
            with _IllPosedInputs() as have:
                _forward(copy.deepcopy(self.eager), x.to(self.device),
                         self.train)
            masks = _within_rounding(want.singular, have.singular)
        reached = list(want.one_element) + [
            value for (value, _), mask in zip(want.singular, masks or [])
            if mask is not None]
        parameters = dict(reference.named_parameters())
        names = set()
        for value in reached:
            if value.requires_grad:
                grads = torch.autograd.grad(
                    value.sum(), list(parameters.values()), allow_unused=True,
                    retain_graph=True)
                names |= {n for n, g in zip(parameters, grads)
                          if g is not None}
        return names, masks

    def at_singular_points(self, call):
        """What float64 computes in call `call`'s forward with the singular
        arguments within rounding of their point set to it, its outputs
        rounded to the model's dtype: a legitimate result where rounding
        decides whether an argument is at the point (log(|h|) of -inf).
        None where no argument is within rounding."""
        masks = self.ill_posed(call)[1]
        if masks is None:
            return None
        with _IllPosedInputs(masks):
            out = _forward(copy.deepcopy(self.reference),
                           self.xs[call].double(), self.train)
        return _Values(_rounded(out, self.case.torch_dtype), {})

    @staticmethod
    def out_of_range(want, have):
        """Whether eager's forward is off by more than OUT_OF_RANGE."""
        pairs = [(w.detach(), e.detach().cpu().double())
                 for w, e in zip(_outputs(want.outputs)[1],
                                 _outputs(have.outputs)[1])
                 if w.shape == e.shape]
        return any(relative_error(e[ok], w[ok]) > OUT_OF_RANGE
                   for w, e in pairs for ok in [w.isfinite() & e.isfinite()])

    def loss_scale(self, call, want):
        """sum|weight * output| over the float64 outputs' finite elements:
        the loss's size without cancellation (GRADIENT_NOISE)."""
        total = 0.0
        for t, w in zip(_outputs(want.outputs)[1], self.weights(call, want)):
            terms = (t.detach() * w.double()).abs()
            total += terms[terms.isfinite()].sum().item()
        return total

    def buffers(self):
        """Running statistics after all calls (moved in training only),
        against PyTorch's decomposition's and inductor alone's (rule 4)
        where float64's bound fails."""
        want = dict(self.reference.named_buffers())
        have = dict(self.eager.named_buffers())
        peers = None
        for name, got in self.subject.named_buffers():
            if not got.is_floating_point():
                if not torch.equal(got.cpu(), have[name].cpu()):
                    return "wrong-value", (f"buffer {name}: {got.tolist()}, "
                                           f"eager {have[name].tolist()}")
                continue
            problem = compare(got, want[name], have[name], self.tol)
            if problem and problem[0] in PEER_CHECKED:
                if peers is None:
                    last = len(self.xs) - 1
                    peers = [p.buffers for p in (self.decomposed(last),
                                                 self.inductor_alone(last))
                             if p is not None]
                problem = compare(got, want[name], have[name], self.tol,
                                  [p[name] for p in peers if name in p])
            if problem:
                return problem[0], f"after all calls, buffer {name}: " \
                                   f"{problem[1]}"
        return None


def check(case, target="cpu", options=None, stages=STAGES, stats=None,
          progress=None):
    """The findings of `case` through each front end in each mode
    (`stages`, (path, mode) pairs): a list of Finding, whose failures
    (`is_failure`) are what is wrong; refusals are listed too. `target` and
    `options` (fusion.compile's keyword options, e.g. {"strategy":
    "tiled"}) are passed to both front ends; a GPU target runs the compiled
    copy on "cuda" (the references stay on the CPU). `stats`, a dict, gets
    "fused": whether torch.compile fused anything (a case where nothing
    fuses tests little). `progress(path, mode)` is called as each stage
    starts (a worker reports it, so that a crash is attributed to it)."""
    findings = []
    options = dict(options or {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path, mode in stages:
            torch._dynamo.reset()
            if progress:
                progress(path, mode)
            try:
                run = _Run(case, path, mode, target, options)
                findings += run.findings()
            except Exception as error:  # noqa: BLE001 (a harness bug)
                findings.append(Finding(case.seed, "invalid", path, mode,
                                        f"harness: {describe(error)}"))
                continue
            if stats is not None and run.fused:
                stats["fused"] = True
    torch._dynamo.reset()
    return findings


# ---------------------------------------------------------------------------
# Reduction: a failing case made smaller, failing alike.


def _error_kind(message):
    """The exception type a finding's message names (None for a wrong
    value)."""
    match = re.search(r"\b([A-Z]\w*(?:\(\w+\))?): ", message)
    return match.group(1) if match else None


def _fails_alike(case, finding, settings):
    """Whether `case` still fails in `finding`'s stage with its category
    (and exception type). A crash is looked for in a child process."""
    stage = (finding.path, finding.mode)
    if finding.category == "crash":
        command = [sys.executable, os.path.abspath(__file__), "--check-case",
                   json.dumps(dataclasses.asdict(case)),
                   "--stage", str(STAGES.index(stage)),
                   "--target", settings.target,
                   "--options", json.dumps(settings.options)]
        try:
            return subprocess.run(command, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL,
                                  timeout=settings.timeout).returncode < 0
        except subprocess.TimeoutExpired:
            return finding.message.startswith("timeout")
    return any(f.category == finding.category and
               _error_kind(f.message) == _error_kind(finding.message)
               for f in check(case, settings.target, settings.options,
                              [stage]))


def _smaller(case):
    """Variants of `case` with one thing less: a forward line (a chunk with
    the line that reads it), the tuple output, a parameter or module the
    forward no longer reads, the special values, the later calls, the
    input's scale."""
    init, body = class_lines(case.source)
    lines, ret = body[:-1], body[-1]
    variant = lambda **changes: dataclasses.replace(case, **changes)  # noqa
    for i in reversed(range(1, len(lines))):
        # A chunk goes alone (if nothing reads it) or with its reader.
        for n in (1, 2) if lines[i].strip() == CHUNK else (1,):
            yield variant(source=class_source(
                init, lines[:i] + lines[i + n:] + [ret]))
    if "," in ret:
        yield variant(source=class_source(init, lines + ["return h"]))
    forward = "\n".join(body)
    names = {m.group(1) for m in map(re.compile(r"self\.(\w+) = ").search,
                                     init) if m}
    for name in sorted(n for n in names if f"self.{n}" not in forward):
        kept = [line for line in init if f"self.{name}" not in line]
        yield variant(source=class_source(kept, body))
    if case.special:
        yield variant(special=[])
    if len(case.batches) > 1:
        yield variant(batches=case.batches[:1])
    if case.scale != 1.0:
        yield variant(scale=1.0)


def reduce(case, finding, settings=None):
    """A smaller case that fails like `finding` (same stage, category and
    exception type) with `settings`' target and options, found greedily:
    the first smaller variant that still fails is kept, until none does."""
    settings = settings or Settings()
    case = dataclasses.replace(case, reduced=True)
    if not finding.path:
        return case  # a crash before any stage: nothing to compare with
    progress = True
    while progress:
        progress = False
        for candidate in _smaller(case):
            if _fails_alike(candidate, finding, settings):
                case, progress = candidate, True
                break
    return case


# ---------------------------------------------------------------------------
# Running many seeds.


def check_seed(seed, target="cpu", options=None, first_stage=0,
               progress=None):
    """A result record of one seed (JSON-able): its findings, whether
    torch.compile fused anything, and how long it took; from STAGES
    [first_stage] on (after a crash of the stage before)."""
    start = time.monotonic()
    stats = {"fused": False}
    try:
        findings = check(generate(seed), target, options,
                         STAGES[first_stage:], stats=stats, progress=progress)
    except Exception as error:  # noqa: BLE001 (the generator's bug)
        findings = [Finding(seed, "invalid", "", "",
                            f"harness: {describe(error)}")]
    return {"seed": seed, "fused": stats["fused"],
            "findings": [dataclasses.asdict(f) for f in findings],
            "seconds": time.monotonic() - start}


def _worker(items, target, options):
    """The body of an isolated worker process, for `items` ([seed, first
    stage] pairs): results as JSON lines on the original stdout, each seed
    and stage announced before it runs, so that the parent can name the
    seed and stage that crashed the process (anything else printed goes to
    stderr)."""
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    faulthandler.enable()  # a crash's Python stack, for its message

    def send(message):
        channel.write(json.dumps(message) + "\n")
        channel.flush()

    for seed, first in items:
        send({"start": seed})
        send(check_seed(seed, target, options, first, progress=lambda p, m:
                        send({"stage": STAGES.index((p, m))})))


def _crash_message(how, stderr):
    """How a worker died, with the innermost Python frames faulthandler
    printed (or the last lines of its stderr)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith("Current thread"):
            frames = [re.sub(r'File "(?:.*/)?([^/]*)", line (\d+) in (.*)',
                             r"\1:\2 \3", f) for f in lines[i + 1:i + 4]]
            return f"the process died ({how}) in " + " < ".join(frames)
    return f"the process died ({how}): " + " | ".join(lines[-3:])


def _signal_name(returncode):
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


@dataclasses.dataclass
class Settings:
    """How a run checks its seeds (the command line's options)."""
    target: str = "cpu"
    options: dict = dataclasses.field(default_factory=dict)
    isolate: bool = True  # worker processes, so that a crash is a finding
    jobs: int = 1  # worker processes at a time
    chunk: int = 10  # seeds a worker process runs (it imports torch once)
    timeout: float = 600  # seconds one seed may take in a worker


def _run_worker(items, settings, env, record):
    """Runs `items` ([seed, first stage] pairs) in one worker process;
    `record` gets each result. A seed that kills the process (a signal, an
    exit) or runs past the timeout is a crash of the stage it was in: its
    record says so, with "next": the stage to go on from. Returns the items
    not run, that one first."""
    command = [sys.executable, os.path.abspath(__file__), "--worker",
               json.dumps(items), "--target", settings.target,
               "--options", json.dumps(settings.options)]
    done, current, stage = set(), None, None
    started = time.monotonic()
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE,
                                   stderr=stderr, env=env,
                                   start_new_session=True)
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        pending, timed_out = b"", False
        while True:
            if selector.select(timeout=1.0):
                data = os.read(process.stdout.fileno(), 1 << 16)
                if not data:
                    break
                pending += data
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    message = json.loads(line)
                    if "start" in message:
                        current, stage = message["start"], None
                        started = time.monotonic()
                    elif "stage" in message:
                        stage = message["stage"]
                    else:
                        record(message)
                        done.add(message["seed"])
                        current = None
            if current is not None and \
                    time.monotonic() - started > settings.timeout:
                os.killpg(process.pid, signal.SIGKILL)
                timed_out = True
                break
        returncode = process.wait()
        process.stdout.close()
        stderr.seek(0)
        output = stderr.read().decode(errors="replace")
    if current is None and not done and returncode != 0:
        # Not a seed's crash: the worker cannot start (no fusion?).
        raise RuntimeError("a worker process failed before any seed: " +
                           output[-2000:])
    left = [item for item in items if item[0] not in done]
    if current is None:
        return left
    message = f"timeout: more than {settings.timeout} s" if timed_out else \
        _crash_message(_signal_name(returncode) if returncode < 0 else
                       f"exit code {returncode}", output)
    path, mode = STAGES[stage] if stage is not None else ("", "")
    crash = Finding(current, "crash", path, mode, message[:600])
    record({"seed": current, "fused": False,
            "seconds": time.monotonic() - started,
            "findings": [dataclasses.asdict(crash)],
            "next": stage + 1 if stage is not None else len(STAGES)})
    left = [item for item in left if item[0] != current]
    if stage is not None and stage + 1 < len(STAGES):
        left.insert(0, [current, stage + 1])
    return left


def _merge(first, second):
    """One seed's record from the records of its parts (before and after a
    crash)."""
    return {"seed": first["seed"],
            "findings": first["findings"] + second["findings"],
            "fused": first["fused"] or second["fused"],
            "seconds": first["seconds"] + second["seconds"],
            **({"next": second["next"]} if "next" in second else {})}


def _run_isolated(seeds, settings, record):
    """Runs the seeds in worker processes, `settings.jobs` at a time, in
    chunks; after a crash, a new worker goes on with the crashed seed's
    next stage and the chunk's other seeds. Compiled libraries go to a
    cache of the run's own (unless FUSION_CACHE_DIR is set), and the
    compiler's temporary files into a folder removed at the end."""
    scratch = tempfile.mkdtemp(prefix="model_fuzz-")
    env = dict(os.environ, TMPDIR=scratch)
    env.setdefault("FUSION_CACHE_DIR", os.path.join(scratch, "cache"))
    if settings.jobs > 1:
        env.setdefault("OMP_NUM_THREADS",
                       str(max(1, (os.cpu_count() or 1) // settings.jobs)))
    queue = collections.deque([seed, 0] for seed in seeds)
    lock, errors, partial = threading.Lock(), [], {}

    def deliver(result):
        """Holds a crashed seed's record until its last stage ran."""
        with lock:
            if result["seed"] in partial:
                result = _merge(partial.pop(result["seed"]), result)
            if result.get("next", len(STAGES)) < len(STAGES):
                partial[result["seed"]] = result
                return
        result.pop("next", None)
        record(result)

    def slot():
        while not errors:
            with lock:
                if not queue:
                    return
                chunk = [queue.popleft()
                         for _ in range(min(settings.chunk, len(queue)))]
            try:
                left = _run_worker(chunk, settings, env, deliver)
            except RuntimeError as error:
                errors.append(error)
                return
            with lock:
                queue.extendleft(reversed(left))

    threads = [threading.Thread(target=slot) for _ in range(settings.jobs)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if errors:
        raise errors[0]


def fuzz(seeds, settings=None, record=None):
    """Checks the seeds; returns their results (check_seed's records)
    sorted by seed. `record`, if given, sees each result as it comes (from
    another thread with jobs > 1)."""
    settings = settings or Settings()
    results, lock = [], threading.Lock()

    def collect(result):
        with lock:
            results.append(result)
            if record:
                record(result)

    if settings.isolate:
        _run_isolated(list(seeds), settings, collect)
    else:
        for seed in seeds:
            collect(check_seed(seed, settings.target, settings.options))
    return sorted(results, key=lambda r: r["seed"])


def failures(result):
    """The failures (not refusals) among a result's findings."""
    return [f for f in map(lambda d: Finding(**d), result["findings"])
            if f.is_failure]


def failure_line(result):
    """One line of a failing seed: its categories and its first failure."""
    found = failures(result)
    categories = sorted({f.category for f in found}, key=CATEGORIES.index)
    return f"seed {result['seed']}: {', '.join(categories)}: " \
           f"{found[0].line()}"


def report(result, reduced=False, settings=None):
    """A failing seed's failures and its reproducer (of the model reduced
    to what still fails like its first failure, if `reduced`)."""
    settings = settings or Settings()
    case, found = generate(result["seed"]), failures(result)
    if reduced:
        case = reduce(case, found[0], settings)
        if found[0].category != "crash":  # what the smaller model does
            found = [f for f in check(case, settings.target,
                                      settings.options,
                                      [(found[0].path, found[0].mode)])
                     if f.is_failure] or found
    return case.reproducer(found, settings.target, settings.options)


def summary(results, seconds):
    """The final summary: models passed, refused, failed by category (each
    model counted once per category) and by stage."""
    def has(result, category):
        return any(f["category"] == category for f in result["findings"])

    failed = [r for r in results if failures(r)]
    refused = [r for r in results if not failures(r) and has(r, "refused")]
    invalid = [r for r in results if has(r, "invalid")]
    by_category = collections.Counter(
        c for r in failed for c in {f.category for f in failures(r)})
    by_run = collections.Counter(
        f"{path} {mode}" if path else "the process" for r in failed
        for path, mode in {(f.path, f.mode) for f in failures(r)})
    passed = sum(not failures(r) and not has(r, "refused") and
                 not has(r, "invalid") for r in results)
    lines = [f"models {len(results)}: passed {passed}, refused "
             f"{len(refused)} (by fusion.compile, nothing wrong), failed "
             f"{len(failed)}; {seconds:.0f} s "
             f"({seconds / max(1, len(results)):.1f} s a model)"]
    if by_category:
        lines.append("failed by category: " + ", ".join(
            f"{c} {by_category[c]}" for c in CATEGORIES if by_category[c]))
        lines.append("failed by front end and mode: " + ", ".join(
            f"{run} {n}" for run, n in sorted(by_run.items())))
    lines.append(f"torch.compile fused something in "
                 f"{sum(r['fused'] for r in results)} of {len(results)}")
    if invalid:
        lines.append(f"INVALID (PyTorch itself failed: eager, or aot_eager "
                     f"as torch.compile) in seeds "
                     f"{sorted(r['seed'] for r in invalid)}")
    return "\n".join(lines)


def parse_seeds(text):
    """'A:B' (A to B-1) or a comma-separated list."""
    if ":" in text:
        start, stop = text.split(":")
        return list(range(int(start), int(stop)))
    return [int(s) for s in text.split(",") if s]


_seeds = parse_seeds  # the name model_fuzz_gpu.py uses


def _arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=parse_seeds,
                        default=parse_seeds("0:100"),
                        help="A:B or a comma-separated list (default 0:100)")
    parser.add_argument("--seed", type=int, help="one seed")
    parser.add_argument("--show", action="store_true",
                        help="print the seed's reproducer and exit")
    parser.add_argument("--isolate", action="store_true",
                        help="run the models in worker processes, so that "
                             "a crash is a finding")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--chunk", type=int, default=10,
                        help="seeds a worker process runs (--isolate)")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds one model may take (--isolate)")
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--options", type=json.loads, default={},
                        help='JSON, e.g. \'{"strategy": "tiled"}\'')
    parser.add_argument("--no-repro", action="store_true",
                        help="do not print the failing seeds' reproducers")
    parser.add_argument("--repro-dir",
                        help="write each failing seed's reproducer there")
    parser.add_argument("--json", help="write all results there")
    parser.add_argument("--reduce", action="store_true",
                        help="print each failing seed's reproducer reduced "
                             "to what still fails alike (slower)")
    parser.add_argument("--check-case", type=json.loads,
                        help=argparse.SUPPRESS)  # reduce()'s crash check
    parser.add_argument("--stage", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--worker", type=json.loads,
                        help=argparse.SUPPRESS)  # [[seed, first stage]...]
    args = parser.parse_args(argv)
    if args.seed is not None:
        args.seeds = [args.seed]
    return args


def main(argv=None):
    args = _arguments(argv)
    # torch.export's notes on specialized dimensions, once a model.
    logging.getLogger("torch._export").setLevel(logging.ERROR)
    if args.show:
        print(generate(args.seeds[0]).reproducer())
        return 0
    if args.worker:
        _worker(args.worker, args.target, args.options)
        return 0
    if args.check_case:
        case = Case(**{**args.check_case,
                       "inner": tuple(args.check_case["inner"])})
        check(case, args.target, args.options, [STAGES[args.stage]])
        return 0
    settings = Settings(target=args.target, options=args.options,
                        isolate=args.isolate, jobs=args.jobs,
                        chunk=args.chunk, timeout=args.timeout)
    start = time.monotonic()

    def record(result):
        if failures(result):
            print(failure_line(result), flush=True)

    results = fuzz(args.seeds, settings, record)
    seconds = time.monotonic() - start
    failing = [r for r in results if failures(r)]
    if args.repro_dir:
        os.makedirs(args.repro_dir, exist_ok=True)
    for result in failing:
        text = report(result, args.reduce, settings)
        if args.repro_dir:
            path = os.path.join(args.repro_dir, f"seed_{result['seed']}.py")
            with open(path, "w") as f:
                f.write(text)
        if not args.no_repro:
            print(f"\n{'=' * 30} reproducer of seed {result['seed']}\n{text}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print("\n" + summary(results, seconds))
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
