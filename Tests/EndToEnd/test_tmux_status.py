"""--tmux in a real tmux (two sessions, three windows): the HUD's lines in the session's own status
lines, in every window of it and in no other session; the settings put back byte for byte after q,
SIGTERM, SIGKILL (the server's hook, or `perfhud status --tmux --restore`) and a killed server; and
`#(perfhud status PID --format tmux)` in the user's own status-right, updating."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "helpers"))
from tmux_status import TmuxStatus, snapshot_diff, wait_for  # noqa: E402

from conftest import PERFHUD  # noqa: E402

pytestmark = pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is installed by `make test`")


@pytest.fixture
def tmux():
    session = TmuxStatus(columns=140, rows=30)
    # The user's own settings, which perfhud must leave as they were: a session's own status-style
    # and a line of its own, and a global hook of the same kind perfhud adds one to.
    session.run_checked("set-option", "-t", session.target("main"), "status-style", "bg=blue")
    session.run_checked("set-option", "-t", session.target("other"), "status-format[0]", "other #S %H")
    session.run_checked("set-hook", "-g", "client-detached[0]", "display-message bye")
    yield session
    session.close()


@pytest.fixture
def busy():
    process = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    yield process
    process.kill()
    process.wait()


def perfhud_pids():
    out = subprocess.run(["pgrep", "-f", f"^{PERFHUD} attach"], capture_output=True, text=True).stdout
    return [int(pid) for pid in out.split()]


def start(tmux, busy, extra=""):
    tmux.type(f"{PERFHUD} attach {busy.pid} --tmux --alert 'cpu_percent > 50 for 1s' {extra}")
    tmux.wait_status(lambda lines: len(lines) == 5 and "PID %d" % busy.pid in lines[1] and "⚠ cpu_percent > 50" in lines[1],
                     "perfhud's lines under the user's", timeout=15)


def test_the_hud_is_in_the_status_lines_of_every_window_and_put_back_on_q(tmux, busy):
    before = tmux.options_snapshot()
    other_before = tmux.run("show-options", "-t", tmux.target("other"))
    start(tmux, busy)
    lines = tmux.status_lines()
    assert lines[0].startswith("[main]"), "line 0 stays the user's"
    assert re.search(r"CPU \d+\.\d%", lines[1]) and "memory (RSS)" in lines[2]
    # The alert's colour in the status line itself: bold red around the CPU figure.
    coloured = tmux.status_lines(escapes=True)[1]
    assert re.search(r"\x1b\[[0-9;]*(?:1;31|31;1)m[^\x1b]*\d+\.\d%|\x1b\[1m\x1b\[31m\d+\.\d%|\x1b\[31m\x1b\[1m\d+\.\d%", coloured) \
        or ("31" in re.findall(r"\x1b\[([0-9;]*)m[0-9.]+%", coloured)[0].split(";")), repr(coloured)
    # The pane is all the program's area: no HUD row in it.
    assert not any("PID %d" % busy.pid in row and "CPU" in row for row in tmux.pane_screen())
    for window in (1, 0):
        tmux.switch_window(window)
        assert tmux.wait_status(lambda lines: len(lines) == 5 and "PID %d" % busy.pid in lines[1], f"window {window}")
    # The other session is not touched.
    assert tmux.run("show-options", "-t", tmux.target("other")) == other_before
    tmux.key("q")
    assert wait_for(lambda: tmux.options_snapshot() == before, timeout=10), snapshot_diff(before, tmux.options_snapshot())
    assert tmux.status_count() == 1


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_the_settings_come_back_when_perfhud_is_killed(tmux, busy, how):
    before = tmux.options_snapshot()
    start(tmux, busy)
    pid = [p for p in perfhud_pids() if str(busy.pid) in open(f"/proc/{p}/cmdline").read()][0]
    os.kill(pid, getattr(signal, how))
    # SIGTERM: perfhud puts them back itself; SIGKILL: the server's hook, as its control client leaves.
    assert wait_for(lambda: tmux.options_snapshot() == before, timeout=10), snapshot_diff(before, tmux.options_snapshot())


@pytest.mark.parametrize("by", ["status --tmux --restore", "the next perfhud --tmux"])
def test_restore_puts_back_what_a_killed_perfhud_left_where_no_hook_ran(tmux, busy, by):
    before = tmux.options_snapshot()
    start(tmux, busy)
    # As on a server whose hook could not run: perfhud's hook removed first, then perfhud killed.
    hooks = tmux.run("show-hooks", "-g", "client-detached")
    index = re.search(r"client-detached\[(\d+)\] if-shell", hooks)[1]
    tmux.run_checked("set-hook", "-gu", f"client-detached[{index}]")
    pid = [p for p in perfhud_pids() if str(busy.pid) in open(f"/proc/{p}/cmdline").read()][0]
    os.kill(pid, signal.SIGKILL)
    time.sleep(1)
    assert tmux.status_count() == 5, "nothing put them back"
    if by == "status --tmux --restore":
        tmux.type(f"clear; {PERFHUD} status --tmux --restore")
        assert wait_for(lambda: "the status lines of this tmux session are as they were" in "\n".join(tmux.pane_screen()), timeout=10)
    else:
        # The next one puts back what the last left before it saves anything, and its own on q.
        tmux.type("clear")
        start(tmux, busy)
        tmux.key("q")
    assert wait_for(lambda: tmux.options_snapshot() == before, timeout=10), snapshot_diff(before, tmux.options_snapshot())


def test_a_killed_server_takes_nothing_down(tmux, busy):
    start(tmux, busy)
    pid = [p for p in perfhud_pids() if str(busy.pid) in open(f"/proc/{p}/cmdline").read()][0]
    tmux.run("kill-server")
    # perfhud loses its terminal with the server: it ends, and leaves no tmux server started again.
    assert wait_for(lambda: not os.path.exists(f"/proc/{pid}"), timeout=10), "perfhud ended with its terminal"
    assert subprocess.run(["tmux", "-L", tmux.inner, "-N", "list-sessions"], capture_output=True).returncode != 0


def test_a_segment_in_the_users_own_status_right(tmux, busy):
    tmux.run_checked("set-option", "-t", tmux.target("main"), "status-interval", "1")
    tmux.run_checked("set-option", "-t", tmux.target("main"), "status-right-length", "120")
    tmux.run_checked("set-option", "-t", tmux.target("main"), "status-right",
                     f"#({PERFHUD} status {busy.pid} --format tmux --alert 'cpu_percent > 50')")
    # The first call has no interval; the calls after it say the CPU over the second between them.
    assert tmux.wait_status(lambda lines: re.search(r"CPU (9\d|1\d\d)\.\d%", lines[0]), "the segment with its CPU", timeout=15)
    first = tmux.status_lines()[0]
    assert f"PID {busy.pid} sh" in first and "⚠ cpu_percent > 50" in first
    coloured = tmux.status_lines(escapes=True)[0]
    assert re.search(r"\x1b\[[0-9;]*31[0-9;]*m", coloured), "the alert colour, from tmux's own style syntax"
