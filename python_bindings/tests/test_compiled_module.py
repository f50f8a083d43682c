"""A compiled module (CPU target) against its PyTorch module when the module
changes after compiling (mode, attributes) and on edge-case calls: each ends
as PyTorch does or in a clear error."""
import pytest
import torch
import torch.nn as nn

import fusion

from conftest import GatedLinear, LinearLeakyRelu, LinearScaleBatchNorm

pytestmark = pytest.mark.usefixtures("no_grad")


def twins(*args, **kwargs):
    """A LinearScaleBatchNorm, an identical reference, and the first one
    compiled."""
    model = LinearScaleBatchNorm(*args, **kwargs)
    reference = LinearScaleBatchNorm(*args, **kwargs)
    reference.load_state_dict(model.state_dict())
    with torch.no_grad():
        for bn in (model.bn, reference.bn):
            if bn.running_mean is not None:
                bn.running_mean.fill_(0.5)
                bn.running_var.fill_(2.0)
    compiled = fusion.compile(model, (torch.randn(4, args[0]),), target="cpu")
    return model, reference, compiled


def assert_same_state(model, reference, ignore=()):
    for name, tensor in reference.state_dict().items():
        if name in ignore:
            continue
        assert torch.allclose(model.state_dict()[name], tensor, rtol=1e-5,
                              atol=1e-6), name


@pytest.mark.parametrize("eval_before_compile", [True, False])
def test_follows_module_mode_at_every_call(eval_before_compile):
    model, reference, _ = twins(10, 7)
    if eval_before_compile:
        model.eval()
    compiled = fusion.compile(model, (torch.randn(4, 10),), target="cpu")
    for mode in ("eval", "train", "eval"):
        getattr(model, mode)()
        getattr(reference, mode)()
        x = torch.randn(9, 10)
        assert torch.allclose(compiled(x), reference(x), rtol=1e-5,
                              atol=1e-5), mode
        assert_same_state(model, reference)
    compiled.train()  # Reaches the module, as before.
    reference.train()
    x = torch.randn(9, 10)
    assert torch.allclose(compiled(x), reference(x), rtol=1e-5, atol=1e-5)
    assert_same_state(model, reference)


def test_batch_norms_in_different_modes_refused():
    model = nn.Sequential(nn.Linear(6, 6), nn.BatchNorm1d(6), nn.Linear(6, 4),
                          nn.BatchNorm1d(4))
    compiled = fusion.compile(model, (torch.randn(4, 6),), target="cpu")
    model[1].eval()
    with pytest.raises(fusion.FusionRuntimeError,
                       match="partly in train.* and partly in eval"):
        compiled(torch.randn(4, 6))


class ResidualBlock(nn.Module):
    """A transformer's post-norm residual block, with dropout."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(16, 16)
        self.drop = nn.Dropout(0.1)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        return self.norm(x + self.drop(self.dense(x)))


def test_dropout_module_compiled_in_eval_runs_in_both_modes():
    """Compiled in eval(), a module with dropout runs in eval() (KernelBench
    66's case) and in train() mode, each call drawing
    its masks (test_random_draws.py checks the draws)."""
    model = ResidualBlock().eval()
    compiled = fusion.compile(model, (torch.randn(2, 5, 16),), target="cpu")
    x = torch.randn(3, 4, 16)
    reference = ResidualBlock()
    reference.load_state_dict(model.state_dict())
    expected = reference.double().eval()(x.double())
    assert torch.allclose(compiled(x).double(), expected, rtol=1e-5,
                          atol=1e-5)
    model.train()
    torch.manual_seed(1)
    dropped = compiled(x)
    assert not torch.allclose(dropped.double(), expected, rtol=1e-3,
                              atol=1e-3)
    torch.manual_seed(1)
    assert torch.equal(compiled(x), dropped)


class CumulativeBatchNorm(nn.Module):
    """A batch norm of cumulative averages (momentum=None), which fusion
    computes in eval() mode only."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(16, 16)
        self.bn = nn.BatchNorm1d(16, momentum=None)

    def forward(self, x):
        return self.bn(self.dense(x))


def test_module_compiled_in_eval_refuses_its_refused_train_mode():
    model = CumulativeBatchNorm().eval()
    compiled = fusion.compile(model, (torch.randn(5, 16),), target="cpu")
    x = torch.randn(4, 16)
    assert torch.allclose(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    model.train()
    with pytest.raises(fusion.FusionRuntimeError,
                       match="without its train.* mode.*momentum=None"):
        compiled(x)


def test_module_saved_and_loaded_keeps_its_refused_mode(tmp_path):
    model = CumulativeBatchNorm().eval()
    x = torch.randn(3, 16)
    fusion.compile(model, (x,), target="cpu").save(tmp_path / "block")
    loaded = fusion.load(tmp_path / "block", model)
    assert torch.allclose(loaded(x), model(x), rtol=1e-5, atol=1e-5)
    model.train()
    with pytest.raises(fusion.FusionRuntimeError,
                       match="without its train.* mode.*momentum=None"):
        loaded(x)


def test_dropout_module_compiled_in_train_for_a_gpu_has_both_modes():
    compiled = fusion.compile(ResidualBlock().train(),
                              (torch.randn(2, 5, 16),), target="sm_90")
    assert compiled._manifest["refused"] == {}
    assert set(compiled._manifest["entries"]) == {"train", "eval"}


def test_rank_3_input_read_as_residual_and_strided():
    """A [batch, sequence, features] input read by the residual add as well
    as by the linear layer, called with a transposed (strided) tensor."""
    model = ResidualBlock().eval()
    compiled = fusion.compile(model, (torch.randn(2, 5, 16),), target="cpu")
    x = torch.randn(7, 3, 16).transpose(0, 1)
    reference = ResidualBlock()
    reference.load_state_dict(model.state_dict())
    expected = reference.double().eval()(x.double())
    assert torch.allclose(compiled(x).double(), expected, rtol=1e-5,
                          atol=1e-5)


@pytest.mark.parametrize("structure", [tuple, list])
def test_returns_the_module_output_structure(structure):
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(8, 6)

        def forward(self, x):
            return structure([self.linear(x)])

    model = Model()
    compiled = fusion.compile(model, (torch.randn(4, 8),), target="cpu")
    x = torch.randn(3, 8)
    out, ref = compiled(x), model(x)
    assert type(out) is structure and len(out) == 1
    assert torch.allclose(out[0], ref[0], rtol=1e-5, atol=1e-6)


def test_chain_values_returned_beside_the_result():
    """A module that returns values of its chain (the GEMM output, a value
    between two activations) beside the chain's end: one fused op writes
    them all (its intermediate results), each as PyTorch computes it."""
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(8, 6)

        def forward(self, x):
            y = self.linear(x)
            h = torch.tanh(y * -1.5)
            return torch.sigmoid(h) * y, y, h

    model = Model()
    compiled = fusion.compile(model, (torch.randn(4, 8),), target="cpu")
    x = torch.randn(5, 8)
    outs, refs = compiled(x), model(x)
    assert len(outs) == 3
    for out, ref in zip(outs, refs):
        assert torch.allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_non_tensor_input_refused():
    compiled = fusion.compile(LinearLeakyRelu(8, 6), (torch.randn(4, 8),),
                              target="cpu")
    with pytest.raises(fusion.FusionRuntimeError,
                       match="input 0 must be a torch.Tensor, got list"):
        compiled([[1.0] * 8] * 4)


def test_parameter_set_to_none_refused():
    model = LinearLeakyRelu(8, 6)
    compiled = fusion.compile(model, (torch.randn(4, 8),), target="cpu")
    model.linear.bias = None
    with pytest.raises(fusion.FusionRuntimeError,
                       match="parameter linear.bias is None now.*compile"):
        compiled(torch.randn(3, 8))


@pytest.mark.parametrize("mode, bn", [("train", {}), (
    "eval", {"track_running_stats": False})])
def test_batch_of_one_with_batch_statistics_raises_as_pytorch(mode, bn):
    model, reference, compiled = twins(8, 6, **bn)
    getattr(model, mode)()
    getattr(reference, mode)()
    x = torch.randn(1, 8)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        reference(x)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        compiled(x)
    # PyTorch counts the refused batch in num_batches_tracked; fusion refuses
    # before touching anything.
    assert_same_state(model, reference, ignore={"bn.num_batches_tracked"})


def test_batch_of_one_in_eval_runs():
    model, reference, compiled = twins(8, 6)
    model.eval()
    reference.eval()
    x = torch.randn(1, 8)
    assert torch.allclose(compiled(x), reference(x), rtol=1e-5, atol=1e-5)


def test_empty_batch_in_training_leaves_statistics_as_pytorch():
    model, reference, compiled = twins(8, 6)
    x = torch.randn(0, 8)
    out, ref = compiled(x), reference(x)
    assert out.shape == ref.shape == (0, 6)
    assert_same_state(model, reference)
    assert int(model.bn.num_batches_tracked) == 1


class TensorsMadeInForward(nn.Module):
    """Numbers written as tensors in forward: export lifts them to
    constants, which fusion folds into the program and the backward's
    recomputation reads."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 6)

    def forward(self, x):
        y = torch.tanh(self.linear(x) * torch.tensor(-2.0) +
                       torch.tensor([0.25]))
        # ATen's maximum and where take no number: the recomputation reads
        # the constants as tensors.
        return torch.where(y > torch.tensor(0.0), y,
                           torch.maximum(y, torch.tensor(-0.5)))


@pytest.mark.parametrize("model_factory", [
    lambda: LinearLeakyRelu(8, 6),
    TensorsMadeInForward,
    lambda: LinearScaleBatchNorm(8, 6),
    lambda: LinearScaleBatchNorm(8, 6).eval(),
    # The weight's halves are views: its gradient comes through the
    # recomputed layer, once.
    lambda: GatedLinear(8, 6, "swiglu")])
def test_gradients_match_eager(model_factory):
    """Regression: the compiled module passed detached parameters, so they
    silently got no gradients. The backward now recomputes through
    PyTorch's ops; the running statistics are updated once, by the
    forward."""
    torch.manual_seed(1)
    model = model_factory()
    torch.manual_seed(1)
    reference = model_factory()
    compiled = fusion.compile(model, (torch.randn(4, 8),), target="cpu")
    x = torch.randn(5, 8, requires_grad=True)
    x_reference = x.detach().clone().requires_grad_()
    with torch.enable_grad():
        (compiled(x) * torch.arange(6.0)).sum().backward()
        (reference(x_reference) * torch.arange(6.0)).sum().backward()
    assert torch.allclose(x.grad, x_reference.grad, rtol=1e-5, atol=1e-6)
    for (name, p), q in zip(model.named_parameters(),
                            reference.parameters()):
        assert p.grad is not None, name
        assert torch.allclose(p.grad, q.grad, rtol=1e-5, atol=1e-6), name
    assert_same_state(model, reference)


def test_gradients_of_rank_3_inputs():
    model = LinearLeakyRelu(8, 6)
    compiled = fusion.compile(model, (torch.randn(2, 3, 8),), target="cpu")
    x = torch.randn(4, 5, 8, requires_grad=True)
    with torch.enable_grad():
        compiled(x).sum().backward()
        expected = torch.autograd.grad(model(x).sum(), x)[0]
    assert torch.allclose(x.grad, expected, rtol=1e-5, atol=1e-6)


def test_call_without_gradients_needed_runs_in_grad_mode():
    model = LinearLeakyRelu(8, 6).requires_grad_(False)
    compiled = fusion.compile(model, (torch.randn(4, 8),), target="cpu")
    x = torch.randn(3, 8)
    with torch.enable_grad():
        out = compiled(x)
        assert not out.requires_grad
        assert torch.allclose(out, model(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("change, message", [
    (lambda m: setattr(m.act, "negative_slope", 0.5),
     r"the module changed after compiling \(act.negative_slope 0.1 -> 0.5\)"),
    (lambda m: setattr(m, "multiplier", -3.0),
     r"the module changed after compiling \(multiplier 2.0 -> -3.0\)"),
    (lambda m: (setattr(m, "multiplier", -3.0),
                setattr(m.act, "negative_slope", 0.5)),
     r"\(multiplier 2.0 -> -3.0; act.negative_slope 0.1 -> 0.5\)"),
    (lambda m: setattr(m, "linear", nn.Linear(8, 6)),
     r"submodule linear \(Linear\) was replaced by Linear"),
    (lambda m: setattr(m, "act", nn.ReLU()),
     r"submodule act \(LeakyReLU\) was replaced by ReLU"),
])
def test_changed_constants_and_submodules_refused(change, message):
    model = LinearLeakyRelu(8, 6)
    compiled = fusion.compile(model, (torch.randn(4, 8),), target="cpu")
    change(model)
    with pytest.raises(fusion.FusionRuntimeError,
                       match=message + ".*compile the module again"):
        compiled(torch.randn(3, 8))


@pytest.mark.parametrize("attribute, value", [("momentum", 0.9),
                                              ("eps", 1e-3)])
def test_changed_batch_norm_constants_refused(attribute, value):
    model, _, compiled = twins(8, 6)
    setattr(model.bn, attribute, value)
    with pytest.raises(fusion.FusionRuntimeError,
                       match=f"the module changed after compiling "
                             f"\\(bn.{attribute} .* -> {value}\\)"):
        compiled(torch.randn(5, 8))
    assert float(model.bn.running_mean[0]) == 0.5  # Untouched.


def test_unchanged_constants_run_after_parameter_replaced():
    model = LinearLeakyRelu(8, 6)
    compiled = fusion.compile(model, (torch.randn(4, 8),), target="cpu")
    model.linear.weight = nn.Parameter(torch.randn(6, 8))
    model.act.negative_slope = 0.1  # The same value again.
    x = torch.randn(3, 8)
    assert torch.allclose(compiled(x), model(x), rtol=1e-5, atol=1e-6)
