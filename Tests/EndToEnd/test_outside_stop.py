"""A program stopped and continued from outside — a supervisor, a debugger, a script's `kill -STOP`
— with no job-control shell around perfhud (issue 44, item 8): perfhud follows it (the HUD says
Stopped, the rows go on with its CPU at 0, the recording keeps them), never stops itself, and ends
with the program's status once it is continued and ends. Before, perfhud and its session leader
stopped with the program and nobody continued them: the program ended a zombie, the run never."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from conftest import PERFHUD, json_rows_of, perfhud, wait_until


def descendant(pid, name):
    """The PID of the process called `name` below `pid`, or None."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
                comm = open(f"/proc/{entry}/comm").read().strip()
            except OSError:
                continue
            parents[int(entry)] = (int(fields[1]), comm)
    for candidate, (parent, comm) in parents.items():
        ancestor = parent
        while ancestor in parents and ancestor != pid:
            ancestor = parents[ancestor][0]
        if comm == name and ancestor == pid:
            return candidate
    return None


def state(pid):
    return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]


def test_the_hud_follows_a_program_stopped_from_outside_and_ends_with_it(terminal, tmp_path):
    recording = tmp_path / "stopped.db"
    term = terminal(["run", "--record", str(recording), "--tick", "100ms", "--", "sleep", "3"])
    term.wait_for(lambda t: "sleep" in t.screen.display[0], what="the HUD")
    program = descendant(term.process.pid, "sleep")
    assert program, "the program"
    started = time.monotonic()
    os.kill(program, signal.SIGSTOP)
    term.wait_for(lambda t: "Stopped" in t.screen.display[0], what="Stopped in the status line")
    time.sleep(0.5)
    leader = descendant(term.process.pid, "perfhud")   # a fork of perfhud's, between it and the program
    assert state(term.process.pid) != "T", "perfhud stopped with its program"
    assert leader and state(leader) != "T", "the session leader stopped with its program"
    assert state(program) == "T"
    os.kill(program, signal.SIGCONT)
    term.wait_for(lambda t: "Stopped" not in t.screen.display[0], what="the program running again")
    assert term.finish(timeout=20) == 0
    with sqlite3.connect(recording) as db:
        stopped = [row[0] for row in db.execute("SELECT cpu_percent FROM samples WHERE alive = 2 ORDER BY rowid")]
    # The first stopped row's window holds the last moments before the stop.
    assert len(stopped) >= 5 and all(cpu == 0 for cpu in stopped[1:]), stopped
    report = json.loads(perfhud("report", str(recording), "--format", "json").stdout)
    assert 3 <= report["duration_s"] <= 3 + (time.monotonic() - started), report["duration_s"]


def test_the_rows_go_on_stopped_at_no_cpu_and_the_status_is_the_programs():
    program = "import time\nend = time.monotonic() + 2.5\nwhile time.monotonic() < end: pass\nraise SystemExit(3)"
    run = subprocess.Popen([PERFHUD, "run", "--output", "json", "--tick", "100ms", "--", sys.executable, "-c", program],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert wait_until(lambda: descendant(run.pid, "python3") is not None, timeout=10)
    burner = descendant(run.pid, "python3")
    time.sleep(0.5)
    os.kill(burner, signal.SIGSTOP)
    time.sleep(1.0)
    os.kill(burner, signal.SIGCONT)
    out, err = run.communicate(timeout=30)
    assert run.returncode == 3, err
    rows = json_rows_of(out)
    # `"stopped": true` in a stopped row; the key is left out of the others, as `exit_code` is.
    assert all(row.get("stopped", True) is True for row in rows), "the key is there only to say true"
    stopped = [row for row in rows if row.get("stopped")]
    assert len(stopped) >= 7, [row.get("stopped") for row in rows]
    assert all(row["cpu_percent"] == 0 for row in stopped[1:]), [row["cpu_percent"] for row in stopped]
    assert any(row["cpu_percent"] > 50 for row in rows if not row.get("stopped") and row["alive"]), "it burnt before and after"
    assert "stopped" not in rows[-1] and rows[-1]["exit_code"] == 3, rows[-1]
