"""Hugging Face transformers (transformer_zoo.py, random weights, the
"tiny" size) through torch.compile(backend="fusion") on the CPU target:
outputs and gradients against a float64 eager copy, what fuses (the
committed census, docs/census.md, which test_census holds the compiler
to), and fusion.explain."""
import copy
import pathlib
import warnings

import pytest
import torch

pytest.importorskip("transformers")

import fusion  # noqa: E402
import fusion.dynamo  # noqa: E402
import transformer_zoo  # noqa: E402
from fusion.dtypes import rounded  # noqa: E402

CENSUS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "census.md"


def relative_error(out, reference):
    return ((out.double() - reference.double()).norm() /
            reference.double().norm()).item()


def check_against(model, reference, inputs, training, seed=0):
    """`model` through torch.compile(backend="fusion") and the float64
    `reference`, each called after seeding PyTorch's generator with
    `seed`: outputs within 1e-5, and in `training` the gradients of a
    random projection of them too."""
    reference_inputs = {k: v.double() if v.is_floating_point() else v
                        for k, v in inputs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error", fusion.FusionBackendWarning)
        with torch.set_grad_enabled(training):
            torch.manual_seed(seed)
            out = torch.compile(model, backend="fusion")(**inputs)
    torch.manual_seed(seed)
    expected = reference(**reference_inputs)
    assert relative_error(out.last_hidden_state,
                          expected.last_hidden_state) <= 1e-5
    if training:
        # A random projection of the output (the sum of squares of a layer
        # norm's output hardly depends on anything).
        projection = torch.randn(out.last_hidden_state.shape,
                                 dtype=torch.float64)
        (out.last_hidden_state * projection).sum().backward()
        (expected.last_hidden_state * projection).sum().backward()
        # Gradients that are 0 in exact arithmetic (a key's bias, which
        # softmax cancels) are rounding noise in float32: each is compared
        # relative to at least 1e-3 of the whole gradient's norm.
        total = torch.stack([q.grad.norm() for q in reference.parameters()
                             if q.grad is not None]).norm()
        for (path, p), q in zip(model.named_parameters(),
                                reference.parameters()):
            if q.grad is None:  # The pooler's (torch.compile: zeros).
                assert p.grad is None or not p.grad.any(), path
                continue
            error = (p.grad.double() - q.grad).norm()
            assert error <= 1e-5 * max(q.grad.norm(), 1e-3 * total), path


@pytest.mark.parametrize("training", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("name", sorted(transformer_zoo.MODELS))
def test_outputs_and_gradients_match_float64(name, training):
    torch._dynamo.reset()
    model, inputs = transformer_zoo.make(name)
    model.train(training)
    check_against(model, copy.deepcopy(model).double(), inputs, training)


class SameDraw(torch.nn.Module):
    """Training-mode dropout as the backend decomposes it: a float32 draw
    above p as float32 holds it (fusion.dynamo._dropout), applied to
    float64 values, so that a float64 model drawing in the compiled
    model's order drops what it drops."""

    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        keep = torch.rand(x.shape, dtype=torch.float32) > \
            rounded(self.p, torch.float32)
        return x * keep / (1 - self.p)


def drawing_as_compiled(model):
    """`model` with each dropout of p > 0 a SameDraw."""
    for module in list(model.modules()):
        for name, child in module.named_children():
            if isinstance(child, torch.nn.Dropout) and child.p > 0:
                setattr(module, name, SameDraw(child.p))
    return model


def fused_ops(census):
    return [sorted(set(report.fused) - DROPOUT_OPS) for report in census]


EMBEDDING_DROPOUTS = {"bert": "embeddings.dropout", "gpt2": "drop",
                      "vit": "embeddings.dropout"}
# What a dropout in training is in the graph: a comparison and two
# products, or a clone where p is 0.
DROPOUT_OPS = {"aten.gt.Scalar", "aten.mul.Tensor", "aten.clone.default"}


@pytest.mark.parametrize("name", transformer_zoo.DROPPING)
def test_training_with_dropout_matches_float64_of_the_same_draws(name):
    """The hidden states' dropouts at 0.1 (attention's and the FFN's
    outputs) in training: each projection's dropout is applied
    in its epilogue with the residual add and norm after it, as without
    dropout, and outputs and gradients match a float64 copy whose
    dropouts draw what the compiled model draws."""
    torch._dynamo.reset()
    model, inputs = transformer_zoo.make(name, dropout=0.1)
    model.train()
    # The embeddings' dropout, which no GEMM precedes, is PyTorch's own
    # (test_dropout's test_dropout_no_epilogue_takes_is_pytorchs_one_kernel):
    # its draw is not the decomposition's.
    model.get_submodule(EMBEDDING_DROPOUTS[name]).p = 0.0
    reference = drawing_as_compiled(copy.deepcopy(model).double())
    check_against(model, reference, inputs, training=True, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dropping = fusion.explain(model, **inputs)
        plain, _ = transformer_zoo.make(name)
        kept = fusion.explain(plain.train(), **inputs)
    assert sum("aten.gt.Scalar" in r.fused for r in dropping) >= 4
    assert fused_ops(dropping) == fused_ops(kept)


def _committed_census():
    """The committed census's code blocks, by section title."""
    sections, title, block, inside = {}, None, [], False
    for line in CENSUS.read_text().splitlines():
        if line.startswith("## "):
            title = line[3:]
        elif line == "```":
            if inside:
                sections[title] = "\n".join(block)
            block, inside = [], not inside
        elif inside:
            block.append(line)
    return sections


@pytest.mark.parametrize("target", [None, "sm_90"], ids=["cpu", "sm_90"])
@pytest.mark.parametrize("training", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("name", sorted(transformer_zoo.MODELS))
def test_census(name, training, target):
    """What fuses is what docs/census.md says (scripts/census.py writes
    it): a change in what fuses updates the committed census. sm_90's
    compiles its libraries (ptxas) without running them."""
    if target and not pathlib.Path("/usr/local/cuda/bin/ptxas").exists():
        pytest.skip("needs the CUDA toolkit's ptxas")
    mode = "training step" if training else "eval"
    title = f"{name}, {mode}" + (f", {target}" if target else "")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        census = transformer_zoo.census(name, training=training,
                                        target=target)
    assert census == _committed_census()[title], \
        "run scripts/census.py and commit docs/census.md"


def test_explain_names_each_gemm_and_why():
    """BERT: the attention output projection fuses its residual add and
    layer norm; the query's projection stops at the heads' permute; the
    attention scores stay PyTorch's scaled-dot-product attention, not
    batched GEMMs."""
    model, inputs = transformer_zoo.make("bert")
    model.eval()
    with torch.no_grad():
        census = fusion.explain(model, **inputs)
    assert len(census) == 13  # 2 x (q, k, v, output, 2 FFN) + the pooler
    assert all(report.op == "aten.addmm.default" for report in census)
    output = next(r for r in census if "modeling_bert.py:290" in r.where)
    assert {"aten.add.Tensor",
            "aten.native_layer_norm.default"} <= set(output.fused)
    query = census[0]
    assert not query.fused and query.reason
    assert query.stopped[0][0] == "aten.permute.default"
    assert "graph 0 addmm" in str(census)


def test_non_contiguous_inputs_are_copied_in_the_graph():
    """The pooler reads hidden[:, 0], a strided slice: the partition's
    graph copies it (no runtime error), and the result matches."""
    class Pooler(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = torch.nn.Linear(16, 16)

        def forward(self, hidden):
            return torch.tanh(self.dense(hidden[:, 0]))

    torch._dynamo.reset()
    model = Pooler()
    hidden = torch.randn(3, 5, 16)
    with torch.no_grad():
        out = torch.compile(model, backend="fusion")(hidden)
        expected = copy.deepcopy(model).double()(hidden.double())
    assert fusion.dynamo.last_fused
    assert relative_error(out, expected) <= 1e-5
