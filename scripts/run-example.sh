#!/usr/bin/env bash
# The main job: builds fusion, then fuses the example models and prints the
# fused IR.
# Usage: scripts/run-example.sh [build-dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
"$root/scripts/build.sh" "$build"
for model in "$root"/examples/*.mlir; do
  echo "=== $(basename "$model")"
  "$build/bin/fusion-opt" "$model" --fusion-optimize
done
