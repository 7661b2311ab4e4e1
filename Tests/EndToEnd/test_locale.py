"""The HUD in the user's locale: braille and box drawing where it says UTF-8, ASCII where it does
not (LC_ALL=C, LANG=C, LC_CTYPE=POSIX), as htop and btop fall back. perfhud on a real
pseudo-terminal, its bytes fed to a VT emulator (pyte)."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT

ASCII_GRAPH = set(" |'-._")


def graph_drawn(term):
    rows = term.screen.display[2:6]
    return any(cell.strip() for row in rows for cell in row[:40])


def hud(terminal, burn, env):
    """The HUD attached to a process of 40 MiB, once its graph has samples; the raw bytes and the screen."""
    target = subprocess.Popen([burn, "rest", "40"], stdout=subprocess.PIPE)
    target.stdout.readline()
    try:
        term = terminal(["attach", str(target.pid), "--tick", "50ms"], env=env)
        term.wait_for(graph_drawn, what="a graph with samples")
        term.pump(0.5)
        screen = list(term.screen.display)
        term.send(b"q")
        assert term.finish() == 0
        return bytes(term.raw), screen
    finally:
        target.kill()
        target.wait()


@pytest.mark.parametrize("env", [{"LC_ALL": "C"}, {"LANG": "C"}, {"LANG": "C.UTF-8", "LC_CTYPE": "POSIX"},
                                 {"LANG": ""}], ids=["LC_ALL=C", "LANG=C", "LC_CTYPE=POSIX", "no locale"])
def test_a_locale_that_is_not_utf8_gets_an_ascii_hud(terminal, burn, env):
    raw, screen = hud(terminal, burn, env)
    beyond_ascii = sorted({byte for byte in raw if byte >= 0x80})
    assert not beyond_ascii, f"bytes beyond ASCII: {beyond_ascii[:10]}; status line: {screen[0]!r}"
    assert " | RSS " in screen[0] and "CPU " in screen[0], screen[0]
    assert screen[1].lstrip().startswith("memory (RSS)"), screen[1]
    plot = "".join(row[1:-12] for row in screen[2:6])
    assert set(plot) <= ASCII_GRAPH and set(plot) - {" "}, f"an ASCII graph: {screen[2:6]!r}"


@pytest.mark.parametrize("env", [{"LANG": "C.UTF-8"}, {"LANG": "C", "LC_ALL": "C.UTF-8"}, {"LANG": "en_US.UTF-8"}],
                         ids=["LANG=C.UTF-8", "LC_ALL=C.UTF-8", "en_US.UTF-8 (maybe not installed)"])
def test_a_utf8_locale_gets_braille_and_box_drawing(terminal, burn, env):
    _, screen = hud(terminal, burn, env)
    assert " │ RSS " in screen[0], screen[0]
    assert any(0x2800 <= ord(cell) <= 0x28FF for row in screen[2:6] for cell in row), screen[2:6]


def test_the_end_summary_is_ascii_too_in_a_c_locale(terminal):
    """The summary's "key→screen" (keys were typed, and the program answered each itself: its
    terminal does not echo them) reaches a C-locale terminal as ASCII."""
    helper = str(ROOT / "Tests/EndToEnd/helpers/tty_frames.py")
    term = terminal(["run", "--", sys.executable, helper, "keys", "10"], env={"LC_ALL": "C"})
    term.pump(0.8)
    for key in b"hello":
        term.send(bytes([key]))
        term.pump(0.1)
    term.pump(0.3)
    term.send(b"q")   # the helper ends on q: the summary follows
    assert term.finish() == 0
    raw = bytes(term.raw)
    assert b"key->screen" in raw, raw[-600:]
    assert not [byte for byte in raw if byte >= 0x80], raw[-600:]
