#!/usr/bin/env bash
# What perfhud keeps resident and how soon it prints (issue 22, "Memory" and "start-up"):
#   - RSS and PSS of the idle daemon (`perfhud daemon --pid` of a sleeping process; again a second
#     after one scrape of /metrics), of `attach` writing JSON rows with no screen, and of the
#     `attach` HUD drawn in tmux, each read from /proc/PID/smaps_rollup SETTLE seconds after it
#     started; medians of ROUNDS runs, the RSS split into the perfhud executable's file pages, the
#     shared libraries' and anonymous memory (heap, stacks, relocated data);
#   - start-up to the first row: the wall time of `perfhud attach PID --output json --count 1`
#     beside `top -b -n 1`, run alternately STARTS times each, medians and their ratio, in wall
#     time (top's includes a 150 ms sleep before its first screen) and in CPU time; and beside procps
#     `ps -o pid,pcpu,rss,vsz,nlwp,min_flt,maj_flt,stat,comm -p PID` (what of the row ps can say).
# Goals: RSS ≤ 12 MiB for the HUD and the idle daemon; start-up ≤ top's (issue 22), ≤ 1.2× ps's (issue 34).
#
#   Benchmarks/memory.sh [BIN_DIR] [ROUNDS] [STARTS] [SETTLE]   (defaults: .build/release 5 20 3)
set -euo pipefail
bin=$(cd "${1:-.build/release}" && pwd); rounds=${2:-5}; starts=${3:-20}; settle=${4:-3}
exe=$(readlink -f "$bin/perfhud")
work=$(mktemp -d)
sleep 100000 & target=$!
cleanup() { kill "$target" 2>/dev/null || true; tmux -L "perfhud-memory-$$" kill-server 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# "rss pss own libs anon" in KiB: the whole process, its proportional share, then the RSS split
# three ways — the perfhud executable's file pages (code and constants, clean: the kernel can drop
# and re-read them), the other mapped files' (libc, libstdc++, …), and anonymous memory (heap,
# stacks, and the executable's data the loader wrote relocations into).
footprint() {
  local pid=$1
  local rss pss
  rss=$(awk '/^Rss:/ {print $2}' "/proc/$pid/smaps_rollup")
  pss=$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup")
  awk -v exe="$exe" -v rss="$rss" -v pss="$pss" '
    /^[0-9a-f]+-[0-9a-f]+ / { file = (NF >= 6 && $6 ~ /^\//) ? $6 : ""; next }
    /^Rss:/ { r = $2; next }
    /^Anonymous:/ { a = $2; anon += a; if (file == exe) own += r - a; else if (file != "") libs += r - a }
    END { printf "%d %d %d %d %d\n", rss, pss, own, libs, anon }' "/proc/$pid/smaps"
}

daemon_once() {   # two lines: SETTLE seconds after the start, then a second after one scrape
  local port=$((20000 + RANDOM % 20000)) pid
  "$bin/perfhud" daemon --pid "$target" --metrics-listen "127.0.0.1:$port" --events "$work/daemon.sock" \
    >/dev/null 2>&1 & pid=$!
  sleep "$settle"; footprint "$pid"
  curl -sf "127.0.0.1:$port/metrics" >/dev/null; sleep 1; footprint "$pid"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

json_once() {
  local pid out
  "$bin/perfhud" attach "$target" --output json --events "$work/json.sock" >/dev/null 2>&1 & pid=$!
  sleep "$settle"; out=$(footprint "$pid"); kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$out"
}

hud_once() {   # the HUD drawn in a 120×40 tmux pane: the pane's process is perfhud itself (exec)
  local sock="perfhud-memory-$$" pid out
  tmux -L "$sock" new-session -d -x 120 -y 40 "exec '$bin/perfhud' attach $target --events '$work/hud.sock'"
  pid=$(tmux -L "$sock" list-panes -F '#{pane_pid}' 2>/dev/null) || true
  [ -n "$pid" ] || { tmux -L "$sock" kill-server 2>/dev/null || true; hud_once; return; }   # tmux did not start: again
  sleep "$settle"; out=$(footprint "$pid")
  tmux -L "$sock" kill-server 2>/dev/null || true
  echo "$out"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
column() { cut -d' ' -f"$1" | median; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

echo "perfhud: $exe ($(stat -c %s "$exe") bytes), medians of $rounds runs, read after ${settle}s"
printf '%-26s %9s %9s %9s %9s %9s %s\n' "" "RSS MiB" "PSS MiB" "exe file" "libs file" "anon" "goal ≤ 12 MiB"
row() {   # label, then the runs' lines
  local label=$1 results=$2 rss
  rss=$(column 1 <<< "$results")
  printf '%-26s %9s %9s %9s %9s %9s %s\n' "$label" "$(mib "$rss")" "$(mib "$(column 2 <<< "$results")")" \
    "$(mib "$(column 3 <<< "$results")")" "$(mib "$(column 4 <<< "$results")")" "$(mib "$(column 5 <<< "$results")")" \
    "$(awk -v r="$rss" 'BEGIN { printf "%.2f× the goal", r / 12288 }')"
}
daemon=$(for _ in $(seq 1 "$rounds"); do daemon_once; done)
row "idle daemon" "$(awk 'NR % 2 == 1' <<< "$daemon")"
row "idle daemon, scraped once" "$(awk 'NR % 2 == 0' <<< "$daemon")"
row "attach --output json" "$(for _ in $(seq 1 "$rounds"); do json_once; done)"
row "attach HUD (tmux)" "$(for _ in $(seq 1 "$rounds"); do hud_once; done)"

# Start-up: perfhud, top and ps alternately, so a busy moment of the machine hits all three. ps
# asked for what the first row holds that ps can say (CPU, RSS, VSZ, threads, faults, state, name).
python3 - "$bin/perfhud" "$target" "$starts" <<'EOF'
import resource, statistics, subprocess, sys, time
perfhud, target, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def run(argv):   # (wall ms, CPU ms): the CPU time is steadier than the wall time on a busy machine
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = (time.perf_counter() - t) * 1000; r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000
ours, top, ps = [], [], []
for _ in range(n):
    ours.append(run([perfhud, "attach", target, "--output", "json", "--count", "1"]))
    top.append(run(["top", "-b", "-n", "1"]))
    ps.append(run(["ps", "-o", "pid,pcpu,rss,vsz,nlwp,min_flt,maj_flt,stat,comm", "-p", target]))
for i, what in ((0, "wall"), (1, "CPU")):
    a, b, c = (statistics.median(x[i] for x in runs) for runs in (ours, top, ps))
    print(f"start-up to the first row ({what}, medians of {n}): perfhud attach --output json --count 1 "
          f"{a:.1f} ms, top -b -n 1 {b:.1f} ms, ps -o … -p PID {c:.1f} ms: {a / b:.2f}× top, {a / c:.2f}× ps")
EOF
