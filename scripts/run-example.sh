#!/usr/bin/env bash
# The main job: builds fusion, fuses the example models (prints the fused
# IR), compiles them into GPU libraries, and, where a CUDA GPU and PyTorch
# are present, runs and checks them against PyTorch. Without a GPU it says so
# after compiling and exits 0.
# Usage: scripts/run-example.sh [build-dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
"$root/scripts/build.sh" "$build"
for model in "$root"/examples/*.mlir; do
  echo "=== $(basename "$model"), fused"
  "$build/bin/fusion-opt" "$model" --fusion-optimize
done
if [ ! -x "$build/bin/fusion-compile" ]; then
  echo "No CUDA toolkit was found when configuring: fusion-compile was not built."
  exit 0
fi
artifacts="$build/artifacts"
"$root/scripts/gpu-check.sh" build "$artifacts" > /dev/null
echo "=== compiled: $artifacts"
cat "$artifacts/linear_leaky_relu_fp32.h"
if python3 -c "import torch, sys; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
  "$root/scripts/gpu-check.sh" run "$artifacts" --no-bench
else
  echo "No CUDA GPU here: the libraries are in $artifacts; run"
  echo "  scripts/gpu-check.sh run $artifacts"
  echo "on a machine with a GPU, CUDA and PyTorch to check and time them."
fi
