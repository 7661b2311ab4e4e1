#!/usr/bin/env python3
"""What a status bar pays for one answer: `perfhud status PID` beside `ps -o %cpu,rss,nlwp -p PID`
(issue 46, item 5: at most 1.2x ps's CPU).

A bar runs its command every second or few, all day, so the cost is the whole process: start-up,
the command line read, the sample and the line written. Each call's CPU (user + system, from
wait4's rusage) is taken alone, the calls of the tools interleaved so that the machine's load falls
on both alike; the medians are compared (this shared 2-core machine moves CPU times by +-15 % from
run to run). Beside them, `perfhud attach PID --count 1 --output plain` (the first row of a
session, what a bar had to run before `status` existed) and `status --format waybar --alert ...`
(a bar's real line: the fast path reads it too).

    python3 Benchmarks/status_cost.py [--bin .build/release] [--calls 200]

Exit 1 where status's median passes 1.2x ps's. Standard library only.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GOAL = 1.2


def cpu_ms(argv):
    """The CPU of one run of argv (its own and its children's), milliseconds; output discarded."""
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
        (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0)])
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {status}")
    return (usage.ru_utime + usage.ru_stime) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=".build/release", help="the directory of the perfhud binary")
    parser.add_argument("--calls", type=int, default=200, help="calls of each tool")
    args = parser.parse_args()
    perfhud = os.path.abspath(os.path.join(args.bin, "perfhud"))
    ps = "/usr/bin/ps"
    target = subprocess.Popen(["sleep", "3600"])
    try:
        pid = str(target.pid)
        tools = {
            "ps -o %cpu,rss,nlwp -p PID": [ps, "-o", "%cpu,rss,nlwp", "-p", pid],
            "perfhud status PID": [perfhud, "status", pid],
            "perfhud status PID --format waybar --alert 'cpu_percent > 80 for 20s'":
                [perfhud, "status", pid, "--format", "waybar", "--alert", "cpu_percent > 80 for 20s"],
            "perfhud attach PID --count 1 --output plain": [perfhud, "attach", pid, "--count", "1", "--output", "plain"],
        }
        times = {name: [] for name in tools}
        for name, argv in tools.items():   # warm the page cache and the state file
            cpu_ms(argv)
        for _ in range(args.calls):
            for name, argv in tools.items():
                times[name].append(cpu_ms(argv))
    finally:
        target.kill()
        target.wait()
    floor = statistics.median(times["ps -o %cpu,rss,nlwp -p PID"])
    print(f"CPU per call, median of {args.calls} (user + system, wait4), {time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs")
    print(f"| command | median ms | p90 ms | × ps |\n|---|---:|---:|---:|")
    for name, values in times.items():
        values.sort()
        median = statistics.median(values)
        print(f"| `{name}` | {median:.2f} | {values[int(len(values) * 0.9)]:.2f} | {median / floor:.2f} |")
    if shutil.which("valgrind"):
        # Instructions, the stable figure beside the CPU times: callgrind on a copy without debug
        # information (valgrind cannot read the Swift toolchain's), the whole process (the loader too).
        print("\ninstructions per call (callgrind, whole process):")
        with tempfile.TemporaryDirectory() as scratch:
            stripped = os.path.join(scratch, "perfhud")
            subprocess.run(["strip", "--strip-debug", "-o", stripped, perfhud], check=True)
            target = subprocess.Popen(["sleep", "60"])
            try:
                for name, argv in (("ps", [ps, "-o", "%cpu,rss,nlwp", "-p", str(target.pid)]),
                                   ("perfhud status", [stripped, "status", str(target.pid)])):
                    out = os.path.join(scratch, "callgrind.out")
                    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                                          capture_output=True, text=True)
                    found = re.search(r"refs:\s+([0-9,]+)", done.stderr)
                    print(f"  {name}: {found[1] if found else '?'}")
            finally:
                target.kill()
                target.wait()
    ratio = statistics.median(times["perfhud status PID"]) / floor
    print(f"status / ps: {ratio:.2f} (goal ≤ {GOAL})")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
