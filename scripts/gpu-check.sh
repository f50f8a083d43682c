#!/usr/bin/env bash
# The GPU checks and benchmarks of fusion, in two steps:
#
#   scripts/gpu-check.sh build [dir] [--no-rebuild] [--groups G,...]
#       [--jobs N] [--apart G,...]   on the build machine (has the
#       compiler, no GPU needed):
#       builds fusion (scripts/build.sh; not with --no-rebuild or
#       FUSION_SKIP_BUILD=1, which use build/bin as it is), then compiles
#       into dir (default: artifacts/) examples/ and the workload variants
#       of scripts/gpu/make_models.py (one library per strategy and
#       precision, multi-target ones, 64 batch norms, the residual and
#       division epilogues), fills dir/cache with the libraries that the
#       fusion.compile checks and the benchmark suites load
#       (python_bindings/tests/gpu/prepare.py: its groups, default all;
#       the package with the compiler: $FUSION_PYTHONPATH, default
#       build/python_packages; fusion-compile: $FUSION_COMPILE, default
#       build/bin's), saves the modules fusion.load binds, and
#       carries pytest for the GPU machine; packs it all into bundles
#       that each fit a device call's 64 MiB of carried files: dir.tar.xz
#       (everything but the libraries of the --apart groups, default
#       zoo, zoo-tf32-bf16 and tile-reductions) and dir.GROUP.tar.xz for
#       each of those (the libraries share their static CUDA runtime: xz's
#       large dictionary packs them small). `pack dir [--apart G,...]`
#       packs again.
#   scripts/gpu-check.sh run [dir|dir.tar.xz] [--jobs N] [--bench
#       [SUITES]] [--timer T] [--baseline DIR] [--models M]
#       [PYTEST ARGS...]   on a GPU
#       machine with CUDA and PyTorch (no compiler, no pytest needed: the
#       artifacts carry it; dir.tar.xz is unpacked with the bundles beside
#       it, once a machine, those carried in later calls then; the checks
#       of a bundle not there skip): the GPU correctness checks, `pytest -m gpu
#       python_bindings/tests/gpu` (every check of every library against
#       PyTorch in float64; PYTEST ARGS such as `-k zoo` select them), in
#       N processes sharing the device (default: half the cores, at most
#       8; logs in $TMPDIR/fusion-gpu-check), then one table: check |
#       cases | passed | failed | skipped | worst error / bound, and the
#       failures. Checks only by default (the fast mode); with --bench,
#       then the benchmark driver scripts/bench/run.py on SUITES
#       (comma-separated, default all: workloads, family, models,
#       host-overhead) with the timer T (throughput, cold-l2 or both, the
#       default); with --baseline, the workloads suite times an earlier
#       commit's libraries beside these; --models is the driver's (the
#       models or problems of the suites that take it). Exits non-zero
#       where a check failed.
#   scripts/gpu-check.sh baseline COMMIT [dir]   compiles the same
#       workloads with an earlier commit's fusion-compile (for --baseline).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
step="${1:-}"; shift || true
# The library cache's groups (prepare.py) packed in bundles of their own.
default_apart=zoo,zoo-tf32-bf16,tile-reductions
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

# pack_artifacts DIR GROUPS: DIR packed for the GPU machine in bundles,
# each within a device call's 64 MiB of carried files: DIR.tar.xz, all but
# the library cache's entries that only the GROUPS (comma-separated) use;
# DIR.GROUP.tar.xz, those of each GROUP (prepare.py lists the entries each
# group uses in DIR/cache-groups).
pack_artifacts() {
    local dir="$1" parent name lists group
    local -a apart
    IFS=, read -r -a apart <<< "$2"
    parent="$(dirname "$dir")" name="$(basename "$dir")"
    lists="$dir/cache-groups"
    python3 - "$lists" "${apart[@]}" > "$lists.apart" <<'PY'
import pathlib, sys
lists = pathlib.Path(sys.argv[1])
apart = set(sys.argv[2:])
read = lambda p: set(p.read_text().split()) if p.exists() else set()
ours = set().union(set(), *[read(lists / g) for g in apart])
others = set().union(set(), *[read(p) for p in lists.iterdir()
                              if p.name not in apart])
print("\n".join(sorted(ours - others)))
PY
    rm -f "$dir".*.tar.xz
    tar -C "$parent" -cf - --exclude-from="$lists.apart" "$name" |
      xz -T1 --lzma2=preset=1,dict=400MiB > "$dir.tar.xz"
    for group in "${apart[@]}"; do
      [ -s "$lists/$group" ] || continue
      sed "s|^|$name/cache/|" "$lists/$group" > "$lists.members"
      tar -C "$parent" -cf - -T "$lists.members" |
        xz -T1 --lzma2=preset=1,dict=400MiB > "$dir.$group.tar.xz"
    done
    rm -f "$lists.apart" "$lists.members"
    du -sh "$dir" "$dir".tar.xz "$dir".*.tar.xz
}

case "$step" in
  build)
    dir="$root/artifacts"
    if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then dir="$1"; shift; fi
    rebuild=1 groups="" jobs="$(nproc)" apart="$default_apart"
    [ "${FUSION_SKIP_BUILD:-0}" = 1 ] && rebuild=0
    while [ $# -gt 0 ]; do
      case "$1" in
        --no-rebuild) rebuild=0 ;;
        --groups) groups="$2"; shift ;;
        --jobs) jobs="$2"; shift ;;
        --apart) apart="$2"; shift ;;
        *) echo "unknown build option $1" >&2; exit 2 ;;
      esac
      shift
    done
    [ $rebuild = 1 ] && "$root/scripts/build.sh" "$root/build" >/dev/null
    compile="${FUSION_COMPILE:-$root/build/bin/fusion-compile}"
    package="${FUSION_PYTHONPATH:-$root/build/python_packages}"
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
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
    # The residual and division epilogues (tests/gpu/epilogues.py), wgmma.
    mkdir -p "$dir/epilogues"
    for precision in tf32 fp32 bf16 f16; do
      type=f32 option="--precision=$precision"
      case $precision in bf16|f16) type=$precision option= ;; esac
      "$compile" "$dir/models/epilogues_$type.mlir" $option \
        --strategy=wgmma --target=sm_90 -o "$dir/epilogues/$precision.so"
    done
    # The library cache of the fusion.compile checks and the benchmarks,
    # and the modules fusion.load binds.
    PYTHONPATH="$package" "$root/.venv/bin/python" \
      "$root/python_bindings/tests/gpu/prepare.py" "$dir" --jobs "$jobs" \
      ${groups:+--groups "$groups"}
    # The fusion::run operator, built against the same PyTorch as the GPU
    # machine's (the package's one native part at run time).
    cp "$package/fusion/_torch_ops.so" "$dir/"
    # pytest for a GPU machine without it (pure Python).
    rm -rf "$dir/pylib" && mkdir -p "$dir/pylib"
    site="$("$root/.venv/bin/python" -c 'import pathlib, pytest
print(pathlib.Path(pytest.__file__).parents[1])')"
    for module in _pytest pytest pluggy iniconfig packaging pygments py.py; do
      cp -r "$site/$module" "$dir/pylib/"
    done
    find "$dir/pylib" -name __pycache__ -prune -exec rm -rf {} +
    printf 'commit=%s\ndate=%s\n' "$(git -C "$root" rev-parse --short HEAD)" \
      "$(date -u +%F)" > "$dir/BUILD_INFO"
    pack_artifacts "$dir" "$apart"
    ;;
  pack)
    # scripts/gpu-check.sh pack DIR [--apart GROUPS]: packs DIR again.
    dir="$(cd "${1:?usage: $0 pack DIR [--apart GROUPS]}" && pwd)"
    apart="$default_apart"
    [ "${2:-}" = --apart ] && apart="${3:?--apart GROUPS}"
    pack_artifacts "$dir" "$apart"
    ;;
  baseline)
    # scripts/gpu-check.sh baseline COMMIT [dir]: the same workloads compiled
    # by an earlier commit's fusion-compile (built in a worktree beside this
    # checkout), for `run ... --bench workloads --baseline DIR`.
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
    # Processes sharing the device: half the cores, at most 8.
    jobs=$(( $(nproc) / 2 ))
    [ $jobs -gt 8 ] && jobs=8
    [ $jobs -lt 1 ] && jobs=1
    bench="" timer=both baseline="" models="" pytest_args=()
    while [ $# -gt 0 ]; do
      case "$1" in
        --bench)
          bench=all
          if [ $# -gt 1 ] && [ "${2#-}" = "$2" ]; then bench="$2"; shift; fi
          ;;
        --timer) timer="$2"; shift ;;
        --baseline) baseline="$2"; shift ;;
        --models) models="$2"; shift ;;
        --jobs) jobs="$2"; shift ;;
        *) pytest_args+=("$1") ;;
      esac
      shift
    done
    work="${TMPDIR:-/tmp}/fusion-gpu-check"
    mkdir -p "$work"
    # Packed artifacts are unpacked once a machine: dir.tar.xz and its
    # bundles beside it (dir.GROUP.tar.xz), which may come in other device
    # calls (a check whose libraries are not here yet skips, saying so).
    if [ "${dir%.tar.xz}" != "$dir" ]; then
      name="$(basename "${dir%.tar.xz}")"
      for bundle in "$dir" "${dir%.tar.xz}".*.tar.xz; do
        [ -f "$bundle" ] || continue
        stamp="$work/.unpacked-$(basename "$bundle")"
        [ -f "$stamp" ] && [ "$stamp" -nt "$bundle" ] && continue
        echo "unpacking $bundle"
        tar -C "$work" -xJf "$bundle" && touch "$stamp"
      done
      dir="$work/$name"
    fi
    dir="$(cd "$dir" && pwd)"
    # The package's sources (pure Python at run time) with the identity
    # of the compiler that filled the cache, which its keys include, and
    # the compile options' table.
    rm -rf "$work/package" && mkdir -p "$work/package"
    cp -r "$root/python_bindings/fusion" "$work/package/"
    cp "$root/include/fusion/Compiler/CompileOptions.def" \
      "$work/package/fusion/compile_options.def"
    [ -f "$dir/compiler_id" ] && cp "$dir/compiler_id" "$work/package/fusion/"
    cp "$dir/_torch_ops.so" "$work/package/fusion/"
    pythonpath="$work/package"
    python3 -c "import pytest" 2>/dev/null || pythonpath+=":$dir/pylib"
    # The checks in $jobs processes sharing the device, each its share
    # (pytest --shard), merged into one table (gpu.summary).
    status=0 pids=()
    rm -f "$work"/shard-*.json "$work"/shard-*.log
    echo "GPU checks: $jobs processes (logs: $work/shard-*.log)"
    for ((i = 0; i < jobs; i++)); do
      PYTHONPATH="$pythonpath" python3 -m pytest -m gpu -q \
        -p no:cacheprovider -rfE "$root/python_bindings/tests/gpu" \
        --artifacts "$dir" --shard "$i/$jobs" \
        --gpu-results "$work/shard-$i.json" \
        ${pytest_args[@]+"${pytest_args[@]}"} > "$work/shard-$i.log" 2>&1 &
      pids+=($!)
    done
    for ((i = 0; i < jobs; i++)); do
      rc=0; wait "${pids[$i]}" || rc=$?
      # 0: passed, 1: some failed (the table says which), 5: none ran.
      if [ $rc -ne 0 ] && [ $rc -ne 1 ] && [ $rc -ne 5 ]; then
        echo "== shard $i exited $rc:"; tail -30 "$work/shard-$i.log"
        status=1
      fi
    done
    PYTHONPATH="$pythonpath:$root/python_bindings/tests" python3 -m \
      gpu.summary "$work"/shard-*.json || status=1
    if [ -n "$bench" ]; then
      PYTHONPATH="$pythonpath" python3 "$root/scripts/bench/run.py" \
        --artifacts "$dir" --suite "$bench" --timer "$timer" \
        ${baseline:+--baseline "$baseline"} ${models:+--models "$models"} \
        || status=1
    fi
    exit $status
    ;;
  *)
    echo "usage: $0 build [dir] [--no-rebuild] [--groups G,...] [--jobs N]" \
         "[--apart G,...] | pack DIR [--apart G,...]" \
         "| run [dir|dir.tar.xz] [--jobs N] [--bench [SUITES]] [--timer T]" \
         "[--baseline DIR] [PYTEST ARGS] | baseline COMMIT [dir]" >&2
    exit 2
    ;;
esac
