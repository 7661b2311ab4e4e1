"""The screen at the end of a `run`, in a real terminal multiplexer (issue 19, point 7): the HUD's
last frame stays whole above the end summary, each line perfhud writes clears what it covers, and
a resize leaves no stale HUD row in the program's area."""
import shutil
import time

import pytest

from conftest import PERFHUD
from test_tmux import Tmux, assert_restored, prompt_back

pytestmark = pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is installed by `make test`")

BRAILLE = range(0x2800, 0x2900)


def has_graph(line):
    """A row of the HUD's memory graph: its header, or braille dots (blank ones too)."""
    return "memory (RSS)" in line or any(ord(c) in BRAILLE for c in line)


@pytest.fixture
def pane():
    session = Tmux(columns=160, rows=45)   # wide enough for the summary's lines not to wrap
    yield session
    session.close()


def test_the_last_frame_stays_above_the_summary_after_a_flood(pane):
    pane.type(f"{PERFHUD} run -- bash -c 'yes | head -n 2000000'")
    pane.wait(prompt_back, "the shell after the run", timeout=60)
    time.sleep(0.3)
    screen = pane.screen()
    assert screen[0].startswith(" PID ") and "Exited, status 0" in screen[0], screen[:3]
    assert screen[1].lstrip().startswith("memory (RSS)"), screen[:3]
    assert all(has_graph(line) for line in screen[2:6]), "the four graph rows"
    summary = [index for index, line in enumerate(screen) if line.startswith("perfhud: 00:")]
    assert summary, screen
    assert screen[summary[0] - 1].startswith("perfhud: PID ") and "exited, status 0" in screen[summary[0] - 1]
    assert screen[summary[0] - 2] == "y", "the program's last line above the end notice"
    assert_restored(pane)


def test_no_leftover_screen_text_after_the_end_notice(pane):
    if not shutil.which("busybox"):
        pytest.skip("busybox is installed by `make test`")
    pane.type(f"{PERFHUD} run --duration 3s -- busybox top -d 1")
    pane.wait(prompt_back, "the shell after the run", timeout=30)
    time.sleep(0.3)
    screen = pane.screen()
    [notice] = [index for index, line in enumerate(screen) if "ended by perfhud at --duration 3s" in line]
    assert screen[notice].rstrip().endswith("SIGTERM, which ended it"), screen[notice]
    rest = [line for line in screen[notice + 1:] if line.strip()]
    assert all(line.startswith(("perfhud: ", "bash-")) for line in rest), "\n".join(screen)
    assert len(rest) >= 3, rest   # the summary (figures, how perfhud ended it) and the prompt
    assert_restored(pane)


def test_shrinking_then_growing_leaves_no_stale_graph_row(pane):
    pane.type(f"{PERFHUD} run -- sh -c 'n=0; while true; do n=$((n+1)); echo line $n; sleep 0.1; done'")
    pane.wait(lambda s: s[0].startswith(" PID ") and any(line.startswith("line 30") for line in s), "the HUD and 30 lines")
    for rows in (20, 12, 45):
        pane.run("resize-window", "-t", "t", "-x", "160", "-y", str(rows))
        time.sleep(0.8)
    pane.wait(lambda s: len(s) >= 45 and s[0].startswith(" PID "), "the HUD on 45 rows")
    time.sleep(0.5)
    screen = pane.screen()
    assert pane.state("scroll_region_upper") == "6" and pane.state("scroll_region_lower") == "44"
    stale = [line for line in screen[6:] if has_graph(line) or line.startswith(" PID ")]
    assert not stale, "\n".join(screen)
    pane.key("C-c")
    pane.wait(prompt_back, "the shell after Ctrl-C")
