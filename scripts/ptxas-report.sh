#!/usr/bin/env bash
# ptxas's resource report of the kernels of a PTX file, one line per kernel:
# registers per thread, spill stores/loads, stack, and the codes of ptxas's
# wgmma notes (C7514/C7520: wgmmas serialized; C7519: a warpgroup.arrive
# ptxas injected); writes FILE.cubin beside it.
#   scripts/ptxas-report.sh FILE.ptx [sm_XX]
set -euo pipefail
ptx="$1"; arch="${2:-sm_80}"
ptxas="${CUDA_PATH:-/usr/local/cuda}/bin/ptxas"
"$ptxas" -arch="$arch" -v "$ptx" -o "${ptx%.ptx}.cubin" 2>&1 |
  awk '/Compiling entry function/ { name = $7; gsub("\x27", "", name) }
       /bytes stack frame/ { stack = $1; spillStores = $5; spillLoads = $9 }
       /Used [0-9]+ registers/ {
         order[++count] = name
         line[name] = sprintf("%-28s %s registers, spills %s B stored / %s B loaded, stack %s B", name, $5, spillStores, spillLoads, stack)
       }
       /\(C75[0-9][0-9]\)/ {
         match($0, /\(C75[0-9][0-9]\)/); code = substr($0, RSTART + 1, 5)
         match($0, /function \x27[^\x27]+\x27/); fn = substr($0, RSTART + 10, RLENGTH - 11)
         notes[fn] = notes[fn] " " code
       }
       END {
         for (i = 1; i <= count; ++i)
           print line[order[i]] (order[i] in notes ? ", wgmma notes:" notes[order[i]] : "")
       }'
