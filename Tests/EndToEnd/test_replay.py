"""perfhud replay (issue 12): a recording in the same HUD, and the rows the live run printed."""
import json
import re
import shutil
import sqlite3
import time

import pytest

from conftest import ROOT, json_rows_of, perfhud, summary_of


@pytest.fixture(scope="module")
def recorded_json(tmp_path_factory):
    """The demo recorded for 6 s with --output json: the file and the exact text printed live."""
    path = tmp_path_factory.mktemp("replay") / "demo.db"
    result = perfhud("demo", "--output", "json", "--record", str(path), "--duration", "6s")
    assert result.returncode == 0, result.stderr
    return path, result.stdout


def test_replay_json_gives_exactly_the_live_rows(recorded_json):
    path, live = recorded_json
    replayed = perfhud("replay", str(path), "--output", "json")
    assert replayed.returncode == 0, replayed.stderr
    assert len(live.splitlines()) >= 50
    assert replayed.stdout == live
    # export ndjson gives the same rows (the rows: the summary line is the run's, not a row)
    rows = "".join(live.splitlines(keepends=True)[:-1])
    assert live.splitlines()[-1].startswith('{"summary":')
    assert perfhud("export", str(path), "--format", "ndjson").stdout == rows


def test_replay_plain_gives_exactly_the_live_rows(tmp_path):
    path = tmp_path / "plain.db"
    live = perfhud("demo", "--output", "plain", "--record", str(path), "--duration", "3s")
    assert live.returncode == 0, live.stderr
    replayed = perfhud("replay", str(path), "--output", "plain")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == live.stdout and "PID " in live.stdout
    # Without a terminal and without --output, a replay prints the plain rows, as a live run does.
    assert perfhud("replay", str(path)).stdout == live.stdout


def test_a_program_that_exits_and_execs_replays_with_its_exit_row_and_new_name(tmp_path):
    path = tmp_path / "exit.db"
    live = perfhud("run", "--output", "json", "--tick", "50ms", "--record", str(path), "--",
                   "sh", "-c", "sleep 0.4; sh -c 'sleep 0.4; exit 3'; exit $?")
    assert live.returncode == 3, live.stderr
    rows = json_rows_of(live.stdout)
    assert rows[-1]["exit_code"] == 3
    replayed = perfhud("replay", str(path), "--output", "json")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == live.stdout
    # A name that follows an exec, recorded as it changed.
    exec_path = tmp_path / "exec.db"
    live = perfhud("run", "--output", "json", "--tick", "50ms", "--record", str(exec_path), "--",
                   "sh", "-c", "sleep 0.4; exec sleep 0.4")
    names = [row["command"] for row in json_rows_of(live.stdout)]
    assert names[0] == "sh" and names[-1] == "sleep", names
    assert perfhud("replay", str(exec_path), "--output", "json").stdout == live.stdout


def test_speed_paces_the_rows(recorded_json):
    path, live = recorded_json
    started = time.monotonic()
    replayed = perfhud("replay", str(path), "--output", "json", "--speed", "4")
    took = time.monotonic() - started
    assert replayed.stdout == live
    last = json_rows_of(live)[-1]["elapsed_seconds"]
    assert took >= last / 4 * 0.9, (took, last)


def status_line(term):
    return term.screen.display[0]


def playback(term):
    """('replay ×1' | 'paused' | 'end', seconds into the recording) from the status line."""
    match = re.search(r"(replay ×[\d.]+|paused|end) (\d\d):(\d\d):(\d\d)/", status_line(term))
    assert match, status_line(term)
    hours, minutes, seconds = (int(group) for group in match.groups()[1:])
    return match.group(1), hours * 3600 + minutes * 60 + seconds


def test_the_hud_plays_pauses_seeks_changes_speed_and_quits(recorded_json, terminal):
    path, live = recorded_json
    term = terminal(["replay", str(path)], rows=30, columns=160)
    term.wait_for(lambda t: "replay ×1" in status_line(t), what="the replay's status line")
    assert "PID " in status_line(term) and "perfhud-demo" in status_line(term)
    assert term.screen.display[1].lstrip().startswith("memory (RSS)")
    term.wait_for(lambda t: "space pauses" in t.text(), what="the keys")

    term.send(b" ")
    term.wait_for(lambda t: "paused" in status_line(t), what="paused")
    _, paused_at = playback(term)
    term.pump(1.5)
    assert playback(term) == ("paused", paused_at), "the position holds while paused"

    term.send(b"\x1b[C")   # →: 5 s on
    term.wait_for(lambda t: playback(t)[1] == min(paused_at + 5, 6), what="a seek of 5 s")
    term.send(b"\x1b[H")   # Home
    term.wait_for(lambda t: playback(t)[1] == 0, what="the start")
    term.send(b"++ ")
    term.wait_for(lambda t: "replay ×4" in status_line(t), what="speed ×4")
    # At ×4 the demo's phases and its high-frequency action come by in under 2 s.
    term.wait_for(lambda t: "Editor.Action.slider(.changed)" in t.text(), what="the action log", timeout=10)
    term.wait_for(lambda t: playback(t)[0] == "end", what="the end", timeout=10)
    assert "phase Gallery ended" in term.text()
    legend = term.screen.display[1]
    assert "Home" in legend and "Gallery" in legend, legend

    term.send(b"q")
    assert term.finish() == 0
    # The cursor shown again, then the run's summary, as the live HUD ended.
    assert summary_lines(term)[0].startswith("perfhud: 00:00:06 of perfhud-demo"), bytes(term.raw[-2000:])


def summary_lines(term):
    """What perfhud wrote after the HUD was gone (the cursor shown again): the summary, less the
    lines a recording does not keep (who ended the program, where it was recorded)."""
    after = term.raw[term.raw.rindex(b"\x1b[?25h") + len(b"\x1b[?25h"):].decode()
    lines = [line.replace("\x1b[K", "").strip() for line in after.splitlines()]
    return [line for line in lines if line.startswith("perfhud: ") and "recorded in" not in line and "perfhud ended" not in line]


def test_the_replayed_hud_ends_on_the_live_runs_summary(tmp_path, terminal):
    """The live HUD ends on the run's summary (the whole run's CPU, RSS, frames, actions); the
    replayed HUD ends on the same lines, made by the same code from the rows the recording kept,
    not on its last row's figures."""
    path = tmp_path / "demo.db"
    live = terminal(["demo", "--record", str(path), "--duration", "3s"], rows=30, columns=200)
    assert live.finish() == 0
    said = summary_lines(live)
    assert said and said[0].startswith("perfhud: 00:00:03 of perfhud-demo"), live.text()
    replayed = terminal(["replay", str(path), "--speed", "4"], rows=30, columns=200)
    replayed.wait_for(lambda t: playback(t)[0] == "end", what="the end", timeout=15)
    replayed.send(b"q")
    assert replayed.finish() == 0
    assert summary_lines(replayed) == said, (replayed.text(), said)


def test_bad_input_exits_with_one_line(tmp_path, recorded_json):
    text = tmp_path / "notes.txt"
    text.write_text("not a recording\n" * 100)
    result = perfhud("replay", str(text))
    assert result.returncode == 65 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    result = perfhud("replay", str(tmp_path / "missing.db"))
    assert result.returncode == 66 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    result = perfhud("replay", str(recorded_json[0]), "--speed", "0")
    assert result.returncode == 64 and "--speed" in result.stderr
    empty = tmp_path / "empty.db"
    shutil.copy(recorded_json[0], empty)
    with sqlite3.connect(empty) as database:
        database.execute("DELETE FROM sample_log")
    result = perfhud("replay", str(empty), "--output", "json")
    assert result.returncode == 65 and "no samples" in result.stderr and result.stdout == ""


def test_a_format_1_recording_replays(tmp_path):
    path = tmp_path / "format1-demo.db"
    shutil.copy(ROOT / "Tests/Fixtures/recordings/format1-demo.db", path)
    replayed = perfhud("replay", str(path), "--output", "json")
    assert replayed.returncode == 0, replayed.stderr
    rows = json_rows_of(replayed.stdout)
    assert len(rows) == 41 and rows[-1]["command"] == "perfhud-demo"
    assert max(row["rss_bytes"] for row in rows) == 131854336


@pytest.mark.parametrize("name", ["format2-demo", "format3-demo", "format3-exit", "format4-why"])
def test_a_recording_kept_in_the_repository_replays_its_live_rows(tmp_path, name):
    """NAME.db was recorded with the rows its live run printed in NAME.live.ndjson: later versions
    must give the same rows back. format2-demo and format3-demo: `perfhud demo --output json
    --record … --duration` (5 s, 3 s); format3-exit: `perfhud run --output json --tick 100ms
    --record … -- sh -c 'sleep 1.2; exit 3'` (its exit row a sample of its own, format 3); format4-why:
    `perfhud run --include-children --output json --tick 100ms --record … -- sh -c 'why odirect F 16 & why
    spin 3 & sleep 2.5; …; exit 3'` (helpers/why.c: the why figures, busiest threads across the tree)."""
    path = tmp_path / f"{name}.db"
    shutil.copy(ROOT / f"Tests/Fixtures/recordings/{name}.db", path)
    live = (ROOT / f"Tests/Fixtures/recordings/{name}.live.ndjson").read_text()
    replayed = perfhud("replay", str(path), "--output", "json")
    assert replayed.returncode == 0, replayed.stderr
    # Its rows, then the run's summary line (which those versions did not print), report's object.
    lines = replayed.stdout.splitlines(keepends=True)
    assert "".join(lines[:-1]) == live
    assert summary_of(replayed.stdout) == json.loads(perfhud("report", str(path), "--format", "json").stdout)
