"""The network where people look at it (issue 33): the HUD's details line and `perfhud top`'s NET
columns, against a real program sending over real loopback connections at a known rate to a
server of its own (another process). The rows, recordings, reports and the daemon's series are
held to the kernel's counters in test_network.py."""
import os
import re
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import perfhud, wait_until
import test_daemon_targets as targets

RATE = 1 << 20          # bytes a second, over CONNECTIONS connections
CONNECTIONS = 3

SERVER = textwrap.dedent("""
    import socket, sys, threading
    listener = socket.socket(); listener.bind(("127.0.0.1", 0)); listener.listen()
    print(listener.getsockname()[1], flush=True)
    def drain(connection):
        while connection.recv(1 << 16):
            pass
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=drain, args=(connection,), daemon=True).start()
""")

# Sends RATE bytes a second, spread over CONNECTIONS connections, in ten slices a second.
SENDER = textwrap.dedent(f"""
    import socket, sys, time
    port = int(sys.argv[1])
    connections = [socket.create_connection(("127.0.0.1", port)) for _ in range({CONNECTIONS})]
    slice_ = b"x" * ({RATE} // 10 // {CONNECTIONS})
    start = time.monotonic()
    for tick in range(10 * 120):
        for connection in connections:
            connection.sendall(slice_)
        time.sleep(max(0, start + (tick + 1) / 10 - time.monotonic()))
""")


@pytest.fixture
def sender():
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    port = server.stdout.readline().strip()
    target = subprocess.Popen([sys.executable, "-c", SENDER, port])
    yield target.pid, server.pid
    for process in (target, server):
        process.kill()
        process.wait()


def test_the_details_line_shows_what_the_target_sends(sender, terminal):
    target, _ = sender
    screen = terminal(["attach", str(target), "--details", "--tick", "250ms"], columns=200)
    found = {}

    def shown(s):
        match = re.search(r"net ↑ ([\d.]+) (KiB|MiB)/s ↓ ([\d.]+) (B|KiB)/s tcp (\d+) rtt ([\d.]+)ms", s.text())
        if match:
            found["match"] = match
        # 1.0 MiB/s sent (within 10 %: a pass is about a second, not exactly one; the sender catches up
        # after a late start on a busy machine, so the first second may say more).
        return match is not None and match.group(2) == "MiB" and 0.9 <= float(match.group(1)) <= 1.1
    screen.wait_for(shown, timeout=15, what="1.0 MiB/s sent on the details line")
    match = found["match"]
    # Next to nothing received (the server's acknowledgements carry no payload), three connections,
    # a loopback round trip.
    assert match.group(4) == "B" and float(match.group(3)) == 0, match.group(0)
    assert int(match.group(5)) == CONNECTIONS, match.group(0)
    assert 0 < float(match.group(6)) < 50, match.group(0)


def test_top_has_the_targets_network(sender):
    target, server = sender
    daemon = targets.Daemon("--pid", f"sender={target}", "--pid", f"server={server}")
    try:
        assert wait_until(lambda: (daemon.value("perfhud_target_network_transmit_bytes_total", '{target="sender"}') or 0) > RATE, timeout=10), \
            daemon.metrics()
        time.sleep(1)
        result = perfhud("top", "--from", f"http://127.0.0.1:{daemon.port}", "--sort", "name", timeout=20,
                         env={**os.environ, "COLUMNS": "200"})
        assert result.returncode == 0, result
        lines = result.stdout.splitlines()
        header = lines[1]
        for title in ("NET ↑", "NET ↓", "TCP", "RETR/s"):
            assert title in header, lines
        row = next(line for line in lines[2:] if line.split()[0] == "sender")
        cells = re.search(r"([\d.]+) (KiB|MiB)/s +([\d.]+) (B|KiB)/s +(\d+) +([\d.]+)", row)
        assert cells, row
        sent = float(cells.group(1)) * (1 << 20 if cells.group(2) == "MiB" else 1 << 10)
        # top's rate is the counter's increase between two of its scrapes: within 15 % of the real rate.
        assert abs(sent - RATE) <= RATE * 0.15, row
        assert int(cells.group(5)) == CONNECTIONS and float(cells.group(6)) == 0, row
        # The server: what it received, the same connections from the other end.
        row = next(line for line in lines[2:] if line.split()[0] == "server")
        cells = re.search(r"([\d.]+) (B|KiB)/s +([\d.]+) (KiB|MiB)/s +(\d+)", row)
        assert cells and float(cells.group(1)) == 0 and int(cells.group(5)) == CONNECTIONS, row
        received = float(cells.group(3)) * (1 << 20 if cells.group(4) == "MiB" else 1 << 10)
        assert abs(received - RATE) <= RATE * 0.15, row
    finally:
        daemon.stop()
