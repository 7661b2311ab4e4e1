"""The HUD in a real terminal multiplexer (tmux): full-screen children, job control, resize."""
import os
import shutil
import subprocess
import time
import uuid

import pytest

from conftest import PERFHUD, perfhud, wait_until

pytestmark = pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is installed by `make test`")


class Tmux:
    def __init__(self, columns=120, rows=40):
        self.socket = f"perfhud-{uuid.uuid4().hex[:8]}"
        self.rows = rows
        self.run("new-session", "-d", "-s", "t", "-x", str(columns), "-y", str(rows), "bash --norc --noprofile")
        self.run("set-option", "-g", "status", "off")
        self.run("resize-window", "-t", "t", "-x", str(columns), "-y", str(rows))
        # tmux 3.3a leaves its socket file behind after kill-server: removed in close().
        self.socket_path = self.run("display-message", "-p", "#{socket_path}").strip()

    def run(self, *args):
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10).stdout

    def type(self, text, enter=True):
        self.run("send-keys", "-t", "t", "-l", text)
        if enter:
            self.run("send-keys", "-t", "t", "Enter")

    def key(self, name):
        self.run("send-keys", "-t", "t", name)

    def screen(self):
        return self.run("capture-pane", "-t", "t", "-p").split("\n")

    def state(self, name):
        return self.run("display-message", "-t", "t", "-p", "#{" + name + "}").strip()

    def wait(self, predicate, what, timeout=20):
        if not wait_until(lambda: predicate(self.screen()), timeout=timeout, interval=0.1):
            raise AssertionError(f"timed out waiting for {what}:\n" + "\n".join(self.screen()))

    def close(self):
        self.run("kill-server")
        if self.socket_path.startswith("/"):
            try:
                os.unlink(self.socket_path)
            except FileNotFoundError:
                pass


@pytest.fixture
def tmux():
    session = Tmux()
    yield session
    session.close()


def assert_restored(tmux):
    assert tmux.state("cursor_flag") == "1", "cursor visible"
    assert tmux.state("scroll_region_upper") == "0"
    assert tmux.state("scroll_region_lower") == str(tmux.rows - 1)


def test_top_runs_under_the_hud(tmux):
    tmux.type(f"{PERFHUD} run -- top -d 0.5")
    tmux.wait(lambda s: s[0].startswith(" PID ") and s[6].startswith("top - "), "top below the HUD")
    time.sleep(1.5)   # a few of top's refreshes and HUD frames
    screen = tmux.screen()
    assert screen[0].startswith(" PID ") and "top" in screen[0], screen[0]
    assert screen[1].lstrip().startswith("memory (RSS)")
    assert screen[6].startswith("top - "), "top's first row is the first row under the HUD"
    assert any("PID" in line and "COMMAND" in line for line in screen[7:15]), "top's table header"
    tmux.type("q", enter=False)
    tmux.wait(lambda s: any(line.startswith("bash") or line.endswith("$ ") or line.endswith("# ") for line in s[-8:]),
              "the shell prompt after top quits")
    assert_restored(tmux)


def test_less_on_the_alternate_screen(tmux):
    tmux.type(f"seq 1 500 > /tmp/perfhud-less.txt; {PERFHUD} run -- less /tmp/perfhud-less.txt")
    tmux.wait(lambda s: s[0].startswith(" PID ") and s[6].strip() == "1", "less under the HUD")
    tmux.type(" ", enter=False)   # next page
    tmux.wait(lambda s: s[0].startswith(" PID ") and s[6].strip() != "1" and s[6].strip().isdigit(), "less paged")
    tmux.type("q", enter=False)
    time.sleep(1)
    assert_restored(tmux)


def test_ctrl_z_restores_and_fg_reinitialises(tmux):
    tmux.type("sleep 300 & ")
    tmux.type(f"{PERFHUD} attach $!")
    tmux.wait(lambda s: s[0].startswith(" PID ") and "sleep" in s[0], "the HUD")
    assert tmux.state("cursor_flag") == "0"
    suspend_and_resume(tmux, lambda s: "sleep" in s[0], "the HUD", timeout=20)
    assert tmux.state("cursor_flag") == "0"
    assert tmux.state("scroll_region_upper") == "6"
    tmux.type("q", enter=False)
    time.sleep(1)
    assert_restored(tmux)


def test_replay_suspends_resizes_and_quits_like_the_live_hud(tmux, tmp_path):
    recording = tmp_path / "demo.db"
    assert perfhud("demo", "--output", "json", "--record", str(recording), "--duration", "3s").returncode == 0
    tmux.type(f"{PERFHUD} replay {recording} --speed 0.25")
    tmux.wait(lambda s: s[0].startswith(" PID ") and "replay ×0.25" in s[0], "the replay's HUD")
    assert tmux.state("cursor_flag") == "0"
    assert tmux.state("scroll_region_upper") == "6"
    suspend_and_resume(tmux, lambda s: "replay" in s[0], "the replay's HUD", timeout=20)
    tmux.run("resize-window", "-t", "t", "-x", "70", "-y", "30")
    tmux.wait(lambda s: s[0].startswith(" PID ") and len(s[0].rstrip()) <= 70 and "replay" in s[0], "the HUD on 70 columns")
    assert tmux.state("scroll_region_lower") == "29"
    tmux.type("q", enter=False)
    tmux.wait(lambda s: not s[0].startswith(" PID ") or any(line.rstrip().endswith(("$", "#")) for line in s[6:]),
              "the shell after q")
    time.sleep(0.5)
    tmux.rows = 30
    assert_restored(tmux)


def test_resize_relayouts(tmux):
    tmux.type(f"{PERFHUD} run -- sh -c 'while true; do date; sleep 0.2; done'")
    tmux.wait(lambda s: s[0].startswith(" PID "), "the HUD")
    tmux.run("resize-window", "-t", "t", "-x", "60", "-y", "25")
    time.sleep(1)
    screen = tmux.screen()
    assert screen[0].startswith(" PID ") and len(screen[0].rstrip()) <= 60, screen[0]
    assert tmux.state("scroll_region_upper") == "6"
    assert tmux.state("scroll_region_lower") == "24"
    tmux.key("C-c")
    time.sleep(1)
    tmux.rows = 25
    assert_restored(tmux)


def test_escape_sequences_in_action_labels_are_shown_safely(tmux, tmp_path):
    """Labels come from any program: an action named with a clear-screen and a title sequence is
    shown escaped in the action log and the status line, and the HUD stays intact."""
    import os
    import socket as sockets
    target = subprocess.Popen(["sleep", "60"])
    path = str(tmp_path / "events.sock")
    try:
        tmux.type(f"{PERFHUD} attach {target.pid} --events {path} --action-threshold 5")
        tmux.wait(lambda s: s[0].startswith(" PID "), "the HUD")
        sender = sockets.socket(sockets.AF_UNIX, sockets.SOCK_DGRAM)
        label = b"Evil\x1b[2J\x1b]0;pwned\x07\x9b31mEnd"
        for _ in range(12):
            sender.sendto(b"perfhud.action:1|c|#action:" + label, path)
            time.sleep(0.05)
        tmux.wait(lambda s: any("Evil\\e[2J\\e]0;pwned\\x07" in line for line in s[6:]), "the escaped label in the log")
        screen = tmux.screen()
        assert screen[0].startswith(" PID "), "nothing cleared the screen"
        assert "⚠ Evil\\e[2J" in screen[0], "the high-frequency label in the status line, escaped"
        assert tmux.run("display-message", "-t", "t", "-p", "#{pane_title}").strip() != "pwned"
        tmux.type("q", enter=False)
        time.sleep(1)
        assert_restored(tmux)
    finally:
        target.kill()


def prompt_back(screen):
    return any(line.startswith("bash-") and line.rstrip().endswith(("#", "$")) for line in screen)


def suspend_and_resume(tmux, ready, what, timeout=10):
    """With a HUD up, presses Ctrl-Z, checks the shell has the terminal back, then `fg` and waits
    until `ready(screen)` holds again without any resize."""
    tmux.key("C-z")
    tmux.wait(lambda s: any("Stopped" in line for line in s), "the shell's Stopped message")
    assert_restored(tmux)
    tmux.type("clear; fg")
    tmux.wait(lambda s: s[0].startswith(" PID ") and ready(s), what + " repainted after fg", timeout=timeout)


def run_suspend_and_resume(tmux, command, ready, what):
    """Runs `command` under the HUD, waits until `ready(screen)`, then `suspend_and_resume`."""
    tmux.type(f"{PERFHUD} run -- {command}")
    tmux.wait(lambda s: s[0].startswith(" PID ") and ready(s), what)
    suspend_and_resume(tmux, ready, what)


def test_htop_repaints_completely_after_ctrl_z_and_fg(tmux):
    """htop handles SIGTSTP itself (ncurses): the key must reach it through its terminal, so it
    stops itself, and on fg repaints its meters, header and F-key bar — not only the cells that
    changed meanwhile."""
    if not shutil.which("htop"):
        pytest.skip("htop is installed by `make test`")
    whole = lambda s: (any("Mem[" in line for line in s[6:12]) and any("Tasks:" in line for line in s[6:12])
                       and any(line.startswith("F1Help") for line in s[-3:]))
    run_suspend_and_resume(tmux, "htop", whole, "htop's meters and F-key bar")
    tmux.key("F10")
    tmux.wait(prompt_back, "htop quits")
    time.sleep(0.5)
    assert_restored(tmux)


def test_less_repaints_after_ctrl_z_and_fg(tmux):
    tmux.type("seq 1 500 > /tmp/perfhud-less-z.txt")
    rows = lambda s: [line.strip() for line in s[6:20]] == [str(n) for n in range(1, 15)]
    run_suspend_and_resume(tmux, "less /tmp/perfhud-less-z.txt", rows, "less's rows")
    tmux.type("q", enter=False)
    time.sleep(1)
    assert_restored(tmux)


def test_vim_stopping_itself_stops_the_session(tmux, tmp_path):
    """vim reads Ctrl-Z as a key (its terminal is raw) and stops itself: perfhud follows, gives
    the terminal back to the shell, and on fg vim shows its buffer again under the HUD."""
    path = tmp_path / "notes.txt"
    path.write_text("".join(f"note {n}\n" for n in range(1, 30)))
    shown = lambda s: s[6].startswith("note 1") and s[7].startswith("note 2")
    run_suspend_and_resume(tmux, f"vim -u NONE -i NONE -N {path}", shown, "vim's buffer")
    tmux.type(":q!")
    tmux.wait(prompt_back, "vim quits", timeout=10)
    time.sleep(0.5)
    assert_restored(tmux)
