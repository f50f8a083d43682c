#!/usr/bin/env bash
# One GPU call that decides whether a change to the kernels' math functions
# lands (benchmark run 36): the accuracy against float64 of gelu's
# 1 + erf, exact with each compiler and approximate with the new one
# (one_plus_erf_check.py), and of the new one's exact and approximate exp
# (exp_check.py); ncu at the locked clock of the gelu and silu GEMM kernels
# (time, warp instructions, tensor pipe); and those epilogues timed
# interleaved under the power cap beside the plain GEMM and cuBLAS's
# (epilogue_ab.py, every output checked against float64 first).
#
#   math_ab.sh pack BEFORE_COMPILE AFTER_COMPILE   (build machine)
#       compiles both sides into gpu-carry/math;
#   math_ab.sh run   (GPU machine, carrying gpu-carry/math).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/scripts/gpu"
work="$root/gpu-carry/math"
case "${1:-}" in
  pack)
    before="${2:?usage: $0 pack BEFORE_COMPILE AFTER_COMPILE}"
    after="${3:?usage: $0 pack BEFORE_COMPILE AFTER_COMPILE}"
    rm -rf "$work"
    python3 "$here/one_plus_erf_check.py" pack "$work/cdf" \
      base="$before" new="$after"
    python3 "$here/exp_check.py" pack "$work/exp" "$after"
    python3 "$here/epilogue_ab.py" pack "$work/ab" base="$before" \
      new="$after" >/dev/null
    rm -f "$work"/cdf/*.h
    du -sh "$work"
    ;;
  run)
    python3 "$here/one_plus_erf_check.py" base="$work/cdf/base.so" \
      new="$work/cdf/new.so" new_afn="$work/cdf/new_afn.so" \
      > /tmp/erf_accuracy.txt 2>&1
    status=$?
    python3 "$here/exp_check.py" run "$work/exp" > /tmp/exp_accuracy.txt 2>&1 ||
      status=1
    metrics=gpu__time_duration.sum,smsp__inst_executed.sum
    metrics+=,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed
    for precision in bf16 tf32; do
      for epilogue in plain two_gelu silu; do
        for side in base new; do
          echo "== ncu $side $precision $epilogue 16384x4096x4096"
          ncu --metrics "$metrics" -k "regex:_gemm" -c 1 \
            python3 "$here/run_once.py" "$work/ab/$side/$precision.so" \
            "$epilogue" 16384 "$precision" 2>&1 |
            grep -E "duration|inst_executed|pipe_tensor"
        done
      done
    done > /tmp/math_ncu.txt
    python3 "$here/epilogue_ab.py" run "$work/ab" --first base \
      --epilogues plain,two_gelu,gelu_plus_x,silu > /tmp/math_ab.txt 2>&1 ||
      status=1
    cat /tmp/math_ncu.txt
    echo; cat /tmp/erf_accuracy.txt
    echo; cat /tmp/exp_accuracy.txt
    echo; tail -30 /tmp/math_ab.txt
    exit $status
    ;;
  *)
    echo "usage: $0 pack BEFORE_COMPILE AFTER_COMPILE | run" >&2
    exit 2
    ;;
esac
