#!/usr/bin/env bash
# The main job, in under 2 minutes on a built tree: builds fusion, fuses the
# example models (prints the fused IR), compiles each into GPU libraries
# through backends 1 (cuBLASLt + epilogue kernels) and 2 (the tiled
# tensor-core kernel), and, where a CUDA GPU and PyTorch are present, checks
# them against PyTorch. Without a GPU it says so after compiling and exits
# 0. The full GPU check and benchmark is scripts/gpu-check.sh.
# Usage: scripts/run-example.sh [build-dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
models=("$root"/examples/*.mlir)
precisions=(fp32 tf32)

echo "[1/4] building fusion (log: $build/build.log)"
mkdir -p "$build"
if ! "$root/scripts/build.sh" "$build" >"$build/build.log" 2>&1; then
  tail -20 "$build/build.log"
  exit 1
fi

echo "[2/4] fusing the examples"
for model in "${models[@]}"; do
  echo "=== $(basename "$model"), fused"
  "$build/bin/fusion-opt" "$model" --fusion-optimize
done

if [ ! -x "$build/bin/fusion-compile" ]; then
  echo "No CUDA toolkit was found when configuring: fusion-compile was not built."
  exit 0
fi
# The layout the GPU checks read (python_bindings/tests/gpu): backend 1 at
# the top, backend 2 in tiled/.
artifacts="$build/examples"
rm -rf "$artifacts" && mkdir -p "$artifacts/tiled"
count=$(( ${#models[@]} * ${#precisions[@]} * 2 ))
echo "[3/4] compiling $count libraries into $artifacts"
done_count=0
for model in "${models[@]}"; do
  name="$(basename "$model" .mlir)"
  for precision in "${precisions[@]}"; do
    for strategy in cublas tiled; do
      out="$artifacts"; target=sm_80
      [ $strategy = tiled ] && out="$artifacts/tiled" && target=sm_90
      done_count=$((done_count + 1))
      echo "  [$done_count/$count] $name, $precision, $strategy ($target)"
      "$build/bin/fusion-compile" "$model" --precision=$precision \
        --strategy=$strategy --target=$target -o "$out/${name}_$precision.so"
    done
  done
done
printf 'commit=%s\ndate=%s\n' "$(git -C "$root" rev-parse --short HEAD)" \
  "$(date -u +%F)" > "$artifacts/BUILD_INFO"
echo "=== the C ABI of one of them"
cat "$artifacts/linear_leaky_relu_fp32.h"

# The GPU checks of the examples (python_bindings/tests/gpu, pytest marker
# gpu): each library against PyTorch in float64, and bad arguments; they
# skip, saying why, without a CUDA GPU.
python="$root/.venv/bin/python"; [ -x "$python" ] || python=python3
check=("$python" -m pytest -q -p no:cacheprovider -m gpu -rs
       "$root/python_bindings/tests/gpu/test_libraries.py"
       -k "example or bad_argument" --artifacts "$artifacts")
if "$python" -c "import torch, sys; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
  echo "[4/4] checking them against PyTorch on $("$python" -c \
    'import torch; print(torch.cuda.get_device_name())')"
  PYTHONPATH="$root/python_bindings" "${check[@]}"
else
  echo "[4/4] no CUDA GPU here: the libraries are in $artifacts; the checks"
  echo "  skip (on a machine with a GPU, CUDA and PyTorch they run):"
  PYTHONPATH="$root/python_bindings" "${check[@]}" | tail -3
fi
