#!/usr/bin/env bash
# What one daemon costs per target (issue 21): RSS, threads, series and CPU of `perfhud daemon`
# watching N idle processes (one --pid target each, default 1 s tick), medians of ROUNDS runs.
# Goal of the issue: RSS grows by at most 64 KiB per extra target.
#
#   Benchmarks/daemon_targets.sh [BIN_DIR] [ROUNDS] [COUNTS]   (defaults: .build/release 3 "2 10 50 200")
set -euo pipefail
bin=${1:-.build/release}; rounds=${2:-3}; counts=${3:-2 10 50 200}
port=$((20000 + RANDOM % 20000))

one() {   # prints "rss_kib threads series cpu_ticks_in_10s"
  local n=$1 pids=() args=() dir daemon
  for i in $(seq 1 "$n"); do sleep 600 & pids+=($!); args+=(--pid "t$i=$!"); done
  dir=$(mktemp -d)
  "$bin/perfhud" daemon "${args[@]}" --metrics-listen 127.0.0.1:$port --events "$dir" 2>/dev/null & daemon=$!
  sleep 6
  local cpu1 cpu2 rss threads series
  cpu1=$(awk '{print $14 + $15}' /proc/$daemon/stat)
  sleep 10
  cpu2=$(awk '{print $14 + $15}' /proc/$daemon/stat)
  rss=$(awk '/VmRSS/ {print $2}' /proc/$daemon/status)
  threads=$(ls /proc/$daemon/task | wc -l)
  series=$(curl -s 127.0.0.1:$port/metrics | grep -vc '^#')
  kill $daemon "${pids[@]}"; wait 2>/dev/null || true
  rm -rf "$dir"
  echo "$rss $threads $series $((cpu2 - cpu1))"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

base=""
for n in $counts; do
  results=$(for _ in $(seq 1 "$rounds"); do one "$n"; done)
  rss=$(cut -d' ' -f1 <<< "$results" | median)
  threads=$(cut -d' ' -f2 <<< "$results" | median)
  series=$(cut -d' ' -f3 <<< "$results" | median)
  cpu=$(cut -d' ' -f4 <<< "$results" | median)
  if [ -z "$base" ]; then base="$n $rss"; per=""; else
    read -r n0 rss0 <<< "$base"; per=$(awk -v a="$rss0" -v b="$rss" -v n0="$n0" -v n="$n" 'BEGIN { printf " (%.0f KiB per extra target)", (b - a) / (n - n0) }')
  fi
  echo "targets $n: RSS $rss KiB$per, threads $threads, series $series, CPU $cpu ticks in 10 s"
done
