#!/usr/bin/env bash
# The GPU check of backend 3 (the Hopper wgmma kernels) beyond the
# workloads of wgmma_check.py, on an sm_90 machine:
#
#   hopper_check.sh sanitize [DIR [TOOLS]]   compute-sanitizer memcheck,
#       racecheck and synccheck (or TOOLS) on small ragged shapes of every
#       multiply (bf16; tf32 and 3xTF32 with a training batch norm; 3xTF32's
#       swapped small-batch tiles at 7 and 30 rows) of the
#       workload libraries in DIR (default artifacts/wgmma), and of the
#       residual epilogues where DIR has them (wgmma_ab.sh packs them);
#   hopper_check.sh zoo [STRATEGIES [MODELS]]   the zoo (or the MODELS)
#       through fusion.compile with the wgmma strategy (or the STRATEGIES)
#       in fp32, tf32 and bf16, and torch.compile(backend=
#       "fusion") in fp32 (auto: wgmma on sm_90), from the library cache
#       that `epilogue_family.py prepare check wgmma` filled here and
#       gpu-carry/cache.tar.xz carries (tar -C gpu-carry -cf - cache |
#       xz --lzma2=preset=1,dict=400MiB: the libraries share their static
#       CUDA runtime, 366 MB pack into 7);
#   hopper_check.sh family-bench PART [MODELS]   epilogue_family.py's bench
#       part PART (e.g. tf32@1024x8192x8192) from the cache that
#       `epilogue_family.py prepare bench PART` filled (carried as for zoo);
#   hopper_check.sh profile    ncu of the 3xTF32 and bf16 GEMM kernels and
#       of the bf16 training batch norm's (speed of light, warp stalls) at
#       16384x4096x4096;
#   hopper_check.sh reductions check|bench   tile_reductions.py: reductions
#       of whole rows or groups taken from the GEMM's tiles, from the cache that
#       `tile_reductions.py prepare check` and `prepare bench` filled (carried
#       as for zoo); reductions-sanitize: four of its models under
#       compute-sanitizer; reductions-profile: ncu of its kernels;
#   hopper_check.sh synccheck-pair LIB [PRECISION [ENTRY...]]   the two
#       entries of synccheck_pair.mlir's library (fusion-compile scripts/gpu/
#       synccheck_pair.mlir --strategy=wgmma --target=sm_90 -o LIB), which
#       launch one GEMM kernel, or the ENTRYs of LIB, at M = 333 under
#       synccheck, each output compared with a run without the tool
#       (benchmark run 28);
#   hopper_check.sh power PROBE [ARGS]   power_probe.py (ARGS) on epilogue_ab.py pack's
#       libraries in PROBE (sides coop and pp: the cooperative and
#       ping-pong schedules), then ncu at its locked clock of the bf16
#       GEMM kernels (tensor pipe, issue slots) and of every kernel of
#       the bf16 training batch norm (PROBE/workloads_bf16.so) at
#       16384x4096x4096, and that op's kernels under the power cap.
#
# Needs the artifacts of `scripts/gpu-check.sh build` in artifacts/.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/scripts/gpu"
art="$root/artifacts/wgmma"
# The library cache and the package's sources with the identity of the
# compiler that filled it (gpu-carry/compiler_id, from build/python_packages),
# which the cache keys include. Unpacked once a machine, for the parts that
# one device call runs one after another.
unpack_cache() {
  mkdir -p /tmp/fusion-cache /tmp/fusion-package
  [ -d /tmp/fusion-cache/cache ] ||
    tar -C /tmp/fusion-cache -xJf "$root/gpu-carry/cache.tar.xz"
  cp -r "$root/python_bindings/fusion" /tmp/fusion-package/
  cp "$root/gpu-carry/compiler_id" /tmp/fusion-package/fusion/
}
case "${1:-}" in
  sanitize)
    libraries="${2:-$art}"
    status=0
    for tool in ${3:-memcheck racecheck synccheck}; do
      for call in "workloads_bf16.so a_1000x4000 77 bf16" \
                  "workloads_f32_tf32.so g_4096x4096 130 tf32" \
                  "workloads_f32_tf32.so b_1000x4000 77 tf32" \
                  "workloads_f32_fp32.so b_1000x4000 77 fp32" \
                  "workloads_bf16.so b_1000x4000 77 bf16" \
                  "workloads_bf16.so b_1000x4000 333 bf16" \
                  "workloads_bf16.so b_1000x4000 1000 bf16" \
                  "workloads_f32_tf32.so b_1000x4000 1000 tf32" \
                  "workloads_f32_fp32.so b_513x129 333 fp32" \
                  "workloads_f32_fp32.so a_1000x4000 7 fp32" \
                  "workloads_f32_fp32.so g_4096x4096 30 fp32" \
                  "epilogues_bf16.so y_plus_r 333 bf16" \
                  "epilogues_tf32.so y_plus_r 77 tf32" \
                  "epilogues_fp32.so y_plus_x 77 fp32"; do
        set -- $call
        # Residual epilogues: libraries that wgmma_ab.sh packs.
        [ -f "$libraries/$1" ] || continue
        echo "== $tool $1 $2 M=$3"
        compute-sanitizer --tool "$tool" --error-exitcode 9 \
          python3 "$here/run_once.py" "$libraries/$1" "$2" "$3" "$4" 2>&1 |
          grep -E "ERROR SUMMARY|RACECHECK SUMMARY|ok$|Error|error" | head -5
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
    done
    exit $status
    ;;
  zoo)
    unpack_cache
    FUSION_CACHE_DIR=/tmp/fusion-cache/cache PYTHONPATH=/tmp/fusion-package \
      python3 "$here/epilogue_family.py" run check "${2:-wgmma}" ${3:+"$3"}
    ;;
  family-bench)
    : "${2:?family-bench PART [MODELS]}"
    unpack_cache
    FUSION_CACHE_DIR=/tmp/fusion-cache/cache PYTHONPATH=/tmp/fusion-package \
      python3 "$here/epilogue_family.py" run bench "$2" ${3:+"$3"}
    ;;
  reductions)
    unpack_cache
    FUSION_CACHE_DIR=/tmp/fusion-cache/cache PYTHONPATH=/tmp/fusion-package \
      python3 "$here/tile_reductions.py" run "${2:-check}" ${3:+"$3"}
    ;;
  reductions-sanitize)
    # The tile reductions' kernels (plain, shifted exp and shifted square
    # partials; both generated backends) under each tool.
    unpack_cache
    status=0
    for tool in memcheck racecheck synccheck; do
      echo "== $tool"
      FUSION_CACHE_DIR=/tmp/fusion-cache/cache PYTHONPATH=/tmp/fusion-package \
        compute-sanitizer --tool "$tool" --error-exitcode 9 \
        python3 "$here/tile_reductions.py" run check "logsumexp(y);var(y);avg_pool(-y, 8);gelu(group_norm(y, 2))" 2>&1 |
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|within bounds|Error" | head -5
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    done
    exit $status
    ;;
  synccheck-pair)
    status=0
    lib="$2" precision="${3:-fp32}"
    entries=("${@:4}")
    [ ${#entries[@]} -gt 0 ] || entries=(group_norm_gelu moments_and_y)
    for entry in "${entries[@]}"; do
      echo "== $(basename "$lib") $entry ($precision)"
      rm -f /tmp/without.pt /tmp/with.pt
      python3 "$here/run_once.py" "$lib" $entry 333 $precision \
        --save /tmp/without.pt
      compute-sanitizer --tool synccheck --error-exitcode 9 \
        python3 "$here/run_once.py" "$lib" $entry 333 $precision \
        --save /tmp/with.pt 2>&1 |
        grep -E "ERROR SUMMARY|ok$|unwritten|Error"
      python3 "$here/run_once.py" compare /tmp/without.pt /tmp/with.pt ||
        status=1
    done
    exit $status
    ;;
  power)
    PROBE="$2"
    python3 "$here/power_probe.py" "$PROBE" "${@:3}" > /tmp/power_probe.txt 2>&1
    status=$?
    metrics=gpu__time_duration.sum,smsp__cycles_elapsed.avg.per_second
    metrics+=,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed
    metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_elapsed
    metrics+=,smsp__inst_executed.sum
    for call in "coop plain" "coop two_gelu" "coop y_plus_x" "pp plain" \
                "pp two_gelu" "pp y_plus_x" "addmm -" "cublaslt_gelu -"; do
      set -- $call
      echo "== ncu $1 $2 bf16 16384x4096x4096"
      ncu --metrics "$metrics" -k "regex:gemm|nvjet|sm90" -c 1 \
        python3 "$here/power_probe.py" one "$PROBE" "$1" bf16 "$2" 16384 2>&1 |
        grep -E "^  [a-z_0-9]+|duration|cycles|pipe|issue|inst_executed"
    done
    for entry in b_4096x4096 g_4096x4096; do
      echo "== ncu $entry bf16 M=16384, every kernel"
      ncu --metrics gpu__time_duration.sum -k "regex:^$entry" -c 3 \
        python3 "$here/run_once.py" \
        "$PROBE/workloads_bf16.so" $entry 16384 bf16 2>&1 |
        grep -E "^  [a-z_A-Z0-9]+|duration"
      python3 "$here/power_probe.py" kernels "$PROBE/workloads_bf16.so" \
        $entry 16384 bf16
    done
    echo "== power_probe"; tail -22 /tmp/power_probe.txt
    exit $status
    ;;
  profile)
    for call in "workloads_f32_fp32.so g_4096x4096 fp32" \
                "workloads_bf16.so g_4096x4096 bf16" \
                "workloads_bf16.so b_4096x4096 bf16"; do
      set -- $call
      echo "== ncu $1 $2 M=16384"
      ncu --section SpeedOfLight --section WarpStateStats \
        --section MemoryWorkloadAnalysis -k "regex:_gemm" -c 1 \
        python3 "$here/run_once.py" "$art/$1" "$2" 16384 "$3" 2>&1 |
        grep -E "Duration|Throughput|SM Busy|Stall|Warp Cycles|Issued|Pipe|L2|DRAM" |
        head -30
    done
    ;;
  reductions-profile)
    # ncu of the GEMM with tile partials and of the merging row program at
    # 32768x1024x4096, where the GEMM is shortest beside its epilogue.
    unpack_cache
    for case in "sum(y) bf16 wgmma" "logsumexp(y) bf16 wgmma" \
                "softmax(y) tf32 wgmma" "softmax(y) tf32 cublas"; do
      set -- $case
      echo "== ncu $case 32768x1024x4096"
      FUSION_CACHE_DIR=/tmp/fusion-cache/cache PYTHONPATH=/tmp/fusion-package \
        ncu --section SpeedOfLight --section WarpStateStats \
        --section MemoryWorkloadAnalysis -k "regex:gemm|rows" -c 2 \
        python3 "$here/tile_reductions.py" run profile "$1" 32768 1024 4096 \
        "$2" "$3" 2>&1 |
        grep -E "^  [a-zA-Z_0-9]+.*\(|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Stall (Long|Short|Barrier|MIO|Wait)|Warp Cycles Per Issued" |
        head -40
    done
    ;;
  *)
    echo "usage: $0 sanitize|zoo|family-bench PART|profile|reductions check|bench|reductions-sanitize|reductions-profile|synccheck-pair LIB|power PROBE" >&2
    exit 2
    ;;
esac
