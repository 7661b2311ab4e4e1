#!/usr/bin/env bash
# What --record costs: the size of an hour of the demo at the default tick, the CPU time recording
# adds per tick at a 10 ms tick (budget: 15 %), and the same as instructions (callgrind).
#
#   Benchmarks/recording.sh [BIN_DIR] [ROUNDS]     (defaults: .build/release 3)
set -euo pipefail
bin=${1:-.build/release}; rounds=${2:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== size: the demo recorded for 60 s at the default tick"
"$bin/perfhud" demo --output plain --record "$out/size.db" --duration 60s > /dev/null 2>&1
bytes=$(stat -c %s "$out/size.db")
growing=$(sqlite3 "$out/size.db" "select sum(pgsize) from dbstat where name in ('sample_log','frame_log','action_log','high_frequency_log','phases','names')")
awk -v b="$bytes" -v g="$growing" 'BEGIN { printf "file %d B (growing tables %d B): %.2f MiB per hour (fixed pages once, growing tables x 60)\n", b, g, (b - g + g * 60) / 1048576 }'

# CPU time per tick, as the budget is set: perfhud at --tick 10ms with JSON out, with and without
# --record, rounds alternating, medians. An idle process (attach: what recording itself costs): a
# 1,500-tick run less a 300-tick run, so start-up and the end cancel; the demo (frames and actions
# to record too): perfhud's CPU between its 300th and 1,500th tick. CPU time (user + system) counts
# system calls, faults and wake-ups, which an instruction count misses.
echo "== CPU time per tick at --tick 10ms (1,500-tick run less a 300-tick run), ${rounds} rounds"
sleep 100000 & idle=$!
trap 'kill $idle 2>/dev/null; rm -rf "$out"' EXIT
python3 - "$bin/perfhud" "$idle" "$rounds" "$out" <<'PY'
import os, resource, statistics, subprocess, sys, time
perfhud, idle, rounds, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def fresh():
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{out}/cpu.db{suffix}"): os.unlink(f"{out}/cpu.db{suffix}")
def attach(count, extra):
    # perfhud's own CPU time: its rusage as a reaped child (it has no children of its own here).
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([perfhud, "attach", idle, "--tick", "10ms", "--count", str(count), "--output", "json", *extra],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
def demo(extra):
    # The demo is perfhud's child (its CPU would be in the rusage): perfhud's own utime + stime from
    # /proc between its 300th and its 1,500th tick (clock ticks: 12 s of them, so 1 % resolution).
    process = subprocess.Popen([perfhud, "demo", "--tick", "10ms", "--duration", "20s", "--output", "json", *extra],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    def ticks():
        fields = open(f"/proc/{process.pid}/stat").read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    time.sleep(3); first = ticks(); time.sleep(12); second = ticks()
    process.wait()
    return (second - first) / os.sysconf("SC_CLK_TCK")
for name in ("idle process (attach)", "demo"):
    per_tick = {"plain": [], "record": []}
    for _ in range(rounds):
        for mode in per_tick:
            fresh()
            extra = ["--record", f"{out}/cpu.db"] if mode == "record" else []
            if name == "demo":
                seconds = demo(extra)
            else:
                short = attach(300, extra); fresh(); seconds = attach(1500, extra) - short
            per_tick[mode].append(seconds / 1200 * 1e6)
    plain, record = statistics.median(per_tick["plain"]), statistics.median(per_tick["record"])
    print(f"{name}: {plain:.0f} µs a tick without --record, {record:.0f} µs with it: recording adds {100 * (record / plain - 1):.1f} % "
          f"(runs: {', '.join(f'{x:.0f}' for x in per_tick['plain'])} / {', '.join(f'{x:.0f}' for x in per_tick['record'])})")
PY

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
    record=$(callgrind_annotate --inclusive=yes "$main" | awk '/RecorderC6recordyyAA4TickVF/ { gsub(",", "", $1); if ($1 + 0 > max + 0) max = $1 + 0 } END { print max + 0 }')
    echo "$count $total $record" >> "$out/ir.txt"
  done
  awk 'NR == 1 { n1 = $1; t1 = $2; r1 = $3 } NR == 2 { n = $1 - n1; total = ($2 - t1) / n; record = ($3 - r1) / n
       printf "per tick: %.0f instructions in all, %.0f of them recording: recording adds %.1f %% to what perfhud costs without it\n",
              total, record, 100 * record / (total - record) }' "$out/ir.txt"
fi
