"""`run` with standard input from a pipe or a file: the program reads it on its pseudo-terminal,
then sees end-of-file when perfhud's input ends, as under script(1). A CI job that pipes input
into `perfhud run` ends."""
import subprocess
import time

from conftest import PERFHUD


def run(command, stdin, timeout=30):
    """perfhud run --output plain -- COMMAND with `stdin`; the program's output is on stderr."""
    return subprocess.run([PERFHUD, "run", "--output", "plain", "--", *command], stdin=stdin,
                          capture_output=True, text=True, timeout=timeout)


def test_piped_input_reaches_the_program_then_ends_it():
    result = run(["cat"], stdin=subprocess.Popen(["printf", "alpha\\nbeta\\n"], stdout=subprocess.PIPE).stdout)
    assert result.returncode == 0, result.stderr
    assert "alpha" in result.stderr and "beta" in result.stderr
    assert "exited, status 0" in result.stdout.splitlines()[-1]


def test_an_empty_input_ends_the_program_at_once():
    with open("/dev/null") as nothing:
        start = time.monotonic()
        result = run(["cat"], stdin=nothing)
    assert result.returncode == 0 and time.monotonic() - start < 5, result


def test_a_last_line_without_its_newline_is_read_and_ended():
    """In canonical mode the first EOF character hands the unfinished line over; a second ends the input."""
    result = run(["sh", "-c", "cat; echo; echo read-to-the-end"],
                 stdin=subprocess.Popen(["printf", "no-newline-at-the-end"], stdout=subprocess.PIPE).stdout)
    assert result.returncode == 0, result.stderr
    assert "no-newline-at-the-end" in result.stderr and "read-to-the-end" in result.stderr


def test_a_file_larger_than_the_terminal_queue_arrives_whole(tmp_path):
    """Far more than the pseudo-terminal holds (4 KiB line buffer, 64 KiB queue), while the program
    writes as much back: perfhud must read the program's output while the input waits for room."""
    data = tmp_path / "lines"
    data.write_text("".join(f"{n}\n" for n in range(1, 200001)))
    with open(data) as source:
        counted = run(["wc", "-l"], stdin=source)
    assert counted.returncode == 0 and "200000" in counted.stderr.split(), counted.stderr[-200:]
    # Every line written back, in order, to the end. (Not the terminal's echo of the input: the
    # kernel drops echoes it has no room for, under script(1) as here.)
    with open(data) as source:
        echoed = run(["sh", "-c", "stty -echo; cat; echo cat-done"], stdin=source)
    lines = echoed.stderr.replace("\r", "").splitlines()
    assert echoed.returncode == 0 and lines[-3:] == ["199999", "200000", "cat-done"], lines[-3:]
    assert set(map(str, range(1, 200001))) <= set(lines), "no line lost"


def test_the_end_is_the_terminal_own_eof_character():
    """A program that changed its terminal's EOF character (stty eof ^B) gets that one: ^D would be
    read as a plain byte and the program would wait for ever. The input ends after the change."""
    late = subprocess.Popen(["sh", "-c", "sleep 1; printf 'after-stty\\n'"], stdout=subprocess.PIPE)
    result = run(["sh", "-c", "stty eof ^B && cat && echo cat-ended"], stdin=late.stdout)
    assert result.returncode == 0, result.stderr
    assert "after-stty" in result.stderr and "cat-ended" in result.stderr


def test_a_terminal_on_standard_input_is_not_ended(terminal):
    """Keys from a person: no end-of-file until they type one."""
    term = terminal(["run", "--output", "plain", "--", "cat"])
    term.pump(1.5)
    assert term.process.poll() is None, "cat still runs: perfhud's terminal has not ended"
    term.send(b"typed\r")
    term.wait_for(lambda t: "typed" in t.text(), what="the typed line")
    term.send(b"\x04")
    assert term.finish() == 0


def test_with_actions_from_standard_input_the_program_reads_none():
    """`--actions-from -`: standard input is the reducer log, so the program's input is empty."""
    log = subprocess.Popen(["sh", "-c", "echo 'received action: Feature.Action.tapped'; sleep 3"], stdout=subprocess.PIPE)
    start = time.monotonic()
    result = subprocess.run([PERFHUD, "run", "--output", "plain", "--actions-from", "-", "--", "cat"], stdin=log.stdout,
                            capture_output=True, text=True, timeout=30)
    log.kill()
    assert result.returncode == 0 and time.monotonic() - start < 2.5, result
    assert "received action" not in result.stderr, "the log is perfhud's, not the program's"
