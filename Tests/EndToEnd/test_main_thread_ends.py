"""A process lives while any of its threads does. A program whose `main` calls `pthread_exit` while
a worker thread spins on (some launchers and runtimes do) leaves its leader a zombie: the
leader's state, its `statm`, `status` and `fd` are no longer the process's, but the process runs
at 100 % CPU. `burn orphan SECONDS` (helpers/burn.c) is such a program: it prints the CPU time
it used just before it exits. `run`, `attach`, the HUD and the daemon must each see it alive,
with its CPU and memory, until its last thread ends."""
import contextlib
import pathlib
import re
import subprocess
import time

import pytest

from conftest import cpu_said, json_rows_of, perfhud, wait_until
from test_daemon import daemons  # noqa: F401 (fixture)




@contextlib.contextmanager
def orphan(burn, seconds):
    """`burn orphan SECONDS`, once its main thread has ended; killed at the end."""
    program = subprocess.Popen([burn, "orphan", seconds], stdout=subprocess.PIPE, text=True)
    try:
        assert program.stdout.readline().strip() == "main thread ends"
        yield program
    finally:
        program.kill()
        program.wait()


@pytest.mark.parametrize("main_ends_after", ["0", "0.5"])
def test_run_sees_it_alive_until_its_last_thread_ends(burn, main_ends_after):
    # At once, or after perfhud has read it whole a few times: its memory by kind and descriptors
    # are then read through a live thread from the tick its main thread is seen gone (until a
    # fresh CI run caught it, the leader's empty ones were read on: 0 descriptors).
    result = perfhud("run", "--output", "json", "--tick", "100ms", "--", burn, "orphan", "1.2", main_ends_after, timeout=60)
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    live, end = rows[:-1], rows[-1]
    assert len(live) >= 8, rows
    # Every row before the end: alive, with the process's memory and threads, its CPU going up.
    assert all(row["alive"] for row in live), [row["alive"] for row in rows]
    assert all(row["rss_bytes"] and row["rss_bytes"] > 0 and row["threads"] >= 1 for row in live), live
    assert all(row["fds_open"] is None or row["fds_open"] >= 3 for row in live), [row["fds_open"] for row in live]
    busy = [row["cpu_percent"] for row in live[2:]]
    assert busy and sorted(busy)[len(busy) // 2] >= 60, busy
    totals = [row["cpu_seconds_total"] for row in rows]
    assert totals == sorted(totals), totals
    # The end: the whole life's CPU, what the program measured of itself (and the exit's few µs).
    assert end["alive"] is False and end["exit_code"] == 0, end
    spent = cpu_said(result.stderr)
    assert spent - 0.001 <= end["cpu_seconds_total"] <= spent + 0.02, (end["cpu_seconds_total"], spent)


def test_attach_follows_it_to_its_end(burn):
    with orphan(burn, "2.5") as program:
        assert wait_until(lambda: pathlib.Path(f"/proc/{program.pid}/stat").read_text().split(") ")[1][0] == "Z", timeout=5)
        result = perfhud("attach", "--output", "json", "--tick", "200ms", str(program.pid), timeout=60)
        assert result.returncode == 0, result.stderr
        rows = json_rows_of(result.stdout)
        # Not one row saying it ended while it ran: it was watched until its end, seconds later.
        assert len(rows) >= 6, rows
        assert all(row["alive"] for row in rows[:-1]), [row["alive"] for row in rows]
        assert rows[-1]["alive"] is False
        assert all(row["rss_bytes"] and row["rss_bytes"] > 0 for row in rows[:-1]), rows
        busy = [row["cpu_percent"] for row in rows[1:-1] if row["cpu_percent"] is not None]
        assert busy and sorted(busy)[len(busy) // 2] >= 60, busy


def test_the_hud_shows_it_running(burn, terminal):
    with orphan(burn, "4") as program:
        hud = terminal(["attach", str(program.pid)], rows=24, columns=100)
        hud.wait_for(lambda screen: re.search(r"CPU\s+[0-9]", screen.text()), what="a CPU figure")
        time.sleep(1.0)
        hud.pump(0.3)
        text = hud.text()
        assert "defunct" not in text and "ended" not in text, text
        cpu = re.search(r"CPU\s+([0-9.]+)%", text)
        assert cpu and float(cpu[1]) >= 50, text
        hud.send(b"q")
        assert hud.finish() == 0


def test_the_daemon_keeps_it_up_with_its_memory(daemons, burn):
    with orphan(burn, "4") as program:
        daemon = daemons("--pid", str(program.pid))
        assert wait_until(lambda: daemon.value("perfhud_target_up") is not None, timeout=10), daemon.metrics()
        time.sleep(1.0)
        assert daemon.value("perfhud_target_up") == 1, daemon.metrics()
        assert daemon.value("perfhud_target_resident_memory_bytes") > 0, daemon.metrics()
        first = daemon.value("perfhud_target_cpu_seconds_total", '{target="burn",mode="user"}') or 0
        time.sleep(1.0)
        assert (daemon.value("perfhud_target_cpu_seconds_total", '{target="burn",mode="user"}') or 0) > first + 0.3, daemon.metrics()
        assert daemon.process.poll() is None
        code, err = daemon.stop()
        assert "target down" not in err and f"no process with PID {program.pid}" not in err, err
