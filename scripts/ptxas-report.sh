#!/usr/bin/env bash
# ptxas's resource report of the kernels of a PTX file, one line per kernel:
# registers per thread, spill stores/loads, stack; writes FILE.cubin beside it.
#   scripts/ptxas-report.sh FILE.ptx [sm_XX]
set -euo pipefail
ptx="$1"; arch="${2:-sm_80}"
ptxas="${CUDA_PATH:-/usr/local/cuda}/bin/ptxas"
"$ptxas" -arch="$arch" -v "$ptx" -o "${ptx%.ptx}.cubin" 2>&1 |
  awk '/Compiling entry function/ { name = $7; gsub("\x27", "", name) }
       /bytes stack frame/ { stack = $1; spillStores = $5; spillLoads = $9 }
       /Used [0-9]+ registers/ { printf "%-28s %s registers, spills %s B stored / %s B loaded, stack %s B\n", name, $5, spillStores, spillLoads, stack }'
