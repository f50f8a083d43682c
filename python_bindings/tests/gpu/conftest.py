"""The GPU checks' configuration: the marker `gpu`, the artifacts of
`scripts/gpu-check.sh build` (`--artifacts DIR` or $FUSION_GPU_ARTIFACTS),
skips with the reason where there is no CUDA device or no artifacts, the
library cache the artifacts carry, and one table at the end:

    check | cases | passed | failed | skipped | worst error / bound
"""
import json
import os
import pathlib
import warnings

import pytest
import torch

from gpu.helpers import need
from gpu.summary import format_table, summary_rows

HERE = pathlib.Path(__file__).resolve().parent
# nodeid -> [(error, bound)] that the tests' `within` recorded; nodeid ->
# outcome.
_ERRORS = {}
_OUTCOMES = {}
# The nodeids of the tests of this folder; nodeid -> the last line of a
# failure's report; nodeid -> a skip's reason.
_OURS = set()
_FAILURES = {}
_SKIPS = {}
# Whether the session collected the GPU checks alone.
_ONLY_OURS = pytest.StashKey[bool]()


def pytest_addoption(parser):
    parser.addoption(
        "--artifacts", default=None, metavar="DIR",
        help="the GPU checks' artifacts (scripts/gpu-check.sh build DIR); "
             "default $FUSION_GPU_ARTIFACTS")
    parser.addoption(
        "--shard", default=None, metavar="I/N",
        help="run every N-th GPU check from the I-th on (several processes "
             "share the device; scripts/gpu-check.sh run --jobs N)")
    parser.addoption(
        "--gpu-results", default=None, metavar="FILE",
        help="write the GPU checks' outcomes and errors to FILE (JSON), "
             "for `python3 -m gpu.summary FILE...` to merge")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: a GPU correctness check (needs a CUDA device and "
                   "the artifacts of scripts/gpu-check.sh build)")


def artifacts_dir(config):
    value = config.getoption("artifacts", default=None) or \
        os.environ.get("FUSION_GPU_ARTIFACTS")
    return pathlib.Path(value).resolve() if value else None


def skip_reason(config):
    """Why no GPU check can run here, or None."""
    if not torch.cuda.is_available():
        return "no CUDA device"
    directory = artifacts_dir(config)
    if directory is None:
        return ("no artifacts: pass --artifacts DIR or set "
                "FUSION_GPU_ARTIFACTS (scripts/gpu-check.sh build DIR)")
    if not (directory / "BUILD_INFO").is_file():
        return f"{directory} holds no artifacts (no BUILD_INFO)"
    return None


def _ours(path):
    return HERE in pathlib.Path(path).resolve().parents


def pytest_collection_modifyitems(config, items):
    reason = skip_reason(config)
    config.stash[_ONLY_OURS] = all(_ours(item.path) for item in items)
    shard = config.getoption("shard", default=None)
    if shard:
        index, count = map(int, shard.split("/"))
        ours = [item for item in items if _ours(item.path)]
        dropped = {id(item) for i, item in enumerate(ours)
                   if i % count != index}
        config.hook.pytest_deselected(
            items=[item for item in items if id(item) in dropped])
        items[:] = [item for item in items if id(item) not in dropped]
    for item in items:
        if not _ours(item.path):
            continue
        _OURS.add(item.nodeid)
        item.add_marker(pytest.mark.gpu)
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def artifacts(request):
    """The artifacts directory (the collection skipped every test where
    there is none)."""
    directory = artifacts_dir(request.config)
    if directory is None:
        pytest.skip("no artifacts")
    return directory


@pytest.fixture(autouse=True, scope="session")
def private_library_cache(request):
    """The library cache the artifacts carry (overrides the other tests'
    private one): fusion.compile finds its libraries there, compiled on
    the build machine by prepare.py."""
    directory = artifacts_dir(request.config)
    if directory is not None:
        os.environ["FUSION_CACHE_DIR"] = str(directory / "cache")
        os.environ["FUSION_CACHE_MAX_BYTES"] = str(1 << 40)


@pytest.fixture
def library_cache(artifacts):
    """Skips a check of fusion.compile'd libraries where the artifacts
    carry no cache, or where this package's compiler id (part of every
    cache key) is not the one that filled it."""
    from fusion.cache import compiler_id
    need(artifacts / "cache")
    carried = need(artifacts / "compiler_id").read_text().strip()
    if compiler_id() != carried:
        try:
            from fusion import _fusion  # noqa: F401  (compiles on a miss)
        except ImportError:
            pytest.skip(f"the fusion package's compiler id "
                        f"({compiler_id()}) is not the cache's ({carried}):"
                        f" run through scripts/gpu-check.sh run, which "
                        f"installs it")
    return artifacts / "cache"


# fusion's words for a cache miss on a machine without the compiler.
MISSING = "is not in the cache"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """A check that fails because a library is not in the cache (raised,
    or warned by the torch.compile backend, which then leaves the graph to
    PyTorch) skips, naming it: its bundle of the artifacts was not carried
    (scripts/gpu-check.sh packs the large groups apart)."""
    if item.nodeid not in _OURS:
        yield
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = yield
    if outcome.excinfo is None:
        return
    messages = [str(outcome.excinfo[1])] + [str(w.message) for w in caught]
    missing = [m for m in messages if MISSING in m]
    if missing:
        outcome.force_exception(pytest.skip.Exception(
            "a library is not in the carried cache (a bundle of the "
            f"artifacts not unpacked?): {missing[0][:160]}"))


@pytest.fixture
def sm90():
    """Skips on devices other than sm_90 (the Hopper kernels; the
    libraries of the cache are compiled for sm_90 alone)."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip(f"needs sm_90, not {torch.cuda.get_device_name()}")


@pytest.fixture
def within(request):
    """within(error, bound, what): records the error for the table and
    asserts error <= bound (NaN fails)."""
    def check(error, bound, what=""):
        _ERRORS.setdefault(request.node.nodeid, []).append((error, bound))
        assert error <= bound, f"{what} error {error:.3g} > bound {bound:.0e}"
    return check


def pytest_runtest_logreport(report):
    if report.nodeid not in _OURS:
        return
    if report.when == "setup" and not report.passed:
        _OUTCOMES[report.nodeid] = "skipped" if report.skipped else "failed"
    elif report.when == "call":
        _OUTCOMES[report.nodeid] = report.outcome
    elif report.when == "teardown" and report.failed:
        _OUTCOMES[report.nodeid] = "failed"
    if report.failed:
        _FAILURES[report.nodeid] = str(report.longrepr).splitlines()[-1:]
    if report.skipped:
        _SKIPS[report.nodeid] = skip_reason_of(report)


def skip_reason_of(report):
    """A skip's reason (its longrepr is (file, line, reason)), or an
    expected failure's (`wasxfail`; its longrepr is the failure's)."""
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[-1])
    return f"expected to fail: {getattr(report, 'wasxfail', '')}"


def pytest_sessionfinish(session):
    path = session.config.getoption("gpu_results", default=None)
    if path:
        pathlib.Path(path).write_text(json.dumps(
            {"outcomes": _OUTCOMES, "errors": _ERRORS,
             "failures": _FAILURES, "skips": _SKIPS}))


def pytest_terminal_summary(terminalreporter, config):
    if not _OUTCOMES:
        return
    skipped = all(o == "skipped" for o in _OUTCOMES.values())
    if skipped and not config.stash.get(_ONLY_OURS, False):
        # Among the other tests (scripts/test.sh), all skipped: one line.
        terminalreporter.write_line(
            f"GPU checks: {len(_OUTCOMES)} skipped "
            f"({skip_reason(config) or 'see -rs'})")
        return
    rows = summary_rows(_OUTCOMES, _ERRORS)
    device = (torch.cuda.get_device_name() if torch.cuda.is_available()
              else "no CUDA device")
    terminalreporter.write_sep("=", "GPU checks")
    terminalreporter.write_line(f"device: {device}; torch "
                                f"{torch.__version__}")
    terminalreporter.write_line(format_table(rows))
