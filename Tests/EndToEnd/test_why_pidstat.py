"""The "why" figures side by side with pidstat (sysstat) on the same process over the same seconds,
and against the kernel's own files read by the test around them: `perfhud attach --output json
--tick 1s` and `pidstat -h -u -t -w -d -r -v -p PID 1 N` are started together and compared by their
means over those N seconds (both read the kernel's counters once a second: a steady program gives
both the same rate; what differs is where perfhud sums over threads and pidstat's process line
reads the main thread only). test_why.py holds the figures to the kernel's files at 100 ms; this
file adds what pidstat says, a worker thread's switches, storage writes through the page cache,
a mapped file (file-backed RSS, major faults), and a target of another user read by a third."""
import json
import os
import pathlib
import re
import select
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import PERFHUD, ROOT, perfhud, json_rows_of
from test_why import Program, mean, program, wait_ns, why   # noqa: F401 (fixtures)

CPUS = os.cpu_count()
MIB = 1 << 20


def pidstat_lines(text):
    """pidstat -h output as one dict per line (columns by the header's names), in order."""
    lines, columns = [], None
    for line in text.splitlines():
        if line.startswith("#"):
            columns = line[1:].split()
        elif columns and line.strip() and not line.startswith("Linux"):
            fields = line.split(None, len(columns) - 1)
            if len(fields) == len(columns):
                lines.append(dict(zip(columns, fields)))
    return lines


class SideBySide:
    """perfhud's rows and pidstat's intervals over the same seconds."""

    def __init__(self, pid, seconds, *options, user=None):
        prefix = ["setpriv", "--reuid", str(user), "--regid", str(user), "--clear-groups"] if user else []
        environment = dict(os.environ, LC_ALL="C")
        pidstat = subprocess.Popen([*prefix, "pidstat", "-h", "-u", "-t", "-w", "-d", "-r", "-v", "-p", str(pid), "1", str(seconds)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
        ours = subprocess.run([*prefix, PERFHUD, "attach", str(pid), "--output", "json", "--tick", "1s", "--count", str(seconds + 1), *options],
                              capture_output=True, text=True, timeout=seconds + 60)
        out, err = pidstat.communicate(timeout=30)
        assert ours.returncode == 0, ours.stderr
        self.stderr = ours.stderr
        # The first row has no interval before it: the rates start with the second.
        self.all_rows = json_rows_of(ours.stdout)
        self.rows = self.all_rows[1:]
        lines = pidstat_lines(out)
        assert lines, (out, err)
        self.process = [line for line in lines if line["TID"] == "-"]
        self.threads = [line for line in lines if line["TID"] != "-"]
        assert len(self.process) == seconds, out

    def ours(self, key):
        values = [row[key] for row in self.rows]
        assert all(value is not None for value in values), (key, values)
        return mean(values)

    def theirs(self, column, tid=None):
        """The mean of a column of pidstat's process line, or of one thread's lines."""
        lines = self.process if tid is None else [line for line in self.threads if line["TID"] == str(tid)]
        return mean(float(line[column]) for line in lines)

    def theirs_summed_over_threads(self, column):
        """A column summed over the thread lines of each interval, averaged over the intervals."""
        per_interval = {}
        for line in self.threads:
            per_interval[line["Time"]] = per_interval.get(line["Time"], 0) + float(line[column])
        return mean(per_interval.values())


def readable_within(stream, seconds):
    """The next line of a helper's output, or None when none comes within `seconds`."""
    ready, _, _ = select.select([stream], [], [], seconds)
    return stream.readline().strip() if ready else None


def close(a, b, relative, absolute=0):
    return abs(a - b) <= max(relative * max(abs(a), abs(b)), absolute)


def thread_named(pid, name):
    return next(int(tid) for tid in os.listdir(f"/proc/{pid}/task") if open(f"/proc/{pid}/task/{tid}/comm").read().strip() == name)


def test_the_busiest_thread_is_the_one_pidstat_finds_busiest(why, program):
    target = program(why, "hot-thread", "hot-worker", "6")
    hot = thread_named(target.pid, "hot-worker")
    ran = lambda: int(open(f"/proc/{target.pid}/task/{hot}/schedstat").read().split()[0])
    before, started = ran(), time.monotonic()
    both = SideBySide(target.pid, 8)
    kernel = (ran() - before) / (time.monotonic() - started) / 1e7
    lists = [row["busiest_threads"] for row in both.rows]
    assert all(threads and threads[0]["tid"] == hot and threads[0]["name"] == "hot-worker" for threads in lists), lists
    # pidstat's busiest thread of every second is the same one, and the idle ones used nothing.
    for when in {line["Time"] for line in both.threads}:
        lines = [line for line in both.threads if line["Time"] == when]
        busiest = max(lines, key=lambda line: float(line["%CPU"]))
        assert busiest["TID"] == str(hot) and busiest["Command"] == "|__hot-worker", lines
        assert all(float(line["%CPU"]) <= 1 for line in lines if line is not busiest), lines
    ours = mean(threads[0]["cpu_percent"] for threads in lists)
    theirs = both.theirs("%CPU", tid=hot)
    # pidstat counts 10 ms ticks (1 % of a second); on this shared machine the thread gets what
    # the other programs leave it, the same for both over the same seconds.
    assert close(ours, theirs, 0.1, absolute=4), (ours, theirs)
    assert close(ours, kernel, 0.1, absolute=4), (ours, kernel)
    # A spinning thread is always runnable: on a CPU, or waiting for one (pidstat's %wait of it).
    assert 90 <= ours + both.theirs("%wait", tid=hot) <= 110, (ours, both.theirs("%wait", tid=hot))


def test_waiting_for_a_cpu_is_pidstats_thread_waits_summed(why, program):
    target = program(why, "spin", str(2 * CPUS + 1))
    time.sleep(0.3)
    before, started = wait_ns(target.pid), time.monotonic()
    both = SideBySide(target.pid, 8)
    kernel = (wait_ns(target.pid) - before) / (time.monotonic() - started) / 1e7
    ours = both.ours("cpu_wait_percent")
    theirs = both.theirs_summed_over_threads("%wait")
    assert ours > 100, ours     # 5 runnable threads on 2 CPUs
    assert close(ours, theirs, 0.1), (ours, theirs)
    assert close(ours, kernel, 0.1), (ours, kernel)
    # pidstat's process line reads the PID's own schedstat: the main thread, which sleeps.
    assert both.theirs("%wait") < 5, both.process


def test_a_worker_threads_short_sleeps_are_counted(why, program):
    target = program(why, "sleeps-thread", "1000")
    switches = lambda: sum(int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", open(f"/proc/{target.pid}/task/{tid}/status").read(), re.M)[1])
                           for tid in os.listdir(f"/proc/{target.pid}/task"))
    before, started = switches(), time.monotonic()
    both = SideBySide(target.pid, 6)
    kernel = (switches() - before) / (time.monotonic() - started)
    ours = both.ours("context_switches_voluntary_per_second")
    # Up to 1,000: on a loaded machine a wake-up late past the next deadline skips that sleep
    # (917/s at a load average of 14, 650/s with a build beside it), the same for every counter.
    assert 400 <= ours <= 1010, ours
    assert close(ours, both.theirs_summed_over_threads("cswch/s"), 0.05), (ours, both.threads)
    assert close(ours, kernel, 0.05), (ours, kernel)
    # pidstat's process line is the main thread's status: it sleeps in pause(), switching never.
    assert both.theirs("cswch/s") < 5, both.process


def test_fresh_pages_are_the_minor_faults_pidstat_counts(why, program):
    target = program(why, "touch", "64")
    faults = lambda: int(open(f"/proc/{target.pid}/stat").read().rsplit(")", 1)[1].split()[7])
    time.sleep(0.3)
    before, started = faults(), time.monotonic()
    both = SideBySide(target.pid, 6)
    kernel = (faults() - before) / (time.monotonic() - started)
    ours = both.ours("page_faults_minor_per_second")
    assert 0.85 * 16384 <= ours <= 1.1 * 16384, ours   # 64 MiB/s of 4 KiB pages
    assert close(ours, both.theirs("minflt/s"), 0.05), (ours, both.process)
    assert close(ours, kernel, 0.05), (ours, kernel)
    assert both.ours("page_faults_major_per_second") == 0 and both.theirs("majflt/s") == 0


def direct_io_allowed(directory):
    try:
        fd = os.open(directory / f"probe-{os.getpid()}", os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
    except OSError:
        return False
    os.close(fd)
    (directory / f"probe-{os.getpid()}").unlink()
    return True


@pytest.mark.parametrize("how", ["odirect", "fsync"])
def test_storage_writes_are_what_pidstat_counts(why, program, how):
    """16 MiB a second, written with O_DIRECT (straight to the device) or through the page cache
    and fsync'd: write_bytes counts a cached page when it is dirtied, so both read 16 MiB/s."""
    directory = pathlib.Path(os.environ.get("PERFHUD_DIRECT_DIR", ROOT / ".build"))
    if how == "odirect" and not direct_io_allowed(directory):
        pytest.skip(f"{directory} does not allow O_DIRECT (set PERFHUD_DIRECT_DIR); the fsync case still runs")
    path = directory / f"why-{how}-{os.getpid()}"
    try:
        target = program(why, how, str(path), "16")
        written = lambda: int(re.search(r"^write_bytes: (\d+)", open(f"/proc/{target.pid}/io").read(), re.M)[1])
        time.sleep(0.3)
        before, started = written(), time.monotonic()
        both = SideBySide(target.pid, 6)
        kernel = (written() - before) / (time.monotonic() - started)
        ours = both.ours("io_write_bytes_per_second")
        assert 0.85 * 16 * MIB <= ours <= 1.1 * 16 * MIB, ours
        assert close(ours, both.theirs("kB_wr/s") * 1024, 0.05), (ours, both.process)
        assert close(ours, kernel, 0.05), (ours, kernel)
        # Every byte asked of write() was a byte for storage.
        assert close(both.ours("io_write_chars_per_second"), ours, 0.05)
    finally:
        path.unlink(missing_ok=True)


def test_open_descriptors_are_pidstats_fd_count(why, program):
    target = program(why, "open", "300", "/etc/hostname")
    both = SideBySide(target.pid, 2)
    listed = len(os.listdir(f"/proc/{target.pid}/fd"))
    assert listed >= 303
    assert [row["fds_open"] for row in both.rows] == [int(line["fd-nr"]) for line in both.process] == [listed] * 2


def test_mapping_a_file_grows_file_backed_rss_by_its_size(why, program, tmp_path):
    """64 MiB of a file in the page cache, mapped, read page by page 2 s in: RssFile grows by
    64 MiB (exactly: every page of the mapping is resident), anonymous memory does not."""
    target = program(why, "map", str(tmp_path / "mapped"), "64", "warm", "2")
    both = SideBySide(target.pid, 6)
    assert readable_within(target.process.stdout, 5) == "touched"
    first, last = both.rows[0], both.rows[-1]
    # status's counters are summed from per-CPU batches: a few dozen pages either way at most.
    assert abs(last["rss_file_bytes"] - first["rss_file_bytes"] - 64 * MIB) <= 512 << 10, (first, last)
    assert abs(last["rss_anon_bytes"] - first["rss_anon_bytes"]) <= 512 << 10, (first, last)
    status = open(f"/proc/{target.pid}/status").read()
    assert last["rss_file_bytes"] == int(re.search(r"^RssFile:\s+(\d+) kB", status, re.M)[1]) * 1024
    # The mapping itself, as smaps has it: all of it resident.
    smaps = open(f"/proc/{target.pid}/smaps").read()
    mapping = smaps[smaps.index(str(tmp_path / "mapped")):]
    assert int(re.search(r"^Rss:\s+(\d+) kB", mapping, re.M)[1]) == 64 * 1024
    # pidstat's RSS (kB, anonymous and file-backed together) grew by the same.
    grown = (int(both.process[-1]["RSS"]) - int(both.process[0]["RSS"])) * 1024
    assert abs(grown - 64 * MIB) <= 512 << 10, both.process


def test_reading_a_cold_mapped_file_is_major_faults(why, program, tmp_path):
    """16 MiB dropped from the page cache, mapped without read-ahead, read page by page: one major
    fault a page (4,096), as the kernel's majflt and pidstat count them."""
    directory = pathlib.Path(os.environ.get("PERFHUD_DIRECT_DIR", ROOT / ".build"))
    path = directory / f"why-cold-{os.getpid()}"
    try:
        target = program(why, "map", str(path), "16", "cold", "2")
        majors = lambda: int(open(f"/proc/{target.pid}/stat").read().rsplit(")", 1)[1].split()[9])
        before = majors()
        both = SideBySide(target.pid, 8)
        assert readable_within(target.process.stdout, 20) == "touched"
        kernel = majors() - before
        if kernel < 0.9 * 4096:
            pytest.skip(f"the file's pages stayed cached on {directory} ({kernel} major faults): set PERFHUD_DIRECT_DIR to a disk")
        # The rows' rates over the time each covers add up to the kernel's count.
        rows = both.all_rows
        ours = sum(row["page_faults_major_per_second"] * (row["elapsed_seconds"] - before_row["elapsed_seconds"])
                   for before_row, row in zip(rows, rows[1:]))
        assert kernel <= 4096 + 64 and abs(ours - kernel) <= 0.02 * kernel + 2, (ours, kernel)
        theirs = sum(float(line["majflt/s"]) for line in both.process)
        assert abs(theirs - kernel) <= 0.05 * kernel, (theirs, kernel)
        assert both.rows[-1]["rss_file_bytes"] - both.rows[0]["rss_file_bytes"] >= 15 * MIB
    finally:
        path.unlink(missing_ok=True)


def test_another_users_io_is_null_for_perfhud_as_for_pidstat(why, program, request):
    """The target runs as one user, perfhud (and pidstat) as another, neither root: /proc/PID/io
    and /proc/PID/fd need the right to trace the target, so those figures are null, said once; the
    files anyone may read (schedstat, status, stat) still give theirs."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run the target and perfhud as two other users")
    target_user, watcher = 60002, 60001
    # Under pytest's own temporary directory (0700, root's) neither user could reach the files.
    shared = pathlib.Path(tempfile.mkdtemp(prefix="perfhud-why-users-"))
    request.addfinalizer(lambda: shutil.rmtree(shared, ignore_errors=True))
    os.chmod(shared, 0o777)
    shutil.copy(why, shared / "why")
    os.chmod(shared / "why", 0o755)
    target = program("setpriv", "--reuid", str(target_user), "--regid", str(target_user), "--clear-groups",
                     str(shared / "why"), "fsync", str(shared / "written"), "4")
    record = shared / "other.db"
    both = SideBySide(target.pid, 4, "--record", str(record), user=watcher)
    assert all(row[key] is None for row in both.rows for key in
               ("io_read_bytes_per_second", "io_write_bytes_per_second", "io_read_chars_per_second", "io_write_chars_per_second", "fds_open"))
    assert both.stderr.count(f"may not read /proc/{target.pid}/io") == 1, both.stderr
    assert all(row["cpu_wait_percent"] is not None and row["context_switches_voluntary_per_second"] is not None
               and row["rss_anon_bytes"] is not None for row in both.rows), both.rows[-1]
    # pidstat as the same user cannot either: it prints -1.
    assert all(line["kB_wr/s"] == "-1.00" and line["fd-nr"] == "-1" for line in both.process), both.process
    # Root reads it: the target did write (4 MiB a second), the figure was there to be hidden.
    assert int(re.search(r"^write_bytes: (\d+)", open(f"/proc/{target.pid}/io").read(), re.M)[1]) >= 4 * MIB
    # The recording keeps them null; the report says so instead of drawing an empty chart.
    markdown = perfhud("report", str(record), "--format", "markdown").stdout
    assert "- **storage I/O**: not read" in markdown, markdown
    html = perfhud("report", str(record), "--format", "html").stdout
    assert "<h3>Storage I/O</h3><p class=\"note\">not read" in html
    assert "<h3>Waiting for a CPU</h3><svg" in html
