#!/usr/bin/env bash
# Writes Packaging/perfhud.order, the order in which the linker lays out perfhud's functions
# (Package.swift, --symbol-ordering-file): first those the loops run — a tick of the idle daemon
# and a scrape of /metrics, rows of `attach --output json`, the HUD drawn in tmux — most-run
# first, then those only start-up and exit run. The kernel maps the executable 64 KiB around each
# page first touched, so functions that run together should sit together (docs/benchmarks.md,
# "Memory"). Which functions run is read from callgrind, a dump before each tick.
#
# Run it on a release build after changes that move much code (new dependencies, a new loop), then
# relink (rm .build/release/perfhud; make build: SwiftPM does not see the list change). Build from a
# clean tree first: SwiftPM keeps an object file whose code did not change when only the flags did,
# so a tree built before -function-sections links some files as one section each, and the layout
# measured there is not CI's. A stale
# list costs resident memory, never correctness (names no longer there are skipped).
#
#   Benchmarks/symbol_order.sh [BIN_DIR] [OUT]   (defaults: .build/release Packaging/perfhud.order)
set -euo pipefail
bin=$(cd "${1:-.build/release}" && pwd); out=${2:-Packaging/perfhud.order}
work=$(mktemp -d)
sleep 100000 & target=$!
cleanup() { kill "$target" 2>/dev/null || true; tmux -L "perfhud-order-$$" kill-server 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
# valgrind cannot read the debug information of the Swift toolchain's output: a copy without it.
strip -g -o "$work/perfhud" "$bin/perfhud"
tick='$s13PerfHUDDaemon13DaemonServiceC4tick33_*LL5finalySb_tF'
sample='$s14PerfHUDRuntime7SessionC10takeSample*'
grind() { local name=$1 dump=$2; shift 2
  valgrind --tool=callgrind --demangle=no --dump-instr=no --dump-before="$dump" \
    --callgrind-out-file="$work/cg.$name.%p" "$work/perfhud" "$@"; }

port=$((20000 + RANDOM % 20000))
grind daemon "$tick" daemon --pid "$target" --metrics-listen "127.0.0.1:$port" --events "$work/d.sock" \
  >/dev/null 2>&1 & daemon=$!
for _ in $(seq 1 60); do curl -sf "127.0.0.1:$port/metrics" >/dev/null && break; sleep 1; done
# 40 s of ticks, a scrape every 10 s: what runs every few seconds or tens of seconds is loop too.
for _ in 1 2 3 4; do sleep 10; curl -sf "127.0.0.1:$port/metrics" >/dev/null; done
kill "$daemon"; wait "$daemon" 2>/dev/null || true

grind json "$sample" attach "$target" --output json --count 20 --events "$work/j.sock" >/dev/null 2>&1
tmux -L "perfhud-order-$$" new-session -d -x 120 -y 40 \
  "valgrind --tool=callgrind --demangle=no --dump-instr=no --dump-before='$sample' --callgrind-out-file='$work/cg.hud.%p' '$work/perfhud' attach $target --duration 15s --events '$work/h.sock'"
while tmux -L "perfhud-order-$$" has-session 2>/dev/null; do sleep 1; done

# Names defined more than once (outlined copies, merged helpers: `objectdestroyTm`, one in each
# object file) would pull every section holding one to the front, whole: left out.
nm --defined-only "$work/perfhud" | awk 'NF == 3 { print $3 }' | sort | uniq -d > "$work/duplicates"
python3 - "$work" > "$out" <<'EOF'
import collections, glob, re, sys
# Each loop's functions together: the daemon's alone, then those it shares with attach, then
# attach's (JSON rows and the HUD; the HUD's own last), so each loop's code is one stretch.
loops = collections.defaultdict(set)   # function -> the loops that ran it
runs = collections.Counter()            # function -> ticks it ran in
start = {}                              # functions of start-up and exit, in the order met
def functions(path):   # the perfhud functions a callgrind dump has costs for
    objects, names, found, current = {}, {}, set(), None
    for line in open(path, errors="replace"):
        m = re.match(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not m: continue
        kind, key, name = m.groups()
        table = objects if kind.endswith("ob") else names
        if name: table[key] = name
        if kind == "ob": current = objects.get(key, "")
        elif kind == "fn" and current.endswith("/perfhud"): found.add(names[key])
    return found
duplicates = set(open(sys.argv[1] + "/duplicates").read().split())
for path in sorted(glob.glob(sys.argv[1] + "/cg.*")):
    loop = path.split("/cg.")[1].split(".")[0]
    part = re.search(r"\.(\d+)$", path)   # part 1: up to the first tick; none: exit
    for name in functions(path):
        if part and int(part.group(1)) >= 2: loops[name].add(loop); runs[name] += 1
        else: start.setdefault(name, None)
keep = lambda n: not n.startswith("(") and n not in duplicates
rank = lambda ls: 0 if ls == {"daemon"} else 1 if "daemon" in ls else 2 if ls == {"json", "hud"} else 3 if ls == {"hud"} else 4
order = sorted((n for n in loops if keep(n)), key=lambda n: (rank(loops[n]), -runs[n], n))
looped = len(order)
order += [n for n in start if n not in loops and keep(n)]
print(f"{looped} functions in the loops, {len(order) - looped} in start-up and exit only", file=sys.stderr)
print("\n".join(order))
EOF
echo "wrote $out ($(wc -l < "$out") functions)"
