#!/usr/bin/env bash
# Installs the toolchain (idempotent) and configures + builds fusion.
# Usage: scripts/build.sh [build-dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
"$root/scripts/install-deps.sh"
cmake -G Ninja -S "$root" -B "$build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DPython3_EXECUTABLE="$root/.venv/bin/python" \
  -Dpybind11_DIR="$("$root/.venv/bin/python" -m pybind11 --cmakedir)"
cmake --build "$build"
