"""`memory_limit_bytes` (issue 43, item 3): a figure that is its table entry, its collector and its
docs, reaching every sink — the JSON row, the HUD (`RSS … / 512.0 MiB`), the recording, `report`
(`memory_limit_bytes_min`) and `--fail-on`, `export` (CSV, OpenMetrics), the daemon
(`perfhud_target_memory_limit_bytes`) — for a program in a control group this test makes with a
limit, on the v1 memory controller this hybrid host has (its cgroup2 has no controllers: the v2
path, `memory.max`, is read over a laid-out tree in ActivityTests). The limit is set on the group
above the program's, whose own is larger: the figure is the smallest of the group and those above.
"""
import contextlib
import csv
import io
import json
import os
import pathlib
import re
import shutil
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import PERFHUD, perfhud, wait_until, json_rows_of
import test_daemon_targets as targets
from test_why import control_group

MEMORY = "/sys/fs/cgroup/memory"
OUTER_LIMIT = 512 << 20
INNER_LIMIT = 1 << 30

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(MEMORY + "/memory.limit_in_bytes"),
                                reason="needs root and the cgroup v1 memory controller (this machine's hybrid layout)")


@contextlib.contextmanager
def group(path, limit):
    with control_group(path) as made:
        pathlib.Path(made, "memory.limit_in_bytes").write_text(str(limit))
        yield made


@pytest.fixture
def limited():
    """A program holding 32 MiB in a group (limit 1 GiB) under a group limited to 512 MiB; its PID."""
    with group(f"{MEMORY}/perfhud-test-limit-{os.getpid()}", OUTER_LIMIT) as outer, group(outer + "/inner", INNER_LIMIT) as inner:
        process = subprocess.Popen([sys.executable, "-c", "import time\nballast = bytearray(32 << 20)\n"
                                    "print('ready', flush=True)\ntime.sleep(60)"],
                                   stdout=subprocess.PIPE, text=True,
                                   preexec_fn=lambda: pathlib.Path(inner, "cgroup.procs").write_text("0"))
        try:
            assert process.stdout.readline().strip() == "ready"
            assert f":memory:/perfhud-test-limit-{os.getpid()}/inner" in open(f"/proc/{process.pid}/cgroup").read()
            yield process.pid, outer
        finally:
            process.kill()
            process.wait()


def test_every_sink_has_the_smallest_limit_above_the_program(limited, tmp_path):
    pid, outer = limited
    path = tmp_path / "limit.db"
    result = perfhud("attach", str(pid), "--output", "json", "--tick", "100ms", "--count", "25", "--record", str(path))
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    assert [row["memory_limit_bytes"] for row in rows] == [OUTER_LIMIT] * len(rows), rows[-1]

    database = sqlite3.connect(str(path))
    assert database.execute("PRAGMA user_version").fetchone()[0] == 10
    assert [value for (value,) in database.execute("SELECT memory_limit_bytes FROM samples")] == [OUTER_LIMIT] * len(rows)
    database.close()

    summary = json.loads(perfhud("report", str(path), "--format", "json").stdout)
    assert summary["memory_limit_bytes_min"] == OUTER_LIMIT
    assert perfhud("report", str(path), "--fail-on", "memory_limit_bytes_min < 1GiB").returncode == 1
    assert perfhud("report", str(path), "--fail-on", "memory_limit_bytes_min < 256MiB").returncode == 0

    table = list(csv.DictReader(io.StringIO(perfhud("export", str(path), "--format", "csv").stdout)))
    assert [int(row["memory_limit_bytes"]) for row in table] == [OUTER_LIMIT] * len(rows)
    exposition = perfhud("export", str(path), "--format", "openmetrics").stdout
    assert "# TYPE perfhud_target_memory_limit_bytes gauge" in exposition
    exported = [float(line.split()[1]) for line in exposition.splitlines() if line.startswith("perfhud_target_memory_limit_bytes{")]
    assert exported == [OUTER_LIMIT] * len(rows)
    replayed = perfhud("export", str(path), "--format", "ndjson").stdout.splitlines()
    assert [json.loads(line)["memory_limit_bytes"] for line in replayed] == [row["memory_limit_bytes"] for row in rows]


def test_a_limit_changed_while_watched_and_lifted_is_followed(limited):
    pid, outer = limited
    watcher = subprocess.Popen([PERFHUD, "attach", str(pid), "--output", "json", "--tick", "200ms", "--count", "40"],
                               stdout=subprocess.PIPE, text=True)
    time.sleep(2.5)
    pathlib.Path(outer, "memory.limit_in_bytes").write_text(str(256 << 20))
    time.sleep(2.5)
    pathlib.Path(outer, "memory.limit_in_bytes").write_text("-1")          # v1: no limit
    out, _ = watcher.communicate(timeout=60)
    seen = [row["memory_limit_bytes"] for row in json_rows_of(out)]
    assert seen[0] == OUTER_LIMIT, seen
    assert 256 << 20 in seen, seen
    assert seen[-1] == INNER_LIMIT, f"the inner group's own limit applies once the outer's is lifted: {seen}"


def test_a_program_under_no_limit_reads_null_never_zero():
    result = perfhud("attach", str(os.getpid()), "--output", "json", "--tick", "100ms", "--count", "3")
    own = open("/proc/self/cgroup").read()
    memory_group = next(line.split(":", 2)[2] for line in own.splitlines() if ":memory:" in line)
    limits = []
    directory = MEMORY + memory_group.rstrip("/")
    while directory.startswith(MEMORY):
        limits.append(int(pathlib.Path(directory, "memory.limit_in_bytes").read_text()))
        directory = os.path.dirname(directory)
    expected = min(limits) if min(limits) < 1 << 62 else None
    assert [row["memory_limit_bytes"] for row in json_rows_of(result.stdout)] == [expected] * 3


def test_the_daemon_exports_the_gauge(limited):
    pid, _ = limited
    daemon = targets.Daemon("--pid", f"limited={pid}", "--pid", f"own={os.getpid()}")
    try:
        assert wait_until(lambda: daemon.value("perfhud_target_memory_limit_bytes", '{target="limited"}') == OUTER_LIMIT, timeout=10), \
            daemon.metrics()
        assert "# TYPE perfhud_target_memory_limit_bytes gauge" in daemon.metrics()
    finally:
        daemon.stop()


@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is installed by `make test`")
def test_the_hud_shows_rss_against_the_limit(limited):
    from test_tmux import Tmux
    pid, _ = limited
    tmux = Tmux(columns=160, rows=30)
    try:
        tmux.type(f"{PERFHUD} attach {pid}")
        shown = re.compile(r"RSS [0-9.]+ MiB / 512\.0 MiB")
        assert wait_until(lambda: shown.search("\n".join(tmux.screen()[:2])), timeout=10), "\n".join(tmux.screen())
        tmux.type("q", enter=False)
    finally:
        tmux.close()
