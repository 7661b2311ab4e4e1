#!/usr/bin/env bash
# What --record costs (issue 12): the size of an hour of the demo at the default tick, and the CPU
# recording adds at a 10 ms tick. perfhud's own CPU time (utime + stime of its process, not the
# demo's) is read from /proc over a window, with and without --record, rounds alternating.
#
#   Benchmarks/recording.sh [BIN_DIR] [SECONDS] [ROUNDS]     (defaults: .build/release 30 3)
set -euo pipefail
bin=${1:-.build/release}; seconds=${2:-30}; rounds=${3:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== size: the demo recorded for 60 s at the default tick"
"$bin/perfhud" demo --output plain --record "$out/size.db" --duration 60s > /dev/null 2>&1
bytes=$(stat -c %s "$out/size.db")
growing=$(sqlite3 "$out/size.db" "select sum(pgsize) from dbstat where name in ('sample_log','frame_log','action_log','high_frequency_log','phases','names')")
awk -v b="$bytes" -v g="$growing" 'BEGIN { printf "file %d B (growing tables %d B): %.2f MiB per hour (fixed pages once, growing tables x 60)\n", b, g, (b - g + g * 60) / 1048576 }'

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
echo "== CPU of perfhud at --tick 10ms over ${seconds}s, ${rounds} rounds (clock ticks of $(getconf CLK_TCK)/s)"
for round in $(seq "$rounds"); do
  for mode in plain record; do
    extra=(); [ "$mode" = record ] && extra=(--record "$out/cpu.db")
    rm -f "$out"/cpu.db*
    "$bin/perfhud" demo --tick 10ms --output json --duration "$((seconds + 4))s" "${extra[@]}" > /dev/null 2>&1 &
    pid=$!
    sleep 2; before=$(cpu_ticks "$pid")
    sleep "$seconds"; after=$(cpu_ticks "$pid")
    wait "$pid"
    echo "round $round $mode: $((after - before)) ticks"
  done
done

# The stable figure: instructions (callgrind, on a strip --strip-debug copy), not clock ticks. Two
# runs with --record at --tick 10ms, N1 and N2 reports: the difference divided by N2 - N1 is the
# cost of one more tick, start-up excluded. Recorder.record's inclusive count is what recording
# costs; the whole process's count (every thread) minus it, what perfhud costs without it. The
# event load (frames, actions) is the demo's in both, but how many arrive per tick under valgrind
# varies, which is why the recording's share is taken within one run rather than between two.
if command -v valgrind >/dev/null; then
  echo "== instructions per tick at --tick 10ms with --record (callgrind)"
  cp "$bin/perfhud" "$out/perfhud" && strip --strip-debug "$out/perfhud"
  cp "$bin/perfhud-demo" "$out/perfhud-demo"
  for count in 300 900; do
    rm -f "$out"/ir.db* "$out"/cg.*
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.%p" "$out/perfhud" demo --tick 10ms --count "$count" \
      --output json --record "$out/ir.db" > /dev/null 2> "$out/valgrind.log"
    main=$(ls -S "$out"/cg.* | head -1)   # perfhud itself; the smaller file is the program's session leader
    total=$(callgrind_annotate "$main" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
    record=$(callgrind_annotate --inclusive=yes "$main" | awk '/RecorderC6record_2at/ { gsub(",", "", $1); if ($1 + 0 > max + 0) max = $1 + 0 } END { print max + 0 }')
    echo "$count $total $record" >> "$out/ir.txt"
  done
  awk 'NR == 1 { n1 = $1; t1 = $2; r1 = $3 } NR == 2 { n = $1 - n1; total = ($2 - t1) / n; record = ($3 - r1) / n
       printf "per tick: %.0f instructions in all, %.0f of them recording: recording adds %.1f %% to what perfhud costs without it\n",
              total, record, 100 * record / (total - record) }' "$out/ir.txt"
fi
