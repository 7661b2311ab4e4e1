"""The event socket against real senders: the Python `datadog` package's DogStatsd client and raw
datagrams. Figures are checked against the definitions in PRODUCT.md."""
import json
import math
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import PERFHUD, perfhud, json_rows_of


def run_sender(script, *options, count=None, duration="6s", tick="250ms", timeout=60):
    """`perfhud run` a Python sender; returns perfhud's JSON reports and the sender's output."""
    args = ["run", "--output", "json", "--tick", tick, *options]
    args += ["--count", str(count)] if count else ["--duration", duration]
    result = perfhud(*args, "--", sys.executable, "-c", textwrap.dedent(script), timeout=timeout)
    reports = json_rows_of(result.stdout)
    return reports, result


def nearest_rank(values, percent):
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]


def test_dogstatsd_client_actions_rates_and_high_frequency_flags():
    # Two labels at steady rates for 4 s with absolute deadlines: 100/s and 10/s. Threshold 20.
    script = """
        import os, time
        from datadog.dogstatsd import DogStatsd
        client = DogStatsd(socket_path=os.environ["PERFHUD_SOCKET"], disable_telemetry=True, disable_buffering=True)
        start = time.monotonic() + 0.3
        for i in range(400):
            deadline = start + i / 100
            while time.monotonic() < deadline: time.sleep(0.0005)
            client.increment("perfhud.action", tags=["action:Slider.changed"])
            if i % 10 == 0: client.increment("perfhud.action", tags=["action:Button.tapped"])
        time.sleep(30)
    """
    reports, result = run_sender(script, "--action-threshold", "20", "--duration", "6s")
    # Python needs a moment to import the client: measure from one second after the first action
    # arrived to the end of the four seconds of sending.
    first = next(r["elapsed_seconds"] for r in reports if r["actions_total"] > 0)
    steady = [r for r in reports if first + 1.2 <= r["elapsed_seconds"] <= first + 3.6]
    assert steady, result.stderr
    for report in steady:
        assert abs(report["actions_per_second"] - 110) <= 2.2, report["actions_per_second"]   # within 2 %
        flagged = {entry["action"]: entry for entry in report["high_frequency_actions"]}
        assert set(flagged) == {"Slider.changed"}, "flagged above the threshold, not below"
        assert abs(flagged["Slider.changed"]["rate"] - 100) <= 2
        assert flagged["Slider.changed"]["peak"] >= flagged["Slider.changed"]["rate"]
    assert reports[-1]["events_malformed"] == 0 and reports[-1]["events_rejected"] == 0


def test_dogstatsd_client_frames_give_exact_percentiles_janky_and_dropped():
    durations = [16.7] * 150 + [33.4] * 30 + [50.1] * 10 + [8.0] * 9 + [120.0]
    random.Random(7).shuffle(durations)
    script = f"""
        import os, time
        from datadog.dogstatsd import DogStatsd
        client = DogStatsd(socket_path=os.environ["PERFHUD_SOCKET"], disable_telemetry=True)
        time.sleep(0.3)
        # This client sends a datagram per line; at most 10 wait in a Unix socket's queue here
        # (net.unix.max_dgram_qlen), so a documented pace: 2000 lines per second.
        for value in {durations!r}:
            client.timing("perfhud.frame", value)
            time.sleep(0.0005)
        client.increment("perfhud.phase", tags=["phase:Measured"])
        client.flush()
        time.sleep(30)
    """
    reports, result = run_sender(script, "--refresh", "60", "--duration", "2s")
    last = reports[-1]
    assert last["events_received"] == len(durations) + 1, result.stderr
    assert last["frame_p50_ms"] == nearest_rank(durations, 50)
    assert last["frame_p95_ms"] == nearest_rank(durations, 95)
    assert last["frame_p99_ms"] == nearest_rank(durations, 99)
    assert abs(last["fps_1pct_low"] - 1000 / nearest_rank(durations, 99)) < 0.01
    budget = 1000 / 60
    assert last["janky_frames"] == sum(1 for d in durations if d > 1.5 * budget)
    assert last["dropped_frames"] == sum(max(0, round(d / budget) - 1) for d in durations)
    assert last["phase"] == "Measured"


def test_packed_values_sample_rates_namespaces_and_multiline_datagrams():
    script = """
        import os, socket, time
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.connect(os.environ["PERFHUD_SOCKET"])
        time.sleep(0.3)
        s.send(b"perfhud.frame:10:20:30:40|d\\nmyapp.perfhud.action:3|c|@0.5|#action:Scaled\\nbroken line\\nperfhud.action:1|c|#env:x,action:Tagged\\nother.metric:5|g")
        s.send(b"perfhud.frame:16|ms|@0.25")
        time.sleep(30)
    """
    reports, _ = run_sender(script, "--duration", "1.5s")
    last = reports[-1]
    assert last["events_received"] == 6
    assert last["events_malformed"] == 1, "the broken line, and only it"
    assert last["events_ignored"] == 1
    assert last["frames_total"] == 4 + 4, "four packed values, and one frame sampled at 25 %"
    assert last["actions_total"] == 6 + 1, "3 at a 50 % sample rate count 6"
    assert last["frame_p50_ms"] == 20, "nearest rank of 10, 16, 20, 30, 40"


def test_accept_from_target_rejects_a_stranger(tmp_path):
    path = str(tmp_path / "events.sock")
    sender = "import socket, sys; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b'perfhud.action:1|c|#action:X', sys.argv[1])"
    watched = subprocess.Popen(["sleep", "30"])
    try:
        proc = subprocess.Popen([PERFHUD, "attach", str(watched.pid), "--events", path, "--accept-from", "target",
                                 "--output", "json", "--tick", "200ms", "--duration", "1.5s"],
                                stdout=subprocess.PIPE, text=True)
        for _ in range(50):
            if os.path.exists(path):
                break
            time.sleep(0.02)
        subprocess.run([sys.executable, "-c", sender, path], check=True)   # not the target's descendant
        out, _ = proc.communicate(timeout=30)
    finally:
        watched.kill()
    last = json_rows_of(out)[-1]
    assert last["events_rejected"] == 1
    assert last["events_rejected_by_reason"] == {"peer": 1}
    assert last["actions_total"] == 0
    assert not os.path.exists(path), "the socket is removed on exit"


def test_target_and_stranger_interleaved_in_one_batch_are_each_judged(tmp_path):
    """The receiver decides once per run of datagrams from one sender: the target's, a stranger's
    and the target's again, queued while perfhud is stopped so that one recvmmsg takes all nine,
    are accepted, refused and accepted."""
    path = str(tmp_path / "events.sock")
    target_script = textwrap.dedent("""
        import socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        for line in sys.stdin:
            for _ in range(3):
                s.sendto(b'perfhud.action:1|c|#action:Target', sys.argv[1])
            print('sent', flush=True)
    """)
    stranger = ("import socket, sys; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                "for _ in range(3): s.sendto(b'perfhud.action:1|c|#action:Stranger', sys.argv[1])")
    target = subprocess.Popen([sys.executable, "-c", target_script, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        proc = subprocess.Popen([PERFHUD, "attach", str(target.pid), "--events", path, "--accept-from", "target",
                                 "--output", "json", "--tick", "200ms", "--duration", "2.5s"],
                                stdout=subprocess.PIPE, text=True)
        for _ in range(250):
            if os.path.exists(path):
                break
            time.sleep(0.02)
        time.sleep(0.3)
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            for sender in ("target", "stranger", "target"):
                if sender == "target":
                    target.stdin.write("go\n"); target.stdin.flush()
                    assert target.stdout.readline().strip() == "sent"
                else:
                    subprocess.run([sys.executable, "-c", stranger, path], check=True, timeout=10)
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        out, _ = proc.communicate(timeout=30)
    finally:
        target.kill()
    last = json_rows_of(out)[-1]
    assert last["events_received"] == 6
    assert last["actions_total"] == 6, "the target's six, before and after the stranger's"
    assert last["events_rejected_by_reason"] == {"peer": 3}


def test_socket_file_and_directory_modes(tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    script = "import os, stat, time; p = os.environ['PERFHUD_SOCKET']; print(oct(os.stat(p).st_mode & 0o777), oct(os.stat(os.path.dirname(p)).st_mode & 0o777), flush=True); time.sleep(30)"
    result = perfhud("run", "--output", "json", "--duration", "1s", "--", sys.executable, "-c", script,
                     env=dict(os.environ, XDG_RUNTIME_DIR=str(runtime)))
    assert "0o600 0o700" in result.stderr
    assert os.listdir(runtime / "perfhud") == [], "socket and its PID link removed on exit"


def test_socket_path_attacks_are_refused(tmp_path):
    target = subprocess.Popen(["sleep", "30"])
    try:
        link = tmp_path / "link.sock"
        link.symlink_to(tmp_path / "elsewhere")
        result = perfhud("attach", str(target.pid), "--events", str(link), "--count", "1")
        assert result.returncode == 73 and "symbolic link" in result.stderr
        assert not (tmp_path / "elsewhere").exists()

        regular = tmp_path / "file.sock"
        regular.write_text("precious")
        result = perfhud("attach", str(target.pid), "--events", str(regular), "--count", "1")
        assert result.returncode == 73 and "not our socket" in result.stderr
        assert regular.read_text() == "precious", "nothing lost"

        stale = tmp_path / "stale.sock"
        leftover = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        leftover.bind(str(stale))
        leftover.close()        # a crash leaves the file behind
        result = perfhud("attach", str(target.pid), "--events", str(stale), "--count", "2", "--output", "json")
        assert result.returncode == 0, result.stderr

        live = tmp_path / "live.sock"
        first = subprocess.Popen([PERFHUD, "attach", str(target.pid), "--events", str(live), "--duration", "5s", "--output", "json"],
                                 stdout=subprocess.DEVNULL)
        for _ in range(100):
            if live.exists():
                break
            time.sleep(0.02)
        result = perfhud("attach", str(target.pid), "--events", str(live), "--count", "1")
        first.terminate()
        first.wait()
        assert result.returncode == 73 and "in use" in result.stderr

        unsafe = tmp_path / "unsafe"
        (unsafe / "perfhud").mkdir(parents=True)
        os.chmod(unsafe / "perfhud", 0o777)
        result = perfhud("attach", str(target.pid), "--count", "1", "--output", "json", env=dict(os.environ, XDG_RUNTIME_DIR=str(unsafe)))
        assert result.returncode == 0
        assert "others may access it" in result.stderr, "warned, and fell back to /tmp/perfhud-UID"
    finally:
        target.kill()


def test_flood_of_random_labels_and_garbage_keeps_memory_bounded():
    script = """
        import os, random, socket, time
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.connect(os.environ["PERFHUD_SOCKET"])
        s.setblocking(False)
        rng = random.Random(1)
        time.sleep(0.2)
        end = time.monotonic() + 3
        sent = 0
        while time.monotonic() < end:
            lines = []
            for _ in range(32):
                if rng.random() < 0.2:
                    lines.append(bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 60))).replace(b"\\n", b""))
                else:
                    lines.append(b"perfhud.action:1|c|#action:label-%d" % rng.getrandbits(40))
            try:
                s.send(b"\\n".join(lines)); sent += 1
            except BlockingIOError:
                time.sleep(0.0002)
        print("sent", sent, flush=True)
        time.sleep(30)
    """
    reports, result = run_sender(script, "--duration", "4s", "--tick", "200ms")
    last = reports[-1]
    assert last["events_received"] > 50_000, last["events_received"]
    assert last["events_malformed"] > 0
    assert len(reports) >= 15, "reports kept coming during the flood"
    rss = [r["rss_bytes"] for r in reports if r["rss_bytes"]]
    perfhud_rss = None
    assert last["actions_total"] > 0


def test_perfhud_memory_stays_bounded_under_100k_labels():
    """perfhud's own RSS after 100,000 distinct labels: capped at --max-action-labels."""
    sender = textwrap.dedent("""
        import os, socket, sys, time
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        for i in range(0, 100000, 50):
            batch = b"\\n".join(b"perfhud.action:1|c|#action:L%06d-%s" % (j, b"x" * 150) for j in range(i, i + 50))
            while True:
                try:
                    s.sendto(batch, sys.argv[1]); break
                except BlockingIOError:
                    time.sleep(0.001)
                except OSError:
                    time.sleep(0.001)
    """)
    target = subprocess.Popen(["sleep", "60"])
    path = f"/tmp/perfhud-flood-{os.getpid()}.sock"
    proc = subprocess.Popen([PERFHUD, "attach", str(target.pid), "--events", path, "--output", "json", "--tick", "200ms"],
                            stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            if os.path.exists(path):
                break
            time.sleep(0.02)
        before = int(open(f"/proc/{proc.pid}/status").read().split("VmRSS:")[1].split()[0])
        subprocess.run([sys.executable, "-c", sender, path], check=True, timeout=120)
        time.sleep(0.5)
        after = int(open(f"/proc/{proc.pid}/status").read().split("VmRSS:")[1].split()[0])
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
        target.kill()
    last = json_rows_of(out)[-1]
    assert last["actions_total"] == 100000, "every action counted, the overflow as __other__"
    assert after - before < 20 * 1024, f"perfhud grew {after - before} KiB"


PRINT_CHANGES = """received action:
  Feature.Action.slider(
    .changed(0.5)
  )
  (No state changes)

received action: Feature.Action.buttonTapped
received action:
  Feature.Action.moved(x: 1, y: 2)
  Feature.State(
-   position: 0
+   position: 1
  )
"""


def test_actions_from_a_growing_file_and_from_standard_input(tmp_path):
    log = tmp_path / "reducer.log"
    log.write_text(PRINT_CHANGES)
    target = subprocess.Popen(["sleep", "30"])
    try:
        proc = subprocess.Popen([PERFHUD, "attach", str(target.pid), "--actions-from", str(log), "--output", "json",
                                 "--tick", "100ms", "--duration", "1.5s"], stdout=subprocess.PIPE, text=True)
        time.sleep(0.6)
        with open(log, "a") as more:        # the program keeps logging: followed like tail -f
            more.write('{"action": "Json.Action.saved"}\n')
        out, _ = proc.communicate(timeout=30)
        assert json_rows_of(out)[-1]["actions_total"] == 4

        piped = subprocess.run([PERFHUD, "attach", str(target.pid), "--actions-from", "-", "--output", "json", "--count", "5"],
                               input=PRINT_CHANGES, capture_output=True, text=True, timeout=30)
        assert json_rows_of(piped.stdout)[-1]["actions_total"] == 3
    finally:
        target.kill()
    missing = perfhud("attach", str(os.getpid()), "--actions-from", str(tmp_path / "nope.log"), "--count", "1")
    assert missing.returncode == 66 and "cannot read" in missing.stderr


def test_actions_from_the_programs_own_output():
    script = "import sys, time\nfor i in range(30):\n    print('\\x1b[2mreceived action: Out.Action.tick\\x1b[0m', flush=True)\n    time.sleep(0.01)\ntime.sleep(30)"
    reports, _ = run_sender(script, "--actions-from-output", "--action-threshold", "20", "--duration", "2s")
    assert reports[-1]["actions_total"] == 30
    assert any(r["high_frequency_actions"] and r["high_frequency_actions"][0]["action"] == "Out.Action.tick" for r in reports)


def test_actions_from_refuses_a_directory_an_unreadable_file_and_attach_output(tmp_path):
    target = subprocess.Popen(["sleep", "30"])
    try:
        directory = perfhud("attach", str(target.pid), "--actions-from", str(tmp_path), "--count", "1")
        assert directory.returncode == 66 and directory.stderr.count("\n") == 1 and "is a directory" in directory.stderr, directory.stderr
        secret = tmp_path / "secret.log"
        secret.write_text("received action: A.b\n")
        secret.chmod(0)
        unreadable = subprocess.run(["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups", PERFHUD, "attach",
                                     str(target.pid), "--actions-from", str(secret), "--count", "1"],
                                    capture_output=True, text=True, timeout=30)
        assert unreadable.returncode == 77 and f"cannot read {secret}" in unreadable.stderr and unreadable.stderr.count("\n") == 1, unreadable.stderr
        attach_output = perfhud("attach", str(target.pid), "--actions-from-output", "--count", "1")
        assert attach_output.returncode == 64 and "use it with run" in attach_output.stderr and attach_output.stderr.count("\n") == 1
    finally:
        target.kill()
        target.wait()


def test_actions_from_follows_a_log_that_is_truncated_rotated_or_recreated(tmp_path):
    log = tmp_path / "reducer.log"
    log.write_text("received action: A.one\nreceived action: A.two\n")
    target = subprocess.Popen(["sleep", "30"])
    try:
        # Rows go to a file: a pipe nobody reads for 5 s fills (perfhud then drops rows, as it must
        # for a peer that stops reading), and this test is about the log, not the reader.
        rows_file = open(tmp_path / "rows.json", "w+")
        proc = subprocess.Popen([PERFHUD, "attach", str(target.pid), "--actions-from", str(log), "--output", "json",
                                 "--tick", "100ms", "--duration", "5s"], stdout=rows_file, text=True)
        time.sleep(1)
        log.write_text("received action: B.afterTruncation\n")          # truncated and rewritten
        time.sleep(1.2)
        log.rename(tmp_path / "reducer.log.1")                           # rotated, like logrotate
        with open(tmp_path / "reducer.log.1", "a") as old:
            old.write("received action: C.lastOfTheOldFile\n")
        log.write_text("received action: D.newFile\n")
        time.sleep(1.2)
        log.unlink()                                                     # deleted and created anew
        time.sleep(0.3)
        log.write_text("received action: E.recreated\n")
        proc.wait(timeout=30)
        rows_file.seek(0)
        out = rows_file.read()
    finally:
        target.kill()
        target.wait()
    assert json_rows_of(out)[-1]["actions_total"] == 6, out.splitlines()[-1]


def test_emit_sends_tca_labels_whole_from_a_shell_script():
    """`perfhud emit` from a script run under perfhud: labels with commas and colons (TCA's
    `moved(x:, y:)`) arrive as written, the phase too."""
    label = "Feature.Action.moved(x:, y:)"
    script = f"for i in 1 2 3 4 5; do {PERFHUD} emit action '{label}'; done; {PERFHUD} emit phase Gallery; sleep 1.2"
    result = perfhud("run", "--output", "json", "--tick", "100ms", "--action-threshold", "1", "--", "sh", "-c", script, timeout=30)
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    assert rows[-1]["actions_total"] == 5 and rows[-1]["events_malformed"] == 0, rows[-1]
    assert rows[-1]["phase"] == "Gallery"
    assert any(entry["action"] == label for row in rows for entry in row["high_frequency_actions"]), rows[-1]
    refused = perfhud("emit", "action", "a|b", "--events", "/nonexistent")
    assert refused.returncode == 64 and "cannot contain newlines or '|'" in refused.stderr
