"""What the daemon reads when (issue 34): a target's RSS every tick, its every figure at each scrape
and every --full-every, so that a host pays for the figures someone looks at.

Each test runs the built daemon against real processes; the figures are compared with the
kernel's own (/proc) at the moment of the scrape, and what is read between scrapes with strace.
"""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import PERFHUD, perfhud
from test_daemon import daemons, free_port  # noqa: F401  (daemons: the fixture)

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def counter_sum(text, name):
    return sum(float(value) for value in re.findall(r"^" + re.escape(name) + r"\{[^}]*\} (\S+)$", text, re.M))


@pytest.fixture
def busy():
    process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield process
    process.kill()
    process.wait()


def test_a_scrape_sees_the_cpu_time_of_its_moment_between_full_reads(daemons, busy):
    # No full read is due for a minute: only the scrapes make the daemon read the CPU time.
    daemon = daemons("--pid", f"busy={busy.pid}", "--full-every", "60s")
    time.sleep(1.5)
    seen = []
    for _ in range(3):
        text = daemon.metrics()
        kernel = cpu_seconds(busy.pid)
        seen.append((counter_sum(text, "perfhud_target_cpu_seconds_total"), kernel))
        time.sleep(1.2)
    for ours, kernel in seen:
        # The kernel's figure is read just after the answer, in 10 ms ticks.
        assert kernel - 0.15 <= ours <= kernel + 0.02, seen
    # It went on counting from one scrape to the next, as the busy loop did.
    assert seen[-1][0] - seen[0][0] >= 0.5 * (seen[-1][1] - seen[0][1]) > 0, seen


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_between_full_reads_a_tick_reads_rss_alone(daemons, busy, tmp_path):
    """Over 3 s of 250 ms ticks after the first, with no scrape and no full read due, the target's
    statm is read every tick and none of its other files (stat, io, status, limits, smaps_rollup)."""
    daemon = daemons("--pid", f"busy={busy.pid}", "--full-every", "60s")
    time.sleep(1)
    log = tmp_path / "trace"
    subprocess.run(["timeout", "-s", "INT", "3", "strace", "-f", "-p", str(daemon.process.pid), "-y", "-e", "trace=pread64",
                    "-o", str(log)], capture_output=True, timeout=30)
    reads = {}
    for name in re.findall(rf"</proc/{busy.pid}/([a-z_]+)>", log.read_text()):
        reads[name] = reads.get(name, 0) + 1
    assert reads.get("statm", 0) >= 8, reads
    assert set(reads) == {"statm"}, reads
    # And a scrape reads them all.
    subprocess.Popen(["timeout", "-s", "INT", "2", "strace", "-f", "-p", str(daemon.process.pid), "-y", "-e", "trace=pread64",
                      "-o", str(log)])
    time.sleep(1)
    daemon.metrics()
    time.sleep(1.5)
    scraped = set(re.findall(rf"</proc/{busy.pid}/([a-z_]+)>", log.read_text()))
    assert {"stat", "statm", "io", "status", "limits"} <= scraped, scraped


def test_rss_read_every_second_between_scrapes_feeds_the_leak_trend(daemons):
    """A target growing by 4 MiB every 0.2 s: with a 3 s leak window and no full read due, the leak
    is found at the scrape from the RSS read every tick (two full reads 8 s apart fit no line in
    a 3 s window)."""
    grower = subprocess.Popen([sys.executable, "-c", "import time\nheld = []\nwhile True:\n"
                               "    held.append(bytearray(4 << 20)); time.sleep(0.2)"])
    try:
        daemon = daemons("--pid", f"grower={grower.pid}", "--full-every", "60s", "--leak-window", "3s",
                         "--leak-threshold", "1MiB")
        time.sleep(8)
        text = daemon.metrics()
        assert re.search(r'^perfhud_target_leak_suspected\{target="grower"\} 1(\.0)?$', text, re.M), \
            [line for line in text.splitlines() if "leak" in line or "rss" in line]
        trend = float(re.search(r'^perfhud_target_rss_trend_bytes_per_second\{target="grower"\} (\S+)$', text, re.M).group(1))
        assert 10 << 20 <= trend <= 30 << 20, trend   # 20 MiB/s
        rss = float(re.search(r'^perfhud_target_resident_memory_bytes\{target="grower"\} (\S+)$', text, re.M).group(1))
        kernel = int(open(f"/proc/{grower.pid}/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        assert abs(rss - kernel) <= 8 << 20, (rss, kernel)
    finally:
        grower.kill()
        grower.wait()


def test_full_every_of_nothing_is_refused():
    result = perfhud("daemon", "--pid", "1", "--full-every", "0s")
    assert result.returncode == 64 and "--full-every" in result.stderr, result.stderr
