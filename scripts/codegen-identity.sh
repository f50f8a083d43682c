#!/usr/bin/env bash
# Whether this build generates the code an earlier commit's did: the PTX of
# every kernel and the lowered host IR of the GPU check's workloads
# (scripts/gpu/make_models.py) and the examples, through each backend and
# precision the GPU check compiles them with; and the lowered IR of the GPU
# lowering's and the dialect's lit inputs through each strategy. A
# reorganization must leave them byte-identical, or explain each
# difference.
#
#   scripts/codegen-identity.sh COMMIT [dir]
#
# Builds COMMIT's fusion-compile in a worktree beside this checkout (the
# one `scripts/gpu-check.sh baseline COMMIT` uses), compiles with both into
# dir/base and dir/new (default: codegen-identity/), and prints one line a
# compile: identical, or the kinds of kernels (PTX) and lowered functions
# whose text differs (their names in dir/NAME.ptx.differ and .mlir.differ).
# Exits 1 if anything differs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
commit="${1:?usage: $0 COMMIT [dir]}"
dir="${2:-$root/codegen-identity}"
tree="${FUSION_BASELINE_TREE:-$root/../fusion-baseline-$commit}"

[ -d "$tree" ] || git -C "$root" worktree add --detach "$tree" "$commit"
for source in "$tree" "$root"; do
  [ -f "$source/build/build.ninja" ] ||
    cmake -G Ninja -S "$source" -B "$source/build" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER_LAUNCHER=ccache \
      -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
      -DPython3_EXECUTABLE="$root/.venv/bin/python" \
      -Dpybind11_DIR="$("$root/.venv/bin/python" -m pybind11 --cmakedir)" \
      >/dev/null
  cmake --build "$source/build" --target fusion-compile fusion-opt >/dev/null
done

rm -rf "$dir" && mkdir -p "$dir/models"
python3 "$root/scripts/gpu/make_models.py" "$dir/models" >/dev/null
cp "$root"/examples/*.mlir "$dir/models/"

# NAME|MODULE|OPTIONS: the GPU check's compiles (gpu-check.sh
# compile_workloads) and the examples'.
compiles=()
for strategy in cublas tiled wgmma; do
  target=sm_90; [ $strategy = cublas ] && target=sm_80
  opts="--strategy=$strategy --target=$target"
  for precision in fp32 tf32 bf16 f16; do
    compiles+=("${strategy}_f32_$precision|workloads_f32|$opts --precision=$precision")
  done
  for type in bf16 f16; do
    compiles+=("${strategy}_$type|workloads_$type|$opts")
  done
done
compiles+=("tiled_f32_simt|workloads_f32|--strategy=tiled --target=sm_90 --precision=fp32 --fp32-math=simt")
compiles+=("auto_f32_fp32|workloads_f32|--target=sm_90 --precision=fp32")
compiles+=("auto_bf16|workloads_bf16|--target=sm_90")
for example in "$root"/examples/*.mlir; do
  name="$(basename "$example" .mlir)"
  compiles+=("cublas_$name|$name|--strategy=cublas --target=sm_80")
  compiles+=("tiled_$name|$name|--strategy=tiled --target=sm_90")
done

# The text of each function of FILE (PTX entries and functions, or the
# lowered IR's llvm.func and gpu.func ops), one file each, named by the
# function, in DIR.
split_functions() {
  awk -v out="$2" '
    /^(\.visible |\.weak )?\.(entry|func) / ||
    /^ *(llvm|gpu)\.func / {
      line = $0
      if (match(line, /@[A-Za-z0-9_$.]+/))
        name = substr(line, RSTART + 1, RLENGTH - 1)
      else if (match(line, /[A-Za-z_$][A-Za-z0-9_$]*\(/))
        name = substr(line, RSTART, RLENGTH - 1)
      file = out "/" name
    }
    file { print > file }' "$1"
}

# "finalize x5, gemm x4": the kinds of the functions named on stdin (a
# kernel's name less its function and op index, b_4096x4096_0_finalize).
count_kinds() {
  sed -E 's/^.*_[0-9]+_//' | sort | uniq -c |
    awk '{ printf "%s%s x%d", (NR > 1 ? ", " : ""), $2, $1 }'
}

# The kinds of the functions whose text differs between BASE and NEW
# (files), their names in LIST; "outside its functions" where only the
# rest differs (globals, the kernel image); nothing where they are equal.
differing_kinds() {
  local base="$1" new="$2" list="$3"
  cmp -s "$base" "$new" && return
  rm -rf "$base.d" "$new.d" && mkdir -p "$base.d" "$new.d"
  split_functions "$base" "$base.d"
  split_functions "$new" "$new.d"
  { diff -rq "$base.d" "$new.d" || true; } |
    sed -E 's|^Files .*/([^/ ]+) and .*|\1|; s|^Only in .*: ||' |
    sort -u >"$list"
  local kinds
  kinds="$(count_kinds <"$list")"
  echo "${kinds:-outside its functions}"
}

differ=0
for entry in "${compiles[@]}"; do
  IFS='|' read -r name module opts <<<"$entry"
  for side in base new; do
    compile="$root/build/bin/fusion-compile"
    [ $side = base ] && compile="$tree/build/bin/fusion-compile"
    mkdir -p "$dir/$side"
    for emit in ptx mlir; do
      # shellcheck disable=SC2086
      "$compile" "$dir/models/$module.mlir" $opts --emit=$emit \
        -o "$dir/$side/$name.$emit" 2>"$dir/$side/$name.$emit.err" ||
        echo "compile failed" >"$dir/$side/$name.$emit"
    done
  done
  report=""
  for emit in ptx mlir; do
    kinds="$(differing_kinds "$dir/base/$name.$emit" "$dir/new/$name.$emit" \
             "$dir/$name.$emit.differ")"
    [ -n "$kinds" ] || continue
    what=kernels; [ $emit = mlir ] && what="lowered IR"
    report+="${report:+; }$what: $kinds"
  done
  if [ -z "$report" ]; then
    printf '%-30s identical\n' "$name"
  else
    differ=1
    printf '%-30s differs (%s)\n' "$name" "$report"
  fi
done

# The lit inputs of the GPU lowering and the dialect that both commits
# hold alike, lowered through each strategy: the host code and the kernels
# as the GPU dialect holds them.
for strategy in cublas tiled wgmma; do
  same=0 changed=() skipped=0
  for input in "$root"/test/Conversion/FusionToGPU/*.mlir \
               "$root"/test/Dialect/Fusion/*.mlir; do
    relative="${input#"$root"/}"
    if ! cmp -s "$tree/$relative" "$input"; then
      skipped=$((skipped + 1))
      continue
    fi
    out="$(basename "$input" .mlir).$strategy.mlir"
    for side in base new; do
      source="$root"; [ $side = base ] && source="$tree"
      mkdir -p "$dir/$side/lit"
      "$source/build/bin/fusion-opt" "$source/$relative" --split-input-file \
        --fusion-select-gemm-config="strategy=$strategy target=sm_90" \
        --fusion-lower-to-gpu >"$dir/$side/lit/$out" 2>/dev/null || true
    done
    kinds="$(differing_kinds "$dir/base/lit/$out" "$dir/new/lit/$out" \
             "$dir/lit_$out.differ")"
    if [ -z "$kinds" ]; then
      same=$((same + 1))
    else
      changed+=("$(basename "$input" .mlir) ($kinds)")
    fi
  done
  printf '%-30s %d identical; %d edited or new, skipped\n' \
    "lit inputs, $strategy" $same $skipped
  for line in "${changed[@]}"; do
    differ=1
    printf '  differs: %s\n' "$line"
  done
done
exit $differ
