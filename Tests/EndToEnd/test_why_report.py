"""`report` says why a recorded run was slow: the HTML report's charts (waiting for a CPU, the
busiest threads, faults, storage I/O, descriptors) and the markdown report's "Why it is slow"
section, for a real program that waits for a CPU, writes and opens files (helpers/why.c mix),
recorded by `perfhud attach --record`; a recording of an older format gets neither."""
import json
import os
import re

import pytest

from conftest import ROOT, perfhud, json_rows_of
from test_recording import assert_fetches_nothing, screenshot, shown_either_way
from test_why import program, why   # noqa: F401 (fixtures)

CPUS = os.cpu_count()
MIB = 1 << 20
SPINNERS = CPUS + 2


@pytest.fixture(scope="module")
def recorded(why, tmp_path_factory):
    """8 s of the mix recorded; its JSON rows, the JSON report, and what the kernel counted."""
    from test_why import Program
    directory = tmp_path_factory.mktemp("why-report")
    path, written = directory / "mix.db", directory / "written"
    target = Program(why, "mix", str(written), str(SPINNERS))
    try:
        io = lambda: int(re.search(r"^write_bytes: (\d+)", open(f"/proc/{target.pid}/io").read(), re.M)[1])
        before = io()
        result = perfhud("attach", str(target.pid), "--record", str(path), "--output", "json", "--tick", "100ms", "--count", "80")
        kernel_written = io() - before
    finally:
        target.stop()
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    summary = json.loads(perfhud("report", str(path), "--format", "json").stdout)
    return path, rows, summary, kernel_written


def line_values(html, name):
    """The y coordinates of the SVG line titled `name` as values (bytes for `12 MiB/s`), from the
    chart's tick labels: what the chart draws, read back."""
    section = next(part for part in html.split("<section class=\"chart\">") if f"<title>{name}" in part)
    path = re.search(r'<path class="line" d="([^"]*)"[^>]*><title>' + re.escape(name), section)[1]
    ys = [float(y) for y in re.findall(r"[ML][0-9.]+ ([0-9.]+)", path)]
    ticks = [(float(y), text) for y, text in re.findall(r'<text class="tick" x="[0-9.]+" y="([0-9.]+)" text-anchor="end">([^<]*)</text>', section)]
    (y0, label0), (y1, label1) = ticks[0], ticks[-1]
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    number = lambda label: float(label.split()[0]) * (units.get(label.split()[1].split("/")[0], 1) if " " in label else 1)
    # Labels sit 4 px below their grid line.
    return [number(label0) + (y - (y0 - 4)) / ((y1 - 4) - (y0 - 4)) * (number(label1) - number(label0)) for y in ys]


def test_the_html_report_charts_why(recorded, tmp_path):
    path, rows, summary, kernel_written = recorded
    page = tmp_path / "why.html"
    result = perfhud("report", str(path), "--format", "html", "-o", str(page))
    assert result.returncode == 0, result.stderr
    html = page.read_text()
    assert_fetches_nothing(html)
    for title in ["Waiting for a CPU", "Busiest threads", "Page faults", "Storage I/O", "Open file descriptors"]:
        assert f"<h3>{title}</h3><svg" in html, title

    # Waiting: SPINNERS threads on CPUS CPUs, about two of them waiting at any moment; the line
    # drawn is the recorded figure, its average line the report's.
    waiting = line_values(html, "waiting for a CPU")
    assert summary["cpu_wait_percent_avg"] > 100, summary
    assert abs(max(waiting) - summary["cpu_wait_percent_max"]) <= 0.02 * summary["cpu_wait_percent_max"] + 2, (max(waiting), summary)
    rule = re.search(r'data-label="waiting, average ([0-9.]+) %" data-value="([0-9.]+)"', html)
    assert rule and float(rule[2]) == pytest.approx(summary["cpu_wait_percent_avg"], abs=0.001)

    # The busiest threads: the spinners, all of them (they share the CPUs about evenly and keep
    # the three places of each second's list: the writer and the main thread never get one).
    table = html[html.index('<table class="threads">'):]
    table = table[:table.index("</table>")]
    names = re.findall(r"</i>([^<]*)</td>", table)
    assert sorted(names) == sorted(f"spinner-{i}" for i in range(1, SPINNERS + 1)), names
    # The busiest thread at its busiest second had at least its share of what the process used
    # (this machine is shared: how much that is depends on the other programs).
    busiest = summary["busiest_thread"]
    assert busiest["name"].startswith("spinner-") and busiest["cpu_percent"] >= 0.9 * summary["cpu_percent_avg"] / SPINNERS, (busiest, summary)

    # Storage I/O: 8 MiB a second written; the total in the legend is the report's, and what the kernel counted.
    assert summary["io_write_bytes_total"] == pytest.approx(kernel_written, rel=0.05), (summary, kernel_written)
    assert 0.8 * 8 * MIB * 7.9 <= summary["io_write_bytes_total"] <= 1.2 * 8 * MIB * 7.9
    written = line_values(html, "written (")
    assert 4 * MIB <= max(written) <= 1.05 * summary["io_write_bytes_per_second_max"] + MIB, (max(written), summary)

    # Descriptors: 3 + 1 (the writer's) and one more every 20 ms up to 200 held: the line climbs.
    assert f"<title>open, peak {summary['fds_open_max']}</title>" in html
    fds = line_values(html, "open, peak")
    assert min(fds) < 100 and max(fds) == pytest.approx(summary["fds_open_max"], abs=3), (min(fds), max(fds))
    assert 200 <= summary["fds_open_max"] <= 206

    # The summary table and the sentences: the same figures.
    assert any(f"<code>cpu_wait_percent_max</code></td><td>{text} %</td>" in html for text in shown_either_way(summary["cpu_wait_percent_max"]))
    assert "<ul class=\"why\"><li><b>busiest thread</b>: spinner-" in html
    screenshot(page, tmp_path, "html-report-why.png", size=(1280, 4400))


def test_the_markdown_report_says_why(recorded):
    path, rows, summary, _ = recorded
    markdown = perfhud("report", str(path)).stdout
    section = markdown[markdown.index("## Why it is slow"):]
    lines = {line.split("**")[1]: line.split("**: ", 1)[1] for line in section.splitlines() if line.startswith("- **")}
    assert list(lines)[:5] == ["busiest thread", "waiting for a CPU", "storage I/O", "descriptors", "leak"], lines
    thread = summary["busiest_thread"]
    assert lines["busiest thread"].startswith(f"spinner-{thread['name'].split('-')[1]} (TID {thread['tid']}): ")
    assert lines["waiting for a CPU"].startswith("peak "), lines
    assert re.fullmatch(r"read [0-9.]+ [KMG]?i?B, written [0-9.]+ MiB in total \(peak (read [^,]+, )?write [0-9.]+ MiB/s\)", lines["storage I/O"]), lines
    limit = rows[-1]["fds_limit"]
    assert lines["descriptors"].startswith(f"peak {summary['fds_open_max']} open of a limit of {limit} ("), lines
    assert lines["leak"].startswith("not suspected"), lines
    # The table's rows read as what they are.
    assert re.search(r"^\| io_write_bytes_per_second_max \| [0-9.]+ MiB/s \|$", markdown, re.M), markdown
    assert re.search(r"^\| leak_suspected_ever \| no \|$", markdown, re.M), markdown


def test_an_older_recording_has_no_why(tmp_path):
    old = ROOT / "Tests/Fixtures/recordings/format3-demo.db"
    html = perfhud("report", str(old), "--format", "html").stdout
    for title in ["Waiting for a CPU", "Busiest threads", "Page faults", "Storage I/O", "Open file descriptors", "Why it is slow"]:
        assert title not in html, title
    assert "<h3>CPU</h3><svg" in html
    markdown = perfhud("report", str(old)).stdout
    assert "Why it is slow" not in markdown and "cpu_wait_percent" not in markdown
    assert "| cpu_percent_avg |" in markdown
    assert json.loads(perfhud("report", str(old), "--format", "json").stdout)["busiest_thread"] is None
