"""The memory a history takes (issue 19, point 11): checked at start; past 256 MiB perfhud refuses
with the figure and what would fit, exit 64, instead of taking half a gigabyte without a word."""
import os
import resource
import subprocess
import sys

from conftest import PERFHUD, perfhud


def test_a_history_past_256_mib_is_refused_with_the_figure_and_a_hint():
    result = perfhud("attach", str(os.getpid()), "--tick", "1ms", "--history", "165m", "--count", "1")
    assert result.returncode == 64, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert "--history 2h45m at --tick 1ms keeps 9900000 samples, 528.7 MiB of memory (at most 256.0 MiB)" in line, line
    assert "at most 1h19m at this tick" in line and "a coarser --tick (5ms or more)" in line, line


def test_the_daemon_checks_the_same():
    result = perfhud("daemon", "--pid", str(os.getpid()), "--tick", "1ms", "--history", "3h")
    assert result.returncode == 64 and "of memory (at most 256.0 MiB)" in result.stderr, result.stderr


def peak_kib(argv):
    """The peak RSS (KiB) of one run of argv, measured alone (a fresh parent, so no other child counts)."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, capture_output=True, timeout=60); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    return int(subprocess.run([sys.executable, "-c", probe, *argv], check=True, capture_output=True, text=True).stdout)


def test_the_hinted_tick_is_accepted_and_a_long_history_takes_memory_only_as_it_fills():
    assert perfhud("attach", str(os.getpid()), "--tick", "5ms", "--history", "165m", "--count", "1", "--output", "json").returncode == 0
    # 79 minutes at 1 ms: 4.74 million samples, 253 MiB once full (the bound is checked against
    # that), but the ring grows as it fills (issue 22): two samples in, it costs what 1 second does.
    long = peak_kib([PERFHUD, "attach", str(os.getpid()), "--tick", "1ms", "--history", "79m", "--count", "2", "--output", "json"])
    short = peak_kib([PERFHUD, "attach", str(os.getpid()), "--tick", "1ms", "--history", "1s", "--count", "2", "--output", "json"])
    assert long < short + 2048, (long, short)
