"""The memory a history takes (issue 19, point 11): checked at start; past 256 MiB perfhud refuses
with the figure and what would fit, exit 64, instead of taking half a gigabyte without a word."""
import os
import resource
import subprocess

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


def test_the_hinted_tick_is_accepted_and_a_history_under_the_bound_takes_what_was_said():
    assert perfhud("attach", str(os.getpid()), "--tick", "5ms", "--history", "165m", "--count", "1", "--output", "json").returncode == 0
    # 79 minutes at 1 ms: 4.74 million samples, 253 MiB, allocated at start.
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run([PERFHUD, "attach", str(os.getpid()), "--tick", "1ms", "--history", "79m", "--count", "2", "--output", "json"],
                   check=True, capture_output=True, timeout=60)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    assert peak > before * 1024, "this child set the peak"
    assert 240 * 2**20 < peak < 256 * 2**20 + 64 * 2**20, f"{peak / 2**20:.0f} MiB"
