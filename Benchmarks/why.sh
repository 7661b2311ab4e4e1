#!/usr/bin/env bash
# What the "why" figures cost (issue 20's budget: at most 10 % more per 10 ms tick when shown,
# nothing when hidden): perfhud attached to an idle process at --tick 10ms with JSON rows (which
# always carry them) against the same with PERFHUD_NO_WHY=1 (none read: what a HUD without the
# details line and without --record does), side by side with the sampler floor (a C loop that wakes
# on a timerfd and preads stat and statm, Benchmarks/tick_floor.c). Also for a target with 64
# threads: the run-queue delay is read from each thread's schedstat every tick.
#
#   Benchmarks/why.sh [BIN_DIR] [ROUNDS]     (defaults: .build/release 3)
#   Benchmarks/why.sh --hud [BIN_DIR] [ROUNDS]   the attach HUD with its details line shown and
#                                                hidden (Benchmarks/details_line_cost.py)
set -euo pipefail
if [ "${1:-}" = --hud ]; then shift; exec python3 "$(dirname "$0")/details_line_cost.py" "$@"; fi
bin=${1:-.build/release}; rounds=${2:-3}
out=$(mktemp -d)
here=$(dirname "$0")
cc -O2 -o "$out/tick_floor" "$here/tick_floor.c"
cc -O1 -pthread -o "$out/why" "$here/../Tests/EndToEnd/helpers/why.c"
sleep 100000 & idle=$!
"$out/why" hot-thread idle 63 > /dev/null & threads=$!   # 64 threads, one spinning, the rest asleep
trap 'kill $idle $threads 2>/dev/null; rm -rf "$out"' EXIT

echo "== CPU time per tick at --tick 10ms (1,500-tick run less a 300-tick run), ${rounds} rounds, medians"
python3 - "$bin/perfhud" "$out/tick_floor" "$idle" "$threads" "$rounds" <<'PY'
import os, resource, statistics, subprocess, sys
perfhud, floor, idle, threads, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
def cpu(command, env=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
def per_tick(make, env=None):
    return (cpu(make(1500), env) - cpu(make(300), env)) / 1200 * 1e6
off = dict(os.environ, PERFHUD_NO_WHY="1")
for name, pid in (("idle process (1 thread)", idle), ("64 threads", threads)):
    runs = {"floor": [], "without": [], "with": []}
    attach = lambda n: [perfhud, "attach", pid, "--tick", "10ms", "--count", str(n), "--output", "json"]
    for _ in range(rounds):
        runs["floor"].append(per_tick(lambda n: [floor, pid, "10000000", str(n)]))
        runs["without"].append(per_tick(attach, off))
        runs["with"].append(per_tick(attach))
    floor_us, without, with_ = (statistics.median(runs[k]) for k in ("floor", "without", "with"))
    print(f"{name}: floor {floor_us:.0f} µs, perfhud {without:.0f} µs without the why figures, {with_:.0f} µs with them: "
          f"+{100 * (with_ / without - 1):.1f} % (runs: {', '.join(f'{x:.0f}' for x in runs['without'])} / "
          f"{', '.join(f'{x:.0f}' for x in runs['with'])})")
PY

# Instructions (callgrind) per tick, the stable figure: runs of 300 and 900 reports, the difference
# over 600 (start-up excluded), with and without the why figures.
if command -v valgrind >/dev/null; then
  echo "== instructions per tick at --tick 10ms, attached to an idle process (callgrind)"
  cp "$bin/perfhud" "$out/perfhud" && strip --strip-debug "$out/perfhud"
  for target in "$idle" "$threads"; do
    for mode in without with; do
      rm -f "$out"/ir.txt
      for count in 300 900; do
        rm -f "$out"/cg.*
        env $([ $mode = without ] && echo PERFHUD_NO_WHY=1) valgrind --tool=callgrind --callgrind-out-file="$out/cg.%p" \
          "$out/perfhud" attach "$target" --tick 10ms --count "$count" --output json > /dev/null 2> "$out/valgrind.log"
        total=$(callgrind_annotate "$(ls -S "$out"/cg.* | head -1)" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
        echo "$count $total" >> "$out/ir.txt"
      done
      name=$([ "$target" = "$idle" ] && echo "idle process" || echo "64 threads")
      awk -v mode=$mode -v target="$name" \
        'NR == 1 { n1 = $1; t1 = $2 } NR == 2 { printf "%s, %s the why figures: %.0f instructions a tick\n", target, mode, ($2 - t1) / ($1 - n1) }' "$out/ir.txt"
    done
  done
fi
