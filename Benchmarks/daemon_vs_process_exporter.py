#!/usr/bin/env python3
"""What one `perfhud daemon` costs per target, side by side with Debian's prometheus-process-exporter
watching the same processes (issue 21, "Measured"), in one run: for 1, 10, 50 and 200 targets, each a
real process (`sleep`, one distinct command line each), started fresh for every round.

- perfhud: `perfhud daemon --pid tN=PID …` (one target per process, default 1 s tick).
- process-exporter: a config file with one group per target, matched by its command line
  (`cmdline: ['^sleep 7000N$']`): it has no PID mode; it reads every process of the host at each scrape.

Per exporter and count: CPU per scrape interval (the goal's figure: a real 15 s interval begun by one
scrape, INTERVALS of them), CPU per scrape (`curl`-like GETs of /metrics, SCRAPES of them in a row, the CPU
time of the exporter's threads before and after, from /proc/PID/task/*/schedstat, in ns, less what it
spends idle over the same time), CPU per second idle (no scrapes, IDLE seconds: perfhud samples every
tick, process-exporter reads /proc only when scraped), both together over a 15 s scrape interval, RSS
(VmRSS after the scrapes) and series (sample lines of one scrape). Medians of ROUNDS rounds; the ratios perfhud / process-exporter.

    apt-get install prometheus-process-exporter
    python3 Benchmarks/daemon_vs_process_exporter.py [--bin .build/release] [--rounds 3] [--counts 1,10,50,200]
"""
import argparse
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request


def cpu_ns(pid):
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass      # a thread that ended meanwhile
    return total


def resident_kib(pid):
    """(VmRSS, RssAnon, RssFile) in KiB, read at one moment: the whole, its anonymous part (heap,
    stacks) and its file-backed part (the executable's and libraries' pages)."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile"):
                fields[name] = int(value.split()[0])
    return tuple(fields.get(name, 0) for name in ("VmRSS", "RssAnon", "RssFile"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    with urllib.request.urlopen(url, timeout=30) as answer:
        return answer.read()


def wait_for(url, deadline=20):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            return get(url)
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing answers at {url}")


def measure(command, url, idle_seconds, scrapes, intervals, interval_seconds):
    """(cpu ns per scrape, cpu ns per idle second, rss KiB, series, cpu ns per scrape interval, anonymous
    and file-backed RSS KiB) of the exporter `command` starts. CPU per interval: INTERVALS real intervals of INTERVAL seconds, each begun by
    one scrape, as Prometheus scrapes (perfhud reads every figure at a scrape and RSS alone between
    two, so one scrape and 15 idle seconds measured apart would count its full read twice)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        body = wait_for(url)
        time.sleep(3)          # settled: first samples taken, first scrape's caches built
        before, start = cpu_ns(process.pid), time.monotonic()
        time.sleep(idle_seconds)
        idle = (cpu_ns(process.pid) - before) / (time.monotonic() - start)
        before, start = cpu_ns(process.pid), time.monotonic()
        for _ in range(scrapes):
            body = get(url)
        elapsed = time.monotonic() - start
        per_scrape = max(0.0, (cpu_ns(process.pid) - before - idle * elapsed) / scrapes)
        series = sum(1 for line in body.decode("utf-8", "replace").splitlines() if line and not line.startswith("#"))
        resident = resident_kib(process.pid)
        before = cpu_ns(process.pid)
        for _ in range(intervals):
            began = time.monotonic()
            get(url)
            time.sleep(max(0.0, interval_seconds - (time.monotonic() - began)))
        per_interval = (cpu_ns(process.pid) - before) / max(1, intervals)
        # RSS once more after the intervals (what it holds after scrapes and full reads): the larger of
        # the two readings, with its own parts.
        rss, anonymous, file_backed = max(resident, resident_kib(process.pid))
        return per_scrape, idle, rss, series, per_interval, anonymous, file_backed
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def compare(perfhud, count, rounds, idle, scrapes, intervals, interval):
    """Medians over ROUNDS of `measure`'s figures for perfhud's daemon and process-exporter watching
    COUNT fresh `sleep` processes: {"perfhud": [...], "process-exporter": [...]}."""
    exporter = "/usr/bin/prometheus-process-exporter"
    results = {"perfhud": [], "process-exporter": []}
    for _ in range(rounds):
        targets = [subprocess.Popen(["sleep", str(700000 + index)]) for index in range(count)]
        directory = tempfile.mkdtemp()
        try:
            port = free_port()
            # One target: --events is its socket; several: the directory of theirs.
            events = os.path.join(directory, "events.sock") if count == 1 else directory
            daemon = [perfhud, "daemon", "--metrics-listen", f"127.0.0.1:{port}", "--events", events]
            for index, target in enumerate(targets):
                daemon += ["--pid", f"t{index}={target.pid}"]
            results["perfhud"].append(measure(daemon, f"http://127.0.0.1:{port}/metrics", idle, scrapes, intervals, interval))
            config = os.path.join(directory, "process-exporter.yml")
            with open(config, "w") as f:
                f.write("process_names:\n")
                for index in range(count):
                    f.write(f"  - name: t{index}\n    cmdline:\n      - '^sleep {700000 + index}$'\n")
            port = free_port()
            command = [exporter, "-config.path", config, "-web.listen-address", f"127.0.0.1:{port}"]
            results["process-exporter"].append(measure(command, f"http://127.0.0.1:{port}/metrics", idle, scrapes, intervals, interval))
        finally:
            for target in targets:
                target.kill()
                target.wait()
            subprocess.run(["rm", "-rf", directory])
    return {name: [statistics.median(values) for values in zip(*runs)] for name, runs in results.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=".build/release")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--counts", default="1,10,50,200")
    parser.add_argument("--scrapes", type=int, default=50)
    parser.add_argument("--idle", type=float, default=10)
    parser.add_argument("--intervals", type=int, default=2, help="real scrape intervals measured (CPU per interval)")
    parser.add_argument("--interval", type=float, default=15, help="seconds between two scrapes (Prometheus' usual 15)")
    arguments = parser.parse_args()
    perfhud = os.path.join(arguments.bin, "perfhud")
    rows = []
    for count in [int(n) for n in arguments.counts.split(",")]:
        medians = compare(perfhud, count, arguments.rounds, arguments.idle, arguments.scrapes, arguments.intervals, arguments.interval)
        rows.append((count, medians))
        p, e = medians["perfhud"], medians["process-exporter"]
        print(f"{count:>4} targets | CPU/scrape µs: perfhud {p[0] / 1e3:8.0f}  process-exporter {e[0] / 1e3:8.0f}  ratio {ratio(p[0], e[0])}"
              f" | idle CPU ms/s: {p[1] / 1e6:6.2f} vs {e[1] / 1e6:6.2f}"
              f" | RSS KiB: {p[2]:7.0f} vs {e[2]:7.0f}  ratio {ratio(p[2], e[2])} (anon {p[5]:.0f} vs {e[5]:.0f}, file {p[6]:.0f} vs {e[6]:.0f})"
              f" | series: {p[3]:.0f} vs {e[3]:.0f}"
              f" | CPU per {arguments.interval:.0f} s scrape interval ms: {p[4] / 1e6:.1f} vs {e[4] / 1e6:.1f}  ratio {ratio(p[4], e[4])}", flush=True)
    if len(rows) > 1:
        (n0, first), (n1, last) = rows[0], rows[-1]
        for name in ("perfhud", "process-exporter"):
            print(f"{name}: RSS {(last[name][2] - first[name][2]) / (n1 - n0):.0f} KiB per extra target ({n0} → {n1})")


def ratio(a, b):
    return f"{a / b:5.2f}" if b else "  n/a"


if __name__ == "__main__":
    main()
