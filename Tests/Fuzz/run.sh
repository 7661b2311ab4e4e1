#!/usr/bin/env bash
# libFuzzer targets for perfhud's parsers of untrusted input.
#
#   Tests/Fuzz/run.sh build  [TARGET...]            compile each target (swiftc -sanitize=fuzzer,address)
#   Tests/Fuzz/run.sh replay [TARGET...]            run every checked-in corpus input once (make test)
#   Tests/Fuzz/run.sh fuzz   [TARGET...] [SECONDS]  fuzz each target for SECONDS (default 600; make fuzz)
#
# A target is a directory here holding `entry.swift` (the @_cdecl("LLVMFuzzerTestOneInput") entry),
# `sources` (the files of Sources/PerfHUDCore it compiles with, one per line), `corpus/` (seeds and
# regression inputs, checked in) and optionally `dict` (a libFuzzer dictionary). The parsers are
# compiled straight from their sources with swiftc: SwiftPM has no sanitizer=fuzzer build.
# New inputs found while fuzzing go to .build/fuzz/TARGET/found (not the checked-in corpus); a crash,
# hang or leak leaves its input in .build/fuzz/TARGET/ and fails the run.
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=Tests/Fuzz
OUT=.build/fuzz
mode=${1:-replay}; shift || true
seconds=600
targets=()
for argument in "$@"; do
  if [[ $argument =~ ^[0-9]+$ ]]; then seconds=$argument; else targets+=("$argument"); fi
done
if [ ${#targets[@]} -eq 0 ]; then
  for directory in "$HERE"/*/; do [ -f "$directory/entry.swift" ] && targets+=("$(basename "$directory")"); done
fi

build() {
  local target=$1 sources=()
  while read -r file; do [ -n "$file" ] && sources+=("Sources/PerfHUDCore/$file"); done < "$HERE/$target/sources"
  mkdir -p "$OUT/$target"
  # (ld.gold warns about every ASan symbol it cannot export: kept in a log, shown on failure.)
  # -I Sources/CSQLite: `import CSQLite` for a target that reads recordings (its modulemap links libsqlite3).
  swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name "Fuzz_${target//-/_}" -I Sources/CSQLite \
    "$HERE/$target/entry.swift" "${sources[@]}" -o "$OUT/$target/fuzzer" > "$OUT/$target/build.log" 2>&1 \
    || { grep -v "Cannot export local symbol" "$OUT/$target/build.log" | tail -40; return 1; }
}

# -timeout: an input that takes longer is a hang; -rss_limit_mb: more memory is a leak or a blow-up.
LIMITS=(-timeout=10 -rss_limit_mb=2048)

failed=0
for target in "${targets[@]}"; do
  echo "== $target: $mode"
  build "$target"
  dict=()
  [ -f "$HERE/$target/dict" ] && dict=("-dict=$HERE/$target/dict")
  case $mode in
    build) ;;
    replay)
      # Every input once; libFuzzer exits non-zero on a crash, a hang or a leak.
      "$OUT/$target/fuzzer" "${LIMITS[@]}" -runs=0 -artifact_prefix="$OUT/$target/" "$HERE/$target/corpus" \
        > "$OUT/$target/replay.log" 2>&1 || { tail -30 "$OUT/$target/replay.log"; failed=1; }
      grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)" "$OUT/$target/replay.log" | tail -1 || true
      ;;
    fuzz)
      mkdir -p "$OUT/$target/found"
      "$OUT/$target/fuzzer" "${LIMITS[@]}" "${dict[@]}" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$OUT/$target/" "$OUT/$target/found" "$HERE/$target/corpus" 2>&1 \
        | tee "$OUT/$target/fuzz.log" | grep -E "^#[0-9]+[[:space:]]+(INITED|pulse|DONE)|stat::|ERROR|SUMMARY" || true
      [ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
      ;;
    *) echo "usage: $0 build|replay|fuzz [TARGET...] [SECONDS]" >&2; exit 64 ;;
  esac
done
exit $failed
