"""--alert at every sink of one run: a program that is busy for a known time (it says when, by its
own clock), and the alert's span in the JSON rows, the end summary, the summary line and `report`
(decided again over the recording), and the HUD's colours in a real tmux pane."""
import json
import os
import signal
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import perfhud, json_rows_of, summary_of, wait_until, free_port

# Idle, busy for BUSY seconds, idle again; it writes how long it was busy, by its own clock, to the file it is given.
BUSY = 2.0
PROGRAM = f"""
import time, sys
time.sleep(1.0)
start = time.monotonic()
while time.monotonic() - start < {BUSY}:
    pass
open(sys.argv[1], "w").write(str(time.monotonic() - start))
time.sleep(1.5)
"""

ALERT = "cpu_percent > 50 for 500ms"


def test_an_alert_is_said_alike_by_the_rows_the_summary_and_report(tmp_path):
    record = tmp_path / "run.db"
    done = perfhud("run", "--output", "json", "--tick", "100ms", "--record", str(record), "--alert", ALERT,
                   "--alert", "rss_bytes > 100GiB", "--", sys.executable, "-c", PROGRAM, str(tmp_path / "busy"), timeout=60)
    assert done.returncode == 0, done.stderr
    rows = json_rows_of(done.stdout)
    busy = float((tmp_path / "busy").read_text())
    holding = [row for row in rows if ALERT in row["alerts"]]
    assert all(row["alerts"] in ([], [ALERT]) for row in rows), "the alert that never holds is never said"
    # It holds from 0.5 s into the busy stretch to its end: one run of rows, each over 50 % CPU.
    assert holding and all(row["cpu_percent"] > 50 for row in holding)
    first, last = rows.index(holding[0]), rows.index(holding[-1])
    assert last - first + 1 == len(holding), "one span"
    assert all(rows[i]["cpu_percent"] > 50 for i in range(first - 5, first)), "it held only after 500 ms over the line"
    summary = summary_of(done.stdout)
    spans = summary["alerts"]
    assert len(spans) == 1 and spans[0]["alert"] == ALERT
    # The span is when the figure was over the line: the busy stretch, give or take a tick or two.
    assert abs(spans[0]["seconds"] - busy) <= 0.35, (spans, busy)
    assert spans[0]["to_end"] is False
    # report decides it again over the recorded rows: the same span, to the millisecond.
    report = perfhud("report", str(record), "--format", "json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["alerts"] == spans
    markdown = perfhud("report", str(record)).stdout
    said = f"alert cpu\\_percent \\> 50 for 500ms held {spans[0]['seconds']:.1f} s, from {spans[0]['from_seconds']:.1f} s to {spans[0]['to_seconds']:.1f} s into the run"
    assert "## Alerts" in markdown and said in markdown, markdown


def test_an_alert_holding_at_the_end_ends_with_the_run(tmp_path):
    record = tmp_path / "run.db"
    done = perfhud("run", "--output", "json", "--record", str(record), "--alert", "threads >= 1", "--",
                   sys.executable, "-c", "import time; time.sleep(1.2)")
    assert done.returncode == 0, done.stderr
    spans = summary_of(done.stdout)["alerts"]
    assert len(spans) == 1 and spans[0]["to_end"] is True and spans[0]["from_seconds"] <= 0.2
    assert json.loads(perfhud("report", str(record), "--format", "json").stdout)["alerts"] == spans


@pytest.mark.parametrize("expression, message", [
    ("cpu_percnt > 5", 'no figure "cpu_percnt" in a row: did you mean "cpu_percent"?'),
    ("cpu_percent > 5 for ever", "'ever' after 'for' is not a duration"),
    ("cpu_percent > baseline", "not the baseline"),
    ("command == 3", "command is not a number"),
    ("cpu_percent >> 5", "is not a number"),
])
def test_an_alert_that_does_not_read_is_refused_in_one_line(expression, message):
    done = perfhud("attach", "1", "--count", "1", "--alert", expression)
    assert done.returncode == 64
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert done.stderr.startswith(f"perfhud: cannot read --alert ")


@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is installed by `make test`")
def test_the_hud_draws_an_alert_in_the_alert_colour_and_names_it(tmp_path):
    from test_tmux import Tmux
    tmux = Tmux(columns=160, rows=30)
    try:
        busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
        idle = subprocess.Popen(["sleep", "60"])
        try:
            from conftest import PERFHUD
            tmux.type(f"{PERFHUD} attach {busy.pid} --alert 'cpu_percent > 50 for 1s' --graph-rows 0")
            tmux.wait(lambda screen: "⚠ cpu_percent > 50 for 1s" in screen[0], "the alert named on the status line")
            line = tmux.run("capture-pane", "-t", "t", "-p", "-e").split("\n")[0]
            # The CPU figure bold red (the alert colour), and the alert's words bold red.
            # tmux writes the attributes back its own way (`ESC[0;1;7m ESC[31m`): bold and red, in any order.
            def painted(text):
                found = re.search(r"((?:\x1b\[[0-9;]*m)+)" + text, line)
                codes = found and re.findall(r"\d+", found.group(1).split("\x1b[0")[-1])
                return bool(codes) and "1" in codes and "31" in codes
            assert painted(r"[0-9.]+%"), repr(line)             # the CPU figure
            assert painted("⚠ cpu_percent > 50 for 1s"), repr(line)
            tmux.key("q")
            tmux.wait(lambda screen: any(re.search(r"perfhud: alert cpu_percent > 50 for 1s held [0-9.]+ s, from [0-9.]+ s to the end of the run", l) for l in screen), "the summary's alert line")
            # Another process, under the line: its CPU is green (the alert's colour while it does not hold).
            tmux.type(f"clear; {PERFHUD} attach {idle.pid} --alert 'cpu_percent > 50' --graph-rows 0")
            tmux.wait(lambda screen: "PID" in screen[0] and re.search(r"CPU [0-9.]+%", screen[0]), "the idle target's line")
            time.sleep(0.5)
            line = tmux.run("capture-pane", "-t", "t", "-p", "-e").split("\n")[0]
            found = re.search(r"CPU ((?:\x1b\[[0-9;]*m)+)[0-9.]+%", line)
            assert found and "32" in re.findall(r"\d+", found.group(1)) and "31" not in re.findall(r"\d+", found.group(1)), repr(line)
            assert "⚠" not in line
            tmux.key("q")
        finally:
            busy.kill()
            idle.kill()
    finally:
        tmux.close()


def test_the_bell_rings_once_as_an_alert_begins_to_hold():
    from conftest import Terminal
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        terminal = Terminal(["attach", str(busy.pid), "--alert", "cpu_percent > 50 for 300ms", "--alert-bell", "--duration", "3s"])
        terminal.wait_for(lambda t: "⚠ cpu_percent > 50 for 300ms" in t.text(), what="the alert")
        terminal.finish()
        assert terminal.raw.count(b"\x07") == 1, "one bell as it began to hold, none after"
    finally:
        busy.kill()
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        terminal = Terminal(["attach", str(busy.pid), "--alert", "cpu_percent > 50 for 300ms", "--duration", "2s"])
        terminal.finish()
        assert b"\x07" not in terminal.raw, "no bell without --alert-bell"
    finally:
        busy.kill()


def test_the_daemon_exports_each_alert_and_says_when_it_begins_and_ends():
    from test_daemon import Daemon
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    idle = subprocess.Popen(["sleep", "60"])
    daemon = Daemon("--pid", f"busy={busy.pid}", "--pid", f"idle={idle.pid}", "--alert", "cpu_percent > 50 for 1s")
    try:
        def alert(target):
            found = re.search(r'^perfhud_target_alert\{target="%s",alert="cpu_percent > 50 for 1s"\} (\S+)$' % target, daemon.metrics(), re.M)
            return float(found[1]) if found else None
        assert wait_until(lambda: alert("idle") == 0 and alert("busy") == 0, timeout=10), daemon.metrics()
        assert wait_until(lambda: alert("busy") == 1, timeout=10)
        assert alert("idle") == 0
        os.kill(busy.pid, signal.SIGSTOP)   # off the line: it no longer holds
        assert wait_until(lambda: alert("busy") == 0, timeout=10)
        status, log = daemon.stop()
        assert status == 0
        began = [line for line in log.splitlines() if "alert cpu_percent > 50 for 1s holds" in line]
        ended = [line for line in log.splitlines() if "alert cpu_percent > 50 for 1s no longer holds, after" in line]
        assert len(began) == 1 and "busy" in began[0] and "cpu_percent = " in began[0], log
        assert len(ended) == 1 and "busy" in ended[0], log
    finally:
        if daemon.process.poll() is None:
            daemon.stop()
        busy.kill()
        idle.kill()


def test_the_daemons_config_file_carries_alerts(tmp_path):
    from test_daemon import Daemon
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    config = tmp_path / "targets.conf"
    # As systemd's $PERFHUD_OPTIONS cannot carry an alert's spaces, the file can, unquoted or quoted.
    config.write_text(f"--pid web={busy.pid}\n--alert cpu_percent > 50\n--alert 'threads >= 100'   # never\n")
    daemon = Daemon("--config", str(config))
    try:
        def alert(text):
            found = re.search(r'^perfhud_target_alert\{target="web",alert="%s"\} (\S+)$' % re.escape(text), daemon.metrics(), re.M)
            return float(found[1]) if found else None
        assert wait_until(lambda: alert("cpu_percent > 50") == 1, timeout=10), daemon.metrics()
        assert alert("threads >= 100") == 0
    finally:
        daemon.stop()
        busy.kill()
    config.write_text(f"--pid web={busy.pid}\n--alert cpu_percnt > 50\n")
    done = perfhud("daemon", "--config", str(config), "--metrics-listen", f"127.0.0.1:{free_port()}")
    assert done.returncode == 78 and f"{config}:2: cannot read --alert" in done.stderr, done.stderr
