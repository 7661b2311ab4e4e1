"""One datagram or one log line never crashes, hangs or stalls perfhud (issue 8): each input a fuzzing
campaign found, against the live binary — it stays alive, ends on time, keeps its memory, and counts
the next good line at once."""
import json
import math
import os
import re
import socket
import subprocess
import time

import pytest

from conftest import PERFHUD, wait_until, json_rows_of
from test_daemon import daemons  # noqa: F401 (the fixture)

STRAY_BRACKET = "received action: A(]\n"
DEEP_DUMP = "received action:\n  Feature.Action.deep(\n" + ("    " + ".(" * 32 + "\n") * 2048 + "  )\n"   # ~136 KiB
DEEP_LINE = "received action: " + ".(" * 65000 + "\n"
GOOD = "received action: Feature.Action.afterwards\n"


def run_measured(argv, timeout):
    """Runs argv; returns (exit status, stdout, seconds, peak RSS in KiB) of that process alone."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = b""
    deadline = started + timeout
    os.set_blocking(proc.stdout.fileno(), False)
    while True:
        chunk = proc.stdout.read()
        if chunk:
            out += chunk
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            out += proc.stdout.read() or b""
            return os.waitstatus_to_exitcode(status), out.decode(), time.monotonic() - started, usage.ru_maxrss
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"{argv} still running after {timeout} s")
        time.sleep(0.05)


@pytest.mark.parametrize("bad", [STRAY_BRACKET, DEEP_DUMP, DEEP_LINE], ids=["stray-bracket", "deep-dump", "deep-line"])
def test_a_bad_reducer_log_ends_on_time_and_the_next_action_counts(tmp_path, bad):
    log = tmp_path / "reducer.log"
    log.write_text(bad + GOOD)
    target = subprocess.Popen(["sleep", "30"])
    try:
        code, out, took, peak = run_measured([PERFHUD, "attach", str(target.pid), "--actions-from", str(log), "--output", "json",
                                             "--tick", "100ms", "--duration", "2s"], timeout=20)
    finally:
        target.kill()
        target.wait()
    assert code == 0
    assert took < 4.5, f"--duration 2s took {took:.1f} s"
    assert json_rows_of(out)[-1]["actions_total"] == 1
    assert peak < 100 * 1024, f"peak RSS {peak} KiB: memory stays bounded"


def test_a_bad_reducer_log_on_standard_input_is_survived_too():
    target = subprocess.Popen(["sleep", "30"])
    try:
        result = subprocess.run([PERFHUD, "attach", str(target.pid), "--actions-from", "-", "--output", "json", "--tick", "100ms",
                                 "--duration", "2s"], input=STRAY_BRACKET + DEEP_DUMP + GOOD, capture_output=True, text=True, timeout=20)
    finally:
        target.kill()
        target.wait()
    assert result.returncode == 0, result.stderr
    assert json_rows_of(result.stdout)[-1]["actions_total"] == 1


BAD_DATAGRAMS = [b"perfhud.frame:16|ms|@1e-19", b"perfhud.frame:16|ms|@1e-8", b"perfhud.action:1e19|c|#action:x",
                 b"perfhud.action:1e300|c|@1e-300|#action:y"]


def finite_exposition(text):
    """Every sample value in a /metrics text is a finite number (the histogram's le="+Inf" is a label)."""
    values = [line.rsplit(" ", 1)[1] for line in text.splitlines() if line and not line.startswith("#")]
    return all(math.isfinite(float(value)) for value in values), values


def test_the_daemon_survives_each_datagram_and_counts_the_next_good_line(daemons):
    target = subprocess.Popen(["sleep", "60"])
    daemon = daemons("--pid", str(target.pid), "--accept-from", "same-user")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as client:
            for sent, datagram in enumerate(BAD_DATAGRAMS, start=1):
                started = time.monotonic()
                client.sendto(datagram, daemon.events)
                assert wait_until(lambda: daemon.value("perfhud_events_malformed_total") == sent, timeout=5), datagram
                assert time.monotonic() - started < 2, "ingest did not stall"
                assert daemon.process.poll() is None, f"the daemon died on {datagram!r}"
            client.sendto(b"perfhud.frame:16|ms|@0.5\nperfhud.action:1|c|#action:good", daemon.events)
        assert wait_until(lambda: daemon.value("perfhud_actions_total", '{target="sleep",action="good"}') == 1, timeout=5)
        assert daemon.value("perfhud_frames_total") == 2, "a frame at @0.5 counts twice"
        assert daemon.value("perfhud_frame_duration_seconds_count") == 2
        assert daemon.value("perfhud_frame_duration_seconds_bucket", '{target="sleep",le="0.016666666666666666"}') == 2
        finite, values = finite_exposition(daemon.metrics())
        assert finite, [value for value in values if not math.isfinite(float(value))]
    finally:
        target.kill()
        target.wait()


def test_attach_survives_each_datagram_and_its_json_stays_numeric(tmp_path):
    path = str(tmp_path / "events.sock")
    target = subprocess.Popen(["sleep", "30"])
    proc = subprocess.Popen([PERFHUD, "attach", str(target.pid), "--events", path, "--accept-from", "same-user",
                             "--output", "json", "--tick", "200ms", "--duration", "3s"], stdout=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: os.path.exists(path), timeout=5)
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as client:
            for datagram in BAD_DATAGRAMS:
                client.sendto(datagram, path)
            client.sendto(b"perfhud.frame:16|ms\nperfhud.action:1|c|#action:good", path)
        out, _ = proc.communicate(timeout=15)
    finally:
        target.kill()
        target.wait()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    last = json_rows_of(out)[-1]
    assert last["actions_total"] == 1 and last["frames_total"] == 1, last
    assert last["events_malformed"] == len(BAD_DATAGRAMS)
    for key, value in last.items():
        if isinstance(value, float):
            assert math.isfinite(value), (key, value)
