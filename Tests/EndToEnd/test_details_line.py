"""The HUD's details line (`--details`, `d`) in a real terminal (tmux), on programs slow for one
visible reason each (helpers/why.c): the figure that says why, highlighted past its limit; `d`
shows and hides it in attach and replay; a narrow terminal drops fields, never wraps; a thread
named with an escape sequence is shown escaped."""
import os
import re
import resource
import shutil
import subprocess

import pytest

from conftest import PERFHUD, ROOT, wait_until
from test_tmux import Tmux, assert_restored

pytestmark = pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is installed by `make test`")

CPUS = os.cpu_count()
FIXTURES = ROOT / "Tests/Fixtures/recordings"
# Red (the HUD's "past the limit"), in whatever SGR form tmux re-emits it.
RED = re.compile(r"\x1b\[[0-9;]*\b31[;m]")


@pytest.fixture(scope="module")
def why(tmp_path_factory):
    out = tmp_path_factory.mktemp("details") / "why"
    subprocess.run(["cc", "-O1", "-pthread", "-o", str(out), str(ROOT / "Tests/EndToEnd/helpers/why.c")], check=True)
    return str(out)


@pytest.fixture
def program():
    started = []

    def start(*args, preexec=None):
        process = subprocess.Popen(list(args), stdout=subprocess.PIPE, text=True, preexec_fn=preexec)
        assert process.stdout.readline().strip() == "ready"
        started.append(process)
        return process

    yield start
    for process in started:
        process.kill()
        process.wait()


def open_tmux(columns=200, rows=40):
    return Tmux(columns=columns, rows=rows)


@pytest.fixture
def tmux():
    session = open_tmux()
    yield session
    session.close()


def colored(tmux):
    return tmux.run("capture-pane", "-t", "t", "-p", "-e").split("\n")


def details(screen):
    """The details line: the HUD's second row."""
    return screen[1] if len(screen) > 1 else ""


def quit_and_check_restored(tmux):
    tmux.type("q", enter=False)
    if not wait_until(lambda: tmux.state("scroll_region_upper") == "0" and tmux.state("cursor_flag") == "1", timeout=10):
        raise AssertionError("the terminal not restored after q:\n" + "\n".join(tmux.screen()))
    assert_restored(tmux)


def test_more_runnable_threads_than_cpus_show_as_waiting_highlighted(why, program, tmux):
    spinner = program(why, "spin", str(2 * CPUS + 1))
    tmux.type(f"{PERFHUD} attach {spinner.pid} --details --tick 200ms")
    tmux.wait(lambda s: re.match(r" wait \d", details(s)), "the details line with waiting")
    # Each spinner beyond the CPUs waits the whole time: at least (CPUS + 1) × 100 % less what
    # this shared machine takes; far past the 20 % limit in any case.
    tmux.wait(lambda s: float(re.match(r" wait ([0-9.]+)%", details(s))[1]) > 20 * (CPUS + 1), "waiting past the limit")
    line = colored(tmux)[1]
    assert RED.search(line.split("wait")[0]), "waiting past 20 % is highlighted: " + repr(line)
    assert tmux.state("scroll_region_upper") == "7", "status, details, graph header and four graph rows"
    quit_and_check_restored(tmux)


def test_hundreds_of_open_files_show_as_descriptors_near_the_limit(why, program, tmux):
    limit = 600
    holder = program(why, "open", "500", "/dev/null", preexec=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit)))
    tmux.type(f"{PERFHUD} attach {holder.pid} --details")
    tmux.wait(lambda s: re.search(r"fds \d+/\d+", details(s)), "the descriptors")
    fds = re.search(r"fds (\d+)/(\d+)", details(tmux.screen()))
    assert int(fds[1]) == len(os.listdir(f"/proc/{holder.pid}/fd")) and int(fds[2]) == limit, details(tmux.screen())
    line = colored(tmux)[1]
    assert RED.search(line.split("fds ")[0][-30:]), "500 of 600 (past 80 %) is highlighted: " + repr(line)
    quit_and_check_restored(tmux)


def test_d_shows_and_hides_the_line_in_attach(why, program, tmux):
    spinner = program(why, "spin", "1")
    tmux.type(f"{PERFHUD} attach {spinner.pid}")
    tmux.wait(lambda s: s[0].startswith(" PID ") and "d to show or hide" in "\n".join(s), "the HUD and its notice")
    assert tmux.state("scroll_region_upper") == "6" and not details(tmux.screen()).startswith(" wait")
    tmux.type("d", enter=False)
    tmux.wait(lambda s: re.match(r" wait \d", details(s)) and "flt " in details(s), "the details line after d")
    assert tmux.state("scroll_region_upper") == "7", "the program's area gives the line a row"
    assert tmux.screen()[2].startswith(" memory (RSS)"), "the graph moves down a row"
    tmux.type("d", enter=False)
    tmux.wait(lambda s: s[1].startswith(" memory (RSS)"), "the graph back under the status line after d again")
    assert tmux.state("scroll_region_upper") == "6"
    assert not any(line.startswith(" wait ") for line in tmux.screen()), "no stale details line left behind"
    quit_and_check_restored(tmux)


def test_a_narrow_terminal_drops_fields_and_never_wraps(why, program):
    tmux = open_tmux(columns=60, rows=30)
    try:
        spinner = program(why, "spin", str(2 * CPUS + 1))
        tmux.type(f"{PERFHUD} attach {spinner.pid} --details --tick 200ms")
        tmux.wait(lambda s: re.match(r" wait \d", details(s)) and "cs " in details(s), "the details line")
        screen = tmux.screen()
        assert screen[0].startswith(" PID ") and len(screen[0].rstrip()) <= 60, "the status line intact: " + screen[0]
        assert len(details(screen).rstrip()) <= 60, details(screen)
        assert screen[2].startswith(" memory (RSS)"), "nothing wrapped onto the graph's header: " + repr(screen[:3])
        assert "anon" not in details(screen) and "busiest" not in details(screen), "the least important fields went: " + details(screen)
        quit_and_check_restored(tmux)
    finally:
        tmux.close()


def test_a_thread_named_with_an_escape_sequence_is_shown_escaped(why, program, tmux):
    hot = program(why, "hot-thread", "ev\x1b[2J\x1b]0;x", "3")
    tmux.type(f"{PERFHUD} attach {hot.pid} --details")
    tmux.wait(lambda s: "busiest ev\\e[2J\\e]0;x " in details(s), "the busiest thread, escaped")
    screen = tmux.screen()
    assert screen[0].startswith(" PID "), "nothing cleared the screen"
    assert tmux.run("display-message", "-t", "t", "-p", "#{pane_title}").strip() != "x"
    quit_and_check_restored(tmux)


def test_d_shows_the_recorded_figures_in_replay_and_says_when_a_file_has_none(tmux):
    tmux.type(f"{PERFHUD} replay {FIXTURES / 'format4-why.db'} --speed 0.25")
    tmux.wait(lambda s: "replay" in s[0] and "d details" in "\n".join(s), "the replay and its keys")
    assert not details(tmux.screen()).startswith(" wait")
    tmux.type("d", enter=False)
    tmux.wait(lambda s: re.match(r" (leak\? [^│]+ │ )?wait \d", details(s)), "the recorded figures after d")
    assert tmux.state("scroll_region_upper") == "7"
    tmux.type("d", enter=False)
    tmux.wait(lambda s: s[1].startswith(" memory (RSS)"), "hidden again")
    quit_and_check_restored(tmux)
    tmux.type(f"clear; {PERFHUD} replay {FIXTURES / 'format3-demo.db'} --details")
    tmux.wait(lambda s: "the why figures are not in this file (recording format 3" in details(s), "the note of an older format")
    quit_and_check_restored(tmux)
