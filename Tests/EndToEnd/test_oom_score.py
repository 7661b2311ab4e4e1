"""`oom_score` (issue 30, item 3): one entry of the table of figures and its collector reach every
sink — the JSON row, the recording, `report` (`oom_score_max`) and `--fail-on`, `export` (CSV,
OpenMetrics), the daemon (`perfhud_target_oom_score`), the details line — each equal to what the
kernel's `/proc/PID/oom_score` said, read by the program itself."""
import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from conftest import PERFHUD, ROOT, perfhud, wait_until, json_rows_of
import test_daemon_targets as targets

# Raises its own oom_score_adj to 500 (allowed to anyone: only lowering it needs a privilege),
# says its oom_score before and after sleeping, on stdout (perfhud run passes it to stderr).
RAISES_ITS_SCORE = """
import sys, time
with open("/proc/self/oom_score_adj", "w") as f:
    f.write("500")
def say():
    with open("/proc/self/oom_score") as f:
        print("oom_score", f.read().strip(), flush=True)
say()
time.sleep(2.5)
say()
"""


def said(stderr):
    return [int(line.split()[1]) for line in stderr.splitlines() if line.startswith("oom_score ")]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = tmp_path_factory.mktemp("oom") / "oom.db"
    result = perfhud("run", "--output", "json", "--tick", "100ms", "--record", str(path), "--",
                     sys.executable, "-c", RAISES_ITS_SCORE)
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    scores = said(result.stderr)
    assert len(scores) == 2, result.stderr
    return path, rows, scores


def test_the_rows_have_the_score_the_kernel_gave(recorded):
    _, rows, scores = recorded
    assert all("oom_score" in row for row in rows)
    alive = [row for row in rows if row["alive"]]
    # Read once a second: the rows of the last second before the end hold the score read then.
    known = [row["oom_score"] for row in alive if row["oom_score"] is not None]
    assert known, rows
    assert all(isinstance(score, int) and 0 <= score <= 2000 for score in known), known
    assert known[-1] in scores, (known, scores)
    assert max(known) == max(scores) and max(scores) >= 500, (known, scores)
    # Null once the process is gone (unreadable is never 0).
    assert all(row["oom_score"] is None for row in rows if not row["alive"]), rows[-1]


def test_the_recording_report_fail_on_and_export_have_it(recorded):
    path, rows, scores = recorded
    database = sqlite3.connect(str(path))
    assert database.execute("PRAGMA user_version").fetchone()[0] == 10
    recorded_scores = [value for (value,) in database.execute("SELECT oom_score FROM samples") if value is not None]
    database.close()
    live = [row["oom_score"] for row in rows if row["oom_score"] is not None]
    assert recorded_scores == live

    result = perfhud("report", str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["oom_score_max"] == max(live) == max(scores)

    assert perfhud("report", str(path), "--fail-on", "oom_score_max > 400").returncode == 1
    assert perfhud("report", str(path), "--fail-on", "oom_score_max > 2000").returncode == 0

    result = perfhud("export", str(path), "--format", "csv")
    assert result.returncode == 0, result.stderr
    table = list(csv.DictReader(io.StringIO(result.stdout)))
    assert "oom_score" in table[0]
    assert [int(row["oom_score"]) for row in table if row["oom_score"] != ""] == live

    result = perfhud("export", str(path), "--format", "openmetrics")
    assert result.returncode == 0, result.stderr
    assert "# TYPE perfhud_target_oom_score gauge" in result.stdout
    exported = [float(line.split()[1]) for line in result.stdout.splitlines() if line.startswith("perfhud_target_oom_score{")]
    assert exported and max(exported) == max(live)

    # The NDJSON export gives the live rows back, the score with them.
    result = perfhud("export", str(path), "--format", "ndjson")
    assert [json.loads(line).get("oom_score") for line in result.stdout.splitlines()] == [row["oom_score"] for row in rows]


def test_an_older_recording_reads_it_as_null():
    fixture = ROOT / "Tests/Fixtures/recordings/format4-why.db"
    result = perfhud("report", str(fixture), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout).get("oom_score_max") is None
    result = perfhud("export", str(fixture), "--format", "csv")
    assert all(row["oom_score"] == "" for row in csv.DictReader(io.StringIO(result.stdout)))


@pytest.fixture
def raised():
    """A program whose oom_score_adj is 500, sleeping; its PID."""
    process = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                                "open('/proc/self/oom_score_adj', 'w').write('500')\n"
                                "print('ready', flush=True)\ntime.sleep(60)"], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready"
    yield process.pid
    process.kill()
    process.wait()


def kernel_score(pid):
    with open(f"/proc/{pid}/oom_score") as f:
        return int(f.read())


def test_the_daemon_exports_the_gauge(raised):
    # Two targets: the host daemon's form, whose --events is a directory (test_daemon_targets).
    daemon = targets.Daemon("--pid", f"raised={raised}", "--pid", f"own={os.getpid()}")
    try:
        expected = kernel_score(raised)
        assert expected >= 500
        assert wait_until(lambda: daemon.value("perfhud_target_oom_score", '{target="raised"}') == kernel_score(raised), timeout=10), \
            daemon.metrics()
        assert "# TYPE perfhud_target_oom_score gauge" in daemon.metrics()
        assert wait_until(lambda: daemon.value("perfhud_target_oom_score", '{target="own"}') == kernel_score(os.getpid()), timeout=10)
    finally:
        daemon.stop()


@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is installed by `make test`")
def test_the_details_line_says_it(raised):
    from test_tmux import Tmux
    tmux = Tmux(columns=200, rows=30)
    try:
        tmux.type(f"{PERFHUD} attach {raised} --details")
        expected = f"oom {kernel_score(raised)}"
        assert wait_until(lambda: expected in "\n".join(tmux.screen()[:2]), timeout=10), "\n".join(tmux.screen())
        tmux.type("q", enter=False)
    finally:
        tmux.close()
