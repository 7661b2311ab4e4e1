"""Exit codes and one-line errors, off a terminal."""
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import PERFHUD, perfhud, json_rows_of

JSON_KEYS = {
    "time": str, "pid": int, "alive": bool, "cpu_percent": (int, float, type(None)),
    "cpu_machine_percent": (int, float, type(None)), "cpu_user_percent": (int, float, type(None)),
    "cpu_system_percent": (int, float, type(None)), "rss_bytes": int, "pss_bytes": (int, type(None)),
    "vsize_bytes": int, "threads": int,
}
NUMBER = (int, float)
OPTIONAL_NUMBER = (int, float, type(None))
EVENT_KEYS = {
    "fps": OPTIONAL_NUMBER, "frame_p50_ms": OPTIONAL_NUMBER, "frame_p95_ms": OPTIONAL_NUMBER,
    "frame_p99_ms": OPTIONAL_NUMBER, "fps_1pct_low": OPTIONAL_NUMBER, "janky_frames": NUMBER,
    "dropped_frames": NUMBER, "actions_per_second": NUMBER, "high_frequency_actions": list,
    "phase": (str, type(None)), "events_received": int, "events_malformed": int, "events_rejected": int,
}


def one_line(stderr):
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got: {stderr!r}"
    assert "Traceback" not in stderr and "Fatal error" not in stderr
    return lines[0]


def test_missing_pid_exits_66():
    result = perfhud("attach", "4194000")
    assert result.returncode == 66
    assert "no process with PID 4194000" in one_line(result.stderr)


@pytest.mark.parametrize("args", [
    ["attach", "abc"], ["attach"], ["attach", "1", "--tick", "0ms"], ["attach", "1", "--tick", "fast"],
    ["attach", "1", "--tick", "20s"], ["attach", "1", "--history", "1ms"], ["attach", "1", "--count", "0"],
    ["attach", "1", "--output", "xml"], ["run"], ["nonsense"], ["attach", "-5"],
])
def test_malformed_arguments_exit_64(args):
    result = perfhud(*args)
    assert result.returncode == 64, result
    line = one_line(result.stderr)
    assert line.startswith("perfhud: ")


def test_unreadable_process_exits_77(burn):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root to mount a private /proc with hidepid")
    # A private /proc with hidepid=1: another user's /proc/PID exists but may not be read.
    script = f"mount -t proc -o hidepid=1 proc /proc && exec setpriv --reuid=65534 --regid=65534 --clear-groups {PERFHUD} attach 1 --count 1"
    result = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 77, result
    assert "may not read process 1" in one_line(result.stderr)


def test_json_keys_and_types(burn):
    target = subprocess.Popen([burn, "rest", "20"], stdout=subprocess.PIPE)
    target.stdout.readline()
    result = perfhud("attach", str(target.pid), "--output", "json", "--count", "3", "--tick", "100ms")
    target.kill()
    assert result.returncode == 0, result.stderr
    reports = json_rows_of(result.stdout)
    assert len(reports) == 3
    for report in reports:
        for key, kind in JSON_KEYS.items():
            assert key in report and isinstance(report[key], kind), (key, report.get(key))
        for key, kind in EVENT_KEYS.items():
            assert key in report and isinstance(report[key], kind), (key, report.get(key))
        assert report["fps"] is None and report["frame_p99_ms"] is None, "no frame reported yet: unknown, not 0"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", report["time"])
        assert report["pid"] == target.pid and report["alive"] is True
    # The first row's window is the process's life; one younger than a second (its start time is
    # in 10 ms ticks) has none yet (test_first_figures: one older has).
    assert reports[0]["cpu_percent"] is None, "no window before the second sample for a process this young"
    assert isinstance(reports[1]["cpu_percent"], (int, float))


def test_plain_output_is_one_line_per_report():
    result = perfhud("attach", str(os.getpid()), "--count", "4", "--tick", "50ms")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 4
    assert all(f"PID {os.getpid()}" in line and "RSS" in line for line in lines)


def test_duration_stops(burn):
    start = time.monotonic()
    result = perfhud("attach", str(os.getpid()), "--duration", "1s", "--output", "json", "--report-every", "250ms")
    took = time.monotonic() - start
    assert result.returncode == 0
    assert 0.9 <= took < 5
    assert 3 <= len(result.stdout.splitlines()) <= 6


def test_run_exit_status_off_a_terminal():
    assert perfhud("run", "--", "sh", "-c", "exit 7").returncode == 7
    assert perfhud("run", "--", "sh", "-c", "kill -KILL $$").returncode == 137
    result = perfhud("run", "--", "no-such-command-xyz")
    assert result.returncode == 127
    assert "no-such-command-xyz" in one_line(result.stderr)


def test_run_passes_output_through_and_keeps_stdout_for_reports():
    result = perfhud("run", "--output", "json", "--", "sh", "-c", "echo hello-from-child; sleep 0.5")
    assert result.returncode == 0
    assert "hello-from-child" in result.stderr
    for line in result.stdout.splitlines():
        json.loads(line)


def test_attach_exits_0_when_the_target_ends():
    target = subprocess.Popen(["sleep", "0.7"])
    result = perfhud("attach", str(target.pid), "--tick", "100ms")
    assert result.returncode == 0
    assert "exited" in result.stdout.splitlines()[-1]


def test_pss_is_null_not_zero_when_unreadable():
    if os.geteuid() != 0:
        pytest.skip("needs root to drop to another user")
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", PERFHUD, "attach",
                                 str(sleeper.pid), "--output", "json", "--count", "2"],
                                capture_output=True, text=True, timeout=30)
    finally:
        sleeper.kill()
    assert result.returncode == 0, result.stderr
    report = json_rows_of(result.stdout)[-1]
    assert report["pss_bytes"] is None
    assert report["rss_bytes"] > 0


def test_demo_shows_cpu_bursts_and_memory_phases_within_seconds():
    result = perfhud("demo", "--output", "json", "--tick", "200ms", "--duration", "9s")
    assert result.returncode == 0, result.stderr
    reports = json_rows_of(result.stdout)
    rss = [r["rss_bytes"] for r in reports if r["rss_bytes"]]
    cpu = [r["cpu_percent"] for r in reports if r["cpu_percent"] is not None]
    assert max(rss) - min(rss) >= 100 << 20, "a heavy phase takes at least 100 MiB"
    peak = rss.index(max(rss[:len(rss) // 2]))
    assert min(rss[peak:]) < rss[peak] - (50 << 20), "and gives most of it back after the phase"
    assert max(cpu) >= 60 and min(cpu) <= 20, "CPU bursts and quiet phases"
    assert "[demo]" in result.stderr, "the demo's own output"


@pytest.mark.parametrize("command", ["run", "demo"])
def test_count_means_n_reports_and_duration_ends_without_a_contradictory_row(command):
    program = ["--", "sleep", "30"] if command == "run" else []
    counted = perfhud(command, "--output", "json", "--tick", "100ms", "--count", "3", *program, timeout=30)
    rows = json_rows_of(counted.stdout)
    assert len(rows) == 3, counted.stdout
    assert all(row["alive"] and "exit_signal" not in row for row in rows), rows
    timed = perfhud(command, "--output", "json", "--tick", "200ms", "--duration", "1s", *program, timeout=30)
    rows = json_rows_of(timed.stdout)
    assert rows and rows[-1]["alive"] and "exit_signal" not in rows[-1], rows[-1:]
    times = [row["time"] for row in rows]
    assert len(times) == len(set(times)), "no row repeats the previous one"


def test_run_takes_the_command_with_or_without_the_separator():
    # --count 3: the program has two ticks to write before it is stopped (with --count 1 it is
    # stopped at the first sample, which may come before echo has written anything).
    plain = perfhud("run", "--output", "json", "--count", "3", "echo", "without-separator", timeout=30)
    assert plain.returncode == 0 and "without-separator" in plain.stderr, plain.stderr
    separated = perfhud("run", "--output", "json", "--count", "3", "--", "echo", "-n", "with-separator", timeout=30)
    assert separated.returncode == 0 and "with-separator" in separated.stderr and "-n" not in separated.stderr
    nothing = perfhud("run")
    assert nothing.returncode == 64 and nothing.stderr == "perfhud: no command given: perfhud run [options] [--] CMD [ARGS]\n"


def test_a_misspelt_command_gets_a_suggestion():
    typo = perfhud("atach", "1")
    assert typo.returncode == 64 and typo.stderr == "perfhud: unknown command 'atach': did you mean 'attach'?\n"
    unknown = perfhud("frobnicate")
    assert unknown.returncode == 64 and "the commands are attach, run, demo, daemon, top, status, emit, report, replay, export" in unknown.stderr
    replay = perfhud("replya", "run.db")
    assert replay.returncode == 64 and replay.stderr == "perfhud: unknown command 'replya': did you mean 'replay'?\n"


def test_a_misspelt_option_is_named_not_the_next_argument():
    for args in (["attach", "--tik", "100ms", "1"], ["run", "--tik", "100ms", "--", "true"], ["run", "--tik=1s", "true"],
                 ["daemon", "--pid", "1", "--tik", "1s"]):
        result = perfhud(*args)
        assert result.returncode == 64, (args, result.stderr)
        assert one_line(result.stderr) == "perfhud: unknown option '--tik': did you mean '--tick'?", args
    # A command's own options stay its own.
    assert perfhud("run", "--output", "json", "--count", "1", "ls", "--all", "/").returncode == 0


def test_the_command_name_follows_an_exec(tmp_path):
    """A launcher that execs the real program (a shell shim, as Debian's python3 can be): the name
    in the reports becomes the real program's within a tick of the exec."""
    shim = tmp_path / "launcher"
    shim.write_text("#!/bin/sh\nsleep 0.6\nexec sleep 5\n")
    shim.chmod(0o755)
    result = perfhud("run", "--output", "json", "--tick", "100ms", "--count", "20", "--", str(shim), timeout=30)
    commands = [row["command"] for row in json_rows_of(result.stdout)]
    assert len(commands) == 20, result.stderr
    assert commands[0] == "launcher", commands
    assert commands[-1] == "sleep", commands
    switched = commands.index("sleep")
    assert all(name == "sleep" for name in commands[switched:]), "once exec'd, it stays the new name"


def kernel_thread():
    """A kernel thread's PID and name (PF_KTHREAD in /proc/PID/stat's flags): kthreadd is PID 2."""
    for pid in sorted(int(entry) for entry in os.listdir("/proc") if entry.isdigit()):
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        if int(stat[stat.rindex(")") + 2:].split()[6]) & 0x00200000:
            return pid, name
    pytest.skip("no kernel thread visible here")


def test_a_kernel_thread_is_named_as_one_and_has_no_memory():
    pid, name = kernel_thread()
    result = perfhud("attach", str(pid), "--output", "json", "--count", "2", "--tick", "50ms")
    assert result.returncode == 0, result.stderr
    assert one_line(result.stderr).startswith(f"perfhud: warning: PID {pid} ({name}) is a kernel thread"), result.stderr
    rows = json_rows_of(result.stdout)
    assert [row["rss_bytes"] for row in rows] == [None, None], "no RSS, not 0 B"


def test_killing_perfhud_ends_the_program_it_ran():
    """kill -9 on perfhud: its end of the program's terminal closes, the terminal hangs up, and the
    program gets SIGHUP as a shell's job does when its terminal window closes — no orphan left."""
    process = subprocess.Popen([PERFHUD, "run", "--output", "json", "--", "sleep", "300"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    program = json.loads(process.stdout.readline())["pid"]
    os.kill(process.pid, 9)
    process.wait()
    deadline = time.time() + 5
    while time.time() < deadline and os.path.exists(f"/proc/{program}"):
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{program}"), "the program perfhud ran is still running"
