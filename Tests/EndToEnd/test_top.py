"""`perfhud top` in a real terminal (tmux), reading a real daemon that watches real programs: one
row per target, up or down, sorted by a key, escaped names, Enter opens the HUD, a narrow terminal,
and the one line it says when no daemon answers."""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import PERFHUD, perfhud, wait_until
from conftest import free_port
from test_daemon_targets import daemons, spawn, system_slice  # noqa: F401 (the fixtures)
from test_tmux import Tmux, assert_restored

pytestmark = pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is installed by `make test`")

BUSY = [sys.executable, "-c", "while True: pass"]


def rows_of(screen, names):
    """The table's lines that start with one of `names`, in screen order: (name, line)."""
    found = []
    for line in screen:
        for name in names:
            if line.startswith(name + " "):
                found.append((name, line))
    return found


def test_three_targets_up_and_down_sorted_by_cpu_then_by_name_and_enter_opens_the_hud(spawn, daemons):
    busy = spawn(*BUSY)
    idle = spawn("sleep", "600")
    brief = spawn("sleep", "1")
    watched = daemons("--pid", f"busy={busy.pid}", "--pid", f"idle={idle.pid}", "--pid", f"brief={brief.pid}")
    brief.wait()
    assert wait_until(lambda: watched.value("perfhud_target_up", '{target="brief"}') == 0, timeout=10)

    tmux = Tmux(columns=120, rows=30)
    try:
        tmux.type(f"{PERFHUD} top --from http://127.0.0.1:{watched.port}")
        names = ["busy", "idle", "brief"]

        def sorted_by_cpu(screen):
            rows = rows_of(screen, names)
            # Rates need two scrapes: the busy one's CPU% is a number, and it leads.
            return len(rows) == 3 and rows[0][0] == "busy" and re.search(r"busy\s+up\s+\d+\.\d", rows[0][1])
        tmux.wait(sorted_by_cpu, "three rows, busy first by CPU")
        screen = tmux.screen()
        assert "sorted by CPU" in screen[0] and "3 targets, 2 up" in screen[0], screen[0]
        rows = dict(rows_of(screen, names))
        assert re.match(r"idle\s+up\s", rows["idle"]) and re.match(r"brief\s+down\s", rows["brief"]), rows
        # A busy loop on a machine shared with builds gets what it gets; a sleeping process nothing.
        assert float(rows["busy"].split()[2]) > 5 and float(rows["idle"].split()[2]) < 1, rows

        tmux.type("n", enter=False)
        tmux.wait(lambda s: [name for name, _ in rows_of(s, names)] == ["brief", "busy", "idle"] and "sorted by name" in s[0],
                  "sorted by name")
        tmux.type("c", enter=False)
        tmux.wait(lambda s: [name for name, _ in rows_of(s, names)][:1] == ["busy"] and "sorted by CPU" in s[0], "sorted by CPU again")

        # Enter on the selected row (the first: busy) runs the HUD on its PID; q there comes back here.
        tmux.key("Enter")
        tmux.wait(lambda s: s[0].startswith(" PID ") and str(busy.pid) in s[0], "the HUD of the busy target")
        tmux.type("q", enter=False)
        tmux.wait(sorted_by_cpu, "the table again after the HUD quits")
        tmux.type("q", enter=False)
        tmux.wait(lambda s: not any(line.startswith("perfhud top") for line in s), "the shell after q")
        time.sleep(0.3)
        assert_restored(tmux)
    finally:
        tmux.close()


def test_a_target_named_by_an_escape_sequence_shows_escaped(spawn, daemons):
    # An unnamed --match target that matches nothing yet is labelled by its pattern, as typed:
    # here ESC c, which resets the terminal and clears the screen (libproc2 already masks those in comm).
    idle = spawn("sleep", "600")
    watched = daemons("--match", "\x1bcevil", "--pid", f"idle={idle.pid}")
    assert "\x1bcevil" in watched.targets()
    tmux = Tmux(columns=100, rows=20)
    try:
        tmux.type(f"clear; {PERFHUD} top --from http://127.0.0.1:{watched.port}")
        tmux.wait(lambda s: any(line.startswith("\\ecevil ") for line in s), "the name, escaped")
        screen = tmux.screen()
        assert screen[0].startswith("perfhud top") and screen[1].startswith("TARGET"), \
            "the escape was shown, not obeyed"
        tmux.type("q", enter=False)
    finally:
        tmux.close()


def test_sixty_columns_show_every_row_on_one_line(spawn, daemons):
    busy = spawn(*BUSY)
    idle = spawn("sleep", "600")
    watched = daemons("--pid", f"a-rather-long-target-name-for-a-narrow-terminal={busy.pid}", "--pid", f"idle={idle.pid}")
    tmux = Tmux(columns=60, rows=20)
    try:
        tmux.type(f"clear; {PERFHUD} top --from http://127.0.0.1:{watched.port}")
        tmux.wait(lambda s: s[0].startswith("perfhud top") and any(line.startswith("idle ") for line in s), "the table")
        time.sleep(1.5)     # a refresh with rates
        screen = tmux.screen()
        assert screen[1].startswith("TARGET"), screen[:3]
        # The two targets' rows right under the titles, then blank lines: nothing wrapped onto a line of its own.
        assert screen[2].startswith("a-rather-long") and screen[3].startswith("idle ") and screen[4].strip() == "", screen[:6]
        assert all(len(line) <= 60 for line in screen), screen
        assert screen[-1].startswith("c CPU") or screen[-2].startswith("c CPU"), screen[-3:]
        tmux.type("q", enter=False)
    finally:
        tmux.close()


def test_no_daemon_is_one_line_saying_how_to_start_one():
    port = free_port()
    result = perfhud("top", "--from", f"http://127.0.0.1:{port}", timeout=20)
    assert result.returncode == 69, result
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and result.stdout == "", result
    assert lines[0].startswith(f"perfhud: no perfhud daemon answers at http://127.0.0.1:{port} (connection refused)"), lines
    assert "perfhud daemon" in lines[0].split("start one with")[1], lines


def test_off_a_terminal_the_table_is_printed_once(spawn, daemons):
    busy = spawn(*BUSY)
    idle = spawn("sleep", "600")
    watched = daemons("--pid", f"busy={busy.pid}", "--pid", f"idle={idle.pid}")
    result = perfhud("top", "--from", f"http://127.0.0.1:{watched.port}", "--sort", "name", timeout=20)
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    assert lines[0].startswith("perfhud top") and "sorted by name" in lines[0], lines
    assert lines[1].startswith("TARGET") and "\x1b" not in result.stdout, lines
    assert [line.split()[0] for line in lines[2:]] == ["busy", "idle"], lines


# A parent and two children that each spin half the time: one process tree, three processes, the
# marker on each command line (the children are forks). They end with their parent.
TREE = """
import ctypes, os, signal, time
for _ in range(2):
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG: gone with the parent
        while True:
            end = time.monotonic() + 0.05
            while time.monotonic() < end:
                pass
            time.sleep(0.05)
time.sleep(600)
"""


def cpu_of_hud(screen):
    found = re.search(r"CPU ([0-9.]+)%", screen[0])
    return float(found[1]) if found else None


@pytest.mark.parametrize("named", ["match", "pid"])
def test_enter_opens_the_target_as_its_row_counts_it_and_q_leaves_the_shell_as_it_was(spawn, daemons, named):
    marker = f"perfhud-top-tree-{time.monotonic_ns()}"
    parent = spawn(sys.executable, "-c", TREE, marker)
    idle = spawn("sleep", "600")   # a second target: the daemon's --events is then a directory
    # The tree as a --match group (its three processes match), or as one PID with its children.
    target = ["--match", f"tree={marker}"] if named == "match" else ["--pid", f"tree={parent.pid}", "--include-children"]
    watched = daemons(*target, "--pid", f"idle={idle.pid}")
    assert wait_until(lambda: watched.value("perfhud_target_processes", '{target="tree"}') == 3, timeout=10)
    tmux = Tmux(columns=120, rows=30)
    try:
        tmux.type("echo the-shell-before")
        tmux.wait(lambda s: "the-shell-before" in s[1], "the shell's line")
        tmux.type(f"{PERFHUD} top --from http://127.0.0.1:{watched.port}")
        tmux.wait(lambda s: len(rows_of(s, ["tree"])) == 1 and re.search(r"tree\s+up\s+\d", rows_of(s, ["tree"])[0][1]), "the tree's row")
        time.sleep(2)
        row = float(rows_of(tmux.screen(), ["tree"])[0][1].split()[2])
        # Its two children spin half the time each: about one core for the target, none for the parent.
        assert row > 40, row
        tmux.key("Enter")
        tmux.wait(lambda s: s[0].startswith(" PID ") and str(parent.pid) in s[0], "the HUD of the tree")
        time.sleep(2.5)
        hud = cpu_of_hud(tmux.screen())
        # The HUD counts the tree the row counts, not the parent alone (0 %).
        assert hud is not None and hud > 0.6 * row, (hud, row, tmux.screen()[0])
        tmux.type("q", enter=False)
        tmux.wait(lambda s: len(rows_of(s, ["tree"])) == 1 and s[0].startswith("perfhud top"), "the table again")
        tmux.type("q", enter=False)
        tmux.wait(lambda s: not any(line.startswith("perfhud top") for line in s), "the shell after q")
        time.sleep(0.3)
        screen = tmux.screen()
        # The shell's screen as it was, with the command typed: nothing of the table or the HUD.
        assert "the-shell-before" in screen[1], screen
        assert not any(line.startswith((" PID ", "TARGET ", "perfhud:", " memory")) or "⠀" in line for line in screen), screen
        assert_restored(tmux)
    finally:
        tmux.close()


# Two programs that are not one tree: each spins a third of the time.
APART = """
import sys, time
while True:
    end = time.monotonic() + 0.03
    while time.monotonic() < end:
        pass
    time.sleep(0.06)
"""


def open_group_hud(port, row_name, attached, top=None):
    """top on the daemon at `port` (or with the options `top`), Enter on the row `row_name`: the
    row's CPU, the HUD's (after 2.5 s), and the HUD's screen, which must say `attached` among its
    notices; then q, q."""
    tmux = Tmux(columns=140, rows=24)
    try:
        tmux.type(f"{PERFHUD} top " + (top or f"--from http://127.0.0.1:{port}"))
        tmux.wait(lambda s: len(rows_of(s, [row_name])) == 1 and re.search(rf"{re.escape(row_name)}\s+up\s+\d", rows_of(s, [row_name])[0][1]),
                  "the group's row")
        time.sleep(2)
        row = float(rows_of(tmux.screen(), [row_name])[0][1].split()[2])
        tmux.key("Enter")
        tmux.wait(lambda s: s[0].startswith(" PID ") and any(attached in line for line in s), "the HUD of the group")
        time.sleep(2.5)
        screen = tmux.screen()
        hud = cpu_of_hud(screen)
        tmux.type("q", enter=False)
        tmux.wait(lambda s: len(rows_of(s, [row_name])) == 1 and s[0].startswith("perfhud top"), "the table again")
        tmux.type("q", enter=False)
        tmux.wait(lambda s: not any(line.startswith("perfhud top") for line in s), "the shell after q")
        return row, hud, screen
    finally:
        tmux.close()


def test_enter_on_a_match_of_programs_that_are_not_one_tree_opens_the_group_as_the_daemon_counts_it(spawn, daemons):
    # Issue 44: Enter refused a --match of several programs. It opens `attach --match` now: the
    # same resolver and the same sums as the daemon's row.
    marker = f"perfhud-top-apart-{time.monotonic_ns()}"
    apart = [spawn(sys.executable, "-c", APART, marker) for _ in range(2)]
    idle = spawn("sleep", "600")
    watched = daemons("--match", f"apart={marker}", "--pid", f"idle={idle.pid}")
    assert wait_until(lambda: watched.value("perfhud_target_processes", '{target="apart"}') == 2, timeout=10)
    first, second = sorted(process.pid for process in apart)
    row, hud, screen = open_group_hud(watched.port, "apart", f"attached to processes matching /{marker}/: PIDs {first}, {second}")
    # Both count both programs (about two thirds of a core together on an idle machine).
    assert row > 10, row
    assert hud is not None and 0.6 * row < hud < 1.6 * row, (hud, row, screen[0])


def test_enter_on_a_unit_opens_attach_unit(spawn, daemons, system_slice):
    unit = f"phtop-{os.getpid()}.service"   # short enough for the table's TARGET column
    members = [spawn(sys.executable, "-c", APART, unit) for _ in range(2)]
    system_slice(unit, *members)
    idle = spawn("sleep", "600")
    watched = daemons("--unit", unit, "--pid", f"idle={idle.pid}")
    assert wait_until(lambda: watched.value("perfhud_target_processes", f'{{target="{unit}"}}') == 2, timeout=10)
    first, second = sorted(process.pid for process in members)
    row, hud, screen = open_group_hud(watched.port, unit, f"attached to unit {unit}: PIDs {first}, {second}")
    assert row > 10, row
    assert hud is not None and 0.6 * row < hud < 1.6 * row, (hud, row, screen[0])