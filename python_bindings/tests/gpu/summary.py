"""Merges the results of GPU-check processes (pytest --gpu-results FILE,
one per shard) into the one table, with the failures under it; exits 1
where a check failed.

    python3 -m gpu.summary FILE...   (PYTHONPATH: python_bindings/tests)
"""
import json
import pathlib
import sys

from gpu.conftest import format_table, summary_rows


def main(paths):
    outcomes, errors, failures = {}, {}, {}
    for path in paths:
        results = json.loads(pathlib.Path(path).read_text())
        outcomes.update(results["outcomes"])
        errors.update(results["errors"])
        failures.update(results["failures"])
    try:
        import torch
        device = torch.cuda.get_device_name()
    except Exception:  # noqa: BLE001 (no device: the table alone)
        device = "no CUDA device"
    print(f"\n## GPU checks on {device}\n")
    print(format_table(summary_rows(outcomes, errors)))
    for nodeid, lines in sorted(failures.items()):
        print(f"FAILED {nodeid}: {' '.join(lines)}")
    return 1 if any(o == "failed" for o in outcomes.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
