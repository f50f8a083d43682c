#!/usr/bin/env bash
# The GPU check and benchmark of the compiled workloads, in two steps:
#
#   scripts/gpu-check.sh build [dir]   on the build machine (has the
#       compiler, no GPU): compiles examples/ and the workload variants of
#       scripts/gpu/make_models.py into dir (default: artifacts/), one
#       library per precision.
#   scripts/gpu-check.sh run [dir] [--max-autotune] [--out DIR]   on a GPU
#       machine with CUDA, cuBLAS and PyTorch (no compiler needed): checks
#       every library against PyTorch and times fusion, eager, torch.compile
#       and the raw cuBLAS GEMM; then loads the modules compiled from PyTorch
#       with fusion.load and checks and times them; prints tables last.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
step="${1:-}"; shift || true
# compile_workloads FUSION_COMPILE DIR: the workloads of DIR/models through
# backend 1 (cublas, in DIR), backend 2 (tiled, in DIR/tiled) and its fp32 on
# the CUDA cores (DIR/simt), every precision, and ptxas's report of the tiled
# kernels.
compile_workloads() {
    local compile="$1" dir="$2" strategy out target precision type variant
    # The workloads through backend 1 (cublas, in dir) and backend 2 (tiled,
    # in dir/tiled).
    # The tiled kernels are compiled for the H100 they run on (sm_90: the
    # same mma.sync/ldmatrix/cp.async code, 4 pipeline stages instead of
    # the 3 that fit an A100's shared memory).
    # backend 3 (wgmma, in dir/wgmma) is sm_90 alone.
    for strategy in cublas tiled wgmma; do
      out="$dir"; target=sm_80
      [ $strategy != cublas ] && out="$dir/$strategy" && target=sm_90
      mkdir -p "$out"
      for precision in fp32 tf32 bf16 f16; do
        "$compile" "$dir/models/workloads_f32.mlir" --precision=$precision \
          --strategy=$strategy --target=$target \
          -o "$out/workloads_f32_$precision.so"
      done
      for type in bf16 f16; do
        "$compile" "$dir/models/workloads_$type.mlir" --strategy=$strategy \
          --target=$target -o "$out/workloads_$type.so"
      done
      # ptxas's report of the tiled kernels (registers, spills) and cubins
      # for the SASS check on the GPU machine.
      if [ $strategy != cublas ]; then
        arch=$target; [ $strategy = wgmma ] && arch=sm_90a
        : > "$out/ptxas-report.txt"
        variants=("bf16 bf16" "f32 tf32 --precision=tf32"
                  "f32 fp32 --precision=fp32")
        # wgmma has no SIMT variant and leaves f32 in bf16 to cuBLASLt.
        [ $strategy = tiled ] && variants+=(
            "f32 simt --precision=fp32 --fp32-math=simt"
            "f32 f32_bf16 --precision=bf16")
        for variant in "${variants[@]}"; do
          set -- $variant
          model=$1 name=$2; shift 2
          "$compile" "$dir/models/workloads_$model.mlir" \
            --strategy=$strategy --target=$target --emit=ptx "$@" \
            -o "$out/workloads_$name.ptx"
          echo "== $name" >> "$out/ptxas-report.txt"
          "$root/scripts/ptxas-report.sh" "$out/workloads_$name.ptx" $arch \
            | grep _gemm >> "$out/ptxas-report.txt"
        done
      fi
    done
    # One library for sm_80 and sm_90 (each call runs the device's
    # variant), and each target alone to compare with, the `auto` strategy.
    for targets in sm_80,sm_90 sm_80 sm_90; do
      out="$dir/multi"; [ $targets != sm_80,sm_90 ] && out="$dir/multi/$targets"
      mkdir -p "$out"
      for precision in fp32 tf32; do
        "$compile" "$dir/models/workloads_f32.mlir" --precision=$precision \
          --target=$targets -o "$out/workloads_f32_$precision.so"
      done
      "$compile" "$dir/models/workloads_bf16.mlir" --target=$targets \
        -o "$out/workloads_bf16.so"
    done
    # fp32 on the CUDA cores (--fp32-math=simt), beside 3xTF32.
    mkdir -p "$dir/simt"
    "$compile" "$dir/models/workloads_f32.mlir" --precision=fp32 \
      --strategy=tiled --fp32-math=simt --target=sm_90 \
      -o "$dir/simt/workloads_f32_fp32.so"
}

case "$step" in
  build)
    dir="${1:-$root/artifacts}"
    "$root/scripts/build.sh" "$root/build" >/dev/null
    compile="$root/build/bin/fusion-compile"
    mkdir -p "$dir"
    python3 "$root/scripts/gpu/make_models.py" "$dir/models"
    for precision in fp32 tf32; do
      for model in linear_leaky_relu linear_scale_batch_norm; do
        "$compile" "$root/examples/$model.mlir" --precision=$precision \
          --strategy=cublas -o "$dir/${model}_$precision.so"
      done
    done
    compile_workloads "$compile" "$dir"
    # 64 training batch norms in one function, through both backends.
    mkdir -p "$dir/many"
    "$compile" "$root/test/Tools/fusion-compile/many-batch-norms.mlir" \
      --strategy=cublas -o "$dir/many/cublas.so"
    "$compile" "$root/test/Tools/fusion-compile/many-batch-norms.mlir" \
      --strategy=tiled --target=sm_90 -o "$dir/many/tiled.so"
    # The same workloads from their PyTorch definitions, via fusion.compile.
    PYTHONPATH="$root/build/python_packages" "$root/.venv/bin/python" \
      "$root/scripts/gpu/make_python_artifacts.py" "$dir/python"
    printf 'commit=%s\ndate=%s\n' "$(git -C "$root" rev-parse --short HEAD)" \
      "$(date -u +%F)" > "$dir/BUILD_INFO"
    ls -la "$dir"
    ;;
  baseline)
    # scripts/gpu-check.sh baseline COMMIT [dir]: the same workloads compiled
    # by an earlier commit's fusion-compile (built in a worktree beside this
    # checkout), for check_and_bench.py --baseline.
    commit="${1:?usage: $0 baseline COMMIT [dir]}"
    dir="${2:-$root/artifacts-base}"
    tree="${FUSION_BASELINE_TREE:-$root/../fusion-baseline-$commit}"
    [ -d "$tree" ] || git -C "$root" worktree add --detach "$tree" "$commit"
    cmake -G Ninja -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
      >/dev/null
    cmake --build "$tree/build" --target fusion-compile fusion_runtime >/dev/null
    mkdir -p "$dir"
    python3 "$root/scripts/gpu/make_models.py" "$dir/models"
    compile_workloads "$tree/build/bin/fusion-compile" "$dir"
    printf 'commit=%s\ndate=%s\n' "$(git -C "$tree" rev-parse --short HEAD)" \
      "$(date -u +%F)" > "$dir/BUILD_INFO"
    ;;
  run)
    dir="$root/artifacts"
    if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then dir="$1"; shift; fi
    python3 "$root/scripts/gpu/check_and_bench.py" --artifacts "$dir" "$@"
    # The Python front end: fusion.load of the saved modules; the package is
    # pure Python at run time, so its sources serve.
    PYTHONPATH="$root/python_bindings" python3 \
      "$root/scripts/gpu/python_check.py" "$dir/python"
    # Several GPUs: one library, every device (skips itself on one GPU).
    PYTHONPATH="$root/python_bindings" python3 \
      "$root/scripts/gpu/multi_device_check.py" "$dir"
    ;;
  *)
    echo "usage: $0 build [dir] | run [dir] [--max-autotune] [--out DIR]" >&2
    exit 2
    ;;
esac
