"""The GPU checks' table (gpu/summary.py) without a GPU: cases counted by
check, the worst error against its bound, NaN as a failure's worst."""
import math

from gpu.summary import format_table, summary_rows


def test_rows_count_outcomes_and_keep_the_worst_ratio():
    outcomes = {"gpu/test_a.py::test_zoo[x-fp32]": "passed",
                "gpu/test_a.py::test_zoo[y-bf16]": "passed",
                "gpu/test_a.py::test_zoo[z-bf16]": "skipped",
                "gpu/test_b.py::test_division[1000]": "failed",
                "gpu/test_b.py::test_bad_argument": "passed"}
    errors = {"gpu/test_a.py::test_zoo[x-fp32]": [(5e-6, 1e-5)],
              # A larger error, but further within its bound.
              "gpu/test_a.py::test_zoo[y-bf16]": [(1e-3, 2e-2)],
              "gpu/test_b.py::test_division[1000]": [(0, 0), (3, 0)]}
    rows = {row[0]: row for row in summary_rows(outcomes, errors)}
    assert rows["zoo"] == ("zoo", 3, 2, 0, 1, "5.00e-06 / 1e-05")
    assert rows["division"] == ("division", 1, 0, 1, 0, "3.00e+00 / 0e+00")
    assert rows["bad_argument"] == ("bad_argument", 1, 1, 0, 0, "-")
    table = format_table(list(rows.values())).splitlines()
    assert table[0].startswith("| check | cases | passed | failed |")
    assert table[-1] == "| all | 5 | 3 | 1 | 1 | |"


def test_nan_is_the_worst():
    outcomes = {"t::test_x[a]": "failed", "t::test_x[b]": "passed"}
    errors = {"t::test_x[a]": [(math.nan, 1e-5)],
              "t::test_x[b]": [(9e-6, 1e-5)]}
    (row,) = summary_rows(outcomes, errors)
    assert row[-1] == "nan / 1e-05"


def test_skips_print_their_reasons(tmp_path, capsys):
    """A shard's skipped checks come with their reasons under the table
    (a library missing from the cache says which)."""
    import json

    from gpu.summary import main
    results = tmp_path / "shard-0.json"
    results.write_text(json.dumps({
        "outcomes": {"t::test_zoo[gpt2]": "skipped",
                     "t::test_zoo[bert]": "passed"},
        "errors": {}, "failures": {},
        "skips": {"t::test_zoo[gpt2]": "libraries not in the cache: 14d8"}}))
    assert main([str(results)]) == 0
    assert "SKIPPED t::test_zoo[gpt2]: libraries not in the cache: 14d8" \
        in capsys.readouterr().out


def test_skip_reasons_of_skips_and_expected_failures():
    """A skip's report holds (file, line, reason); an expected failure's
    (xfail, also reported as skipped) holds the failure: its reason is
    `wasxfail` (indexing that report raised in the hook)."""
    from types import SimpleNamespace

    from gpu.conftest import skip_reason_of
    skip = SimpleNamespace(longrepr=("t.py", 3, "Skipped: no CUDA device"))
    assert skip_reason_of(skip) == "Skipped: no CUDA device"
    xfail = SimpleNamespace(longrepr=object(), wasxfail="dropout's rand")
    assert skip_reason_of(xfail) == "expected to fail: dropout's rand"
