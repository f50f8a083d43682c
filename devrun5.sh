for c in "workloads_f32_bf16 b_1000x4000 77 bf16" "workloads_f32_f16 a_513x129 5 f16"; do
  set -- $c
  for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --print-limit 5 python3 scripts/gpu/run_once.py artifacts/tiled/$1.so $2 $3 $4 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|ok" | tr '\n' ' '; echo " $tool $c"
  done
done
python3 scripts/gpu/tile_sweep.py run artifacts/sweep > $OUT/sweep.txt 2>&1; tail -3 $OUT/sweep.txt
scripts/gpu-check.sh run --profile --out $OUT/bench > $OUT/check.txt 2>&1; tail -40 $OUT/check.txt
