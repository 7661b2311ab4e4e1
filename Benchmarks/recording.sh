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
