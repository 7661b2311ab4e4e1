#!/usr/bin/env python3
"""What a line of event ingest costs perfhud's receiver, beside the C recvmmsg limit and collectd's
statsd plugin, and the kept instruction counts it must not exceed (issue 22, part 4).

Instructions (the guard; callgrind, stable on a noisy machine): `perfhud attach` on a
strip --strip-debug copy of the build receiving N1 and then N2 datagrams from
Benchmarks/ingest_sender.c, (count of the N2 run - count of the N1 run) / lines in between; the
count of its receiving thread (EventReceiver.receiveLoop, inclusive), so neither start-up nor the
main thread's ticks are in it. Unix: blocking sends, nothing lost, every
batch full (the receiver is the slower under valgrind). UDP: paced sends; the lines perfhud counted
must be the lines sent. Beside them the limit (recvmmsg + count newlines) and collectd 5's statsd
plugin, counted the same way but for every thread of the process: user-space instructions only
(the kernel's are not in callgrind's).

CPU (--cpu, --cpu-only): lines per CPU-second of the receiver with a full queue. Each round a fresh
receiver pinned to CPU 0 and the sender on the same CPU at a real-time priority (chrt -f, as root):
CYCLES times the sender queues FILL datagrams without waiting, while the receiver cannot run, then
sleeps 10 ms, while the receiver drains them; the receiver's CPU (schedstat, every thread) over the
round against the lines it counted. So every wake-up finds a full queue, for every receiver alike,
and neither the sender's speed nor the machine's other load (it only delays the drain) is in the
figure; kernel work done while sending (UDP's loopback delivery, drops) is the sender's. Median of ROUNDS rounds, receivers interleaved. As root, in a private network
namespace (unshare --net) with net.unix.max_dgram_qlen 512, what systemd sets on boot
(the kernel's default of 10 caps a Unix socket's queue at ~11 datagrams); the machine's own setting
is left alone.

  Benchmarks/ingest_cost.py [--bin DIR] [--update] [--cpu | --cpu-only] [--rounds N]
    --update    writes the counts measured to Benchmarks/ingest_instructions.txt
    --rounds    CPU rounds per receiver (default 5)
Exit status 1 when a count is more than 5 % above the kept one.
"""
import json
import os
import pathlib
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
KEPT = ROOT / "Benchmarks" / "ingest_instructions.txt"
BIN = pathlib.Path(sys.argv[sys.argv.index("--bin") + 1]) if "--bin" in sys.argv else ROOT / ".build" / "release"
ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
TOLERANCE = 0.05
QUEUE_LENGTH = 512
UNIX_PORT, UDP_PORT, COLLECTD_PORT = None, 18226, 18227
PIN_RECEIVER, PIN_SENDER = ["taskset", "-c", "0"], ["taskset", "-c", "1"]
FILLER = ["chrt", "-f", "10", "taskset", "-c", "0"] if os.geteuid() == 0 else ["taskset", "-c", "0"]

COLLECTD_CONF = """Hostname "bench"
FQDNLookup false
Interval 1
BaseDir "{dir}"
PIDFile "{dir}/collectd.pid"
PluginDir "/usr/lib/collectd"
TypesDB "/usr/share/collectd/types.db"
LoadPlugin statsd
LoadPlugin csv
<Plugin statsd>
  Host "127.0.0.1"
  Port "{port}"
  DeleteCounters false
</Plugin>
<Plugin csv>
  DataDir "{dir}/csv"
  StoreRates false
</Plugin>
"""


def have_collectd():
    return shutil.which("collectd") is not None and os.path.exists("/usr/lib/collectd/statsd.so")


def build(directory, name):
    out = os.path.join(directory, name)
    subprocess.run(["cc", "-O2", "-o", out, str(ROOT / f"Benchmarks/{name}.c")], check=True)
    return out


def wait_for_path(path, timeout=30):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)


def cpu_ns(pid):
    """CPU time of every thread of `pid`, nanoseconds (schedstat: not tick-rounded)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(open(f"/proc/{pid}/task/{task}/schedstat").read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def collectd_lines(directory):
    """Lines collectd's statsd plugin counted: the last value of each counter it wrote out."""
    processed = 0
    csv_dir = os.path.join(directory, "csv", "bench", "statsd")
    for name in os.listdir(csv_dir) if os.path.isdir(csv_dir) else []:
        if name.startswith("derive-"):
            rows = open(os.path.join(csv_dir, name)).read().strip().splitlines()
            processed += int(float(rows[-1].split(",")[1]))
    return processed


class Receiver:
    """One receiver under test: how to start it, where to send, how many lines it counted."""

    def __init__(self, kind, transport, directory, prefix=(), duration=None):
        self.kind, self.transport, self.directory = kind, transport, directory
        self.path = os.path.join(directory, f"{kind}-{transport}.sock")
        for stale in (self.path,):
            if os.path.exists(stale):
                os.unlink(stale)
        self.rows = os.path.join(directory, "rows.json")
        port = {"limit": UDP_PORT, "perfhud": UDP_PORT, "collectd": COLLECTD_PORT}[kind]
        self.destination = self.path if transport.startswith("unix") else str(port)
        if kind == "limit":
            argv = [LIMIT, "udp", str(port)] if transport == "udp" else [LIMIT, self.path] + (["passcred"] if transport == "unix+passcred" else [])
            self.process = subprocess.Popen([*prefix, *argv], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.process.stdout.readline()
        elif kind == "perfhud":
            # --duration: perfhud ends the session itself and writes its last row with every line
            # it took in (the event socket is drained first).
            argv = [PERFHUD, "attach", str(TARGET.pid), "--events", self.path, "--output", "json", "--tick", "1s",
                    "--duration", duration]
            if transport == "udp":
                argv += ["--statsd-udp", f"127.0.0.1:{port}"]
            self.out = open(self.rows, "w")
            self.process = subprocess.Popen([*prefix, *argv], stdout=self.out, stderr=subprocess.DEVNULL)
            wait_for_path(self.path, timeout=120)
            time.sleep(0.3)
        else:
            shutil.rmtree(os.path.join(directory, "csv"), ignore_errors=True)
            conf = os.path.join(directory, "collectd.conf")
            open(conf, "w").write(COLLECTD_CONF.format(dir=directory, port=port))
            self.process = subprocess.Popen([*prefix, "collectd", "-f", "-C", conf], stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL)
            time.sleep(1 if not prefix or prefix[0] != "valgrind" else 6)

    def finish(self, flush=2.5):
        """Ends the receiver; the lines it counted."""
        if self.kind == "limit":
            self.process.send_signal(signal.SIGTERM)
            out, _ = self.process.communicate(timeout=120)
            return int(out.split()[-1])
        if self.kind == "perfhud":
            self.process.wait(timeout=300)
            self.out.close()
            last = [line for line in open(self.rows) if line.startswith("{") and not line.startswith('{"summary"')][-1]
            return int(json.loads(last)["events_received"])
        time.sleep(flush)   # its 1 s interval writes the counters out
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=120)
        return collectd_lines(self.directory)


def send(transport, destination, lines, *extra, pin=True, prefix=()):
    plain = ["plain"] if transport == "collectd" else []
    kind = "udp" if transport in ("udp", "collectd") else "unix"
    out = subprocess.run([*prefix, *(PIN_SENDER if pin else []), SENDER, kind, destination, str(lines), "600", *plain, *extra],
                         capture_output=True, text=True, check=True).stdout
    return int(out.split()[-1])


# ---------------------------------------------------------------- instructions (callgrind)

def receiver_instructions(path):
    """The inclusive count of perfhud's receiving thread (EventReceiver.receiveLoop): what taking
    the datagrams in costs, without the ticks of the main thread (whose snapshot of the frame
    window costs more the more frames a run left in it) or start-up."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                          capture_output=True, text=True, check=True).stdout
    counts = [int(match.group(1).replace(",", "")) for match in
              re.finditer(r"^\s*([\d,]+) \([ \d.]+%\)\s+\S*13EventReceiverC11receiveLoop", text, re.MULTILINE)]
    if not counts:
        raise RuntimeError("no EventReceiver.receiveLoop in " + path)
    return max(counts)


def callgrind_total(path):
    for line in open(path):
        if line.startswith("summary:") or line.startswith("totals:"):
            return int(line.split()[1])
    raise RuntimeError("no callgrind totals in " + path)


# (receiver, transport, lines per datagram) -> (datagrams of the short run, of the long one, pace)
CALLGRIND_RUNS = {
    ("limit", "unix", 1): (5_000, 30_000, None),
    ("limit", "unix", 32): (300, 1_300, None),
    ("collectd", "udp", 1): (4_000, 20_000, 2_000),
    ("collectd", "udp", 32): (200, 1_000, 200),
    ("perfhud", "unix", 1): (5_000, 30_000, None),
    ("perfhud", "unix", 32): (300, 1_300, None),
    ("perfhud", "udp", 1): (5_000, 30_000, 20_000),
    ("perfhud", "udp", 32): (300, 1_300, 2_000),
}


def instructions_per_line(work, kind, transport, lines):
    short, long, pace = CALLGRIND_RUNS[(kind, transport, lines)]
    counts = []
    for datagrams in (short, long):
        out = os.path.join(work, "callgrind.out")
        prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        # Both runs last as long (the same ticks, the same idle wake-ups); only the lines differ.
        receiver = Receiver(kind, transport, work, prefix=prefix, duration="25s")
        pacing = [f"rate:{pace}"] if pace else []
        sent = send("collectd" if kind == "collectd" else transport, receiver.destination, lines,
                    f"count:{datagrams}", *pacing, pin=False)
        counted = receiver.finish(flush=6)
        if counted != sent:
            raise RuntimeError(f"{kind} {transport} {lines}-line: {sent} lines sent, {counted} counted under callgrind")
        counts.append((receiver_instructions(out) if kind == "perfhud" else callgrind_total(out), counted))
    (short_total, short_lines), (long_total, long_lines) = counts
    return (long_total - short_total) / (long_lines - short_lines)


def read_kept():
    kept = {}
    if KEPT.exists():
        for line in KEPT.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                key, value = line.split()[:2]
                kept[key] = float(value)
    return kept


def instruction_table(work):
    perfhud = os.path.join(work, "perfhud")
    shutil.copy(BIN / "perfhud", perfhud)
    subprocess.run(["strip", "--strip-debug", perfhud], check=True)
    global PERFHUD
    full, PERFHUD = PERFHUD, perfhud
    figures, peers, worse = {}, {}, []
    kept = read_kept()
    print(f"== instructions per line received (callgrind, user space; perfhud's receiving thread, the others' whole "
          f"process; a long run less a short one; "
          f"Unix queue {queue_length()})", flush=True)
    print(f"  {'figure':22} {'now':>8} {'kept':>8} {'ratio':>7}   {'limit (Unix)':>12} {'collectd (UDP)':>14}", flush=True)
    try:
        for (kind, transport, lines) in CALLGRIND_RUNS:
            if kind == "collectd" and not have_collectd():
                continue
            value = instructions_per_line(work, kind, transport, lines)
            if kind != "perfhud":
                peers[(kind, transport, lines)] = value
                continue
            key = f"{transport}.{lines}line.per_line"
            figures[key] = value
            before = kept.get(key)
            ratio = value / before if before else float("nan")
            flag = "  WORSE by more than 5 %" if before and ratio > 1 + TOLERANCE else ""
            if flag:
                worse.append(key)
            limit = peers.get(("limit", "unix", lines))
            collectd = peers.get(("collectd", "udp", lines))
            print(f"  {key:22} {value:8.0f} {before if before else float('nan'):8.0f} {ratio:7.3f}   "
                  f"{limit if limit else float('nan'):12.0f} {collectd if collectd else float('nan'):14.0f}{flag}", flush=True)
    finally:
        PERFHUD = full
    if "--update" in sys.argv:
        lines = ["# Instructions per event line received by perfhud attach (Benchmarks/ingest_cost.py; callgrind,",
                 "# strip --strip-debug build, the receiving thread, a long run less a short one, Unix queue 512).",
                 "# unix: the event socket, blocking sends; udp: --statsd-udp, paced sends."]
        lines += [f"{key} {value:.1f}" for key, value in figures.items()]
        KEPT.write_text("\n".join(lines) + "\n")
        print(f"written: {KEPT}")
    return worse


# ---------------------------------------------------------------- CPU (full queue)

CYCLES = 100
# Datagrams put in the queue before each drain: what the smallest receive buffer among the
# receivers (collectd's default 208 KiB) holds, so all drain the same batches.
FILL = {1: 200, 32: 40}


def cpu_round(kind, transport, lines, directory):
    receiver = Receiver(kind, transport, directory, prefix=PIN_RECEIVER, duration="4s")
    pid = receiver.process.pid
    sender_kind = "collectd" if kind == "collectd" else transport.split("+")[0]
    started = time.monotonic()
    before = cpu_ns(pid)
    # The sender on the receiver's CPU at a real-time priority: while it queues a burst the
    # receiver cannot run; when it sleeps, the receiver drains the queue whole.
    sent = send(sender_kind, receiver.destination, lines, f"burst:{FILL[lines]}", f"count:{FILL[lines] * CYCLES}",
                pin=False, prefix=FILLER)
    time.sleep(0.1)
    used = cpu_ns(pid) - before
    if kind == "perfhud" and time.monotonic() - started > 3.5:
        raise RuntimeError("a round took longer than perfhud's --duration allows")
    counted = receiver.finish()
    return counted, used, sent


RECEIVERS = [
    ("limit", "unix", "C recvmmsg + count newlines (limit), Unix"),
    ("limit", "unix+passcred", "the limit with SO_PASSCRED, Unix"),
    ("perfhud", "unix", "perfhud (parse + aggregate), Unix"),
    ("limit", "udp", "C recvmmsg + count newlines (limit), UDP"),
    ("perfhud", "udp", "perfhud (parse + aggregate), UDP"),
    ("collectd", "udp", "collectd 5 statsd plugin, UDP"),
]


def cpu_table(directory):
    receivers = [r for r in RECEIVERS if r[0] != "collectd" or have_collectd()]
    print(f"== lines per CPU-second of the receiver, full queue (receiver on CPU 0; {CYCLES} times a round "
          f"{FILL[1]} 1-line or {FILL[32]} 32-line datagrams queued by a sender on the same CPU at a real-time priority, "
          f"then drained); median of {ROUNDS} rounds; Unix queue {queue_length()}")
    results = {}
    for lines in (1, 32):
        rates = {(kind, transport): [] for kind, transport, _ in receivers}
        kept_share = {(kind, transport): [] for kind, transport, _ in receivers}
        for _ in range(ROUNDS):
            for kind, transport, _ in receivers:
                counted, used, sent = cpu_round(kind, transport, lines, directory)
                rates[(kind, transport)].append(counted / (used / 1e9))
                kept_share[(kind, transport)].append(counted / sent if sent else 0)
        medians = {key: statistics.median(values) for key, values in rates.items()}
        results[lines] = medians
        print(f"  {lines}-line datagrams:")
        for kind, transport, name in receivers:
            values = rates[(kind, transport)]
            spread = (max(values) - min(values)) / medians[(kind, transport)] * 100
            print(f"    {name:44s} {medians[(kind, transport)] / 1e6:6.3f} M lines/s   "
                  f"(rounds {', '.join(f'{v / 1e6:.3f}' for v in values)}; spread {spread:.0f} %; "
                  f"{min(kept_share[(kind, transport)]) * 100:.0f} % of the lines queued counted)")
        # Each ratio is the median of the rounds' ratios: the receivers of a round ran one after
        # the other within seconds, so a change in the machine's load over minutes cancels out.
        def ratio(ours, theirs):
            return statistics.median(a / b for a, b in zip(rates[ours], rates[theirs]))
        pairs = [("perfhud Unix / limit Unix", ("perfhud", "unix"), ("limit", "unix")),
                 ("perfhud Unix / limit with SO_PASSCRED", ("perfhud", "unix"), ("limit", "unix+passcred")),
                 ("perfhud UDP / limit UDP", ("perfhud", "udp"), ("limit", "udp")),
                 ("perfhud UDP / collectd", ("perfhud", "udp"), ("collectd", "udp")),
                 ("perfhud Unix / collectd", ("perfhud", "unix"), ("collectd", "udp"))]
        print("    ratios (median of the rounds' ratios): " + "; ".join(
            f"{name} = {ratio(ours, theirs):.2f}x" for name, ours, theirs in pairs if theirs in rates))
    print("  goals (1-line): >= 0.8x the C limit, >= 1.2x collectd")
    return results


def queue_length():
    return int(open("/proc/sys/net/unix/max_dgram_qlen").read())


def in_private_namespace():
    """Re-runs this script in a network namespace of its own with systemd's queue length, when
    root may; True when this process should go on itself."""
    if "--in-namespace" in sys.argv:
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        open("/proc/sys/net/unix/max_dgram_qlen", "w").write(str(QUEUE_LENGTH))
        return True
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        print(f"(not root: measured with this machine's net.unix.max_dgram_qlen, {queue_length()})")
        return True
    status = subprocess.run(["unshare", "--net", "--", sys.executable, *sys.argv, "--in-namespace"]).returncode
    sys.exit(status)


def main():
    global PERFHUD, SENDER, LIMIT, TARGET
    if not (BIN / "perfhud").exists():
        sys.exit(f"build first: {BIN / 'perfhud'} is missing (make build)")
    in_private_namespace()
    PERFHUD = str(BIN / "perfhud")
    work = tempfile.mkdtemp(prefix="perfhud-ingest-cost.")
    TARGET = subprocess.Popen(["sleep", "100000"])
    worse = []
    try:
        SENDER, LIMIT = build(work, "ingest_sender"), build(work, "recvmmsg_limit")
        if "--cpu-only" not in sys.argv:
            if not shutil.which("valgrind"):
                sys.exit("ingest_cost.py: valgrind is needed (apt-get install valgrind)")
            worse = instruction_table(work)
        if "--cpu" in sys.argv or "--cpu-only" in sys.argv:
            cpu_table(work)
    finally:
        TARGET.kill()
        shutil.rmtree(work, ignore_errors=True)
    if worse:
        print("worse than kept by more than 5 %: " + ", ".join(worse))
        sys.exit(1)


if __name__ == "__main__":
    main()
