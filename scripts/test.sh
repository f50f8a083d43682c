#!/usr/bin/env bash
# Installs what is missing, builds fusion and runs every test: the check
# that no C++ folders or Python modules depend on each other in a cycle
# (scripts/check-cycles.py), the lit suite (check-fusion), the Python
# package's pytest suite (on the pinned PyTorch of .venv; with the
# random-model fuzzer's CI budget of seeds, docs/model-fuzzing.md) and
# about 2 minutes of the libFuzzer target (scripts/fuzz.sh). GPU-only tests
# skip without a GPU.
# Usage: scripts/test.sh [build-dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
"$root/scripts/check-cycles.py" "$root"
"$root/scripts/build.sh" "$build"
cmake --build "$build" --target check-fusion
# Two processes (pytest-xdist): the suite is mostly one thread a test,
# and the machine has two cores (about 25 minutes here against 40).
PYTHONPATH="$build/python_packages" "$root/.venv/bin/python" -m pytest -q \
  -p no:cacheprovider -n 2 "$root/python_bindings/tests"
# The libFuzzer target for about 2 minutes (skipped when not built).
"$root/scripts/fuzz.sh" "$build" 110
