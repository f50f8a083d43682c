#!/usr/bin/env bash
# One GPU call that decides whether a change to the wgmma kernels lands: the
# workload libraries of two compilers, `before` and `after`: after's
# through wgmma_check.py (every workload checked against float64, then
# timed beside cuBLAS, eager and the tiled kernel), both sides' wgmma
# kernels timed interleaved (ab_time.py), after's residual epilogues
# (epilogue_ab.py's models at K = N = 2056, where each kind of residual
# comes through the ring) checked at a batch that gives each block several
# tiles, and compute-sanitizer memcheck, racecheck and synccheck of after's
# kernels (`hopper_check.sh sanitize`). Prints the tables last.
#
#   wgmma_ab.sh pack BEFORE_COMPILE AFTER_COMPILE   (build machine) compiles
#       the workload models with each fusion-compile (--strategy=wgmma,
#       sm_90; the cublas and tiled libraries that wgmma_check.py times
#       beside them with AFTER_COMPILE) into gpu-carry/pack/ab.tar.xz;
#   wgmma_ab.sh run   (GPU machine, carrying gpu-carry/pack).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/scripts/gpu"
case "${1:-}" in
  pack)
    before="${2:?usage: $0 pack BEFORE_COMPILE AFTER_COMPILE}"
    after="${3:?usage: $0 pack BEFORE_COMPILE AFTER_COMPILE}"
    work="$(mktemp -d)"
    python3 "$here/make_models.py" "$work/models" >/dev/null
    compile() { # COMPILER DIR STRATEGY TARGET
      mkdir -p "$2"
      for precision in fp32 tf32; do
        "$1" "$work/models/workloads_f32.mlir" --precision=$precision \
          --strategy=$3 --target=$4 -o "$2/workloads_f32_$precision.so"
      done
      "$1" "$work/models/workloads_bf16.mlir" --strategy=$3 --target=$4 \
        -o "$2/workloads_bf16.so"
      rm -f "$2"/*.h
    }
    for side in before after; do
      compiler=$before; [ $side = after ] && compiler=$after
      compile "$compiler" "$work/ab/$side/wgmma" wgmma sm_90
      compile "$after" "$work/ab/$side" cublas sm_80
      compile "$after" "$work/ab/$side/tiled" tiled sm_90
    done
    python3 "$here/epilogue_ab.py" pack "$work/ab/epilogues" after="$after" \
      --k 2056 --n 2056 >/dev/null
    for precision in fp32 tf32 bf16; do
      for file in so json; do
        cp "$work/ab/epilogues/after/$precision.$file" \
          "$work/ab/after/wgmma/epilogues_$precision.$file"
      done
    done
    mkdir -p "$root/gpu-carry/pack"
    tar -C "$work" -cf - ab |
      xz -T2 --lzma2=preset=1,dict=400MiB > "$root/gpu-carry/pack/ab.tar.xz"
    rm -rf "$work"
    ls -la "$root/gpu-carry/pack/ab.tar.xz"
    ;;
  run)
    work=/tmp/fusion-ab
    rm -rf "$work" && mkdir -p "$work"
    tar -C "$work" -xJf "$root/gpu-carry/pack/ab.tar.xz"
    python3 "$here/wgmma_check.py" --artifacts "$work/ab/after" \
      > "$work/after.txt" 2>&1
    status=$?
    python3 "$here/ab_time.py" "$work/ab/before/wgmma" "$work/ab/after/wgmma" \
      > "$work/ab_time.txt" 2>&1 || status=1
    python3 "$here/epilogue_ab.py" run "$work/ab/epilogues" --rows 77,4096 \
      --rounds 0 --precisions fp32,tf32,bf16 > "$work/epilogues.txt" 2>&1 ||
      status=1
    bash "$here/hopper_check.sh" sanitize "$work/ab/after/wgmma" || status=1
    # The whole reports come back with the device call's files.
    [ -n "${OUT:-}" ] && cp "$work/after.txt" "$work/ab_time.txt" \
      "$work/epilogues.txt" "$OUT/"
    echo "== after"; tail -45 "$work/after.txt"
    echo "== before and after, interleaved"; tail -24 "$work/ab_time.txt"
    echo "== residual epilogues"; tail -1 "$work/epilogues.txt"
    exit $status
    ;;
  *)
    echo "usage: $0 pack BEFORE_COMPILE AFTER_COMPILE | run" >&2
    exit 2
    ;;
esac
