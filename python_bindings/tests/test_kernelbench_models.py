"""Our copies of KernelBench's level-2 GEMM problems (gpu/kernelbench.py)
without a GPU: the table, each model at its real sizes on the meta device,
each at reduced sizes through torch.compile(backend="fusion") on the CPU
target against float64 eager, and the preparation of the GPU's library
cache (sm_90, meta device), which a run at another batch finds."""
import os
import warnings

import pytest
import torch

import fusion
import fusion.dynamo
from gpu import kernelbench

pytestmark = pytest.mark.usefixtures("fresh_dynamo")

# Features (and group counts) divided by this: every problem runs in a
# fraction of a second on one core.
DIVISOR = 16


def test_table_holds_the_level2_gemm_problems():
    problems = list(kernelbench.PROBLEMS.values())
    assert len(problems) >= 30
    assert len({p.number for p in problems}) == len(problems)
    for problem in problems:
        assert "Gemm" in problem.name or "Matmul" in problem.name
    assert kernelbench.selected(["12", "99_Matmul_GELU_Softmax"]) == [
        kernelbench.PROBLEMS["12_Gemm_Multiply_LeakyReLU"],
        kernelbench.PROBLEMS["99_Matmul_GELU_Softmax"]]
    with pytest.raises(ValueError, match="no KernelBench problems"):
        kernelbench.selected(["1000"])


@pytest.mark.parametrize("name", list(kernelbench.PROBLEMS))
def test_model_runs_at_its_sizes_on_meta(name):
    problem = kernelbench.PROBLEMS[name]
    with torch.device("meta"):
        model = problem.make()
    x, = problem.get_inputs(device="meta")
    assert tuple(x.shape) == (problem.batch_size, problem.in_features)
    with torch.no_grad():
        out = model(x)
    assert out.dtype == torch.float32 and out.numel() > 0


@pytest.mark.parametrize("name", list(kernelbench.PROBLEMS))
def test_problem_matches_float64_through_fusion(name):
    problem = kernelbench.PROBLEMS[name].scaled(DIVISOR)
    model, inputs = kernelbench.model_and_inputs(
        problem, "fp32", kernelbench.check_mode(problem), "cpu")
    reference = kernelbench.float64_copy(model)
    compiled = torch.compile(model, backend="fusion",
                             options={"target": "cpu"})
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", fusion.FusionBackendWarning)
        error = kernelbench.call_error(compiled, model, inputs, reference)
    assert fusion.dynamo.last_fused, "nothing fused"
    assert error <= 1e-5


# "inductor", the GPU targets' default fallback (the bench's): dropout's
# aten.rand reached inductor's lowering before fusion ran inductor's
# random-op pass (InductorError: should have been handled in
# replace_random.py).
@pytest.mark.parametrize("fallback", ["eager", "inductor"])
def test_dropout_problem_runs_in_training_mode(fallback):
    problem = kernelbench.PROBLEMS["66_Matmul_Dropout_Softmax"]
    assert not kernelbench.check_mode(problem)
    model, inputs = kernelbench.model_and_inputs(
        problem.scaled(DIVISOR), "fp32", True, "cpu")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", fusion.FusionBackendWarning)
        out = torch.compile(model, backend="fusion", options={
            "target": "cpu", "fallback": fallback})(*inputs)
    # Each row a softmax (of the dropped and scaled GEMM's output).
    assert torch.allclose(out.sum(dim=1), torch.ones(len(out)), atol=1e-5)


def test_preparation_lists_each_problem_precision_and_mode():
    labels = [label for label, _ in kernelbench.prepare()]
    assert len(labels) == len(set(labels))
    # The dropout problem in both modes (timed in training, checked in
    # eval) and in training with the eager fallback (checked against its
    # draw), the others in training mode alone.
    assert len(labels) == len(kernelbench.PRECISIONS) * \
        (len(kernelbench.PROBLEMS) + 2)


def test_strategy_preparation_compiles_under_the_strategy(library_lookups,
                                                         fresh_dynamo):
    """prepare.py's kernelbench:wgmma group (the kernelbench suite's
    --strategies auto,wgmma): the same problems, precisions and modes as
    the default group, labelled apart, each compiled with strategy wgmma;
    the default leaves the strategy to the backend's auto, and a variant's
    +NAME=VALUE settings are backend options."""
    default = [label for label, _ in kernelbench.prepare()]
    wgmma = list(kernelbench.prepare("wgmma"))
    assert [label for label, _ in wgmma] == \
        [f"{label} wgmma" for label in default]
    assert "strategy" not in kernelbench.fusion_options("bf16")
    clustered = kernelbench.fusion_options("bf16", "auto+cluster=2")
    assert clustered == dict(kernelbench.fusion_options("bf16"),
                             cluster="2")
    assert kernelbench.fusion_options("bf16", "wgmma+cluster=2+stages=3")[
        "strategy"] == "wgmma"
    problem = kernelbench.PROBLEMS["12_Gemm_Multiply_LeakyReLU"].scaled(
        DIVISOR)
    kernelbench.compile_for_cache(problem, "bf16", True, strategy="wgmma")
    kernelbench.compile_for_cache(problem, "bf16", True)
    assert [options["strategy"] for _, options in library_lookups] == \
        ["wgmma", "auto"]


def test_variant_groups_prepare_the_problems_under_the_variant(monkeypatch,
                                                              tmp_path):
    """prepare.py's kernelbench:VARIANT groups: the default group's
    problems labelled with the variant; other unknown groups refused."""
    from gpu import prepare
    default = [label for label, _ in kernelbench.prepare()]
    variant = [label for label, _ in
               prepare.group({}, "kernelbench:auto+cluster=2")()]
    assert variant == [f"{label} auto+cluster=2" for label in default]
    monkeypatch.setattr("sys.argv", ["prepare.py", str(tmp_path),
                                     "--groups", "kernelbench,kernelbnch"])
    with pytest.raises(SystemExit, match="unknown groups \\['kernelbnch'\\]"):
        prepare.main()


def test_prepared_libraries_serve_another_batch():
    """The libraries compiled from the meta device at the problem's batch
    are the ones a run at another batch from real tensors needs (the
    partitions' batch is dynamic), bf16 batch norm statistics included."""
    cache = os.environ["FUSION_CACHE_DIR"]
    problem = kernelbench.PROBLEMS["33_Gemm_Scale_BatchNorm"].scaled(
        DIVISOR, batch_size=1024)
    kernelbench.compile_for_cache(problem, "bf16", True)
    prepared = set(os.listdir(cache))
    assert prepared
    kernelbench.compile_for_cache(problem, "tf32", True)
    assert len(set(os.listdir(cache)) - prepared) == 1  # The precision's.
    prepared = set(os.listdir(cache))
    model, inputs = kernelbench.model_and_inputs(problem, "bf16", True,
                                                 "cpu", batch=4)
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend="fusion", options=kernelbench.
                      fusion_options("bf16", compile_only=True))(*inputs)
    assert fusion.dynamo.last_fused
    assert set(os.listdir(cache)) == prepared
