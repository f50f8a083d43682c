#!/usr/bin/env bash
# Installs what is missing, builds fusion and runs every test: the lit suite
# (check-fusion), the Python package's pytest suite (on the pinned PyTorch
# of .venv) and about 3 minutes of
# the libFuzzer target (scripts/fuzz.sh). GPU-only tests skip without a GPU.
# Usage: scripts/test.sh [build-dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
"$root/scripts/build.sh" "$build"
cmake --build "$build" --target check-fusion
PYTHONPATH="$build/python_packages" "$root/.venv/bin/python" -m pytest -q \
  -p no:cacheprovider "$root/python_bindings/tests"
# The libFuzzer target for about 3 minutes (skipped when not built).
"$root/scripts/fuzz.sh" "$build" 170
