"""--feed PATH: the JSON rows of the ticks to any number of readers of a Unix socket. Three readers
of one run at a 10 ms tick: one that reads everything, one that reads nothing for 2.5 s (the session
does not slow: its rows on standard output keep their tick), one that goes away and comes back."""
import json
import os
import socket
import statistics
import subprocess
import threading
import time

from conftest import PERFHUD, json_rows_of, wait_until

RUN_SECONDS = 5


def lines_of(data):
    return [line for line in data.decode().split("\n") if line]


def test_three_readers_one_that_falls_behind(tmp_path):
    path = str(tmp_path / "feed.sock")
    printed_to = open(tmp_path / "rows", "wb")   # a file: the session's own rows never wait for this test
    session = subprocess.Popen([PERFHUD, "run", "--output", "json", "--tick", "10ms", "--feed", path, "--alert", "threads >= 1",
                                "--", "sleep", str(RUN_SECONDS)], stdout=printed_to, stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: os.path.exists(path), timeout=10)
        assert oct(os.stat(path).st_mode & 0o777) == "0o600"
        stuck = socket.socket(socket.AF_UNIX)
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(path)
        got, visits = bytearray(), [bytearray(), bytearray()]

        def read_all(into, seconds=None):
            connection = socket.socket(socket.AF_UNIX)
            connection.connect(path)
            connection.settimeout(0.1)
            until = time.monotonic() + (seconds or 60)
            while time.monotonic() < until:
                try:
                    chunk = connection.recv(1 << 20)
                except socket.timeout:
                    continue
                if not chunk:
                    break
                into += chunk
            connection.close()

        def behind(into):
            time.sleep(2.5)                    # reads nothing while its socket fills, then everything
            stuck.settimeout(0.1)
            while True:
                try:
                    chunk = stuck.recv(1 << 20)
                except socket.timeout:
                    continue
                if not chunk:
                    break
                into += chunk

        def come_back():
            read_all(visits[0], seconds=1.0)   # reads for a second, goes away,
            time.sleep(1.0)
            read_all(visits[1], seconds=1.0)   # and comes back a second later

        held = bytearray()
        threads = [threading.Thread(target=read_all, args=(got,)), threading.Thread(target=come_back),
                   threading.Thread(target=behind, args=(held,))]
        for thread in threads:
            thread.start()
        err = session.communicate(timeout=30)[1]
        for thread in threads:
            thread.join(timeout=30)
        assert session.returncode == 0, err
        out = (tmp_path / "rows").read_bytes()
        rows = json_rows_of(out.decode())
        # The session kept its tick while a reader read nothing: the rows are 10 ms apart, none held back.
        times = [row["elapsed_seconds"] for row in rows]
        gaps = [b - a for a, b in zip(times, times[1:])]
        assert statistics.median(gaps) <= 0.012 and max(gaps) < 0.2, (statistics.median(gaps), max(gaps))
        assert len(rows) >= RUN_SECONDS * 100 * 0.8
        # The reader that read got the rows of standard output, byte for byte, and in order.
        printed = [line for line in out.decode().split("\n") if line.startswith("{\"time\"")]
        fed = lines_of(bytes(got))
        assert len(fed) >= len(printed) * 0.8
        start = printed.index(fed[0])
        assert fed == printed[start:start + len(fed)]
        assert json.loads(fed[0])["alerts"] == ["threads >= 1"]
        # The one that fell behind: whole rows, then it is told how many it lost, then rows again.
        held_lines = lines_of(bytes(held))
        for line in held_lines:
            json.loads(line)
        notices = [json.loads(line) for line in held_lines if line.startswith("{\"dropped_rows\"")]
        assert notices and sum(notice["dropped_rows"] for notice in notices) > 100, notices
        after = max(index for index, line in enumerate(held_lines) if line.startswith("{\"dropped_rows\""))
        assert len(held_lines) - after > 50, "rows again once it read"
        # The one that came back got rows again.
        assert len(lines_of(visits[0])) >= 50 and len(lines_of(visits[1])) >= 50
        assert all(json.loads(line)["pid"] == rows[0]["pid"] for line in lines_of(bytes(visits[1])))
    finally:
        session.kill()
    assert not os.path.exists(path), "the socket goes with the session"


def test_a_feed_path_that_is_taken_is_refused(tmp_path):
    path = tmp_path / "not-a-socket"
    path.write_text("mine")
    done = subprocess.run([PERFHUD, "run", "--output", "json", "--feed", str(path), "--", "true"], capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and done.stderr.count("\n") == 1 and "refusing" in done.stderr and str(path) in done.stderr
    assert path.read_text() == "mine"


def test_the_daemon_feeds_each_targets_rows_beside_its_event_socket():
    from test_daemon import Daemon
    first = subprocess.Popen(["sleep", "60"])
    second = subprocess.Popen(["sleep", "60"])
    # A row at each full read of its targets (every --full-every; between them the daemon reads RSS alone).
    daemon = Daemon("--pid", f"first={first.pid}", "--pid", f"second={second.pid}", "--alert", "threads >= 1", "--full-every", "500ms")
    try:
        directory = daemon.events   # with several targets, --events is the directory of their sockets
        path = os.path.join(directory, "second.feed")
        assert wait_until(lambda: os.path.exists(path), timeout=10), os.listdir(directory)
        reader = socket.socket(socket.AF_UNIX)
        reader.connect(path)
        reader.settimeout(5)
        data = b""
        while data.count(b"\n") < 3:
            data += reader.recv(1 << 16)
        rows = [json.loads(line) for line in lines_of(data)[:3]]
        assert all(row["pid"] == second.pid and row["alerts"] == ["threads >= 1"] for row in rows)
        assert rows[1]["elapsed_seconds"] > rows[0]["elapsed_seconds"]
    finally:
        daemon.stop()
        first.kill()
        second.kill()
