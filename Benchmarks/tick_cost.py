#!/usr/bin/env python3
"""What a tick of perfhud costs, in instructions (callgrind: stable on a noisy machine), per stage,
checked against the counts kept in Benchmarks/tick_instructions.txt (issue 22's guard).

Three sessions at --tick 10ms with JSON rows, each run twice under callgrind on a strip --strip-debug
copy of the build, with N1 and N2 rows: (count of the N2 run - count of the N1 run) / (N2 - N1) is
the cost of one more tick, start-up and the end excluded.
  idle    perfhud attach PID (a sleeping process)
  demo    perfhud demo (its 60 FPS frames and its actions on the event socket)
  busy    perfhud attach PID of the demo program run alone (the same busy, two-thread target with
          no events): the demo's tick less this one is what its frames and actions cost
  record  perfhud demo --record FILE
Per stage (inclusive counts of the functions that are the stage): sampling (ProcessSampler.sample),
store (MetricsStore.record), events (SessionEvents.tick: snapshot, drains), rows (RowWriter.consume:
the JSON row), recording (Recorder.consume); the whole tick is Session.takeSample. Per frame: the
event receiver thread's instructions per frame it took in (demo).

  Benchmarks/tick_cost.py [--bin DIR] [--rounds N] [--update] [--cpu | --cpu-only] [--warmth]
    --rounds    callgrind rounds, each figure the smallest of them (default 2)
    --update    writes the counts measured to Benchmarks/tick_instructions.txt
    --cpu       also CPU time per tick (rusage, a 1,500-tick run less a 300-tick run, median of 3;
                the demo: perfhud's own CPU over 1,200 ticks) beside the C floor
                (Benchmarks/tick_floor.c) and top -b -d 0.01
    --cpu-only  only that (noisy on a shared machine: the instruction counts are the guard)
    --against DIR  with --cpu: also the attach of another build, in the same run
    --warmth    with --cpu or --cpu-only: the floors and attach at a 10 ms and at a 1 ms tick, side
                by side: how much of a tick is paid for waking with cold caches
Recording's floor: Benchmarks/recording_floor.c keeps the demo's rows with SQLite alone (the same
table, values, pragmas, batching and commits), its instructions per row the same way (600 rows less
200): floor.recording_row, what a recorded tick cannot cost less than with this layout. The C floor
writing the same JSON row (tick_floor.c `row`), the same way: floor.row_tick.
Exit status 1 when a count is more than 5 % above the kept one.
"""
import os
import pathlib
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
KEPT = ROOT / "Benchmarks" / "tick_instructions.txt"
BIN = pathlib.Path(sys.argv[sys.argv.index("--bin") + 1]) if "--bin" in sys.argv else ROOT / ".build" / "release"
SHORT, LONG = 200, 600
AGAINST = pathlib.Path(sys.argv[sys.argv.index("--against") + 1]) if "--against" in sys.argv else None
ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 2
TOLERANCE = 0.05

# Stage name -> a pattern of the mangled name of the function whose inclusive count is that stage.
STAGES = {
    "tick": r"7SessionC10takeSample",
    "sampling": r"14ProcessSamplerC6sampleAA6SampleVyF$",
    "store": r"12MetricsStoreV6record_",
    "events": r"13SessionEventsC4tick3now",
    # The Tick's own module is `AA` while the core was one module (before the layers became targets),
    # `0A11HUDPipeline` since: either matches.
    "rows": r"(12ReportWriter|9RowWriter)C7consumey(Sb|y)(AA|0A11HUDPipeline)4TickVF$",   # consume(_:) -> Bool before, -> Void now
    "recording": r"8RecorderC(6record|7consume)yy(AA|0A11HUDPipeline)4TickVF$",   # record(_:) before 43's one entry point
}
RECEIVER = r"13EventReceiverC11receiveLoop"


def inclusive_counts(path):
    """Function -> inclusive instruction count, and the program's total."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                          capture_output=True, text=True, check=True).stdout
    counts, total = {}, 0
    for line in text.splitlines():
        match = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(\S.*?)(?: \[.*\])?$", line)
        if not match:
            continue
        value, name = int(match.group(1).replace(",", "")), match.group(2)
        if name == "PROGRAM TOTALS":
            total = value
        else:
            counts[name] = counts.get(name, 0) + value
    return counts, total


def stage_count(counts, pattern):
    # Recursion lists a function once per cycle depth ('2): the outermost (largest) is the stage.
    return max((value for name, value in counts.items() if re.search(pattern, name.split("'")[0])), default=0)


def receiver_count(counts):
    # The receiver thread's loop: everything it does per datagram.
    return max((value for name, value in counts.items() if re.search(RECEIVER, name)), default=0)


def frames_total(rows_path):
    last = None
    with open(rows_path) as rows:
        for line in rows:
            if line.startswith("{"):
                last = line
    match = re.search(r'"frames_total":([0-9.]+)', last or "")
    return float(match.group(1)) if match else 0.0


def run_session(work, perfhud, name, pid, count, busy_pid=None):
    for stale in pathlib.Path(work).glob("cg.*"):
        stale.unlink()
    for suffix in ("", "-wal", "-shm"):
        path = pathlib.Path(work, "r.db" + suffix)
        if path.exists():
            path.unlink()
    if name in ("idle", "busy"):
        target = pid if name == "idle" else busy_pid
        command = [perfhud, "attach", str(target), "--tick", "10ms", "--count", str(count), "--output", "json"]
    else:
        command = [perfhud, "demo", "--tick", "10ms", "--count", str(count), "--output", "json"]
        if name == "record":
            command += ["--record", os.path.join(work, "r.db")]
    rows = os.path.join(work, "rows.json")
    with open(rows, "w") as out:
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={work}/cg.%p", *command],
                       stdout=out, stderr=subprocess.DEVNULL, check=True)
    # perfhud's own profile is the largest (the demo program's session leader is another process).
    profile = max(pathlib.Path(work).glob("cg.*"), key=lambda p: p.stat().st_size)
    counts, total = inclusive_counts(str(profile))
    result = {"total": total, "frames": frames_total(rows), "receiver": receiver_count(counts)}
    for stage, pattern in STAGES.items():
        result[stage] = stage_count(counts, pattern)
    return result


def measure(work, pid):
    perfhud = os.path.join(work, "perfhud")
    shutil.copy(BIN / "perfhud", perfhud)
    subprocess.run(["strip", "--strip-debug", perfhud], check=True)
    if (BIN / "perfhud-demo").exists():
        shutil.copy(BIN / "perfhud-demo", os.path.join(work, "perfhud-demo"))
    # Work done per second rather than per tick (the slower reads, the recording's commit, the
    # demo's frames) is spread over fewer ticks when valgrind falls behind a 10 ms tick on a busy
    # machine: a figure is the smallest of ROUNDS rounds, the one least inflated by that.
    figures = {}
    # The demo program alone (no event socket: it draws and sends nothing), the target of `busy`.
    demo_program = subprocess.Popen([str(BIN / "perfhud-demo")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    try:
        for _ in range(ROUNDS):
            for name in ("idle", "busy", "demo", "record"):
                measure_session(work, perfhud, name, pid, demo_program.pid, figures)
    finally:
        demo_program.kill()
        demo_program.wait()
    return figures


def measure_session(work, perfhud, name, pid, busy_pid, figures):
    short = run_session(work, perfhud, name, pid, SHORT, busy_pid)
    long = run_session(work, perfhud, name, pid, LONG, busy_pid)
    ticks = LONG - SHORT
    round_figures = {f"{name}.per_tick": (long["total"] - short["total"]) / ticks}
    for stage in STAGES:
        round_figures[f"{name}.{stage}"] = (long[stage] - short[stage]) / ticks
    frames = long["frames"] - short["frames"]
    if name == "demo" and frames > 0:
        round_figures["demo.per_frame_received"] = (long["receiver"] - short["receiver"]) / frames
        round_figures["demo.frames_per_tick"] = frames / ticks
    for key, value in round_figures.items():
        figures[key] = min(value, figures.get(key, value))


def recording_floor(work):
    """SQLite's own instructions per recorded tick (Benchmarks/recording_floor.c), the smallest of ROUNDS."""
    floor = os.path.join(work, "recording_floor")
    subprocess.run(["cc", "-O2", "-o", floor, str(ROOT / "Benchmarks" / "recording_floor.c"), "-lsqlite3"], check=True)
    def total(rows):
        profile = os.path.join(work, "cg.floor")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}", floor, os.path.join(work, "floor.db"), str(rows)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return inclusive_counts(profile)[1]
    return min((total(LONG) - total(SHORT)) / (LONG - SHORT) for _ in range(ROUNDS))


def row_floor(work, pid):
    """Instructions per tick of the C floor writing perfhud's JSON row (Benchmarks/tick_floor.c
    `row`, at 10 ms), the smallest of ROUNDS: what perfhud's idle tick is compared with."""
    floor = build_floor(work)
    def total(ticks):
        profile = os.path.join(work, "cg.row_floor")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}", floor, str(pid), "10000000", str(ticks), "row"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return inclusive_counts(profile)[1]
    return min((total(LONG) - total(SHORT)) / (LONG - SHORT) for _ in range(ROUNDS))


def read_kept():
    kept = {}
    if KEPT.exists():
        for line in KEPT.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                key, value = line.split()[:2]
                kept[key] = float(value)
    return kept


def cpu_seconds(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def demo_cpu_per_tick(perfhud, extra):
    # The demo is perfhud's child: perfhud's own CPU time between two moments, from each thread's
    # schedstat (nanoseconds; /proc/PID/stat counts in 10 ms clock ticks, 8 µs a tick over this run).
    process = subprocess.Popen([perfhud, "demo", "--tick", "10ms", "--duration", "20s", "--output", "json", *extra],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    def nanoseconds():
        total = 0
        for task in os.listdir(f"/proc/{process.pid}/task"):
            try:
                total += int(open(f"/proc/{process.pid}/task/{task}/schedstat").read().split()[0])
            except OSError:
                pass   # a thread that ended between the listing and the read
        return total
    time.sleep(3); first = nanoseconds(); time.sleep(12); second = nanoseconds()
    process.wait()
    return (second - first) / 1e9 / 1200 * 1e6


# The samplers compared per tick, by the name their rows print; each command is given the number
# of ticks to run and the tick (ns).
FLOOR, ROW_FLOOR, TOP, ATTACH = ("C floor (timerfd + two preads)", "C floor writing perfhud's JSON row",
                                 "top -b -d 0.01 -p PID", "perfhud attach, JSON")
# Ticks of the short and the long run at each tick: 12 s apart either way, start-up and the end cancel.
RUN_LENGTHS = {10_000_000: (300, 1500), 1_000_000: (3000, 15000)}


def build_floor(work):
    floor = os.path.join(work, "tick_floor")
    subprocess.run(["cc", "-O2", "-o", floor, str(ROOT / "Benchmarks" / "tick_floor.c"), "-lm"], check=True)
    return floor


def sampler_commands(floor, perfhud, pid):
    pid = str(pid)
    return {
        FLOOR: lambda n, ns: [floor, pid, str(ns), str(n)],
        # The same wake-up and reads as perfhud (stat, statm, io, the CPU clock) and the same
        # 62-key JSON row written to standard output, in plain C: the floor of what attach does.
        ROW_FLOOR: lambda n, ns: [floor, pid, str(ns), str(n), "row"],
        TOP: lambda n, ns: ["top", "-b", "-d", f"{ns / 1e9:g}", "-n", str(n), "-p", pid],
        ATTACH: lambda n, ns: [perfhud, "attach", pid, "--tick", f"{ns // 1000}us", "--count", str(n), "--output", "json"],
    }


def marginal_cpu(command, tick_ns=10_000_000):
    """CPU µs per tick of `command`: its long run less its short one, over the ticks between."""
    short, long = RUN_LENGTHS[tick_ns]
    return (cpu_seconds(command(long, tick_ns)) - cpu_seconds(command(short, tick_ns))) / (long - short) * 1e6


def cpu_table(work, pid):
    floor = build_floor(work)
    perfhud = str(BIN / "perfhud")
    rows = {name: (lambda command=command: marginal_cpu(command)) for name, command in sampler_commands(floor, perfhud, pid).items()}
    if AGAINST:   # another build's attach in the same run (before and after a change)
        rows[f"attach of {AGAINST}"] = lambda: marginal_cpu(sampler_commands(floor, str(AGAINST / "perfhud"), pid)[ATTACH])
    rows["perfhud demo, JSON"] = lambda: demo_cpu_per_tick(perfhud, [])
    rows["perfhud demo, JSON, --record"] = lambda: demo_cpu_per_tick(perfhud, ["--record", os.path.join(work, f"cpu{time.time_ns()}.db")])
    print("== CPU µs per tick at a 10 ms tick (median of 3)")
    results = {}
    for name, measure_once in rows.items():
        runs = [measure_once() for _ in range(3)]
        results[name] = statistics.median(runs)
        print(f"  {name:34} {results[name]:7.1f}   (runs {', '.join(f'{r:.0f}' for r in runs)})")
    floor_us, attach, row_floor, top = results[FLOOR], results[ATTACH], results[ROW_FLOOR], results[TOP]
    print(f"  attach = {attach / floor_us:.2f}× the floor, {attach / row_floor:.2f}× the floor writing the same row, "
          f"{top / attach:.2f}× under top")
    print(f"  3× under top is {top / 3:.1f} µs a tick: {top / 3 / row_floor:.2f}× the C floor writing the same row")
    if "--warmth" in sys.argv:
        warmth_table(floor, perfhud, pid)


def warmth_table(floor, perfhud, pid):
    """The same tools at a 10 ms and a 1 ms tick: at 1 ms the caches and the branch predictors are
    still warm from the tick before; what a tick costs at 10 ms beyond that is paid for waking cold."""
    commands = sampler_commands(floor, perfhud, pid)
    print("== CPU µs per tick at a 10 ms and a 1 ms tick (median of 3; 1 ms: a 15,000-tick run less a 3,000-tick run)")
    results = {}
    for name in (FLOOR, ROW_FLOOR, ATTACH):
        for tick_ns in RUN_LENGTHS:
            results[(name, tick_ns)] = statistics.median(marginal_cpu(commands[name], tick_ns) for _ in range(3))
        print(f"  {name:34} 10 ms {results[(name, 10_000_000)]:7.1f}   1 ms {results[(name, 1_000_000)]:7.1f}")
    for tick_ns in RUN_LENGTHS:
        extra = results[(ATTACH, tick_ns)] - results[(ROW_FLOOR, tick_ns)]
        print(f"  at {tick_ns // 1_000_000:2} ms perfhud costs {extra:5.1f} µs a tick more than the C floor writing the same row")


def report_against_kept(figures):
    """Prints the figures beside the kept ones, and the demo's and the recording's ratios; returns
    the names of the figures more than 5 % worse than kept."""
    kept, worse = read_kept(), []
    print(f"== instructions per tick at --tick 10ms (callgrind, a 600-row run less a 200-row run, smallest of {ROUNDS} rounds)")
    print(f"  {'figure':28} {'now':>10} {'kept':>10} {'ratio':>7}")
    for key, value in figures.items():
        before = kept.get(key)
        ratio = value / before if before else None
        flag = ""
        # Stages of a few hundred instructions move by more than 5 % with the frames that arrive.
        if ratio is not None and ratio > 1 + TOLERANCE and value - before > 2000 and not key.endswith("frames_per_tick"):
            flag = "  WORSE by more than 5 %"
            worse.append(key)
        print(f"  {key:28} {value:10.0f} {before if before is not None else float('nan'):10.0f} "
              f"{ratio if ratio is not None else float('nan'):7.3f}{flag}")
    idle_tick, busy, demo, record = figures["idle.per_tick"], figures["busy.per_tick"], figures["demo.per_tick"], figures["record.per_tick"]
    print(f"  the demo's tick is {demo / idle_tick:.2f}× the idle one (goal: 1.1×): the busy two-thread target alone "
          f"{busy / idle_tick:.2f}×, its frames and actions {demo / busy:.2f}× that")
    print(f"  --record adds {(record - demo) / demo * 100:.0f} % to the demo's tick (goal: 10 %); SQLite alone keeping "
          f"the same rows (recording_floor.c) {figures['floor.recording_row'] / demo * 100:.0f} %")
    if "floor.row_tick" in figures:
        print(f"  the idle tick is {idle_tick / figures['floor.row_tick']:.2f}× the C floor's writing the same row (tick_floor.c row)")
    return worse


def write_kept(figures):
    """Benchmarks/tick_instructions.txt from the counts measured (`--update`)."""
    lines = ["# Instructions per tick of perfhud at --tick 10ms (Benchmarks/tick_cost.py; callgrind,",
             "# a 600-row run less a 200-row run, strip --strip-debug build, the smallest of the rounds).",
             "# Stages are inclusive counts (the functions: STAGES in tick_cost.py).",
             "# per_frame_received: the event receiver's instructions per frame taken in (demo).",
             "# floor.recording_row: SQLite alone keeping a tick of the demo's recording (recording_floor.c).",
             "# floor.row_tick: the C floor's tick writing the same JSON row (tick_floor.c row)."]
    lines += [f"{key} {value:.0f}" if value >= 100 else f"{key} {value:.3f}" for key, value in figures.items()]
    KEPT.write_text("\n".join(lines) + "\n")
    print(f"written: {KEPT}")


def main():
    idle = subprocess.Popen(["sleep", "100000"])
    work = tempfile.mkdtemp(prefix="perfhud-tick-cost.")
    worse = []
    if "--cpu-only" in sys.argv:
        try:
            cpu_table(work, idle.pid)
        finally:
            idle.kill()
            shutil.rmtree(work, ignore_errors=True)
        return
    if not shutil.which("valgrind"):
        sys.exit("tick_cost.py: valgrind is needed (apt-get install valgrind)")
    try:
        figures = measure(work, idle.pid)
        figures["floor.recording_row"] = recording_floor(work)
        figures["floor.row_tick"] = row_floor(work, idle.pid)
        worse = report_against_kept(figures)
        if "--update" in sys.argv:
            write_kept(figures)
        if "--cpu" in sys.argv:
            cpu_table(work, idle.pid)
    finally:
        idle.kill()
        shutil.rmtree(work, ignore_errors=True)
    if worse:
        print("worse than kept by more than 5 %: " + ", ".join(worse))
        sys.exit(1)


if __name__ == "__main__":
    main()
