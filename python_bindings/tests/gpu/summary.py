"""Merges the results of GPU-check processes (pytest --gpu-results FILE,
one per shard) into the one table, with the failures and the skips'
reasons under it; exits 1 where a check failed.

    python3 -m gpu.summary FILE...   (PYTHONPATH: python_bindings/tests)
"""
import json
import math
import pathlib
import sys


def summary_rows(outcomes, errors):
    """The table's rows: (check, cases, passed, failed, skipped, worst
    error / bound), a check being a test function."""
    rows = {}
    for nodeid, outcome in outcomes.items():
        check = nodeid.split("::")[-1].split("[")[0]
        check = check[len("test_"):] if check.startswith("test_") else check
        row = rows.setdefault(check, {"passed": 0, "failed": 0,
                                      "skipped": 0, "worst": None})
        row[outcome] = row.get(outcome, 0) + 1
        for error, bound in errors.get(nodeid, []):
            ratio = error / bound if bound else (0.0 if error == 0
                                                 else math.inf)
            if math.isnan(ratio):
                ratio = math.inf
            if row["worst"] is None or ratio > row["worst"][0]:
                row["worst"] = (ratio, error, bound)
    table = []
    for check, row in rows.items():
        worst = row["worst"]
        cell = "-" if worst is None else f"{worst[1]:.2e} / {worst[2]:.0e}"
        table.append((check, row["passed"] + row["failed"] + row["skipped"],
                      row["passed"], row["failed"], row["skipped"], cell))
    return table


def format_table(rows):
    lines = ["| check | cases | passed | failed | skipped | "
             "worst error / bound |", "|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    total = [sum(row[i] for row in rows) for i in range(1, 5)]
    lines.append("| all | " + " | ".join(map(str, total)) + " | |")
    return "\n".join(lines)


def main(paths):
    outcomes, errors, failures, skips = {}, {}, {}, {}
    for path in paths:
        results = json.loads(pathlib.Path(path).read_text())
        outcomes.update(results["outcomes"])
        errors.update(results["errors"])
        failures.update(results["failures"])
        skips.update(results.get("skips", {}))
    try:
        import torch
        device = torch.cuda.get_device_name()
    except Exception:  # noqa: BLE001 (no device: the table alone)
        device = "no CUDA device"
    print(f"\n## GPU checks on {device}\n")
    print(format_table(summary_rows(outcomes, errors)))
    for nodeid, lines in sorted(failures.items()):
        print(f"FAILED {nodeid}: {' '.join(lines)}")
    for nodeid, reason in sorted(skips.items()):
        print(f"SKIPPED {nodeid}: {reason[:300]}")
    return 1 if any(o == "failed" for o in outcomes.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
