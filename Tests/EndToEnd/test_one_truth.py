"""One run, one truth: the same run read at every sink — the live JSON rows, the HUD's end summary
(pyte), the recording (its `samples`, `frames` and `phases` views, with the sqlite3 command),
`report --format json` and `replay --output json` — says the same, and what it says is what the
program did: frames by when they ended (a real vkcube on lavapipe; a GL program at a steady 60
FPS; frames still arriving after the last tick), memory by the phase that took it (a program not
ours entering phases between ticks and allocating at once)."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import PERFHUD, ROOT, perfhud
from test_frame_hooks import display, egl_env, gl_frames, hooks_built, need  # noqa: F401 (fixtures)


def sql(path, query):
    return subprocess.run(["sqlite3", str(path), query], capture_output=True, text=True, check=True).stdout.split()


def report(path):
    result = perfhud("report", str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def replayed_rows(path):
    result = perfhud("replay", str(path), "--output", "json")
    assert result.returncode == 0, result.stderr
    return result.stdout


def recorded_json_run(tmp_path, *program, env=None, tick="100ms", options=()):
    """`perfhud run --record --output json` of `program`: its rows (text and parsed) and the recording."""
    path = tmp_path / "run.db"
    result = perfhud("run", "--record", str(path), "--output", "json", "--tick", tick, *options, "--", *program,
                     env=dict(os.environ, **(env or {})), timeout=120)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows, result.stderr
    return result.stdout, rows, path


def assert_every_sink_counts(frames, text, rows, path):
    """The exit row, the recording (its last sample and its frames), the report and the replay."""
    assert rows[-1]["frames_total"] == frames and rows[-1]["alive"] is False and rows[-1]["exit_code"] == 0, rows[-1]
    assert [float(value) for value in sql(path, "select count(*) from frames; select frames_total from samples order by t desc limit 1")] == [frames, frames]
    assert report(path)["frames"] == frames
    assert replayed_rows(path) == text, "replay gives back the live rows, byte for byte"


def test_vkcube_says_299_frames_at_every_sink(tmp_path, display):
    need("vkcube")
    env = {"DISPLAY": display}
    text, rows, path = recorded_json_run(tmp_path, "vkcube", "--c", "300", env=env)
    assert rows[-1]["frame_source"] == "vulkan"
    assert_every_sink_counts(299, text, rows, path)


def test_vkcube_under_the_hud_sums_up_what_it_recorded(tmp_path, display, terminal):
    need("vkcube")
    path = tmp_path / "hud.db"
    hud = terminal(["run", "--record", str(path), "--", "vkcube", "--c", "300"], env={"DISPLAY": display}, rows=40, columns=160)
    assert hud.finish(timeout=120) == 0
    summary = " ".join(line.strip() for line in hud.screen.display)
    assert re.search(r"frames 299 \(", summary), summary
    assert sql(path, "select count(*) from frames") == ["299"]
    figures = report(path)
    assert figures["frames"] == 299
    # The summary's figures are the report's, at the resolution the summary prints them.
    cpu = re.search(r"CPU avg ([0-9.]+)% \(peak ([0-9.]+)%\)", summary)
    assert cpu and abs(float(cpu[1]) - figures["cpu_percent_avg"]) <= 0.051 and abs(float(cpu[2]) - figures["cpu_percent_max"]) <= 0.051, (summary, figures)
    fps = re.search(r"frames 299 \(([0-9]+) FPS avg", summary)
    assert fps and abs(int(fps[1]) - figures["fps_avg"]) <= 0.51, (summary, figures)


def test_frames_that_arrive_after_the_last_tick_count_everywhere(tmp_path, gl_frames):
    # 40 presents and the program exits at once: the hook sends its last batch as the program
    # exits, after perfhud's last regular tick. They are in the exit row and in every sink.
    text, rows, path = recorded_json_run(tmp_path, gl_frames, "draw", "40", env=egl_env(), tick="1s")
    assert_every_sink_counts(39, text, rows, path)


def test_a_steady_60_fps_is_60_live_in_the_recording_and_in_the_replay(tmp_path, gl_frames):
    text, rows, path = recorded_json_run(tmp_path, gl_frames, "paced", "360", "60", env=egl_env())
    assert_every_sink_counts(359, text, rows, path)
    first = next(row["elapsed_seconds"] for row in rows if row["frames_total"])
    steady = [row for row in rows if first + 1.5 <= row["elapsed_seconds"] <= rows[-1]["elapsed_seconds"] - 0.3]
    assert len(steady) >= 25, rows
    assert all(57 <= row["fps"] <= 63 for row in steady), [row["fps"] for row in steady]
    # One sample a row, in order (the exit row too): the recording keeps each row's FPS.
    recorded = [None if value == "" else float(value) for value in
                subprocess.run(["sqlite3", str(path), "select coalesce(fps, '') from samples order by t"],
                               capture_output=True, text=True, check=True).stdout.splitlines()]
    assert len(recorded) == len(rows)
    assert recorded == [row["fps"] for row in rows]
    summary = report(path)
    assert 59 <= summary["fps_avg"] <= 61, summary


# A program not ours: enters four phases, several times, each between two ticks, and allocates
# (and keeps) its memory at once after telling perfhud. Each phase's kept memory is what it took.
PHASES = """
import os, random, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.connect(os.environ["PERFHUD_SOCKET"])
random.seed(int(sys.argv[1]))
sizes = {"Home": 4, "Gallery": 12, "Editor": 8, "Settings": 6}
keep = []
time.sleep(0.35)
for _ in range(3):
    for name, mib in sizes.items():
        time.sleep(0.2 + random.random() * 0.1)
        s.send(f"perfhud.phase:1|c|#phase:{name}".encode())
        keep.append(b"\\x01" * (mib << 20))   # allocated and touched at once, kept
time.sleep(0.3)
s.send(b"perfhud.phase:1|c|#phase:End")
time.sleep(0.3)
"""


@pytest.mark.parametrize("seed", [1, 2])
def test_memory_belongs_to_the_phase_that_took_it(tmp_path, seed):
    program = tmp_path / "phases.py"
    program.write_text(PHASES)
    text, rows, path = recorded_json_run(tmp_path, sys.executable, str(program), str(seed), tick="100ms")
    mib = 1 << 20
    expected = {"Home": 4, "Gallery": 12, "Editor": 8, "Settings": 6}
    visits = [(name, int(entry), int(exit_)) for name, entry, exit_ in
              (line.split("|") for line in sql(path, "select name || '|' || rss_entry_bytes || '|' || rss_exit_bytes from phases where t_exit is not null"))]
    assert len(visits) == 12, visits
    for name, entry, exit_ in visits:
        assert abs((exit_ - entry) - expected[name] * mib) <= mib, (name, (exit_ - entry) / mib)
    phases = {phase["name"]: phase for phase in report(path)["phases"]}
    for name, size in expected.items():
        assert abs(phases[name]["kept_bytes"] - 3 * size * mib) <= 3 * mib, (name, phases[name])
    assert replayed_rows(path) == text


def test_a_terminal_programs_frames_at_every_sink(tmp_path):
    # 150 synchronized updates 10 ms apart (frames measured from the program's terminal output):
    # 149 frames live, in the recording, the report and the replay.
    helper = str(ROOT / "Tests/EndToEnd/helpers/tty_frames.py")
    text, rows, path = recorded_json_run(tmp_path, sys.executable, helper, "frames", "10", "150", "1000", "10")
    assert rows[-1]["frame_source"] == "tty"
    assert_every_sink_counts(149, text, rows, path)
