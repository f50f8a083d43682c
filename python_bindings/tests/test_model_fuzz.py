"""The random-model differential fuzzer (model_fuzz.py) on a fixed budget of
seeds: random models of fusion's family through torch.compile(backend=
"fusion") and fusion.compile on the CPU target, eval and train, against
float64 eager. Each seed runs in a worker process, so that a crash of the
compiler is a failure with its seed rather than the end of the test run.
Deselect with -m "not fuzz"; docs/model-fuzzing.md has the long run."""
import os

import pytest

import model_fuzz

# The CI budget, run by two worker processes (compiling is mostly one
# thread): 66 s on the project's two-core machine (see
# docs/model-fuzzing.md). FUSION_FUZZ_SEEDS ("A:B" or "1,2,3") overrides it.
CI_SEEDS = "0:40"
JOBS = min(2, os.cpu_count() or 1)


@pytest.mark.fuzz
def test_random_models():
    seeds = model_fuzz.parse_seeds(
        os.environ.get("FUSION_FUZZ_SEEDS", CI_SEEDS))
    results = model_fuzz.fuzz(seeds, model_fuzz.Settings(isolate=True,
                                                         jobs=JOBS))
    failing = [r for r in results if model_fuzz.failures(r)]
    if failing:
        pytest.fail(
            f"{len(failing)} of {len(results)} random models failed (a "
            f"smaller reproducer: python python_bindings/tests/model_fuzz.py "
            f"--seed N --reduce):\n" +
            "\n".join(model_fuzz.failure_line(r) for r in failing) + "\n\n" +
            "\n\n".join(model_fuzz.report(r) for r in failing),
            pytrace=False)
