"""The layers of PerfHUDCore depend one way (Tests/layers.py; docs/development.md, "How it is built").

Reads the sources only: no perfhud binary, no build.
"""
import subprocess
import sys

from conftest import ROOT

CHECKER = ROOT / "Tests" / "layers.py"


def run(*args):
    return subprocess.run([sys.executable, str(CHECKER), *args], capture_output=True, text=True, timeout=120)


def test_the_folders_form_no_circle_and_depend_down_the_order():
    result = run()
    assert result.returncode == 0, f"Tests/layers.py found a circle or a use up the order:\n{result.stdout}{result.stderr}"
    assert "No circle" in result.stdout


def test_the_checker_finds_a_circle(tmp_path):
    """The checker itself: two folders that name each other's types are reported, with the files."""
    core = tmp_path / "Sources" / "PerfHUDCore"
    (core / "Support").mkdir(parents=True)
    (core / "Sampling").mkdir()
    (core / "Events").mkdir()
    (core / "Support" / "A.swift").write_text('struct A { var b: String { "\\(B())" } }  // "C" in a comment\n')
    (core / "Sampling" / "B.swift").write_text('/* A */ let text = "A \\(1)"\nstruct B { }\nextension A { }\n')
    # Named only in a comment and in strings: no use.
    (core / "Events" / "E.swift").write_text('// A, B\nlet e = "A \\(2) B"\nlet f = #"B \\(x)"#\nlet g = """\nA\n"""\n')
    checker = tmp_path / "Tests" / "layers.py"
    checker.parent.mkdir()
    checker.write_text(CHECKER.read_text())
    result = subprocess.run([sys.executable, str(checker)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Circle: Sampling, Support" in result.stdout
    assert "Support -> Sampling: Support/A.swift:B" in result.stdout
    assert "Sampling -> Support: Sampling/B.swift:A" in result.stdout
    assert "Events      <- (nothing)" in result.stdout


def test_no_source_file_is_over_450_lines_or_holds_more_than_3_types():
    result = run("--sizes", "--strict")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Every Swift file" in result.stdout
