#!/usr/bin/env python3
"""What the HUD's details line costs (issue 20: at most 10 % more per 10 ms tick when shown,
nothing when hidden): `perfhud attach PID --tick 10ms` with the HUD on a pseudo-terminal (120x40),
its details line hidden (the default: the "why" figures are not read), hidden with
PERFHUD_NO_WHY=1 (none read whatever the session: "nothing when hidden" is hidden = this), and
shown (`--details`), side by side with the sampler floor (Benchmarks/tick_floor.c). Targets: an
idle process (1 thread) and one with 64 threads (one spinning).

CPU time per tick: a 1,500-tick run less a 300-tick run (start-up excluded), medians of ROUNDS.
Instructions per tick (callgrind, when valgrind is installed): runs of 300 and 900 ticks, the
difference over 600 — the stable figure on a shared machine.

    Benchmarks/details_line_cost.py [BIN_DIR] [ROUNDS]      (defaults: .build/release 3)
    (or Benchmarks/why.sh --hud [BIN_DIR] [ROUNDS])
"""
import fcntl
import os
import pathlib
import pty
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading

HERE = pathlib.Path(__file__).resolve().parent
BIN = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".build/release")
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
MODES = {"hidden": ([], {}), "hidden, PERFHUD_NO_WHY=1": ([], {"PERFHUD_NO_WHY": "1"}), "shown": (["--details"], {})}


def on_terminal(command, env):
    """Runs `command` with a 120x40 pseudo-terminal as its standard input, output and error,
    reading (and dropping) what it draws; returns when it ends."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)

    def drain():
        while True:
            try:
                if not os.read(master, 65536):
                    return
            except OSError:
                return
    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    process.wait()
    reader.join(timeout=5)
    os.close(master)


def cpu_seconds(run):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def hud(pid, ticks, mode, prefix=()):
    options, extra = MODES[mode]
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", **extra)
    command = [*prefix, str(BIN / "perfhud"), "attach", str(pid), "--tick", "10ms", "--count", str(ticks), "--no-summary", *options]
    return lambda: on_terminal(command, env)


def per_tick_us(make):
    return (cpu_seconds(make(1500)) - cpu_seconds(make(300))) / 1200 * 1e6


def main():
    work = pathlib.Path(tempfile.mkdtemp())
    subprocess.run(["cc", "-O2", "-o", work / "tick_floor", HERE / "tick_floor.c"], check=True)
    subprocess.run(["cc", "-O1", "-pthread", "-o", work / "why", HERE.parent / "Tests/EndToEnd/helpers/why.c"], check=True)
    idle = subprocess.Popen(["sleep", "100000"])
    threads = subprocess.Popen([work / "why", "hot-thread", "idle", "63"], stdout=subprocess.DEVNULL)
    targets = (("idle process (1 thread)", idle.pid), ("64 threads (one spinning)", threads.pid))
    try:
        print(f"== CPU time per tick, attach HUD at --tick 10ms (1,500-tick run less a 300-tick run), {ROUNDS} rounds, medians")
        for name, pid in targets:
            runs = {"floor": [], **{mode: [] for mode in MODES}}
            for _ in range(ROUNDS):
                runs["floor"].append(per_tick_us(lambda n: lambda: subprocess.run([work / "tick_floor", str(pid), "10000000", str(n)],
                                                                                   stdout=subprocess.DEVNULL)))
                for mode in MODES:
                    runs[mode].append(per_tick_us(lambda n: hud(pid, n, mode)))
            median = {key: statistics.median(values) for key, values in runs.items()}
            hidden, shown = median["hidden"], median["shown"]
            print(f"{name}: floor {median['floor']:.0f} µs; HUD, details hidden {hidden:.0f} µs "
                  f"(with PERFHUD_NO_WHY=1 {median['hidden, PERFHUD_NO_WHY=1']:.0f} µs), shown {shown:.0f} µs: "
                  f"shown/hidden {shown / hidden:.3f} (+{100 * (shown / hidden - 1):.1f} %); hidden/floor {hidden / median['floor']:.2f}")
            print("   runs: " + "; ".join(f"{key} " + ", ".join(f"{x:.0f}" for x in values) for key, values in runs.items()))
        if shutil.which("valgrind"):
            print("== instructions per tick, attach HUD at --tick 10ms (callgrind, runs of 300 and 900 ticks, the difference over 600)")
            binary = work / "perfhud"
            shutil.copy(BIN / "perfhud", binary)
            subprocess.run(["strip", "--strip-debug", binary], check=True)
            for name, pid in targets:
                figures = {}
                for mode in MODES:
                    totals = []
                    for ticks in (300, 900):
                        for old in work.glob("cg.*"):
                            old.unlink()
                        prefix = ("valgrind", "--tool=callgrind", f"--callgrind-out-file={work}/cg.%p", f"--log-file={work}/valgrind.log")
                        options, extra = MODES[mode]
                        env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", **extra)
                        on_terminal([*prefix, str(binary), "attach", str(pid), "--tick", "10ms", "--count", str(ticks), "--no-summary", *options], env)
                        largest = max(work.glob("cg.*"), key=lambda path: path.stat().st_size)
                        summary = subprocess.run(["callgrind_annotate", largest], capture_output=True, text=True).stdout
                        totals.append(next(int(line.split()[0].replace(",", "")) for line in summary.splitlines() if "PROGRAM TOTALS" in line))
                    figures[mode] = (totals[1] - totals[0]) / 600
                hidden, shown = figures["hidden"], figures["shown"]
                print(f"{name}: details hidden {hidden / 1e3:.1f}k, hidden with PERFHUD_NO_WHY=1 {figures['hidden, PERFHUD_NO_WHY=1'] / 1e3:.1f}k, "
                      f"shown {shown / 1e3:.1f}k instructions a tick: +{100 * (shown / hidden - 1):.1f} %")
    finally:
        idle.kill()
        threads.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
