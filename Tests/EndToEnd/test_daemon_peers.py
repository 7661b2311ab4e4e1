"""perfhud daemon never waits for a peer: a notify socket nobody reads, a log pipe or journal
stream nobody drains. And the smaller faults an operator met: the event socket's name, what an
exit for a busy port leaves behind and says, a pidfile naming a zombie."""
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from conftest import PERFHUD, perfhud, wait_until
from test_daemon import free_port, get


def fill(sock_or_fd):
    """Writes into a socket or pipe until it would block: its reader is 'stalled' from now on."""
    chunk = b"x" * 512
    if isinstance(sock_or_fd, socket.socket):
        sock_or_fd.setblocking(False)
        while True:
            try:
                sock_or_fd.send(chunk)
            except BlockingIOError:
                return
    os.set_blocking(sock_or_fd, False)
    while True:
        try:
            os.write(sock_or_fd, chunk)
        except BlockingIOError:
            os.set_blocking(sock_or_fd, True)
            return


def value(port, name, labels=""):
    text = get(f"http://127.0.0.1:{port}/metrics", timeout=2)[1]
    pattern = re.compile(r"^" + re.escape(name) + (re.escape(labels) if labels else r"(\{[^}]*\})?") + r" (\S+)$", re.M)
    found = pattern.search(text)
    return float(found.group(found.lastindex)) if found else None


def listening(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def stops_within(process, seconds):
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return False, 10.0
    return process.returncode == 0, time.monotonic() - started


def assert_a_stalled_peer_stalls_nothing(tmp_path, destination, extra_args=(), **popen):
    """A daemon whose notify socket or stderr reader stopped reading: sampling goes on (the
    target's end shows), what could not be written is counted, and SIGTERM ends it within 2 s."""
    target = subprocess.Popen(["sleep", "60"])
    port = free_port()
    daemon = subprocess.Popen([PERFHUD, "daemon", "--pid", str(target.pid), "--metrics-listen", f"127.0.0.1:{port}",
                               "--events", str(tmp_path / "e.sock"), "--tick", "100ms", *extra_args], **popen)
    try:
        assert wait_until(lambda: listening(port), timeout=15)
        assert_goes_on(port, target, destination)
        ok, took = stops_within(daemon, 2)
        assert ok and took < 2, f"SIGTERM took {took:.1f} s"
    finally:
        target.kill()
        if daemon.poll() is None:
            daemon.kill()


def assert_goes_on(port, target, destination):
    """Sampling goes on (the target's end shows), and what could not be written is counted."""
    assert wait_until(lambda: value(port, "perfhud_target_up") == 1, timeout=10)
    time.sleep(1.5)
    target.kill()
    target.wait()
    assert wait_until(lambda: value(port, "perfhud_target_up") == 0, timeout=5), "sampling stalled: the target's end never showed"
    assert wait_until(lambda: (value(port, "perfhud_output_dropped_total", f'{{destination="{destination}"}}') or 0) > 0, timeout=5)


def test_a_notify_socket_nobody_reads_stalls_nothing(tmp_path):
    notify_path = str(tmp_path / "notify.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(notify_path)
    sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sender.connect(notify_path)
    fill(sender)          # the queue is full before perfhud says READY=1; nobody reads it after
    environment = dict(os.environ, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC="100000")
    assert_a_stalled_peer_stalls_nothing(tmp_path, "systemd_notify", stderr=subprocess.DEVNULL, env=environment)


@pytest.mark.parametrize("kind", ["pipe", "stream socket (a journal stream)"])
def test_a_log_reader_that_stopped_reading_stalls_nothing(tmp_path, kind):
    if kind == "pipe":
        reader, writer = os.pipe()
        fill(writer)
        stderr = writer
    else:
        reader_socket, writer_socket = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fill(writer_socket)
        writer_socket.setblocking(True)
        stderr = writer_socket.fileno()
    assert_a_stalled_peer_stalls_nothing(tmp_path, "log", ("--log-interval", "200ms"), stderr=stderr)


def test_the_event_socket_is_also_named_after_the_target(tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    target = subprocess.Popen(["sleep", "60"])
    port = free_port()
    # The sender here is the test, not the target: let the same user send.
    daemon = subprocess.Popen([PERFHUD, "daemon", "--pid", str(target.pid), "--metrics-listen", f"127.0.0.1:{port}", "--tick", "100ms",
                               "--accept-from", "same-user"],
                              stderr=subprocess.PIPE, text=True, env=dict(os.environ, XDG_RUNTIME_DIR=str(runtime)))
    by_target = runtime / "perfhud" / f"{target.pid}.sock"
    try:
        assert wait_until(lambda: listening(port), timeout=15)
        # What an attached program does: its own PID's socket.
        assert wait_until(by_target.exists, timeout=5), sorted(os.listdir(runtime / "perfhud"))
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as client:
            client.sendto(b"perfhud.action:1|c|#action:Found.byPID", str(by_target))
        assert wait_until(lambda: value(port, "perfhud_actions_total", '{target="sleep",action="Found.byPID"}') == 1, timeout=5)
        target.kill()
        target.wait()
        assert wait_until(lambda: not by_target.exists(), timeout=5), "the name of a target that went away is removed"
    finally:
        target.kill()
        daemon.terminate()
        daemon.communicate(timeout=10)
    assert daemon.returncode == 0
    assert os.listdir(runtime / "perfhud") == [], "every name removed on exit"


def test_a_busy_port_exits_69_in_plain_words_and_leaves_no_socket(tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = perfhud("daemon", "--pid", str(os.getpid()), "--metrics-listen", f"127.0.0.1:{port}",
                         env=dict(os.environ, XDG_RUNTIME_DIR=str(runtime)))
    assert result.returncode == 69
    assert result.stderr == f"perfhud: error: cannot listen on 127.0.0.1:{port}: address already in use\n"
    assert os.listdir(runtime / "perfhud") == []


def test_a_pidfile_naming_a_zombie_is_waited_for_without_flapping(tmp_path):
    # A child that ended and that its parent (this test) has not reaped yet.
    zombie = subprocess.Popen(["true"])
    assert wait_until(lambda: open(f"/proc/{zombie.pid}/stat").read().split(") ")[1].startswith("Z"), timeout=5)
    pidfile = tmp_path / "app.pid"
    pidfile.write_text(f"{zombie.pid}\n")
    port = free_port()
    daemon = subprocess.Popen([PERFHUD, "daemon", "--pidfile", str(pidfile), "--metrics-listen", f"127.0.0.1:{port}",
                               "--events", str(tmp_path / "e.sock"), "--tick", "100ms"],
                              stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: listening(port), timeout=15)
        ups = []
        end = time.monotonic() + 5   # at least two discovery rounds
        while time.monotonic() < end:
            ups.append(value(port, "perfhud_target_up"))
            time.sleep(0.1)
        assert set(ups) == {0.0}, ups
    finally:
        daemon.terminate()
        _, err = daemon.communicate(timeout=10)
        zombie.wait()
    assert "target is up" not in err and "went away" not in err, err
    reasons = [line for line in err.splitlines() if line.startswith("perfhud: notice: waiting for")]
    assert len(reasons) == 1 and f"PID {zombie.pid} from {pidfile} is not running" in reasons[0], err
