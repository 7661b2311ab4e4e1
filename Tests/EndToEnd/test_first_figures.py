"""Small wrong figures a new user meets (issue 19, point 10): the first row's CPU, a kernel thread's
memory graph, `run`'s RSS at start, and the program a report names when a wrapper exec'd it."""
import json
import os
import re
import subprocess
import sys
import time

import pytest

from conftest import perfhud, json_rows_of
from test_cli import kernel_thread

HZ = os.sysconf("SC_CLK_TCK")


def lifetime_cpu_percent(pid):
    """CPU over the process's whole life, as ps's %CPU: (utime + stime) / (uptime - starttime)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    spent = (int(fields[11]) + int(fields[12])) / HZ
    age = float(open("/proc/uptime").read().split()[0]) - int(fields[19]) / HZ
    return spent / age * 100


def test_count_1_on_attach_gives_a_cpu_figure(burn):
    target = subprocess.Popen([burn, "half"])
    try:
        time.sleep(2.5)   # older than a second: its start time (10 ms ticks) then gives the window within 1 %
        result = perfhud("attach", str(target.pid), "--output", "json", "--count", "1")
        expected = lifetime_cpu_percent(target.pid)
    finally:
        target.kill()
        target.wait()
    assert result.returncode == 0, result.stderr
    [row] = json_rows_of(result.stdout)
    assert row["cpu_percent"] is not None, "one row: its window is the process's life so far"
    assert abs(row["cpu_percent"] - expected) <= 8, (row["cpu_percent"], expected)


def test_count_1_on_run_gives_a_cpu_figure(burn):
    result = perfhud("run", "--output", "json", "--count", "1", "--", burn, "two")
    assert result.returncode == 0, result.stderr
    [row] = json_rows_of(result.stdout)
    assert isinstance(row["cpu_percent"], (int, float)), row
    assert row["cpu_percent"] >= 0


def test_a_kernel_threads_graph_says_it_has_no_memory(terminal):
    pid, name = kernel_thread()
    term = terminal(["attach", str(pid)], rows=24, columns=100)
    term.wait_for(lambda t: t.screen.display[0].lstrip().startswith(f"PID {pid}"), what="the HUD")
    time.sleep(1)
    term.pump(0.5)
    header = term.screen.display[1]
    assert "no samples yet" not in header, header
    assert "memory (RSS) none: a kernel thread has no memory of its own" in header, header
    term.send(b"q")
    assert term.finish() == 0


def summary_start(text):
    match = re.search(r"RSS ([\d.]+) (B|KiB|MiB|GiB) at start", text)
    assert match, text
    return float(match.group(1)) * {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[match.group(2)]


PROGRAM = "import time; block = bytearray(24 << 20); time.sleep(1.5)"


def test_rss_at_start_is_the_program_not_the_loader(terminal, tmp_path):
    """Right after exec a program is its loader (~600 KiB); a tick later it is itself."""
    record = tmp_path / "py.db"
    term = terminal(["run", "--record", str(record), "--", sys.executable, "-c", PROGRAM], rows=30, columns=200)
    assert term.finish() == 0
    start = summary_start(term.text())
    assert start > 4 * 2**20, f"Python with its interpreter loaded takes more than 4 MiB, not {start / 1024:.0f} KiB"
    report = json.loads(perfhud("report", str(record), "--format", "json").stdout)
    assert abs(report["rss_start_bytes"] - start) <= 0.1 * 2**20, "the summary and the report say the same"


def test_a_wrapper_that_execs_the_program_is_not_what_the_report_names(terminal, tmp_path):
    """A pyenv-shim-like wrapper: a script of the same name as the program, which it execs after a
    while (so the name never changes: the exec is seen by the new address space). The summary's RSS
    at start and the report's target are the program's."""
    real = tmp_path / "real" / "python3"          # the program, under the wrapper's own name
    real.parent.mkdir()
    real.symlink_to(sys.executable)
    wrapper = tmp_path / "bin" / "python3"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\nsleep 0.4\nexec {real} \"$@\"\n")
    wrapper.chmod(0o755)
    record = tmp_path / "shim.db"
    term = terminal(["run", "--record", str(record), "--", str(wrapper), "-c", PROGRAM], rows=30, columns=200)
    assert term.finish() == 0
    assert summary_start(term.text()) > 4 * 2**20
    meta = dict(line.split("|", 1) for line in subprocess.run(
        ["sqlite3", str(record), "select key, value from meta"], capture_output=True, text=True, check=True).stdout.splitlines())
    assert meta["target_command_line"].startswith(f"{real} -c import time"), meta["target_command_line"]
    markdown = perfhud("report", str(record)).stdout
    html = perfhud("report", str(record), "--format", "html").stdout
    target = html.split("<dt>target</dt><dd>", 1)[1].split("</dd>", 1)[0]
    assert target.startswith(f"{real} -c import time"), "the HTML report's target is the program: " + target
    assert markdown.startswith("# perfhud report: python3"), markdown[:80]
