"""`report --fail-on` and `--phase` naming what the run does not have (issue 19, point 6): a CI gate
that cannot be evaluated fails (exit 1) with the reason and the names the run has, instead of
passing with a warning; `--allow-missing` keeps the warning for gates meant to be optional."""
import json

import pytest

from conftest import perfhud


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo recorded long enough to enter its three phases: Home, Gallery, Editor."""
    path = tmp_path_factory.mktemp("gate") / "demo.db"
    result = perfhud("demo", "--output", "json", "--record", str(path), "--duration", "6s")
    assert result.returncode == 0, result.stderr
    phases = [p["name"] for p in json.loads(perfhud("report", str(path), "--format", "json").stdout)["phases"]]
    assert phases[:3] == ["Home", "Gallery", "Editor"], phases
    return path


@pytest.fixture(scope="module")
def frameless(tmp_path_factory):
    """A run without frames or phases: `sleep` under `run`."""
    path = tmp_path_factory.mktemp("gate") / "sleep.db"
    result = perfhud("run", "--output", "json", "--record", str(path), "--duration", "1s", "--", "sleep", "30")
    assert result.returncode == 0, result.stderr
    return path


def only_line(stderr):
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_a_misspelt_phase_fails_the_gate_and_names_the_phases(demo, tmp_path):
    result = perfhud("report", str(demo), "-o", str(tmp_path / "r.md"), "--fail-on", "phase.Galery.kept_bytes > 1MiB")
    assert result.returncode == 1, result.stderr
    line = only_line(result.stderr)
    assert line.startswith('perfhud: fail-on: "phase.Galery.kept_bytes > 1MiB" cannot be evaluated: '), line
    assert 'never entered phase "Galery"' in line and "phases: Home, Gallery, Editor" in line, line
    assert (tmp_path / "r.md").read_text().startswith("# perfhud report"), "the report is still written"


def test_allow_missing_keeps_the_warning(demo, tmp_path):
    result = perfhud("report", str(demo), "-o", str(tmp_path / "r.md"), "--allow-missing",
                     "--fail-on", "phase.Galery.kept_bytes > 1MiB")
    assert result.returncode == 0, result.stderr
    line = only_line(result.stderr)
    assert line.startswith("perfhud: warning: fail-on: ") and "phases: Home, Gallery, Editor" in line, line


def test_a_condition_that_holds_still_fails_beside_one_that_is_missing(demo, tmp_path):
    result = perfhud("report", str(demo), "-o", str(tmp_path / "r.md"), "--allow-missing",
                     "--fail-on", "phase.Nowhere.kept_bytes > 1MiB", "--fail-on", "rss_peak_bytes > 1MiB")
    assert result.returncode == 1, result.stderr
    assert "holds" in result.stderr and "warning" in result.stderr


def test_a_figure_the_run_does_not_have_fails_the_gate(frameless, tmp_path):
    result = perfhud("report", str(frameless), "-o", str(tmp_path / "r.md"), "--fail-on", "fps_avg < 30")
    assert result.returncode == 1, result.stderr
    line = only_line(result.stderr)
    assert "the run has no fps_avg: no frames were reported" in line, line
    assert "figures it has: duration_s, samples, cpu_percent_avg" in line and "rss_peak_bytes" in line, line
    assert "fps_avg," not in line.split("figures it has:")[1], "only the figures the run has are named"
    # A phase figure of a run with no phases at all says so.
    phase = perfhud("report", str(frameless), "-o", str(tmp_path / "r.md"), "--fail-on", "phase.Home.time_s > 1")
    assert phase.returncode == 1 and "it reported no phases" in phase.stderr, phase.stderr


def test_a_baseline_without_the_figure_fails_the_gate(demo, frameless, tmp_path):
    result = perfhud("report", str(demo), "-o", str(tmp_path / "r.md"), "--baseline", str(frameless),
                     "--fail-on", "fps_avg < baseline * 0.9")
    assert result.returncode == 1, result.stderr
    assert "the baseline has no fps_avg" in only_line(result.stderr)


def test_phase_nope_fails_instead_of_an_empty_report(demo, tmp_path):
    out = tmp_path / "r.json"
    result = perfhud("report", str(demo), "--phase", "Nope", "-o", str(out))
    assert result.returncode == 1, result.stderr
    line = only_line(result.stderr)
    assert 'never entered phase "Nope"' in line and "phases: Home, Gallery, Editor" in line, line
    assert not out.exists(), "no empty report to mistake for a good one"
    allowed = perfhud("report", str(demo), "--phase", "Nope", "--allow-missing", "--format", "json")
    assert allowed.returncode == 0, allowed.stderr
    assert only_line(allowed.stderr).startswith("perfhud: warning: ")
    assert json.loads(allowed.stdout)["phases"] == []


def test_a_phase_left_out_by_phase_is_named_as_such(demo, tmp_path):
    result = perfhud("report", str(demo), "--phase", "Editor", "-o", str(tmp_path / "r.md"),
                     "--fail-on", "phase.Gallery.kept_bytes > 1MiB")
    assert result.returncode == 1, result.stderr
    assert '--phase "Editor" leaves it out' in only_line(result.stderr)


def test_gates_that_can_be_evaluated_behave_as_before(demo, tmp_path):
    passed = perfhud("report", str(demo), "-o", str(tmp_path / "r.md"), "--fail-on", "phase.Gallery.kept_bytes > 500MiB",
                     "--fail-on", "fps_avg < 1")
    assert passed.returncode == 0 and passed.stderr == "", passed.stderr


@pytest.mark.parametrize("condition, ending", [
    ("rss_peak_byte > 200MiB", 'no figure "rss_peak_byte": did you mean "rss_peak_bytes"?'),
    ("phase.Home.kept_byte > 1MiB", 'no figure "phase.Home.kept_byte": did you mean "phase.Home.kept_bytes"?'),
    ("bogus > 1", 'no figure "bogus" (the figures are the keys of `perfhud report FILE --format json`; a phase\'s: phase.NAME.KEY)'),
])
def test_a_figure_that_does_not_exist_gets_a_suggestion_not_the_list(demo, tmp_path, condition, ending):
    """Issue 44: the answer was one line of about 4,000 characters listing every figure."""
    result = perfhud("report", str(demo), "-o", str(tmp_path / "r.md"), "--fail-on", condition)
    assert result.returncode == 64, result.stderr
    line = only_line(result.stderr)
    assert line == f'perfhud: cannot read --fail-on "{condition}": {ending}', line
    assert len(line) < 200, len(line)
