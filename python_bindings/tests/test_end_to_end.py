"""fusion.compile on the CPU target against PyTorch's forward: outputs,
running statistics over several training steps, the train/eval switch,
save and load, and the runtime's argument checks."""
import json
import tempfile

import pytest
import torch
import torch.nn as nn

import fusion

from conftest import GatedLinear, LinearLeakyRelu, LinearScaleBatchNorm

pytestmark = pytest.mark.usefixtures("no_grad")


def relative_error(out, ref):
    return ((out.double() - ref.double()).norm() / ref.double().norm()).item()


@pytest.mark.parametrize("multiplier, slope, bias", [
    (2.0, 0.1, True), (-2.0, 0.1, True), (2.0, 0.0, False), (0.5, 1.5, True)])
def test_workload_a(multiplier, slope, bias):
    model = LinearLeakyRelu(50, 29, bias=bias, multiplier=multiplier,
                            slope=slope)
    compiled = fusion.compile(model, (torch.randn(8, 50),), target="cpu")
    for batch in (37, 64, 1):
        x = torch.randn(batch, 50)
        assert relative_error(compiled(x), model(x)) < 1e-5


def test_workload_b_training_steps_then_eval():
    model = LinearScaleBatchNorm(50, 29, momentum=0.3)
    reference = LinearScaleBatchNorm(50, 29, momentum=0.3)
    reference.load_state_dict(model.state_dict())
    compiled = fusion.compile(model, (torch.randn(8, 50),), target="cpu")
    for step in range(4):
        x = torch.randn(37 + step, 50)
        assert relative_error(compiled(x), reference(x)) < 1e-5
    assert torch.allclose(model.bn.running_mean, reference.bn.running_mean,
                          rtol=1e-5, atol=1e-6)
    assert torch.allclose(model.bn.running_var, reference.bn.running_var,
                          rtol=1e-5, atol=1e-6)
    assert int(model.bn.num_batches_tracked) == 4
    compiled.eval()
    reference.eval()
    assert not model.training  # The switch reaches the shared module.
    x = torch.randn(16, 50)
    assert relative_error(compiled(x), reference(x)) < 1e-5
    mean = model.bn.running_mean.clone()
    compiled(x)
    assert torch.equal(model.bn.running_mean, mean)  # Eval updates nothing.


def test_parameters_are_shared_not_copied():
    model = LinearLeakyRelu(8, 6)
    compiled = fusion.compile(model, (torch.randn(4, 8),), target="cpu")
    with torch.no_grad():
        model.linear.weight.mul_(3.0)
    x = torch.randn(5, 8)
    assert relative_error(compiled(x), model(x)) < 1e-5


def test_batch_norm_without_running_stats():
    model = LinearScaleBatchNorm(16, 12, affine=False,
                                 track_running_stats=False)
    compiled = fusion.compile(model, (torch.randn(8, 16),), target="cpu")
    for mode in ("train", "eval"):
        getattr(compiled, mode)()
        x = torch.randn(20, 16)
        assert relative_error(compiled(x), model(x)) < 1e-5


def test_bf16():
    model = LinearLeakyRelu(32, 16).to(torch.bfloat16)
    x = torch.randn(24, 32, dtype=torch.bfloat16)
    compiled = fusion.compile(model, (x,), target="cpu")
    out = compiled(x)
    assert out.dtype == torch.bfloat16
    reference = model.float()(x.float())
    assert relative_error(out, reference) < 2e-2


def test_save_and_load(tmp_path):
    model = LinearScaleBatchNorm(16, 12)
    compiled = fusion.compile(model, (torch.randn(8, 16),), target="cpu")
    compiled.save(tmp_path / "saved")
    other = LinearScaleBatchNorm(16, 12)
    other.load_state_dict(model.state_dict())
    loaded = fusion.load(tmp_path / "saved", other)
    x = torch.randn(9, 16)
    assert relative_error(loaded(x), compiled(x)) < 1e-6
    assert int(other.bn.num_batches_tracked) == 1


def test_module_saved_with_broadcast_widths_loads(tmp_path):
    """A manifest of a fusion before single values became [1] operands
    gives each argument a "broadcast" width; 0 (none) loads as before."""
    model = LinearScaleBatchNorm(16, 12).eval()
    compiled = fusion.compile(model, (torch.randn(8, 16),), target="cpu")
    compiled.save(tmp_path / "saved")
    path = tmp_path / "saved" / "fusion_module.json"
    manifest = json.loads(path.read_text())
    for entry in manifest["entries"].values():
        for argument in entry["arguments"]:
            argument["broadcast"] = 0
    path.write_text(json.dumps(manifest))
    loaded = fusion.load(tmp_path / "saved", model)
    x = torch.randn(9, 16)
    assert relative_error(loaded(x), compiled(x)) < 1e-6


@pytest.mark.parametrize("gate", ["glu", "swiglu"])
def test_gated_layer_reads_the_weights_as_they_are_now(tmp_path, gate):
    """The halves of the weight are views taken at each call: a weight
    changed in place, and one replaced, are read as they are, also by a
    loaded module."""
    model = GatedLinear(20, 13, gate)
    compiled = fusion.compile(model, (torch.randn(8, 20),), target="cpu")
    x = torch.randn(11, 20)
    assert relative_error(compiled(x), model(x)) < 1e-5
    model.linear.weight.mul_(-1.5)
    assert relative_error(compiled(x), model(x)) < 1e-5
    model.linear.bias = nn.Parameter(torch.randn(26))
    assert relative_error(compiled(x), model(x)) < 1e-5
    compiled.save(tmp_path / "saved")
    loaded = fusion.load(tmp_path / "saved", model)
    assert relative_error(loaded(x), model(x)) < 1e-5


def test_runtime_checks_arguments():
    compiled = fusion.compile(LinearLeakyRelu(8, 6), (torch.randn(4, 8),),
                              target="cpu")
    with pytest.raises(fusion.FusionRuntimeError, match="must be torch.float32"):
        compiled(torch.randn(4, 8, dtype=torch.float64))
    with pytest.raises(fusion.FusionRuntimeError,
                       match=r"must have size 8 in dimension 1"):
        compiled(torch.randn(4, 7))
    with pytest.raises(fusion.FusionRuntimeError, match="must be contiguous"):
        compiled(torch.randn(8, 4).t())
    with pytest.raises(fusion.FusionRuntimeError,
                       match="forward takes 1 inputs, got 2"):
        compiled(torch.randn(4, 8), torch.randn(4, 8))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_library_rejects_cpu_tensors():
    compiled = fusion.compile(LinearLeakyRelu(8, 16), (torch.randn(4, 8),),
                              target="sm_80")
    with pytest.raises(fusion.FusionRuntimeError, match="runs on cuda"):
        compiled(torch.randn(4, 8))


def test_target_follows_the_example_inputs_device():
    compiled = fusion.compile(LinearLeakyRelu(8, 6), (torch.randn(4, 8),))
    assert compiled._manifest["target"] == "cpu"
    x = torch.randn(3, 8)
    with torch.no_grad():
        assert relative_error(compiled(x), compiled.original(x)) < 1e-5


def test_no_temporary_files_left(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    model = LinearScaleBatchNorm(16, 12)
    compiled = fusion.compile(model, (torch.randn(8, 16),), target="cpu")
    compiled.save(tmp_path / "saved")
    loaded = fusion.load(tmp_path / "saved", model)
    x = torch.randn(9, 16)
    reference = LinearScaleBatchNorm(16, 12)
    reference.load_state_dict(model.state_dict())
    assert relative_error(loaded(x), reference(x)) < 1e-5
    assert list((tmp_path / "tmp").iterdir()) == []


def test_save_over_the_loaded_library(tmp_path):
    first = LinearLeakyRelu(8, 6, slope=0.2)
    fusion.compile(first, (torch.randn(4, 8),), target="cpu").save(tmp_path)
    loaded = fusion.load(tmp_path, first)
    loaded.save(tmp_path)  # Over the files it was loaded from.
    second = LinearLeakyRelu(8, 6, multiplier=-1.0)
    fusion.compile(second, (torch.randn(4, 8),), target="cpu").save(tmp_path)
    x = torch.randn(5, 8)
    assert relative_error(loaded(x), first(x)) < 1e-5
    # The new library, not the one loaded from the same path before.
    assert relative_error(fusion.load(tmp_path, second)(x), second(x)) < 1e-5


@pytest.mark.parametrize("other, message", [
    (lambda: LinearLeakyRelu(8, 6, slope=0.7, multiplier=-1.0),
     r"its forward_train differs: the library has .*2\.0.*, the module "
     r".*-1\.0"),
    (lambda: LinearLeakyRelu(16, 6), "does not import for the saved example "
     "inputs"),
    (lambda: LinearLeakyRelu(8, 6).to(torch.bfloat16), "does not import"),
    (lambda: nn.Sequential(nn.Linear(8, 6), nn.ReLU()), "the library has "
     ".*aten.mul.Tensor.*, the module .*aten.relu.default"),
    (lambda: LinearScaleBatchNorm(8, 6), "its forward_train differs: arguments"),
])
def test_load_refuses_other_ops(tmp_path, other, message):
    model = LinearLeakyRelu(8, 6)
    fusion.compile(model, (torch.randn(4, 8),), target="cpu").save(tmp_path)
    with pytest.raises(fusion.FusionRuntimeError,
                       match="compiled from other ops than this .*" + message):
        fusion.load(tmp_path, other())


class Renamed(LinearLeakyRelu):
    """LinearLeakyRelu's ops on a parameter of another name."""

    def __init__(self):
        super().__init__(8, 6)
        self.fc = self.linear
        del self.linear

    def forward(self, x):
        return self.act(self.fc(x) * self.multiplier)


def test_load_refuses_other_parameter_names(tmp_path):
    model = LinearLeakyRelu(8, 6)
    fusion.compile(model, (torch.randn(4, 8),), target="cpu").save(tmp_path)
    with pytest.raises(fusion.FusionRuntimeError,
                       match=r"binds \['linear.bias', 'linear.weight'\], "
                             r"this Renamed has \['fc.bias', 'fc.weight'\]"):
        fusion.load(tmp_path, Renamed())


def test_load_accepts_the_module_defined_elsewhere(tmp_path):
    # The same ops from another source file: only locations differ.
    model = LinearLeakyRelu(8, 6, slope=0.3)
    fusion.compile(model, (torch.randn(4, 8),), target="cpu").save(tmp_path)
    manifest = tmp_path / "fusion_module.json"
    manifest.write_text(manifest.read_text().replace("conftest.py",
                                                     "elsewhere.py"))
    loaded = fusion.load(tmp_path, model)
    x = torch.randn(5, 8)
    assert relative_error(loaded(x), model(x)) < 1e-5


def test_load_corrupt_library_names_it(tmp_path):
    model = LinearLeakyRelu(8, 6)
    fusion.compile(model, (torch.randn(4, 8),), target="cpu").save(tmp_path)
    (tmp_path / "model.so").write_bytes(b"garbage")
    with pytest.raises(fusion.FusionRuntimeError,
                       match=f"cannot load the library of {tmp_path}: "
                             f"model.so: "):
        fusion.load(tmp_path, model)


def test_relu_of_minus_infinity_is_zero():
    # shared/reliability/python_probe.py call_neg_inf_relu: ReLU imported as
    # leaky_relu with slope 0 gave -inf * 0 = NaN; torch.relu gives 0.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 6), nn.ReLU())
    model[0].weight.data = torch.rand(6, 8) + 0.1  # -inf in x stays -inf
    compiled = fusion.compile(model, (torch.randn(4, 8),), target="cpu")
    x = torch.randn(5, 8)
    x[1, 3] = float("-inf")
    out, ref = compiled(x), model(x)
    assert torch.equal(out[1], torch.zeros(6))
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-6)


def test_load_missing_or_corrupt_manifest(tmp_path):
    with pytest.raises(fusion.FusionRuntimeError,
                       match="no saved fusion module at .*does-not-exist"):
        fusion.load(tmp_path / "does-not-exist", LinearLeakyRelu(8, 6))
    model = LinearLeakyRelu(8, 6)
    fusion.compile(model, (torch.randn(4, 8),), target="cpu").save(
        tmp_path / "saved")
    manifest = tmp_path / "saved" / fusion.module.MANIFEST
    manifest.write_text(manifest.read_text()[:50])
    with pytest.raises(fusion.FusionRuntimeError,
                       match="is not a fusion manifest"):
        fusion.load(tmp_path / "saved", model)


def test_keyword_inputs_are_refused():
    model = LinearLeakyRelu(8, 6)
    compiled = fusion.compile(model, (torch.randn(4, 8),), target="cpu")
    with pytest.raises(fusion.FusionRuntimeError,
                       match="takes its inputs by position, got keyword "
                             "arguments x"):
        compiled(x=torch.randn(4, 8))
