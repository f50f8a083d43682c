#!/usr/bin/env bash
# Where one generated kernel spends its time, on a GPU machine with ncu:
# its SASS, ncu's per-instruction stall samples and the main sections.
#
#   profile_kernel.sh LIBRARY ENTRY M PRECISION KERNEL_REGEX OUTDIR [CUBIN]
set -uo pipefail
lib="$1" entry="$2" m="$3" precision="$4" kernel="$5" out="$6" cubin="${7:-}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
[ -n "$cubin" ] && cuobjdump -sass "$cubin" > "$out/sass.txt"
ncu --set full --import-source no -k "regex:$kernel" -c 1 -f \
  -o "$out/profile" python3 "$here/run_once.py" "$lib" "$entry" "$m" \
  "$precision" > "$out/ncu.log" 2>&1
ncu -i "$out/profile.ncu-rep" --page details > "$out/details.txt" 2>&1
ncu -i "$out/profile.ncu-rep" --page source --csv --print-source sass \
  > "$out/source.csv" 2>&1
tail -3 "$out/ncu.log"; wc -l "$out"/*.txt "$out"/*.csv
