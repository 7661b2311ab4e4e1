"""`perfhud status`: a status bar's line. One answer's rates over the time since the call before
(against the kernel's own count over the same span), every format, waybar reading `--follow` under a
headless Wayland compositor, the i3bar protocol checked, and bad input."""
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "helpers"))
from i3bar_protocol import check_i3bar_stream  # noqa: E402

from conftest import PERFHUD, perfhud, json_rows_of, wait_until  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


@pytest.fixture
def busy():
    process = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    time.sleep(0.2)
    yield process
    process.kill()
    process.wait()


@pytest.fixture(autouse=True)
def private_runtime_directory(tmp_path, monkeypatch):
    """Each test its own state files (`$XDG_RUNTIME_DIR/perfhud`)."""
    directory = tmp_path / "runtime"
    directory.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(directory))
    return directory


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def status(*args):
    done = perfhud("status", *map(str, args))
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_one_answer_is_over_the_time_since_the_call_before(busy):
    first = status(busy.pid)
    assert "no interval yet" in first and "CPU …" in first, first
    started, used = time.monotonic(), cpu_seconds(busy.pid)
    time.sleep(1.0)
    second = status(busy.pid)
    reference = (cpu_seconds(busy.pid) - used) / (time.monotonic() - started) * 100
    said = float(re.search(r"CPU ([0-9.]+)%", second)[1])
    assert abs(said - reference) <= 10, (second, reference)
    # Stopped for a second: the next answer is that second's (0 %), not the average since it started.
    os.kill(busy.pid, signal.SIGSTOP)
    try:
        time.sleep(1.0)
        third = status(busy.pid)
        assert float(re.search(r"CPU ([0-9.]+)%", third)[1]) <= 2, third
    finally:
        os.kill(busy.pid, signal.SIGCONT)


def test_a_pid_used_again_or_a_damaged_state_is_a_first_call(busy, private_runtime_directory):
    status(busy.pid)
    state = next((private_runtime_directory / "perfhud").glob(f"status-{busy.pid}-*"))
    state.write_bytes(b"\x00garbage\xff" * 100)
    assert "no interval yet" in status(busy.pid), "a damaged file is not read as figures"
    assert "no interval yet" not in status(busy.pid), "and it is written anew"


def test_an_alert_for_a_while_holds_across_calls(busy):
    alert = "cpu_percent > 50 for 1s"
    assert "no interval yet" in status(busy.pid, "--alert", alert)
    time.sleep(0.3)
    assert "⚠" not in status(busy.pid, "--alert", alert), "over the line since now"
    time.sleep(0.5)
    assert "⚠" not in status(busy.pid, "--alert", alert), "over the line for 0.5 s only"
    time.sleep(0.7)
    assert f"⚠ {alert}" in status(busy.pid, "--alert", alert), "over the line for 1.2 s"


def test_every_format(busy):
    # Each answer over the 0.3 s since the one before: long enough to be the busy loop's whole CPU.
    def status(*args):
        time.sleep(0.3)
        return globals()["status"](*args)
    status(busy.pid)
    row = json.loads(status(busy.pid, "--format", "json", "--alert", "cpu_percent > 50"))
    live = json_rows_of(perfhud("attach", str(busy.pid), "--output", "json", "--count", "1", "--no-summary",
                                "--alert", "cpu_percent > 50").stdout)[0]
    # The row of --output json, in its order; a session's event figures are there as null (no event socket here).
    assert [key for key in live if key in row] == list(row) and set(live) - set(row) <= {
        "events_rejected_by_reason", "events_ignored", "frames_total", "actions_total", "frames_unreported_reason"}
    assert all(row[key] is None for key in ("fps", "frame_p99_ms", "actions_per_second"))
    assert row["alerts"] == ["cpu_percent > 50"] and row["pid"] == busy.pid
    waybar = json.loads(status(busy.pid, "--format", "waybar", "--alert", "cpu_percent > 50"))
    assert set(waybar) >= {"text", "tooltip", "class", "percentage"} and waybar["class"] == "alert"
    assert 0 <= waybar["percentage"] <= 100 and f"PID {busy.pid} sh" in waybar["text"]
    blocks = json.loads(status(busy.pid, "--format", "i3bar", "--alert", "cpu_percent > 50"))
    assert blocks[0]["urgent"] is True and blocks[0]["full_text"].startswith(f"PID {busy.pid} sh")
    segment = status(busy.pid, "--format", "tmux", "--alert", "cpu_percent > 50")
    assert re.search(r"CPU #\[fg=red,bold\][0-9.]+%#\[fg=default,nobold\]", segment), segment
    assert "\x1b" not in status(busy.pid, "--format", "plain")


def test_names_are_escaped_for_each_bar(tmp_path):
    # A program whose name would run a tmux command, or be Pango markup, or move a terminal's cursor.
    program = tmp_path / "a#(x)<b>\x1b[2J"
    program.write_bytes(open("/bin/sleep", "rb").read())
    program.chmod(0o755)
    process = subprocess.Popen([str(program), "30"])
    try:
        time.sleep(0.2)
        tmux = status(process.pid, "--format", "tmux")
        assert "a##(x)<b>" in tmux and "\x1b" not in tmux
        waybar = json.loads(status(process.pid, "--format", "waybar"))
        assert "a#(x)&lt;b&gt;" in waybar["text"] and "<b>" not in waybar["text"]
        assert "\x1b" not in status(process.pid)
    finally:
        process.kill()


def test_i3bar_follow_is_the_protocol(busy):
    process = subprocess.Popen([PERFHUD, "status", str(busy.pid), "--follow", "--format", "i3bar", "--tick", "200ms",
                                "--alert", "cpu_percent > 50 for 500ms"], stdout=subprocess.PIPE, text=True)
    time.sleep(2.0)
    process.terminate()
    output = process.communicate(timeout=10)[0]
    lines = check_i3bar_stream(output)
    assert len(lines) >= 6
    assert not any(block.get("urgent") for block in lines[1][:1]), "not over the line for 500 ms yet"
    assert lines[-1][0]["urgent"] is True and lines[-1][0]["color"] == "#FF5555"


def test_waybar_reads_follow_without_a_parse_error(busy, tmp_path):
    from waybar_bar import missing_programs, waybar_parse_errors, waybar_with_module
    if missing_programs():
        pytest.skip(f"{missing_programs()} are installed by `make test`")
    command = f"{PERFHUD} status {busy.pid} --follow --format waybar --alert 'cpu_percent > 50'"
    with waybar_with_module(command, tmp_path) as bar:
        bar.wait_for_log(r"Bar configured")
        time.sleep(3)
        assert bar.alive()
        assert waybar_parse_errors(bar.log()) == []
        picture = bar.screenshot(tmp_path / "waybar.png")
        assert picture.stat().st_size > 0
        width, height, rows = bar.pixels()
        red = sum(1 for row in rows[:40] for (r, g, b) in row if r > 200 and g < 80 and b < 80)
        assert red > 50, "the module in the alert colour (class alert) at the top"


@pytest.mark.parametrize("args, status_code, message", [
    (["999999"], 66, "no process with PID 999999"),
    ([], 64, "status wants the PID of a running process"),
    (["abc"], 64, "status wants the PID of a running process"),
    (["1", "--format", "xml"], 64, "--format wants plain, json, waybar, i3bar or tmux; got 'xml'"),
    (["1", "--follow", "--tick", "5ms"], 64, "--tick wants a duration such as 1s, from 100ms to 10s"),
    (["--match", "sleep"], 64, "a group's status needs --follow"),
    (["1", "--alert", "cpu > 5"], 64, "cannot read --alert \"cpu > 5\""),
    (["--restore"], 64, "give both"),
])
def test_bad_input_is_one_line_and_a_status(args, status_code, message):
    done = perfhud("status", *args)
    assert done.returncode == status_code, (done.returncode, done.stderr)
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert done.stdout == ""


def test_a_daemons_target_is_read_from_the_daemon_not_sampled_again():
    from test_daemon import Daemon
    web = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    idle = subprocess.Popen(["sleep", "60"])
    daemon = Daemon("--pid", f"web={web.pid}", "--pid", f"idle={idle.pid}", "--alert", "cpu_percent > 50", "--full-every", "500ms")
    try:
        directory = daemon.events   # with several targets, the directory of their sockets and feeds
        assert wait_until(lambda: "⚠ cpu_percent > 50" in perfhud("status", "--target", "web", "--events", directory).stdout, timeout=15)
        line = status("--target", "web", "--events", directory)
        assert f"PID {web.pid} sh" in line and re.search(r"CPU (9\d|1\d\d)\.\d%", line), line
        # The row as the daemon made it (the daemon's own alerts in it), not a sample of this call.
        row = json.loads(status("--target", "web", "--events", directory, "--format", "json"))
        assert row["pid"] == web.pid and row["alerts"] == ["cpu_percent > 50"]
        follow = subprocess.Popen([PERFHUD, "status", "--target", "idle", "--events", directory, "--follow", "--format", "i3bar"],
                                  stdout=subprocess.PIPE, text=True)
        time.sleep(2.0)
        follow.terminate()
        lines = check_i3bar_stream(follow.communicate(timeout=10)[0])
        assert len(lines) >= 3 and all(f"PID {idle.pid} sleep" in line[0]["full_text"] for line in lines)
        missing = perfhud("status", "--target", "nobody", "--events", directory)
        assert missing.returncode == 69 and missing.stderr.count("\n") == 1 and "no daemon feeds a target named \"nobody\"" in missing.stderr
    finally:
        daemon.stop()
        web.kill()
        idle.kill()
