"""Recordings (issue 12): --record on demo, report, --fail-on, export, and files that are damaged,
cut short by kill -9, or not recordings at all."""
import decimal
import json
import os
import pathlib
import re
import shutil
import signal
import sqlite3
import struct
import subprocess
import time
import zlib

import pytest

from conftest import PERFHUD, ROOT, perfhud, json_rows_of


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The demo recorded for 6 s, and the JSON rows it printed live."""
    path = tmp_path_factory.mktemp("rec") / "demo.db"
    result = perfhud("demo", "--output", "json", "--record", str(path), "--duration", "6s")
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    return path, rows


def report_json(path, *extra):
    result = perfhud("report", str(path), "--format", "json", *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_recording_opens_with_the_sqlite3_cli(recorded):
    path, rows = recorded
    assert not os.path.exists(str(path) + "-wal"), "a finished recording stands alone"
    out = subprocess.run(["sqlite3", str(path), "PRAGMA user_version; select count(*) from samples;"
                          " select count(*) from frames; select value from meta where key = 'target_command'"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "10"   # format 10 (formats 1 to 9 still read: see below and test_replay)
    assert int(out[1]) == len(rows)
    assert int(out[2]) > 200          # ~60 frames a second for 6 s
    assert out[3] == "perfhud-demo"


def test_report_figures_equal_the_live_rows(recorded):
    path, rows = recorded
    summary = report_json(path)
    for key in ["duration_s", "cpu_percent_avg", "cpu_percent_max", "rss_peak_bytes", "rss_end_bytes", "fps_avg",
                "fps_1pct_low", "fps_0_1pct_low", "frame_p99_ms", "janky_frames", "dropped_frames", "actions_total",
                "high_frequency_actions", "phases"]:
        assert key in summary, key
    rss = [row["rss_bytes"] for row in rows if row["rss_bytes"] is not None]
    assert summary["rss_peak_bytes"] == max(rss)
    assert summary["rss_end_bytes"] == rss[-1]
    cpu = [row["cpu_percent"] for row in rows if row["cpu_percent"] is not None]
    assert summary["cpu_percent_avg"] == pytest.approx(sum(cpu) / len(cpu), abs=0.05)
    assert summary["cpu_percent_max"] == pytest.approx(max(cpu), abs=0.01)
    assert summary["actions_total"] == rows[-1]["actions_total"]
    assert summary["janky_frames"] == rows[-1]["janky_frames"]
    assert 50 < summary["fps_avg"] < 62
    assert summary["fps_1pct_low"] == pytest.approx(1000 / summary["frame_p99_ms"], rel=1e-3)
    names = [phase["name"] for phase in summary["phases"]]
    assert names[:3] == ["Home", "Gallery", "Editor"]
    gallery = summary["phases"][1]
    assert gallery["visits"] == 1 and gallery["kept_bytes"] > 5 * 2**20, gallery   # the demo keeps ~20 MiB
    assert any(a["action"] == "Editor.Action.slider(.changed)" for a in summary["high_frequency_actions"])
    only = report_json(path, "--phase", "Editor")
    assert only["phase"] == "Editor" and [p["name"] for p in only["phases"]] == ["Editor"]
    assert only["cpu_percent_avg"] > summary["phases"][0]["cpu_percent_avg"]   # the Editor burns CPU, Home does not


def test_markdown_report(recorded):
    path, _ = recorded
    result = perfhud("report", str(path))
    assert result.returncode == 0, result.stderr
    assert "| rss_peak_bytes |" in result.stdout and "| Gallery |" in result.stdout


def test_ndjson_export_gives_the_live_rows(recorded):
    path, rows = recorded
    result = perfhud("export", str(path), "--format", "ndjson")
    assert result.returncode == 0, result.stderr
    exported = json_rows_of(result.stdout)
    # The same rows, keys in the same order, the same values (test_replay compares the text).
    assert [list(row.items()) for row in exported] == [list(row.items()) for row in rows]


def test_csv_export_header(recorded, tmp_path):
    path, rows = recorded
    out = tmp_path / "demo.csv"
    result = perfhud("export", str(path), "--format", "csv", "-o", str(out))
    assert result.returncode == 0, result.stderr
    lines = out.read_text().splitlines()
    header = lines[0].split(",")
    assert header[:4] == ["elapsed_time", "cpu", "mem_real", "mem_virtual"]
    assert "rss_bytes" in header and "phase" in header
    assert len(lines) == len(rows) + 1
    first = dict(zip(header, lines[1].split(",")))
    assert float(first["mem_real"]) == pytest.approx(int(first["rss_bytes"]) / 2**20, abs=0.001)   # MB as psrecord: MiB


def test_fail_on_both_ways_and_a_bad_expression(recorded, tmp_path):
    path, _ = recorded
    held = perfhud("report", str(path), "-o", str(tmp_path / "r.md"),
                   "--fail-on", "rss_peak_bytes > 10MiB", "--fail-on", "fps_avg < 1")
    assert held.returncode == 1, held.stderr
    lines = held.stderr.strip().splitlines()
    assert len(lines) == 1 and "rss_peak_bytes > 10MiB" in lines[0]
    passed = perfhud("report", str(path), "-o", str(tmp_path / "r.md"), "--fail-on", "rss_peak_bytes > 2GiB",
                     "--fail-on", "phase.Gallery.kept_bytes > 500MiB", "--fail-on", "rss_peak_bytes > baseline * 1.10",
                     "--baseline", str(path))
    assert passed.returncode == 0, passed.stderr
    gallery = perfhud("report", str(path), "-o", str(tmp_path / "r.md"), "--fail-on", "phase.Gallery.kept_bytes > 5MiB")
    assert gallery.returncode == 1 and "phase.Gallery.kept_bytes" in gallery.stderr
    for bad in ["rss_peak_bytes >> 3", "rss_peak_bytes > 12 parsecs", "> 5", "no_such_figure > 1", "rss_peak_bytes > baseline * 2"]:
        result = perfhud("report", str(path), "-o", str(tmp_path / "r.md"), "--fail-on", bad)
        assert result.returncode == 64, (bad, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr, result.stderr


def test_kill_9_mid_recording_leaves_a_file_that_opens(tmp_path):
    path = tmp_path / "killed.db"
    process = subprocess.Popen([PERFHUD, "demo", "--output", "json", "--record", str(path)],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    rows = 0
    deadline = time.time() + 20
    while rows < 35 and time.time() < deadline:
        if process.stdout.readline():
            rows += 1
    process.kill()   # SIGKILL: no clean-up at all
    process.wait()
    # The demo perfhud launched is not left behind: its terminal hangs up and it ends.
    demo_pid = subprocess.run(["sqlite3", str(path), "select value from meta where key = 'target_pid'"],
                              capture_output=True, text=True).stdout.strip()
    assert demo_pid.isdigit(), demo_pid
    deadline = time.time() + 5
    while time.time() < deadline and os.path.exists(f"/proc/{demo_pid}"):
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{demo_pid}"), "the demo outlived perfhud"
    count = subprocess.run(["sqlite3", str(path), "select count(*) from samples"], capture_output=True, text=True)
    assert count.returncode == 0, count.stderr
    # At most the last second (10 ticks, and the one being written) is lost.
    assert int(count.stdout) >= rows - 12, (count.stdout, rows)
    summary = report_json(path)
    assert summary["rss_peak_bytes"] > 0
    assert any(warning.startswith("the recording was not closed: its perfhud (PID ") for warning in summary["warnings"]), summary["warnings"]


def test_a_recording_still_being_written_says_so(tmp_path):
    """`report` and `replay` of a recording while perfhud still writes it: what it held at its last
    commit, and a warning that says it is unfinished; once perfhud closed it, no warning."""
    path = tmp_path / "growing.db"
    process = subprocess.Popen([PERFHUD, "demo", "--output", "json", "--record", str(path), "--duration", "4s"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2.2)
        during = perfhud("report", str(path), "--format", "json")
        replayed = perfhud("replay", str(path), "--output", "plain")
    finally:
        assert process.wait(timeout=30) == 0
    said = f"the recording is still being written (perfhud, PID {process.pid})"
    assert during.returncode == 0 and any(w.startswith(said) for w in json.loads(during.stdout)["warnings"]), during.stdout[-500:]
    assert f"perfhud: warning: {path}: {said}" in during.stderr, during.stderr
    assert replayed.returncode == 0 and said in replayed.stderr, replayed.stderr
    after = perfhud("report", str(path), "--format", "json")
    assert json.loads(after.stdout)["warnings"] == [] and "warning" not in after.stderr, after.stderr
    assert json.loads(after.stdout)["duration_s"] > json.loads(during.stdout)["duration_s"]


def test_a_damaged_file_reports_up_to_the_damage_or_says_so(recorded, tmp_path):
    path, _ = recorded
    data = path.read_bytes()
    for fraction in (0.5, 0.8):
        damaged = tmp_path / f"damaged-{fraction}.db"
        damaged.write_bytes(data[: int(len(data) * fraction)])
        result = perfhud("report", str(damaged), "--format", "json")
        # A file cut short is read from a copy padded to the length its header says: a report
        # with warnings, whatever the cut (65 only when not even the header is left).
        assert result.returncode == 0, result.stderr
        assert "cut short" in result.stderr
        assert "Traceback" not in result.stderr and "Fatal error" not in result.stderr
        if result.returncode == 0:
            assert "warning" in result.stderr and "damaged" in result.stderr, result.stderr
            assert json.loads(result.stdout)["warnings"]
        else:
            assert len(result.stderr.strip().splitlines()) == 1


def test_a_text_file_is_not_a_recording_and_a_missing_one_is_66(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello\n" * 100)
    result = perfhud("report", str(text))
    assert result.returncode == 65 and result.stderr.strip().count("\n") == 0, result.stderr
    assert "not a perfhud recording" in result.stderr
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert perfhud("report", str(empty)).returncode == 65
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("create table t(x)").connection.commit()
    assert perfhud("export", str(other), "--format", "csv").returncode == 65
    missing = perfhud("report", str(tmp_path / "missing.db"))
    assert missing.returncode == 66 and len(missing.stderr.strip().splitlines()) == 1


def test_record_does_not_replace_a_file_that_is_not_a_recording(tmp_path):
    precious = tmp_path / "myapp"
    precious.write_text("#!/bin/sh\necho precious\n")
    result = perfhud("demo", "--output", "json", "--record", str(precious), "--count", "2")
    assert result.returncode == 73, result.stderr
    assert precious.read_text().endswith("precious\n")


def free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop_daemon(daemon, target):
    """SIGTERM, as systemd stops it: the daemon ends with 0 after its last sample."""
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(10)
    target.kill()
    target.wait()
    assert daemon.returncode == 0, daemon.stderr.read()


def run_daemon(tmp_path, *extra):
    target = subprocess.Popen(["sleep", "120"])
    events = str(tmp_path / "events.sock")
    daemon = subprocess.Popen([PERFHUD, "daemon", "--pid", str(target.pid), "--listen", f"127.0.0.1:{free_port()}",
                               "--events", events, "--accept-from", "same-user", *extra],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return target, daemon, events


def test_daemon_records_samples_events_and_its_target(tmp_path):
    path = tmp_path / "daemon.db"
    # Against a 60 Hz budget (two frames are too few for a pace of their own): the 40 ms one is janky.
    target, daemon, events = run_daemon(tmp_path, "--tick", "100ms", "--refresh", "60", "--record", str(path))
    try:
        deadline = time.time() + 10
        while not os.path.exists(events) and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        for args in (["phase", "Loading"], ["frame", "16.7"], ["frame", "40"], ["action", "Tap"], ["action", "Tap"]):
            assert perfhud("emit", *args, "--events", events).returncode == 0
        time.sleep(1)
        assert perfhud("emit", "phase", "Main", "--events", events).returncode == 0
        time.sleep(1.2)
    finally:
        stop_daemon(daemon, target)
    summary = report_json(path)
    assert summary["command"] == "sleep"
    assert summary["frames"] == 2 and summary["actions_total"] == 2 and summary["janky_frames"] == 1
    assert [phase["name"] for phase in summary["phases"]] == ["Loading", "Main"]
    assert summary["rss_peak_bytes"] > 0 and summary["samples"] >= 15


def test_daemon_record_max_size_drops_the_oldest_first(tmp_path):
    path = tmp_path / "bounded.db"
    target, daemon, _ = run_daemon(tmp_path, "--tick", "1ms", "--record", str(path), "--record-max-size", "1MiB")
    try:
        time.sleep(25)   # ~25,000 samples: about twice the limit
    finally:
        stop_daemon(daemon, target)
    assert path.stat().st_size < 1.5 * 2**20, path.stat().st_size
    first, last = subprocess.run(["sqlite3", str(path), "select min(t), max(t) from samples"],
                                 capture_output=True, text=True, check=True).stdout.strip().split("|")
    assert float(first) > 2 and float(last) > 20, (first, last)   # the oldest went, the newest stayed
    assert perfhud("report", str(path)).returncode == 0
    bad = perfhud("daemon", "--pid", "1", "--record-max-size", "12 parsecs", "--record", str(path))
    assert bad.returncode == 64 and len(bad.stderr.strip().splitlines()) == 1


def test_a_format_1_recording_kept_in_the_repository_still_reads(tmp_path):
    """Recordings stay readable by later versions: this file was written by perfhud 0.1.0 (format 1)."""
    import shutil
    from conftest import ROOT
    path = tmp_path / "format1-demo.db"
    shutil.copy(ROOT / "Tests/Fixtures/recordings/format1-demo.db", path)
    summary = report_json(path)
    assert summary["samples"] == 41 and summary["duration_s"] == 4
    assert summary["rss_peak_bytes"] == 131854336 and summary["rss_end_bytes"] == 28246016
    assert summary["frames"] == 227 and summary["frame_p99_ms"] == 20.543 and summary["janky_frames"] == 2
    assert summary["actions_total"] == 39 and summary["cpu_percent_max"] == 86.22
    assert [phase["name"] for phase in summary["phases"]] == ["Home", "Gallery", "Editor"]
    assert summary["phases"][0]["kept_bytes"] == 4009984
    rows = perfhud("export", str(path), "--format", "ndjson").stdout.splitlines()
    assert len(rows) == 41 and json.loads(rows[-1])["command"] == "perfhud-demo"
    # A file from a newer perfhud is refused with one line, not misread.
    subprocess.run(["sqlite3", str(path), "PRAGMA user_version = 99"], check=True)
    newer = perfhud("report", str(path))
    assert newer.returncode == 65 and "newer perfhud" in newer.stderr and len(newer.stderr.strip().splitlines()) == 1


def test_openmetrics_export_imports_with_promtool(recorded, tmp_path):
    import shutil
    path, rows = recorded
    out = tmp_path / "demo.om"
    result = perfhud("export", str(path), "--format", "openmetrics", "-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert text.endswith("# EOF\n")
    assert "# TYPE perfhud_target_resident_memory_bytes gauge" in text
    assert 'perfhud_target_cpu_seconds_total{mode="user"' in text
    # The daemon's labelled why families: one TYPE line a family, a series a label.
    assert text.count("# TYPE perfhud_target_memory_bytes gauge\n") == 1
    assert 'perfhud_target_memory_bytes{kind="anon",pid=' in text and 'perfhud_target_memory_bytes{kind="file",pid=' in text
    assert text.count("# TYPE perfhud_target_context_switches counter\n") == 1
    assert 'perfhud_target_context_switches_total{kind="involuntary",pid=' in text
    if shutil.which("promtool") is None:
        pytest.skip("promtool (Debian prometheus) is not installed")
    imported = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(out), str(tmp_path / "tsdb")],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr + imported.stdout
    listing = subprocess.run(["promtool", "tsdb", "list", str(tmp_path / "tsdb")], capture_output=True, text=True, check=True).stdout
    samples = sum(int(line.split()[4]) for line in listing.splitlines()[1:])
    assert samples >= len(rows) * 5, listing


# The HTML report: one page that fetches nothing, rendered by headless Chromium. The screenshots
# are checked not blank and kept in Tests/EndToEnd/out/ (git-ignored) for a person to look at.
SCREENSHOTS = pathlib.Path(__file__).resolve().parent / "out"


def read_png(path):
    """(width, height, bytes per pixel, rows) of an 8-bit RGB or RGBA PNG, as Chromium writes them:
    a few lines of zlib instead of a dependency."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
    bpp = 3 if color == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(b"".join(idat))
    high = int.from_bytes(b"\x80" * stride, "big")
    low = int.from_bytes(b"\x7f" * stride, "big")
    rows, previous = [], bytes(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:      # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:    # Up: bytewise addition without carries over the whole row at once
            a, b = int.from_bytes(line, "big"), int.from_bytes(previous, "big")
            line = bytearray((((a & low) + (b & low)) ^ ((a ^ b) & high)).to_bytes(stride, "big"))
        elif kind == 3:    # Average
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + previous[i]) // 2) & 255
        elif kind == 4:    # Paeth
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = previous[i], previous[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        previous = bytes(line)
        rows.append(previous)
    return width, height, bpp, rows


def screenshot(page, tmp_path, name, size=(1280, 3200)):
    """Renders `page` in headless Chromium; checks the PNG is the size asked and not blank; keeps a copy."""
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("chromium is not installed (make deps-apt installs it)")
    png = tmp_path / name
    # As root Chromium needs --no-sandbox; its own profile directory keeps it off $HOME.
    result = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                             "--force-device-scale-factor=1", f"--user-data-dir={tmp_path / 'chromium-profile'}",
                             f"--window-size={size[0]},{size[1]}", f"--screenshot={png}", page.as_uri()],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and png.exists(), result.stderr[-3000:]
    SCREENSHOTS.mkdir(exist_ok=True)
    kept = SCREENSHOTS / name
    shutil.copy(png, kept)
    print(f"\nscreenshot of the HTML report: {kept}")
    width, height, bpp, rows = read_png(png)
    assert (width, height) == size
    # Not blank: many colours (lines, bands, text), and something drawn in every quarter of the height.
    colours, inked = set(), [0, 0, 0, 0]
    for y in range(0, height, 2):
        row = rows[y]
        for x in range(0, width * bpp, 2 * bpp):
            pixel = row[x:x + 3]
            colours.add(pixel)
            if pixel != b"\xff\xff\xff":
                inked[y * 4 // height] += 1
    assert len(colours) > 50, len(colours)
    samples = (height // 2) * (width // 2) // 4
    assert all(count > samples * 0.01 for count in inked), (inked, samples)
    return png


def shown(value, decimals=1):
    """A figure as the page shows it (RowFormatter.number): half away from zero, no trailing zeros."""
    text = format(decimal.Decimal(str(value)).quantize(decimal.Decimal(1).scaleb(-decimals), rounding=decimal.ROUND_HALF_UP), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def shown_either_way(value, decimals=1):
    """The JSON figure is itself rounded to 3 decimals: rounding it again may differ by one in the last place."""
    return {shown(value, decimals), shown(value - 0.0005, decimals), shown(value + 0.0005, decimals)}


def assert_fetches_nothing(html):
    for reference in ["http://", "https://", "src=", "href=", "url(", "@import", "<script", "<link"]:
        assert reference not in html, reference


def test_html_report_renders_with_the_figures_of_the_json_report(recorded, tmp_path):
    path, _ = recorded
    page = tmp_path / "report.html"
    result = perfhud("report", str(path), "--format", "html", "-o", str(page))
    assert result.returncode == 0 and result.stdout == "", result.stderr
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.endswith("</html>\n")
    assert perfhud("report", str(path), "--format", "html").stdout == html, "without -o the page goes to standard output"
    assert_fetches_nothing(html)
    summary = report_json(path)
    for phase in summary["phases"]:
        assert f'data-phase="{phase["name"]}"' in html and f'</i>{phase["name"]}</span>' in html, phase["name"]   # band, legend
    for name in ["Home", "Gallery", "Editor"]:   # long enough to be named at the top of their band (a short one may not be)
        assert f'>{name}</text>' in html, name
    assert any(f"<code>fps_avg</code></td><td>{text}</td>" in html for text in shown_either_way(summary["fps_avg"]))
    assert any(f"<code>fps_1pct_low</code></td><td>{text}</td>" in html for text in shown_either_way(summary["fps_1pct_low"]))
    assert any(f"<code>cpu_percent_avg</code></td><td>{text} %</td>" in html for text in shown_either_way(summary["cpu_percent_avg"]))
    assert f"<code>janky_frames</code></td><td>{shown(summary['janky_frames'])}</td>" in html
    marks = sum(int(count) for count in re.findall(r' data-frames="(\d+)"', html))
    assert marks == summary["janky_frames"]
    assert 'data-label="p99 ' in html and 'data-label="p50 ' in html
    assert "Editor.Action.slider(.changed) <b>high-frequency</b>" in html
    screenshot(page, tmp_path, "html-report.png")


def test_a_baseline_judged_against_another_reference_is_judged_again(tmp_path):
    """A baseline whose frames were judged against their own pace, this run's against a 60 Hz
    budget (--refresh 60): the report says so, and counts the baseline's janky frames again against
    this run's reference, from the frames it keeps — like with like. The reference: the baseline's
    frame_log read here, frames over 1.5 × 16.67 ms."""
    old, new = tmp_path / "paced.db", tmp_path / "refresh.db"
    assert perfhud("demo", "--output", "json", "--record", str(old), "--duration", "3s").returncode == 0
    assert perfhud("demo", "--output", "json", "--record", str(new), "--duration", "3s", "--refresh", "60").returncode == 0
    with sqlite3.connect(old) as database:
        over = database.execute("SELECT COALESCE(SUM(COALESCE(weight, 1)), 0) FROM frame_log WHERE us > 25000").fetchone()[0]
    result = perfhud("report", str(new), "--baseline", str(old), "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    said = "the baseline judged its frames against its own pace (janky above 1.5 × it), this run against a 60 Hz budget"
    assert report["baseline_note"].startswith(said) and said in result.stderr, (report.get("baseline_note"), result.stderr)
    assert report["baseline"]["janky_frames"] == over, (report["baseline"]["janky_frames"], over)
    assert "> note: " + said in perfhud("report", str(new), "--baseline", str(old)).stdout
    # The same reference on both sides: nothing to say, nothing judged again.
    same = perfhud("report", str(new), "--baseline", str(new), "--format", "json")
    assert "baseline_note" not in json.loads(same.stdout) and "note:" not in same.stderr


def test_html_report_against_a_baseline_and_for_one_phase(recorded, tmp_path):
    path, _ = recorded
    baseline = ROOT / "Tests/Fixtures/recordings/format1-demo.db"
    page = tmp_path / "compared.html"
    result = perfhud("report", str(path), "--baseline", str(baseline), "--format", "html", "-o", str(page))
    assert result.returncode == 0, result.stderr
    html = page.read_text()
    assert_fetches_nothing(html)
    assert "<th>baseline</th><th>this run</th><th>change</th><th>change %</th>" in html
    assert f"<dd>{path}</dd>" in html and f"<dd>{baseline}</dd>" in html
    assert "baseline RSS" in html and "baseline CPU %" in html
    old = report_json(baseline)
    assert any(f"<code>fps_avg</code></td><td>{text}</td>" in html for text in shown_either_way(old["fps_avg"]))
    screenshot(page, tmp_path, "html-report-baseline.png")

    editor = perfhud("report", str(path), "--phase", "Editor", "--format", "html")
    assert editor.returncode == 0, editor.stderr
    only = report_json(path, "--phase", "Editor")
    assert "Figures count only the time in phase <b>Editor</b>" in editor.stdout
    assert any(f"<code>cpu_percent_avg</code></td><td>{text} %</td>" in editor.stdout for text in shown_either_way(only["cpu_percent_avg"]))


def test_report_format_follows_the_output_name_and_never_overwrites_the_recording(recorded, tmp_path):
    path, rows = recorded
    page, summary = tmp_path / "run.html", tmp_path / "run.json"
    assert perfhud("report", str(path), "-o", str(page)).returncode == 0
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert perfhud("report", str(path), "-o", str(summary)).returncode == 0
    assert json.loads(summary.read_text())["samples"] == len(rows)
    # --format wins over the name
    assert perfhud("report", str(path), "-o", str(page), "--format", "markdown").returncode == 0
    assert page.read_text().startswith("# perfhud report")
    # -o naming the recording (or the baseline) is refused before anything is written
    before = path.read_bytes()
    for command in (["report", str(path), "-o", str(path)], ["report", str(page), "--baseline", str(path), "-o", str(path)],
                    ["export", str(path), "--format", "csv", "-o", str(path)]):
        result = perfhud(*command)
        assert result.returncode in (65, 73) and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert path.read_bytes() == before
