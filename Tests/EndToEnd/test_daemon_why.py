"""The daemon's "why" families (issue 20, point 3) for several targets, against the kernel's own
files read by the test at the same moments: real programs slow for one reason each
(helpers/why.c), promtool, a daemon that may not read a target's /proc/PID/io, and the leak
warning in the log."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import time

import pytest

from conftest import PERFHUD, ROOT, perfhud, wait_until, json_rows_of
import test_daemon_targets as targets


@pytest.fixture(scope="module")
def why(tmp_path_factory):
    out = tmp_path_factory.mktemp("why") / "why"
    subprocess.run(["cc", "-O1", "-pthread", "-o", str(out), str(ROOT / "Tests/EndToEnd/helpers/why.c")], check=True)
    os.chmod(out.parent, 0o755)
    return str(out)


@pytest.fixture
def program():
    """Helper programs, each started and ready; killed at the test's end."""
    started = []

    def start(*args, user=None):
        prefix = ["setpriv", "--reuid", str(user), "--regid", str(user), "--clear-groups"] if user is not None else []
        process = subprocess.Popen(prefix + list(args), stdout=subprocess.PIPE, text=True)
        started.append(process)
        assert process.stdout.readline().strip() == "ready"
        return process

    yield start
    for process in started:
        process.kill()
        process.wait()


class Daemon(targets.Daemon):
    """A daemon whose series are read by name and labels, whatever their order."""
    def series(self, text=None):
        """{(name, frozenset of labels): value} of the exposition."""
        found = {}
        for line in (text or self.metrics()).splitlines():
            match = re.match(r"^(\w+)\{(.*)\} (\S+)$", line)
            if match:
                labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2)))
                found[(match.group(1), labels)] = float(match.group(3))
        return found

    def value(self, name, **labels):
        return self.series().get((name, frozenset(labels.items())))


@pytest.fixture
def daemons():
    started = []

    def make(*args, **kwargs):
        started.append(Daemon(*args, **kwargs))
        return started[-1]

    yield make
    for daemon in started:
        daemon.stop()


def attach_row(pid):
    """The last JSON row of `perfhud attach`: which figures perfhud can read for `pid` here."""
    result = perfhud("attach", str(pid), "--output", "json", "--tick", "200ms", "--count", "8")
    assert result.returncode == 0, result.stderr
    return json_rows_of(result.stdout)[-1]


def direct_path():
    return pathlib.Path(os.environ.get("PERFHUD_DIRECT_DIR", ROOT / ".build")) / f"why-daemon-direct-{os.getpid()}"


FAMILIES = {
    # name: (type, the label sets each target has, without `target`)
    "perfhud_target_cpu_wait_seconds_total": ("counter", [{}]),
    "perfhud_target_context_switches_total": ("counter", [{"kind": "voluntary"}, {"kind": "involuntary"}]),
    "perfhud_target_page_faults_total": ("counter", [{"kind": "minor"}, {"kind": "major"}]),
    "perfhud_target_io_bytes_total": ("counter", [{"direction": "read"}, {"direction": "write"}]),
    "perfhud_target_open_fds": ("gauge", [{}]),
    "perfhud_target_max_fds": ("gauge", [{}]),
    "perfhud_target_memory_bytes": ("gauge", [{"kind": k} for k in ("anon", "file", "shmem", "swap")]),
    "perfhud_target_busiest_thread_cpu_ratio": ("gauge", [{}]),
    "perfhud_target_rss_trend_bytes_per_second": ("gauge", [{}]),
    "perfhud_target_leak_suspected": ("gauge", [{}]),
}


def test_two_targets_have_every_why_family_with_its_labels_and_promtool_is_clean(why, program, daemons):
    path = direct_path()
    try:
        hot = program(why, "hot-thread", "crunch", "3")
        writer = program(why, "odirect", str(path), "8")
        daemon = daemons("--pid", f"hot={hot.pid}", "--pid", f"writer={writer.pid}")
        # The busiest thread is known from the second once-a-second read on (its share of a CPU
        # depends on the load of the machine: only that it is the one spinning is certain).
        assert wait_until(lambda: daemon.value("perfhud_target_busiest_thread_info", target="hot", thread="crunch") == 1, timeout=10)
        # The leak fit has a slope once its readings span a second.
        assert wait_until(lambda: all(daemon.value("perfhud_target_rss_trend_bytes_per_second", target=t) is not None for t in ("hot", "writer")),
                          timeout=5)
        text = daemon.metrics()
        if shutil.which("promtool"):
            check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
            assert check.returncode == 0 and check.stdout.strip() == "" and check.stderr.strip() == "", check.stdout + check.stderr
        series = daemon.series(text)
        for name, (kind, label_sets) in FAMILIES.items():
            family = name[:-6] if kind == "counter" and "# TYPE " + name[:-6] + " counter" in text else name
            assert text.count(f"# TYPE {family} {kind}\n") == 1, f"one {kind} family {family}"
            for target in ("hot", "writer"):
                for labels in label_sets:
                    assert (name, frozenset({"target": target, **labels}.items())) in series, (name, target, labels)
        # The busiest thread: one info series a target, naming it.
        info = {labels: value for (name, labels), value in series.items() if name == "perfhud_target_busiest_thread_info"}
        assert frozenset({("target", "hot"), ("thread", "crunch")}) in info, info
        assert sum(1 for labels in info if ("target", "hot") in labels) == 1, info
        assert 0 < series[("perfhud_target_busiest_thread_cpu_ratio", frozenset({("target", "hot")}))] <= 1
        # Throttling and pressure: a series exactly where perfhud can read the figure here (never 0 for unknown).
        row = attach_row(hot.pid)
        throttled = [labels for (name, labels) in series if name == "perfhud_target_cpu_throttled_seconds_total"]
        assert (len(throttled) == 2) == (row["cpu_throttled_percent"] is not None), (throttled, row["cpu_throttled_percent"])
        pressure = {(dict(labels)["target"], dict(labels)["resource"], dict(labels)["kind"])
                    for (name, labels) in series if name == "perfhud_target_pressure_seconds_total"}
        for resource in ("cpu", "memory", "io"):
            for kind in ("some", "full"):
                known = row[f"pressure_{resource}_{kind}_percent"] is not None
                assert ((("hot", resource, kind) in pressure) == known), (resource, kind, known, pressure)
        # Base units: memory by kind is what /proc/PID/status says, in bytes.
        status = pathlib.Path(f"/proc/{hot.pid}/status").read_text()
        anon = int(re.search(r"^RssAnon:\s+(\d+) kB", status, re.M).group(1)) * 1024
        assert abs(daemon.value("perfhud_target_memory_bytes", target="hot", kind="anon") - anon) <= 64 * 1024
    finally:
        path.unlink(missing_ok=True)


def io_write_bytes(pid):
    return int(re.search(r"^write_bytes: (\d+)", pathlib.Path(f"/proc/{pid}/io").read_text(), re.M).group(1))


def voluntary_switches(pid):
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", pathlib.Path(f"/proc/{pid}/task/{tid}/status").read_text(), re.M).group(1))
        except (OSError, AttributeError):
            pass
    return total


def test_counters_are_the_kernels_counts_read_at_the_same_time(why, program, daemons):
    path = direct_path()
    try:
        writer = program(why, "odirect", str(path), "16")
        sleeper = program(why, "sleeps", "1000")
        daemon = daemons("--pid", f"writer={writer.pid}", "--pid", f"sleeper={sleeper.pid}")
        assert wait_until(lambda: (daemon.value("perfhud_target_io_bytes_total", target="writer", direction="write") or 0) > 0, timeout=10)
        # Storage writes: the counter is /proc/PID/io's write_bytes itself (from the process's start),
        # as of the daemon's last tick (100 ms): between the kernel's count a moment before and after.
        for _ in range(5):
            before = io_write_bytes(writer.pid)
            counted = daemon.value("perfhud_target_io_bytes_total", target="writer", direction="write")
            after = io_write_bytes(writer.pid)
            assert before - (3 << 20) <= counted <= after, (before, counted, after)
            time.sleep(0.5)
        assert after > 16 << 20

        # Context switches are read once a second: catch each read as it lands, then read the kernel.
        def at_a_read():
            last = daemon.value("perfhud_target_context_switches_total", target="sleeper", kind="voluntary")
            assert wait_until(lambda: daemon.value("perfhud_target_context_switches_total", target="sleeper", kind="voluntary") != last,
                              timeout=5, interval=0.02)
            return daemon.value("perfhud_target_context_switches_total", target="sleeper", kind="voluntary"), voluntary_switches(sleeper.pid)
        counted_first, kernel_first = at_a_read()
        time.sleep(4)
        counted_last, kernel_last = at_a_read()
        kernel = kernel_last - kernel_first
        assert kernel > 2000, "about 1,000 sleeps a second"
        assert abs((counted_last - counted_first) - kernel) <= 0.1 * kernel, (counted_last - counted_first, kernel)
    finally:
        path.unlink(missing_ok=True)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="runs the daemon as nobody beside a root process")
def test_a_target_whose_io_may_not_be_read_has_no_io_series(why, program, daemons):
    others = program(why, "spin", "1")                  # root's: nobody may not read its io or fd
    own = program(why, "spin", "1", user=65534)         # nobody's own
    daemon = daemons("--pid", f"others={others.pid}", "--pid", f"own={own.pid}", user=65534)
    assert wait_until(lambda: daemon.value("perfhud_target_open_fds", target="own") is not None, timeout=10)
    time.sleep(1.5)
    series = daemon.series()
    names = lambda target: {name for (name, labels) in series if ("target", target) in labels}
    assert "perfhud_target_io_bytes_total" in names("own") and "perfhud_target_open_fds" in names("own")
    assert "perfhud_target_io_bytes_total" not in names("others"), "unknown is no series, never 0"
    assert "perfhud_target_open_fds" not in names("others")
    # What may be read still is: memory by kind (status) and waiting (schedstat).
    assert {"perfhud_target_memory_bytes", "perfhud_target_cpu_wait_seconds_total", "perfhud_target_up"} <= names("others")
    assert daemon.value("perfhud_target_up", target="others") == 1
    code, err = daemon.stop()
    assert code == 0, err
    assert err.count(f"may not read /proc/{others.pid}/io") == 1, err
    assert f"may not read /proc/{own.pid}/io" not in err


def test_a_suspected_leak_is_warned_once_when_it_begins_and_once_when_it_ends(why, program, daemons):
    leaky = program(why, "grow", "8", "6")      # +8 MiB a second for 6 s, then flat
    flat = program(why, "open", "3", "/dev/null")
    daemon = daemons("--pid", f"leaky={leaky.pid}", "--pid", f"flat={flat.pid}", "--leak-window", "3s")
    assert wait_until(lambda: daemon.value("perfhud_target_leak_suspected", target="leaky") == 1, timeout=10)
    assert daemon.value("perfhud_target_leak_suspected", target="flat") == 0
    assert daemon.value("perfhud_target_rss_trend_bytes_per_second", target="leaky") == pytest.approx(8 << 20, rel=0.2)
    assert wait_until(lambda: daemon.value("perfhud_target_leak_suspected", target="leaky") == 0, timeout=15)
    time.sleep(1)
    code, err = daemon.stop()
    assert code == 0, err
    lines = [line for line in err.splitlines() if "keeps growing" in line]
    assert len(lines) == 2, err
    assert re.search(r"warning: leaky: memory keeps growing: RSS .*over the last 3 s \(r² [0-9.]+\): a leak is suspected", lines[0]), lines
    assert re.search(r"warning: leaky: memory no longer keeps growing: .*the leak is no longer suspected", lines[1]), lines
    assert "flat: memory" not in err
