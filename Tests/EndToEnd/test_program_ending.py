"""Who ended the program (issue 19, point 8). When `--duration`, `--count` or `q` ends a session
perfhud launched, perfhud sends SIGTERM, then SIGKILL after the grace (`--grace`, default 2s); the
end notice and the summary say that perfhud ended it and how; perfhud exits 0, since it ended the
program on purpose. A program that ends first gives perfhud its own status."""
import time

from conftest import perfhud

# A program that ignores SIGTERM, children included (an ignored signal stays ignored across exec).
STUBBORN = ["sh", "-c", "trap '' TERM; while :; do sleep 0.1; done"]


def summary_lines(term):
    return [line.strip() for line in term.text().splitlines() if line.strip().startswith("perfhud: ")]


def test_a_program_that_ends_on_sigterm_is_said_to_have_been_ended_by_perfhud(terminal):
    term = terminal(["run", "--duration", "1s", "--", "sleep", "30"], rows=30, columns=160)
    assert term.finish() == 0
    lines = summary_lines(term)
    assert any(line.startswith("perfhud: PID ") and "(sleep) ended by perfhud at --duration 1s: SIGTERM, which ended it" in line
               for line in lines), lines
    assert "perfhud: perfhud ended sleep at --duration 1s: SIGTERM, which ended it; exit status 0 (ended on purpose)" in lines, lines
    assert not any("killed by signal" in line for line in lines), "not reported as if something else killed it"


def test_a_program_that_ignores_sigterm_is_killed_after_the_stated_grace(terminal):
    started = time.monotonic()
    term = terminal(["run", "--duration", "1s", "--grace", "500ms", "--", *STUBBORN], rows=30, columns=170)
    assert term.finish() == 0
    took = time.monotonic() - started
    assert 1.4 <= took < 4, f"1 s, then a 0.5 s grace: {took:.1f} s"
    lines = summary_lines(term)
    expected = ("perfhud: perfhud ended sh at --duration 1s: SIGTERM, then SIGKILL: still running after the 500ms grace"
                " (--grace); exit status 0 (ended on purpose)")
    assert expected in lines, lines


def test_the_default_grace_is_two_seconds():
    started = time.monotonic()
    result = perfhud("run", "--output", "json", "--count", "3", "--tick", "100ms", "--", *STUBBORN)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert 2.0 <= took < 5, f"three ticks, then two seconds of grace: {took:.1f} s"


def test_a_grace_of_zero_kills_at_once_and_a_long_one_is_refused():
    started = time.monotonic()
    result = perfhud("run", "--output", "json", "--count", "2", "--grace", "0s", "--", *STUBBORN)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 1.5
    refused = perfhud("run", "--grace", "2m", "--", "true")
    assert refused.returncode == 64 and "--grace" in refused.stderr and len(refused.stderr.splitlines()) == 1, refused.stderr


def test_a_program_that_ends_first_gives_its_own_status(terminal):
    term = terminal(["run", "--duration", "10s", "--", "sh", "-c", "sleep 0.5; exit 3"], rows=30, columns=160)
    assert term.finish() == 3
    lines = summary_lines(term)
    assert not any("ended by perfhud" in line or "perfhud ended" in line for line in lines), lines
    assert any("(sh) exited, status 3" in line for line in lines), lines


def test_q_in_the_demo_is_said_to_end_it(terminal):
    term = terminal(["demo"], rows=30, columns=160)
    term.wait_for(lambda t: "perfhud-demo" in t.screen.display[0], what="the demo's HUD")
    time.sleep(0.5)
    term.send(b"q")
    assert term.finish() == 0
    assert any(line.startswith("perfhud: perfhud ended perfhud-demo at q: SIGTERM") for line in summary_lines(term)), summary_lines(term)
