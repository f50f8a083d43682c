#!/usr/bin/env bash
# Runs the libFuzzer target (bin/fusion-opt-fuzzer: parse, verify,
# fusion-verify-entry-points, --fusion-optimize, --fusion-lower-to-cpu, in
# process, under AddressSanitizer) for a bounded time, seeded from the .mlir
# files of test/ and examples/ (split at "// -----"). Exits non-zero on a
# finding, whose input is left in <build>/fuzz-run/artifacts/. Skips (exit 0)
# when the fuzzer was not built (no clang-22/libFuzzer). docs/fuzzing.md.
# Usage: scripts/fuzz.sh [build-dir] [seconds (default 170)]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
seconds="${2:-170}"
fuzzer="$build/bin/fusion-opt-fuzzer"
if [ ! -x "$fuzzer" ]; then
  echo "fuzz.sh: $fuzzer not built (needs clang-22 and libclang-rt-22-dev); skipped"
  exit 0
fi
work="$build/fuzz-run"
rm -rf "$work/seeds"
mkdir -p "$work/seeds" "$work/corpus" "$work/artifacts"
/usr/bin/python3 - "$root" "$work/seeds" <<'PY'
import pathlib, re, sys
root, seeds = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for path in sorted([*root.glob("test/**/*.mlir"), *root.glob("examples/*.mlir")]):
    name = "_".join(path.relative_to(root).parts)
    for index, chunk in enumerate(re.split(r"(?m)^// -----\s*$", path.read_text())):
        (seeds / f"{name}.{index}").write_text(chunk)
PY
# New interesting inputs go to corpus/ (kept between runs), seeds/ is read.
exec "$fuzzer" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 \
  -max_len=16384 -detect_leaks=0 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$work/corpus" "$work/seeds"
