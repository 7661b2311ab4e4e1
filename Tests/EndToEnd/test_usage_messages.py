"""What a command line that cannot be read gets: one line on stderr that says what was wrong and
what is accepted, in one style (lower case, `did you mean` for a near miss), status 64, never a
Swift type or module name nor a trace. Help that answers, on every command; each command lists
and takes only the options it uses."""
import os
import re
import subprocess
import time

import pytest

from conftest import BIN, PERFHUD, ROOT, perfhud

COMMANDS = ["attach", "run", "demo", "daemon", "top", "emit", "report", "replay", "export"]
# What each command needs besides the option under test, so that the option is what fails.
BEFORE = {"attach": ["1"], "daemon": ["--pid", "1"], "emit": ["action", "x"], "report": ["f.db"],
          "replay": ["f.db"], "export": ["f.db", "--format", "csv"]}
AFTER = {"run": ["--", "true"]}
# Options whose value is free text (a path, a name, a pattern): any word is a value.
FREE_TEXT = {"--events", "--actions-from", "--record", "--pidfile", "--match", "--unit", "--units", "--container", "--containers", "--cgroup", "--pods", "--config", "--phase", "--baseline",
             "--fail-on", "--alert", "--feed", "--target", ("report", "--output"), ("export", "--output")}
FLAGS_WITHOUT_VALUE = re.compile(r"^  (--[a-z-]+)(?:, --[a-z-]+)?\s{2,}", re.M)
VALUED = re.compile(r"^  (?:-[a-z], )?(--[a-z-]+) <[^>]+>", re.M)
# Swift types (ValidationError, SocketAddressError.UnknownHost), modules, traces, ArgumentParser's
# own sentences (capitalised: "The value '100' is invalid", "Missing value for").
LEAKS = re.compile(r"[A-Z][A-Za-z]*(Error|Exception)\b|\b(Swift|ArgumentParser|PerfHUD[A-Za-z]*|NIO[A-Za-z]*|Foundation)\b"
                   r"|Fatal error|Stack dump|stack trace|Backtrace|0x[0-9a-f]{8}|Optional\(|The value '|Missing |Unknown option")


def help_text(command):
    result = perfhud(command, "--help")
    assert result.returncode == 0 and result.stderr == "", result
    return result.stdout


def options(command):
    """(valued options, flags) that `perfhud COMMAND --help` lists."""
    text = help_text(command)
    valued = set(VALUED.findall(text))
    flags = {name for name in FLAGS_WITHOUT_VALUE.findall(text)} - valued - {"--help", "--version"}
    return sorted(valued - {"--help", "--version"}), sorted(flags)


def refused(args):
    """Runs perfhud with `args`, which must be refused as usage: the one line, without its prefix."""
    result = perfhud(*args, timeout=30)
    assert result.returncode == 64, (args, result)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and result.stdout == "", (args, result.stderr, result.stdout[:200])
    assert lines[0].startswith("perfhud: "), (args, lines[0])
    message = lines[0][len("perfhud: "):]
    assert not LEAKS.search(message), (args, message)
    assert message[0].islower() or message[0] in "-<", (args, message)
    return message


def sweep_cases():
    cases = []
    for command in COMMANDS:
        valued, flags = options(command)
        after = AFTER.get(command, [])
        for option in valued:
            before = ["--unit", "x"] if (command, option) == ("daemon", "--pid") else BEFORE.get(command, [])
            # A value missing at the end of the line, or one that reads as an option.
            cases.append((command, option, [command, *before, option], "; got nothing"))
            cases.append((command, option, [command, *before, option, "-7", *after], "; got '-7'"))
            if option not in FREE_TEXT and (command, option) not in FREE_TEXT:
                cases.append((command, option, [command, *before, option, "bogus", *after], "; got 'bogus'"))
        before = BEFORE.get(command, [])
        for flag in flags:
            cases.append((command, flag, [command, *before, f"{flag}=3", *after], f"{flag} takes no value; got '3'"))
        # Whatever the options: one unknown, long or short, and words the command does not take.
        cases.append((command, None, [command, *before, "--frobnicate", *after], "unknown option '--frobnicate'"))
        cases.append((command, None, [command, *before, "-Z", *after], "unknown option '-Z'"))
        if command != "run":
            cases.append((command, None, [command, *before, "one", "two"], "unexpected argument"))
    return cases


@pytest.mark.parametrize("command, option, args, ending", sweep_cases(), ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_every_option_of_every_command_says_what_it_wants(command, option, args, ending):
    message = refused(args)
    assert ending in message, (args, message)
    if option and "takes no value" not in ending:
        subject = option if option != "--listen" else "--metrics-listen"
        assert message.startswith(f"{subject} wants "), (args, message)


MALFORMED = [
    # The issue's own examples, word for word where the wording is the point.
    (["attach", "1", "--tick", "100"], "--tick wants a duration such as 100ms or 2s, from 1ms to 10s; got '100'"),
    (["attach", "1", "--tick", "0"], "--tick wants a duration such as 100ms or 2s, from 1ms to 10s; got '0'"),
    (["attach", "1", "--tick", "20s"], "--tick wants a duration such as 100ms or 2s, from 1ms to 10s; got '20s'"),
    (["attach", "1", "--tick", "-1s"], "--tick wants a duration such as 100ms or 2s, from 1ms to 10s; got '-1s'"),
    (["attach", "1", "--duration", "90"], "--duration wants a duration such as 30s or 1m30s, longer than 0; got '90'"),
    (["attach", "-5"], "attach wants the PID of a running process, a positive number; got '-5'"),
    (["attach", "0"], "attach wants the PID of a running process, a positive number; got '0'"),
    (["attach"], "attach wants the PID of a running process, a positive number"),
    (["--frobnicate"], "unknown option '--frobnicate': perfhud wants a command first (perfhud --help lists them)"),
    (["--verison"], "unknown option '--verison': did you mean '--version'?"),
    (["--tick", "1s", "run", "true"], "unknown option '--tick' before the command: options go after it, as in perfhud run --tick …"),
    (["attach", "1", "--tik", "1s"], "unknown option '--tik': did you mean '--tick'?"),
    # Before the PID, where ArgumentParser would skip the option and take its value for the PID.
    (["attach", "--tik", "100ms", "1"], "unknown option '--tik': did you mean '--tick'?"),
    (["emit", "action", "x", "y"], "unexpected argument 'y' (perfhud emit --help)"),
    (["report", "a.db", "b.db"], "unexpected argument 'b.db' (perfhud report --help)"),
    (["attach", "1", "-x"], "unknown option '-x' (perfhud attach --help lists them)"),
    (["run", "-x"], "unknown option '-x' (perfhud run --help lists them)"),
    (["attach", "1", "2"], "unexpected argument '2' (perfhud attach --help)"),
    (["attach", "1", "--output", "xml"], "--output wants hud, plain or json; got 'xml'"),
    (["attach", "1", "--count", "0"], "--count wants a whole number of reports, at least 1; got '0'"),
    (["emit", "bogus", "x"], "emit wants action, frame or phase; got 'bogus'"),
    (["export", "f.db"], "export wants --format: csv, ndjson or openmetrics"),
    (["report"], "report wants a recording made with --record"),
    (["replay", "f.db", "--speed", "100"], "--speed wants a speed from 0.0625 to 64, such as 2 or 0.5; got '100'"),
    (["run", "--tick", "100", "ls", "--all"], "--tick wants a duration such as 100ms or 2s, from 1ms to 10s; got '100'"),
    (["run", "--tick", "1s", "--tik", "1s", "ls", "--all"], "unknown option '--tik': did you mean '--tick'?"),
    (["run", "--frame-gap", "2s", "true"], "--frame-gap wants a duration such as 8ms, from 1ms to 1s; got '2s'"),
    (["atach", "1"], "unknown command 'atach': did you mean 'attach'?"),
    (["help", "atach"], "unknown command 'atach': did you mean 'attach'?"),
    (["run"], "no command given: perfhud run [options] [--] CMD [ARGS]"),
    # A value with escape sequences is shown, not obeyed.
    (["attach", "1", "--tick", "\x1b[2J"], "--tick wants a duration such as 100ms or 2s, from 1ms to 10s; got '\\e[2J'"),
]


@pytest.mark.parametrize("args, message", MALFORMED, ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_a_malformed_command_line_says_what_was_wrong_and_what_is_accepted(args, message):
    assert refused(args) == message


def test_compound_durations_are_taken():
    result = perfhud("attach", str(os.getpid()), "--duration", "1m30s", "--count", "1", "--tick", "10ms")
    assert result.returncode == 0, result.stderr
    result = perfhud("attach", str(os.getpid()), "--duration", "1s500ms", "--output", "json", "--tick", "100ms")
    assert result.returncode == 0 and 13 <= len(result.stdout.splitlines()) <= 17, result


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_command_answers_help(command, flag):
    result = perfhud(command, flag)
    assert result.returncode == 0 and result.stderr == "", result
    assert result.stdout.startswith("OVERVIEW: ") and f"USAGE: perfhud {command}" in result.stdout, result.stdout[:300]


def test_run_help_comes_before_a_command_but_not_after_the_separator():
    assert perfhud("help", "run").stdout == perfhud("run", "--help").stdout
    result = perfhud("run", "--output", "plain", "--count", "3", "--", "sh", "-c", "echo \"program got $1\"", "sh", "--help")
    assert result.returncode == 0 and "program got --help" in result.stderr, result.stderr


def test_each_command_lists_and_takes_only_what_it_uses():
    run_only = {"--frames", "--frame-gap", "--actions-from-output"}
    assert run_only <= set(sum(options("run"), [])), "run has them"
    for command in ("attach", "demo"):
        listed = set(sum(options(command), []))
        assert not listed & run_only, (command, listed & run_only)
    assert refused(["attach", "1", "--frame-gap", "5ms"]) == "--frame-gap is for run, not attach"
    assert refused(["demo", "--frame-gap", "5ms"]) == "--frame-gap is for run, not demo"
    assert refused(["demo", "--actions-from-output"]) == "--actions-from-output is for run, not demo"
    assert refused(["report", "f.db", "--tick", "1s"]) == "--tick is for attach, run, demo, daemon and status, not report"


def test_the_demo_program_answers_help_and_version_without_starting():
    demo = str(BIN / "perfhud-demo")
    version = perfhud("--version").stdout
    for args, expected in ((["--help"], "USAGE: perfhud demo"), (["-h"], "USAGE: perfhud demo"), (["--version"], version)):
        start = time.monotonic()
        result = subprocess.run([demo, *args], capture_output=True, text=True, timeout=10)
        assert result.returncode == 0 and expected in result.stdout and result.stderr == "", (args, result)
        assert time.monotonic() - start < 2, "answered, not started"
    result = subprocess.run([demo, "--frobnicate"], capture_output=True, text=True, timeout=10)
    assert result.returncode == 64 and result.stderr == "perfhud-demo: unexpected argument '--frobnicate': it takes none (perfhud-demo --help)\n"


# ArgumentParser's sentences, which its refusals are written in: none is its API.
PARSER_SENTENCES = ["is invalid for", "Missing value for", "Missing expected argument", "Unknown option", "Unexpected argument",
                    "unexpected arguments:", "does not take any value", "helpMessage("]


def test_the_command_line_reads_none_of_argument_parsers_sentences():
    """Every refusal is perfhud's own, thrown from a validate() (a value read there, a word the
    command does not take); what ArgumentParser refuses itself is worked out from the command line.
    A source of the command line that names one of its sentences, or reads a help page, reads
    what no version of it promises to keep."""
    for path in sorted((ROOT / "Sources" / "perfhud").glob("*.swift")):
        text = path.read_text()
        found = [sentence for sentence in PARSER_SENTENCES if sentence in text]
        assert not found, (path.name, found)
