"""Shared helpers for the end-to-end tests: they run the built perfhud binary as a user would."""
import fcntl
import json
import os
import pathlib
import pty
import re
import select
import signal
import socket
import struct
import subprocess
import termios
import time
import urllib.request

import pyte
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("PERFHUD_BIN", ROOT / ".build" / "release"))
PERFHUD = str(BIN / "perfhud")


@pytest.fixture(scope="session")
def burn(tmp_path_factory):
    """Path of the compiled helpers/burn.c."""
    out = tmp_path_factory.mktemp("helpers") / "burn"
    subprocess.run(["cc", "-O1", "-pthread", "-o", str(out), str(ROOT / "Tests/EndToEnd/helpers/burn.c")], check=True)
    os.chmod(out.parent, 0o755)
    return str(out)


def json_rows_of(text):
    """The rows of `--output json` (live or replayed): every line but the last, which holds the
    run's summary (`{"summary": {...}}`) where the run printed one."""
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    if lines and set(lines[-1]) == {"summary"}:
        lines.pop()
    assert not any("summary" in line and len(line) == 1 for line in lines), "the summary line is the last"
    return lines


def summary_of(text):
    """The summary line's object of `--output json`'s output."""
    last = json.loads(text.splitlines()[-1])
    assert set(last) == {"summary"}, last
    return last["summary"]


def cpu_said(text):
    """The CPU time a helper program printed just before it exited (`cpu SECONDS`, helpers/burn.c)."""
    found = re.search(r"^cpu ([0-9.]+)$", text, re.M)
    assert found, text
    return float(found[1])


def perfhud(*args, **kwargs):
    """Runs perfhud off a terminal and returns the CompletedProcess."""
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 60)
    return subprocess.run([PERFHUD, *args], **kwargs)


class Terminal:
    """perfhud on a pseudo-terminal, its bytes fed to a VT emulator (pyte): what a person sees."""

    def __init__(self, args, rows=30, columns=100, env=None):
        self.rows, self.columns = rows, columns
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        # A UTF-8 terminal unless the test says otherwise (the HUD falls back to ASCII in a C
        # locale, and a CI job may have no locale set at all).
        environment = {name: value for name, value in os.environ.items() if name not in ("LC_ALL", "LC_CTYPE")}
        environment.update({"TERM": "xterm-256color", "LANG": "C.UTF-8", **(env or {})})
        self.process = subprocess.Popen(
            [PERFHUD, *args], stdin=slave, stdout=slave, stderr=slave, env=environment,
            start_new_session=True, preexec_fn=Terminal.as_a_foreground_job)
        os.close(slave)
        self.master = master

    @staticmethod
    def as_a_foreground_job():
        """In the child: what a terminal's shell gives the job it starts in the foreground — the
        terminal as its controlling one, the signals at their default. A suite run as a script's
        background job (`.ci/run &`) inherits SIGINT and SIGQUIT ignored (POSIX, for asynchronous
        lists), under `nohup` SIGHUP too; a signal ignored at exec stays ignored, and perfhud, as
        any program, keeps what its parent ignored: its Ctrl-C test then waited for a SIGINT that
        never came."""
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        default_dispositions()

    def pump(self, seconds=0.1):
        """Reads what perfhud wrote for `seconds` and feeds it to the emulator."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:
                time.sleep(left)
                return
            if not data:
                return
            self.raw += data
            self.stream.feed(data)

    def wait_for(self, predicate, timeout=20, what="condition"):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump(0.1)
            if predicate(self):
                return
        raise AssertionError(f"timed out waiting for {what}; screen:\n" + "\n".join(self.screen.display))

    def text(self):
        return "\n".join(self.screen.display)

    def send(self, data: bytes):
        os.write(self.master, data)

    def resize(self, rows, columns):
        self.rows, self.columns = rows, columns
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.screen.resize(rows, columns)
        os.killpg(self.process.pid, signal.SIGWINCH)

    def finish(self, timeout=20):
        """Waits for perfhud to exit, reading its last bytes; returns its exit code."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self.pump(0.1)
        self.pump(0.3)
        if self.process.poll() is None:
            below = processes_below(self.process.pid)   # before the kill, which ends them all
            self.process.kill()
            raise AssertionError("perfhud did not exit; screen:\n" + self.text() + "\n" + below)
        os.close(self.master)
        return self.process.returncode


def default_dispositions():
    """For a child about to exec perfhud: the signals perfhud leaves alone when they were ignored
    at start (SignalChannel.keptIgnored) at their default, as an interactive shell's job has them
    (see `Terminal.as_a_foreground_job`)."""
    for number in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGTERM, signal.SIGTSTP):
        signal.signal(number, signal.SIG_DFL)


def processes_below(pid):
    """What /proc says of `pid` and the processes below it: state, and signals pending (its own and
    its process's), blocked and ignored."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                table[int(entry)] = dict(line.split(":", 1) for line in open(f"/proc/{entry}/status") if ":" in line)
            except OSError:
                pass
    lines, todo = [], [pid]
    while todo:
        current = todo.pop()
        if current not in table:
            continue
        status = table[current]
        lines.append(f"{current} {status['Name'].strip()} {status['State'].strip()} pending {status['SigPnd'].strip()}/"
                     f"{status['ShdPnd'].strip()} blocked {status['SigBlk'].strip()} ignored {status['SigIgn'].strip()}")
        todo += [child for child, fields in table.items() if int(fields["PPid"]) == current]
    return "\n".join(lines)


@pytest.fixture
def terminal():
    created = []

    def make(args, **kwargs):
        created.append(Terminal(args, **kwargs))
        return created[-1]

    yield make
    for term in created:
        if term.process.poll() is None:
            term.process.kill()
            term.process.wait()


def hud_rows(screen_lines, height=6):
    return screen_lines[:height]


def wait_until(predicate, timeout=10.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


def free_port():
    """A TCP port on loopback nobody listens on now (for a daemon's --metrics-listen)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def metrics_text(port):
    """What the daemon on `port` serves at /metrics; empty before it listens."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            return response.read().decode()
    except OSError:
        return ""


def metric(port, name):
    """The value of the first series `name` the daemon on `port` serves; None before it listens."""
    found = re.search(r"^" + re.escape(name) + r"(?:\{[^}]*\})? (\S+)$", metrics_text(port), re.M)
    return float(found.group(1)) if found else None
