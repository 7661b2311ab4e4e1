#!/usr/bin/env python3
"""perfhud's costs side by side with the yardsticks and its peers, in one run, as ratios.

  1. Cost per sample of perfhud's sampler against two pread()s (the physical limit) and
     libproc2's procps_pids_select for the same fields. Goal: ≤ 1.5× the limit, ≥ 5× cheaper
     than libproc2.
  2. CPU per sample of the whole `perfhud attach` (HUD drawing on a pseudo-terminal) against
     top -b, pidstat and psrecord, each at the shortest interval it allows. Goal: 5× cheaper
     than the cheapest of them.
  3. RSS of `perfhud attach` with its history full, and its growth over a run; bytes written to
     the terminal per second at steady state.

  4. Event ingest on one core: lines per CPU-second of the receiver, with parsing and
     aggregation, for 1-line and 32-line datagrams, against a minimal C recvmmsg loop that only
     counts lines (the limit) and collectd's statsd plugin fed the same lines over UDP, each
     draining a full queue (Benchmarks/ingest_cost.py --cpu-only).
  5. Client cost: nanoseconds per PerfHUDClient action() call in the calling thread.
  6. perfhud daemon against Debian's prometheus-process-exporter watching the same process: CPU
     per scrape, CPU per second between scrapes, RSS; /metrics render time with 200 action labels.

  7. With --against DIR (another build's directory, e.g. the previous commit's): instructions,
     counted by callgrind on stripped copies (stable on a noisy machine), per sample of the sampler,
     per report of the whole session loop (attach and run), and per event line ingested, for this
     build and that one side by side, as ratios. For changes that claim not to cost anything.

  8. The OpenGL frame hook's cost: uncapped glxgears (vblank_mode=0, Mesa's software renderer,
     under a private Xvfb) with and without LD_PRELOAD=libperfhud-gl.so, PERFHUD_SOCKET pointing
     at a live perfhud's event socket (so every frame is really sent), runs alternating; medians of
     glxgears' own FPS. Goal: the hook adds <= 5 % to the frame time. (--frames-only: just this.)

Usage: Benchmarks/compare.py [--quick] [--events-only] [--daemon-only] [--frames-only] [--against DIR]
       (PERFHUD_BIN selects the build)
"""
import fcntl
import json
import os
import pathlib
import pty
import select
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(os.environ.get("PERFHUD_BIN", ROOT / ".build" / "release"))
PERFHUD = str(BIN / "perfhud")
QUICK = "--quick" in sys.argv
EVENTS_ONLY = "--events-only" in sys.argv
DAEMON_ONLY = "--daemon-only" in sys.argv
FRAMES_ONLY = "--frames-only" in sys.argv
AGAINST = sys.argv[sys.argv.index("--against") + 1] if "--against" in sys.argv else None
RUNS = 3 if QUICK else 5
SECONDS = 5 if QUICK else 15


def build(directory, name, *libraries):
    out = os.path.join(directory, name)
    subprocess.run(["cc", "-O2", "-o", out, str(ROOT / f"Benchmarks/{name}.c"), *libraries], check=True)
    return out


def target_process():
    """A process with some life in it: a shell busy now and then."""
    return subprocess.Popen(["sh", "-c", "while true; do i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; sleep 0.05; done"])


def sampler_costs(limit, pid):
    iterations = 50_000 if QUICK else 200_000
    rows = {"two preads (limit)": [], "perfhud sampler": [], "libproc2 procps_pids_select": []}
    for _ in range(RUNS):
        rows["two preads (limit)"].append(float(subprocess.check_output([limit, "pread", str(pid), str(iterations)])))
        out = subprocess.check_output([PERFHUD, "benchmark-sampler", str(pid), "--iterations", str(iterations)], text=True)
        rows["perfhud sampler"].append(float(out.split()[1]))
        rows["libproc2 procps_pids_select"].append(
            float(subprocess.check_output([limit, "libproc2", str(pid), str(iterations // 5)])))
    return {name: statistics.median(values) for name, values in rows.items()}


class PtyReader:
    """Runs a command on a pseudo-terminal of 40x120 and counts what it writes."""

    def __init__(self, argv):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                                        env=dict(os.environ, TERM="xterm-256color"))
        os.close(slave)
        self.master = master
        self.bytes = 0
        self.marks = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        while True:
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    return
                if not data:
                    return
                self.bytes += len(data)

    def mark(self):
        self.marks.append((time.monotonic(), self.bytes))


def run_for_cpu(argv, on_pty=False, stop_after=None, stop_signal=signal.SIGINT):
    """Runs argv to its end (or stops it after `stop_after` seconds); returns (CPU seconds from
    wait4's rusage, microsecond resolution, all threads; its output; bytes per second written)."""
    if on_pty:
        reader = PtyReader(argv)
        process = reader.process
    else:
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                   start_new_session=True)
    started = time.monotonic()
    if stop_after is not None:
        time.sleep(stop_after)
        os.killpg(process.pid, stop_signal)
    output = "" if on_pty else process.stdout.read()
    _, _, usage = os.wait4(process.pid, 0)
    elapsed = time.monotonic() - started
    process.returncode = 0
    rate = reader.bytes / elapsed if on_pty else None
    return usage.ru_utime + usage.ru_stime, output, rate


def marginal(label, short, long):
    """CPU per sample from two runs of different lengths: start-up cost cancels out.
    `short` and `long` are (cpu, samples, rate) triples."""
    (cpu1, n1, _), (cpu2, n2, rate) = short, long
    return label, (cpu2 - cpu1) / (n2 - n1), n2 - n1, rate


def peer_costs(pid, floor):
    """Marginal CPU per sample of each tool at the shortest interval it allows, and of all of
    them at perfhud's default interval (100 ms), with the C floor (timerfd + two preads) beside."""
    scale = 0.5 if QUICK else 1
    short, long = 2 * scale, 12 * scale

    def perfhud_at(tick, seconds_per):
        runs = []
        for seconds in (short, long):
            count = max(2, int(seconds / seconds_per))
            cpu, _, rate = run_for_cpu([PERFHUD, "attach", str(pid), "--tick", tick, "--count", str(count)], on_pty=True)
            runs.append((cpu, count, rate))
        return marginal(f"perfhud attach, HUD, --tick {tick}", *runs)

    def floor_at(label, nanoseconds, seconds_per):
        runs = []
        for seconds in (short, long):
            count = max(2, int(seconds / seconds_per))
            cpu, _, _ = run_for_cpu([floor, str(pid), str(nanoseconds), str(count)])
            runs.append((cpu, count, None))
        return marginal(f"C floor: timerfd + 2 preads, {label}", *runs)

    def top_at(delay):
        runs = []
        for seconds in (short, long):
            iterations = max(2, int(seconds / max(delay, 0.02)))
            cpu, output, _ = run_for_cpu(["top", "-b", "-d", str(delay), "-n", str(iterations), "-p", str(pid)])
            runs.append((cpu, output.count("top - "), None))
        return marginal(f"top -b -d {delay} -p PID", *runs)

    def psrecord_at(interval):
        runs = []
        for seconds in (short, long):
            with tempfile.NamedTemporaryFile(suffix=".log") as log:
                argv = ["psrecord", str(pid), "--log", log.name] + (["--interval", str(interval)] if interval else [])
                cpu, _, _ = run_for_cpu(argv, stop_after=seconds)
                samples = max(0, len(open(log.name).read().splitlines()) - 1)
            runs.append((cpu, samples, None))
        return marginal(f"psrecord PID" + (f" --interval {interval}" if interval else ""), *runs)

    def pidstat_at():
        runs = []
        for count in (2, int(10 * scale) + 2):
            cpu, _, _ = run_for_cpu(["pidstat", "-h", "-u", "-r", "-p", str(pid), "1", str(count)])
            runs.append((cpu, count, None))
        return marginal("pidstat -p PID 1", *runs)

    have_psrecord, have_pidstat = shutil.which("psrecord"), shutil.which("pidstat")
    tables = {
        "shortest interval each allows": [perfhud_at("1ms", 0.001), floor_at("1 ms", 1_000_000, 0.001), top_at(0)]
        + ([psrecord_at(None)] if have_psrecord else []) + ([pidstat_at()] if have_pidstat else []),
        "every 100 ms (perfhud's default tick)": [perfhud_at("100ms", 0.1), floor_at("100 ms", 100_000_000, 0.1),
                                                  top_at(0.1)] + ([psrecord_at(0.1)] if have_psrecord else []),
        # At 1 s intervals ten samples cost less than the noise of one start-up: not measured.
    }
    return tables


def cpu_ns(pid):
    """CPU time of every thread of `pid`, nanoseconds (schedstat: not tick-rounded)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(open(f"/proc/{pid}/task/{task}/schedstat").read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def wait_for_path(path, timeout=5):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)


def client_cost():
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "client.sock")
        target = subprocess.Popen(["sleep", "3600"])
        receiver = subprocess.Popen([PERFHUD, "attach", str(target.pid), "--events", path, "--output", "json", "--tick", "1s"],
                                    stdout=subprocess.PIPE, text=True)
        wait_for_path(path)
        runs = []
        for _ in range(RUNS):
            out = subprocess.check_output([PERFHUD, "benchmark-client", "--events", path, "--iterations", "500000"], text=True)
            runs.append(out.split())
        noop = subprocess.check_output([PERFHUD, "benchmark-client", "--iterations", "500000"], text=True).split()
        receiver.terminate()
        receiver.communicate(timeout=30)
        target.kill()
    return (statistics.median(float(r[1]) for r in runs), sum(int(r[5]) for r in runs), float(noop[1]))


def pss_kib(pid):
    for line in open(f"/proc/{pid}/smaps_rollup"):
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def memory_growth(pid):
    """perfhud attach with a 10 s history at 10 ms: full after 10 s; RSS from then on."""
    reader = PtyReader([PERFHUD, "attach", str(pid), "--tick", "10ms", "--history", "10s"])
    time.sleep(11)
    readings = []
    span = 20 if QUICK else 60
    for _ in range(span // 5 + 1):
        readings.append(rss_kib(reader.process.pid))
        time.sleep(5)
    os.killpg(reader.process.pid, signal.SIGTERM)
    reader.process.wait()
    default = PtyReader([PERFHUD, "attach", str(pid)])
    time.sleep(2)
    default_rss = rss_kib(default.process.pid)
    os.killpg(default.process.pid, signal.SIGTERM)
    default.process.wait()
    return readings, span, default_rss


def main():
    if not os.access(PERFHUD, os.X_OK):
        sys.exit(f"build first: {PERFHUD} is missing (make build)")
    if AGAINST:
        instruction_section(AGAINST)
        return
    if EVENTS_ONLY:
        events_sections()
        return
    if DAEMON_ONLY:
        daemon_section()
        return
    if FRAMES_ONLY:
        frames_section()
        return
    target = target_process()
    try:
        with tempfile.TemporaryDirectory() as directory:
            limit = build(directory, "sampler_limit", "-lproc2")
            floor = build(directory, "tick_floor")
            print(f"# perfhud benchmarks, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, medians of {RUNS} runs\n")
            costs = sampler_costs(limit, target.pid)
            ours = costs["perfhud sampler"]
            print("## 1. cost per sample (ns, median)")
            for name, value in costs.items():
                print(f"  {name:32s} {value:10.0f} ns   perfhud / this = {ours / value:5.2f}x")
            print(f"  goal: <= 1.5x the limit -> {ours / costs['two preads (limit)']:.2f}x; "
                  f">= 5x cheaper than libproc2 -> {costs['libproc2 procps_pids_select'] / ours:.1f}x cheaper\n")

            print("## 2. CPU per sample of the whole tool (marginal: a long run minus a short run, so start-up cancels)")
            for title, rows in peer_costs(target.pid, floor).items():
                peers = [cost for name, cost, _, _ in rows if not name.startswith(("perfhud", "C floor"))]
                ours = next(cost for name, cost, _, _ in rows if name.startswith("perfhud"))
                print(f"  {title}:")
                for name, cost, samples, rate in rows:
                    extra = f"   {rate:6.0f} B/s to the terminal" if rate is not None else ""
                    print(f"    {name:38s} {cost * 1e6:9.1f} us/sample ({samples:6d} samples){extra}")
                if peers:
                    print(f"    cheapest peer / perfhud = {min(peers) / ours:.1f}x")
            print()

            readings, span, default_rss = memory_growth(target.pid)
            print("## 3. memory of perfhud attach")
            print(f"  --tick 10ms --history 10s, history full: RSS every 5 s over {span} s (KiB): {readings}")
            print(f"  growth over the run: {readings[-1] - readings[0]} KiB")
            print(f"  default (--tick 100ms --history 10m, ring buffers allocated up front): {default_rss} KiB")
    finally:
        target.kill()
    events_sections()
    daemon_section()
    frames_section()


def scrape(port, path="/metrics"):
    import urllib.request
    started = time.perf_counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
        response.read()
    return time.perf_counter() - started


def daemon_section():
    if not shutil.which("prometheus-process-exporter"):
        print("\n## 6. skipped: prometheus-process-exporter is not installed (make benchmark installs it)")
        return
    seconds = 10 if QUICK else 30
    scrapes = 100 if QUICK else 300
    target = subprocess.Popen(["sleep", "3600"])
    with tempfile.TemporaryDirectory() as directory:
        events = os.path.join(directory, "events.sock")
        ours = subprocess.Popen([PERFHUD, "daemon", "--pid", str(target.pid), "--metrics-listen", "127.0.0.1:19469",
                                 "--events", events, "--accept-from", "same-user", "--tick", "1s", "--log-interval", "1h"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        theirs = subprocess.Popen(["prometheus-process-exporter", "-procnames", "sleep", "-web.listen-address", "127.0.0.1:19256"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2)
        rows = []
        for name, process, port in (("perfhud daemon (--tick 1s)", ours, 19469), ("prometheus-process-exporter", theirs, 19256)):
            scrape(port)
            idle_before = cpu_ns(process.pid)
            time.sleep(seconds)
            idle = (cpu_ns(process.pid) - idle_before) / 1e9 / seconds
            before = cpu_ns(process.pid)
            for _ in range(scrapes):
                scrape(port)
            per_scrape = (cpu_ns(process.pid) - before) / 1e9 / scrapes
            rows.append((name, idle, per_scrape, rss_kib(process.pid), pss_kib(process.pid)))
        # /metrics with 200 action labels (and __other__): render and serve time, median of 200.
        sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        for index in range(250):
            sender.sendto(b"perfhud.action:1|c|#action:Feature.Action.label%03d" % index, events)
        time.sleep(1.5)
        times = sorted(scrape(19469) for _ in range(200))
        body = __import__("urllib.request").request.urlopen("http://127.0.0.1:19469/metrics", timeout=5).read().decode()
        labels = body.count("perfhud_actions_total{")
        labelled = (rss_kib(ours.pid), pss_kib(ours.pid))
        ours.terminate(); theirs.terminate(); ours.wait(); theirs.wait()
    target.kill()
    print(f"\n## 6. daemon against prometheus-process-exporter (same process; idle {seconds} s, then {scrapes} scrapes back to back)")
    for (name, idle, per_scrape, rss, pss), binary in zip(rows, (PERFHUD, shutil.which("prometheus-process-exporter"))):
        print(f"  {name:30s} {idle * 100:6.3f} % CPU between scrapes   {per_scrape * 1e6:8.0f} us CPU per scrape   "
              f"RSS {rss} KiB   PSS {pss} KiB   binary {os.path.getsize(binary) / 1e6:.1f} MB")
    print(f"  perfhud daemon with {labels} action series: RSS {labelled[0]} KiB   PSS {labelled[1]} KiB")
    (_, idle_ours, scrape_ours, rss_ours, pss_ours), (_, idle_theirs, scrape_theirs, rss_theirs, pss_theirs) = rows
    print(f"  ratios (exporter / perfhud): CPU per scrape {scrape_theirs / scrape_ours:.1f}x, RSS {rss_theirs / rss_ours:.2f}x, "
          f"PSS {pss_theirs / pss_ours:.2f}x")
    for interval in (15, 5, 1):
        ours_per_second = idle_ours + scrape_ours / interval
        theirs_per_second = idle_theirs + scrape_theirs / interval
        print(f"  CPU per second when scraped every {interval:2d} s: perfhud {ours_per_second * 100:.4f} %, "
              f"exporter {theirs_per_second * 100:.4f} % ({theirs_per_second / ours_per_second:.1f}x)")
    print(f"  /metrics with {labels} action series: median {statistics.median(times) * 1e3:.2f} ms, "
          f"p99 {times[int(len(times) * 0.99) - 1] * 1e3:.2f} ms per request (client-side, loopback)")


def events_sections():
    # Benchmarks/ingest_cost.py: lines per receiver CPU-second with a full queue, medians of
    # rounds, beside the C limit and collectd (it runs in a network namespace of its own as root).
    print("\n## 4. event ingest on one core", flush=True)
    rounds = ["--rounds", "3"] if QUICK else []
    subprocess.run([sys.executable, str(ROOT / "Benchmarks/ingest_cost.py"), "--cpu-only", "--bin", str(BIN), *rounds])
    cost, dropped, noop = client_cost()
    print("\n## 5. PerfHUDClient action() in the calling thread (bursts of 1000, median of runs)")
    print(f"  with perfhud receiving: {cost:6.1f} ns per call ({dropped} dropped); without PERFHUD_SOCKET: {noop:4.1f} ns")


def callgrind_instructions(argv, during=None):
    """Instructions (Ir) the command executes under callgrind; `during(process)` runs while it does
    and ends it. Debug info is stripped first: valgrind 3.19 cannot read Swift 6's."""
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "callgrind.out")
        process = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if during:
            during(process)
        process.wait(timeout=600)
        for line in open(out):
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError("no callgrind totals for " + " ".join(argv))


def instruction_section(baseline_dir):
    builds = {}
    with tempfile.TemporaryDirectory() as directory:
        for name, source in (("this build", BIN), ("baseline", pathlib.Path(baseline_dir))):
            stripped = os.path.join(directory, name.replace(" ", "-"))
            subprocess.run(["strip", "--strip-debug", "-o", stripped, str(source / "perfhud")], check=True)
            builds[name] = stripped
        target = subprocess.Popen(["sleep", "3600"])
        rows = []
        try:
            for name, binary in builds.items():
                few, many = 2_000, 10_000
                sampler = (callgrind_instructions([binary, "benchmark-sampler", str(target.pid), "--iterations", str(many)])
                           - callgrind_instructions([binary, "benchmark-sampler", str(target.pid), "--iterations", str(few)])) / (many - few)
                reports = {}
                for command, tail in (("attach", [str(target.pid)]), ("run", ["--", "sleep", "60"])):
                    counts = [callgrind_instructions([binary, command, *(tail if command == "attach" else []), "--output", "json",
                                                      "--tick", "1ms", "--count", str(n), *(tail if command == "run" else [])])
                              for n in (500, 2500)]
                    reports[command] = (counts[1] - counts[0]) / 2000
                ingest = ingest_instructions(binary, target.pid, directory)
                rows.append((name, sampler, reports["attach"], reports["run"], ingest))
        finally:
            target.kill()
    print("## 7. instructions (callgrind, stripped binaries), this build against " + baseline_dir)
    print(f"  {'':12s} {'per sample (sampler)':>22s} {'per report (attach)':>20s} {'per report (run)':>18s} {'per event line':>16s}")
    for name, *values in rows:
        print(f"  {name:12s} " + " ".join(f"{value:>{width}.0f}" for value, width in zip(values, (22, 20, 18, 16))))
    ours, theirs = rows[0][1:], rows[1][1:]
    print(f"  {'this/baseline':12s} " + " ".join(f"{a / b:>{width}.3f}x" for a, b, width in zip(ours, theirs, (21, 19, 17, 15))))


def ingest_instructions(binary, pid, directory):
    """Instructions per event line: perfhud attach receiving 32-line datagrams (blocking sends, so
    none is lost), minus the same run receiving none; a 10 s tick keeps sampling out of it."""
    path = os.path.join(directory, "ingest.sock")
    datagram = b"\n".join(b"perfhud.action:1|c|#action:Feature.Action.slider(.changed)" if i % 2 else b"perfhud.frame:16.7|ms"
                          for i in range(32))
    def send(count):
        def during(process):
            wait_for_path(path, timeout=60)
            sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            for _ in range(count):
                sender.sendto(datagram, path)
            time.sleep(2)
            process.send_signal(signal.SIGTERM)
        return during
    argv = [binary, "attach", str(pid), "--events", path, "--output", "json", "--tick", "10s"]
    counts = [callgrind_instructions(argv, send(n)) for n in (0, 2000)]
    return (counts[1] - counts[0]) / (2000 * 32)


def glxgears_fps(env, prints):
    """Runs glxgears until it has printed `prints` "N frames in 5.0 seconds = F FPS" lines (the
    first covers its start-up too, as in both variants alike); their FPS values."""
    gears = subprocess.Popen(["glxgears"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    values = []
    for line in gears.stdout:
        if " frames in " in line:
            values.append(float(line.split()[-2]))
            if len(values) == prints:
                break
    gears.kill()  # SIGKILL: the preloaded hook gets no exit; the frames already sent are counted
    gears.wait()
    return values


def frames_section():
    hook = BIN / "libperfhud-gl.so"
    missing = [name for name in ("glxgears", "Xvfb") if not shutil.which(name)]
    if missing or not hook.exists():
        print(f"\n## 8. OpenGL frame hook: skipped ({', '.join(missing) or hook} missing: make deps-apt hooks)")
        return
    prints = 1 if QUICK else 2
    number = next(n for n in range(90, 200)
                  if not os.path.exists(f"/tmp/.X{n}-lock") and not os.path.exists(f"/tmp/.X11-unix/X{n}"))
    xvfb = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "640x480x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    target = subprocess.Popen(["sleep", "100000"])
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "events.sock")
        report = open(os.path.join(directory, "report.json"), "w+")
        receiver = subprocess.Popen([PERFHUD, "attach", str(target.pid), "--events", path, "--output", "json",
                                     "--tick", "1s"], stdout=report, stderr=subprocess.DEVNULL)
        try:
            wait_for_path(path)
            wait_for_path(f"/tmp/.X11-unix/X{number}")
            base = dict(os.environ, DISPLAY=f":{number}", LIBGL_ALWAYS_SOFTWARE="1", vblank_mode="0")
            base.pop("LD_PRELOAD", None)
            variants = {"without the hook": base,
                        "with LD_PRELOAD=libperfhud-gl.so": dict(base, LD_PRELOAD=str(hook), PERFHUD_SOCKET=path)}
            fps = {name: [] for name in variants}
            for _ in range(RUNS):
                for name, env in variants.items():
                    fps[name] += glxgears_fps(env, prints)
            time.sleep(1.5)
        finally:
            receiver.send_signal(signal.SIGINT)
            receiver.wait(timeout=10)
            target.kill()
            xvfb.terminate()
            xvfb.wait(timeout=10)
        report.seek(0)
        lines = report.read().splitlines()
        # The last row (the summary line, {"summary": …}, comes after the rows).
        received = next((json.loads(line)["frames_total"] for line in reversed(lines) if not line.startswith('{"summary"')), 0)
    print(f"\n## 8. OpenGL frame hook: uncapped glxgears (LIBGL_ALWAYS_SOFTWARE=1 vblank_mode=0, Xvfb), "
          f"{RUNS} runs of {5 * prints} s each way, alternating")
    medians = {name: statistics.median(values) for name, values in fps.items()}
    for name, values in fps.items():
        print(f"  {name:34s} median {medians[name]:9.1f} FPS   ({', '.join(f'{v:.0f}' for v in values)})")
    without, with_hook = medians["without the hook"], medians["with LD_PRELOAD=libperfhud-gl.so"]
    print(f"  frames perfhud received from the hooked runs: {received}")
    print(f"  FPS with / without = {with_hook / without:.3f}; frame time {(without / with_hook - 1) * 100:+.1f} % "
          f"(goal: <= 5 %)")


if __name__ == "__main__":
    main()
