#!/usr/bin/env bash
# libFuzzer targets for perfhud's parsers of untrusted input.
#
#   Tests/Fuzz/run.sh build  [TARGET...]            compile each target (swiftc -sanitize=fuzzer,address)
#   Tests/Fuzz/run.sh replay [TARGET...]            run every checked-in corpus input once (make test)
#   Tests/Fuzz/run.sh fuzz   [TARGET...] [SECONDS]  fuzz each target for SECONDS (default 600; make fuzz)
#
# A target is a directory here holding `entry.swift` (the @_cdecl("LLVMFuzzerTestOneInput") entry,
# importing the layers it fuzzes: `import PerfHUDEvents`), `corpus/` (seeds and regression inputs,
# checked in) and optionally `dict` (a libFuzzer dictionary). The layers it imports, and those they
# depend on as Package.swift says, are compiled once a run with swiftc, instrumented, each a module
# of its own as SwiftPM builds it (.build/fuzz/modules): `swift build --sanitize fuzzer` would
# instrument the whole package and make every executable and test a fuzzer, which cannot link.
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

# The instrumented layers, built once a run (build_module).
MODULES=$OUT/modules

# Builds MODULE (after what it depends on) into $MODULES, once a run: Swift layers as a module and
# a static library, the C shims as instrumented objects beside a module map, the system libraries'
# module maps as they are.
declare -A built=()
order=()   # the Swift layers built, each after those it depends on
build_module() {
  local name=$1 kind dependencies
  [ -n "${built[$name]:-}" ] && return 0
  read -r kind dependencies <<< "${layer_info[$name]}"
  for dependency in $dependencies; do build_module "$dependency" || return 1; done
  mkdir -p "$MODULES"
  case $kind in
    system) : ;;   # CProc2, CSQLite: found through -I Sources/NAME (their module.modulemap links the library)
    regular)
      if [ -d "Sources/$name/include" ]; then   # a C target: CSystemShims
        printf 'module %s {\n  header "%s"\n  export *\n}\n' "$name" "$PWD/Sources/$name/include/$name.h" > "$MODULES/$name.modulemap"
        for source in Sources/"$name"/*.c; do
          clang -O1 -fsanitize=fuzzer-no-link,address -I "Sources/$name/include" -c "$source" \
            -o "$MODULES/$name-$(basename "$source" .c).o" || return 1
        done
      else
        # -package-name as SwiftPM gives it: `package` declarations cross the layers.
        swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name "$name" -package-name perfhud \
          -emit-module -emit-module-path "$MODULES/$name.swiftmodule" -emit-library -static -o "$MODULES/lib$name.a" \
          "${module_flags[@]}" Sources/"$name"/*.swift >> "$MODULES/build.log" 2>&1 \
          || { grep -v "Cannot export local symbol" "$MODULES/build.log" | tail -40; return 1; }
        order+=("$name")
      fi ;;
  esac
  built[$name]=1
}

declare -A layer_info=()
while read -r name kind dependencies; do layer_info[$name]="$kind $dependencies"; done < <(python3 Tests/layers.py --targets)   # Package.swift as SwiftPM reads it
module_flags=(-I "$MODULES" -Xcc "-fmodule-map-file=$MODULES/CSystemShims.modulemap" -I Sources/CSQLite -I Sources/CProc2)

build() {
  local target=$1 imports=() libraries=()
  mapfile -t imports < <(sed -n 's/^import \(PerfHUD[A-Za-z]*\)$/\1/p' "$HERE/$target/entry.swift")
  for module in "${imports[@]}"; do build_module "$module" || return 1; done
  # Each library before those it depends on (the linker reads an archive once, in order).
  for ((i = ${#order[@]} - 1; i >= 0; i--)); do libraries+=("$MODULES/lib${order[i]}.a"); done
  mkdir -p "$OUT/$target"
  # (ld.gold warns about every ASan symbol it cannot export: kept in a log, shown on failure.)
  # Every module built so far is linked: the linker keeps only what the entry reaches.
  swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name "Fuzz_${target//-/_}" -package-name perfhud \
    "${module_flags[@]}" "$HERE/$target/entry.swift" "${libraries[@]}" \
    "$MODULES"/CSystemShims-*.o -lproc2 -lsqlite3 -o "$OUT/$target/fuzzer" > "$OUT/$target/build.log" 2>&1 \
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
