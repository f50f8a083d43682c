#!/usr/bin/env bash
# Installs what is missing, builds fusion and runs every test (lit suite).
# Usage: scripts/test.sh [build-dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
"$root/scripts/build.sh" "$build"
cmake --build "$build" --target check-fusion
