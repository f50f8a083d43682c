"""Hugging Face transformers (transformer_zoo.py, the "small" size) through
torch.compile(backend="fusion") on the GPU, from the library cache (sm_90),
in fp32 and bf16, eval and training mode, against a float64 eager copy:
within the precision's bound plus EAGER_ERROR_FACTOR times eager's own
error (the model fuzzer's rule), and no partition left to PyTorch by an
error (FusionBackendWarning); in training mode the gradients of every
parameter too (the backward graph goes through fusion: in fp32 its GEMMs
are fusion's, fuse_backward's default)."""
import copy
import functools
import warnings

import pytest
import torch

pytest.importorskip("transformers")

import fusion  # noqa: E402
import fusion.dynamo  # noqa: E402
import transformer_zoo  # noqa: E402
from gpu.helpers import LIBRARY_BOUNDS, TARGET, precision_setup  # noqa: E402
from model_fuzz import EAGER_ERROR_FACTOR  # noqa: E402

pytestmark = pytest.mark.gpu

SIZE = "small"
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
CASES = [(name, precision, training)
         for name in sorted(transformer_zoo.MODELS)
         for precision in DTYPES for training in (False, True)]


def relative_error(out, reference):
    return ((out.double() - reference).norm() / reference.norm()).item()


def model_of(name, precision, training, device):
    model, inputs = transformer_zoo.make(name, SIZE)
    model = model.train(training).to(device=device, dtype=DTYPES[precision])
    inputs = {k: v.to(device=device, dtype=DTYPES[precision])
              if v.is_floating_point() else v.to(device)
              for k, v in inputs.items()}
    return model, inputs


# The fp32 training steps with every [in, out] operand of a 3xTF32 GEMM
# read from a K-major copy (the default copies from 1024 rows of x on,
# more than the small size has): GPT-2's Conv1D weights and every weight
# gradient's dZ; Llama's data gradients' weights.
K_MAJOR_CASES = ["gpt2", "llama"]
K_MAJOR_OPTIONS = {"k_major_copies": "on"}


@pytest.mark.parametrize("name,precision,training", CASES)
def test_transformer(library_cache, within, sm90, name, precision,
                     training):
    check_transformer(within, name, precision, training)


@pytest.mark.parametrize("name", K_MAJOR_CASES)
def test_transformer_k_major_copies(library_cache, within, sm90, name):
    check_transformer(within, name, "fp32", True, K_MAJOR_OPTIONS)


def check_transformer(within, name, precision, training, options=None):
    precision_setup("fp32")
    model, inputs = model_of(name, precision, training, "cuda")
    reference = copy.deepcopy(model).double()
    reference_inputs = {k: v.double() if v.is_floating_point() else v
                        for k, v in inputs.items()}
    compiled = copy.deepcopy(model)
    torch._dynamo.reset()
    with torch.set_grad_enabled(training), warnings.catch_warnings():
        warnings.simplefilter("error", fusion.FusionBackendWarning)
        out = torch.compile(compiled, backend="fusion",
                            options=options)(**inputs)
        eager = model(**inputs)
        expected = reference(**reference_inputs)
        if training:
            grads = [gradients(m, o) for m, o in
                     ((compiled, out), (model, eager), (reference, expected))]
    assert fusion.dynamo.last_fused, "nothing fused"
    what = f"{name} {precision} {'train' if training else 'eval'}"
    errors = [(out.last_hidden_state, eager.last_hidden_state,
               expected.last_hidden_state)]
    if training:
        errors.append(grads)
    for found, eager_value, expected_value in errors:
        bound = LIBRARY_BOUNDS[precision] + \
            EAGER_ERROR_FACTOR * relative_error(eager_value, expected_value)
        within(relative_error(found, expected_value), bound, what)


def gradients(model, out):
    """The gradients of every parameter of `model` for the loss
    last_hidden_state.mean() of its output `out`, as one vector; zeros
    for a parameter the loss does not reach (the pooler's: None eagerly,
    zeros from a compiled graph, which returns the pooler's output too)."""
    out.last_hidden_state.float().mean().backward()
    return torch.cat([(torch.zeros_like(p) if p.grad is None else p.grad)
                      .flatten().double() for p in model.parameters()])


def prepare():
    """The cases' libraries, compiled for sm_90 from CPU tensors."""
    cases = [(case, {}) for case in CASES] + \
        [((name, "fp32", True), K_MAJOR_OPTIONS) for name in K_MAJOR_CASES]
    for (name, precision, training), options in cases:
        def compile_one(name=name, precision=precision, training=training,
                        options=options):
            model, inputs = model_of(name, precision, training, "cpu")
            torch._dynamo.reset()
            with torch.set_grad_enabled(training):
                out = torch.compile(model, backend="fusion", options={
                    "target": TARGET, "compile_only": True,
                    **options})(**inputs)
                if training:  # The backward graph's libraries too.
                    out.last_hidden_state.float().mean().backward()
        yield (f"transformers {name} {precision} "
               f"{'train' if training else 'eval'}"
               + "".join(f" {k}={v}" for k, v in options.items()),
               compile_one)


def prepare_bench(size="bench", precisions=tuple(DTYPES), training=True):
    """The transformers bench suites' libraries (scripts/bench/suites.py:
    the "bench" size, eval, fp32 and bf16, with fallback="eager" and
    "inductor", and the latter with group_gemms="off"; a bf16 training
    step's forward), compiled from a model on the meta device (no
    memory, no arithmetic: the graphs do not depend on the device)."""
    variants = ({"fallback": "eager"}, {"fallback": "inductor"},
                {"fallback": "inductor", "group_gemms": "off"})
    for name in sorted(transformer_zoo.MODELS):
        for precision in precisions:
            for variant in variants:
                def compile_one(name=name, precision=precision,
                                variant=variant):
                    model, inputs = transformer_zoo.make(name, size)
                    model = model.eval().to(device="meta",
                                            dtype=DTYPES[precision])
                    inputs = {k: v.to(device="meta", dtype=DTYPES[precision])
                              if v.is_floating_point() else v.to("meta")
                              for k, v in inputs.items()}
                    torch._dynamo.reset()
                    with torch.no_grad():
                        torch.compile(model, backend="fusion", options={
                            "target": TARGET, "compile_only": True,
                            **variant})(**inputs)
                yield (f"transformers {size} {name} {precision} "
                       f"{' '.join(variant.values())}", compile_one)
        if not training:
            continue
        # The bench's bf16 training step (transformers-train): its forward
        # and backward graphs, the backward as fuse_backward's default has
        # it and every GEMM of it fused.
        yield (f"transformers bench {name} bf16 train",
               functools.partial(compile_training_step, name))
        yield (f"transformers bench {name} bf16 train, backward fused",
               functools.partial(compile_training_step, name, "on"))


def compile_training_step(name, fuse_backward="auto", dropout=0.0):
    """Compiles the libraries of the bench's bf16 training step of zoo
    model `name`, its hidden states' dropout at `dropout`."""
    model, inputs = transformer_zoo.make(name, "bench", dropout=dropout)
    model = model.train().to(device="meta", dtype=torch.bfloat16)
    inputs = {k: v.to(device="meta", dtype=torch.bfloat16)
              if v.is_floating_point() else v.to("meta")
              for k, v in inputs.items()}
    torch._dynamo.reset()
    out = torch.compile(model, backend="fusion", options={
        "target": TARGET, "compile_only": True,
        "fuse_backward": fuse_backward})(**inputs)
    out.last_hidden_state.float().mean().backward()


def prepare_training_with_dropout():
    """The bench's bf16 training steps of the models with hidden-state
    dropout, without it and at BENCH_DROPOUT (transformers-train's
    --dropout)."""
    for name in transformer_zoo.DROPPING:
        yield (f"transformers bench {name} bf16 train",
               functools.partial(compile_training_step, name))
        yield (f"transformers bench {name} bf16 train, dropout "
               f"{BENCH_DROPOUT}", functools.partial(
                   compile_training_step, name, dropout=BENCH_DROPOUT))


# The hidden states' dropout that the transformers-train suite's --dropout
# runs the models that have one at (BERT's and ViT's default).
BENCH_DROPOUT = 0.1


PREPARE = {"transformers": prepare, "transformers-bench": prepare_bench,
           "transformers-train-dropout": prepare_training_with_dropout,
           "transformers-prefill": lambda: prepare_bench(
               "prefill", ("bf16",), training=False)}
