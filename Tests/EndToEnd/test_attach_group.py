"""`perfhud attach --match` and `--unit`: the HUD of a group as the daemon counts it (what `perfhud
top`'s Enter opens for a group, issue 44): its members found again while it runs, the CPU of one
that joins counted from when it was found (no lump of its past), the session ended with the last
member, and clear refusals."""
import os
import re
import subprocess
import sys
import time

import pytest

from conftest import PERFHUD, perfhud, json_rows_of, summary_of
from test_daemon_targets import spawn, system_slice  # noqa: F401 (the fixtures)

# Busy half the time (30 ms on, 30 ms off) until the process has used LIMIT seconds of CPU by its
# own clock (the kernel's count, the reference).
SPIN_UNTIL = """
import os, sys, time
def spin_until(limit):
    while time.process_time() < limit:
        end = time.monotonic() + 0.03
        while time.monotonic() < end:
            pass
        time.sleep(0.03)
"""
# Spins until it has used BUDGET seconds of CPU, then says how much it used and exits. The marker
# is only in its command line.
SPIN = SPIN_UNTIL + """
spin_until(float(sys.argv[1]))
print(f"cpu {time.process_time():.6f}", flush=True)
"""
MACHINE = 100 * os.cpu_count() + 0.01


def cpu_printed(process):
    out = process.stdout.read()
    found = re.search(r"^cpu ([0-9.]+)$", out, re.M)
    assert found, out
    return float(found[1])


def test_a_match_counts_a_member_that_joins_and_ends_with_the_last_member():
    marker = f"perfhud-attach-group-{time.monotonic_ns()}"
    first = subprocess.Popen([sys.executable, "-c", SPIN, "1.5", marker], stdout=subprocess.PIPE, text=True)
    late = None
    try:
        time.sleep(0.2)
        attach = subprocess.Popen([PERFHUD, "attach", "--match", marker, "--output", "json", "--tick", "100ms"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The first row is out: attach has looked for the members. One more starts now; it is found
        # at the next look (a second later) with what it spent meanwhile.
        head = attach.stdout.readline()
        late = subprocess.Popen([sys.executable, "-c", SPIN, "0.8", marker], stdout=subprocess.PIPE, text=True)
        out, err = attach.communicate(timeout=60)
        out = head + out
    finally:
        for process in (first, late):
            if process and process.poll() is None:
                process.wait(timeout=30)
    assert attach.returncode == 0, err
    rows = json_rows_of(out)
    reference = cpu_printed(first) + cpu_printed(late)
    assert rows[-1]["alive"] is False and rows[-1]["processes"] == 0, rows[-1]
    assert max(r["processes"] for r in rows) == 2, [r["processes"] for r in rows]
    # Both programs' time, the late one's from when it was found (up to a second after it started:
    # at most half a second of its CPU left out), none twice.
    total = rows[-1]["cpu_seconds_total"]
    assert reference - 0.55 <= total <= reference * 1.03 + 0.05, (total, reference)
    # No lump when it joins: what it spent before it was found is not shown as spent in one tick.
    # Two programs at half a core each: about one core (a tick may hold more of their busy slices).
    cpu = [r["cpu_percent"] for r in rows if r["cpu_percent"] is not None]
    assert max(cpu) <= 150, cpu
    summary = summary_of(out)
    assert summary["cpu_percent_max"] == max(cpu), (summary["cpu_percent_max"], max(cpu))


def test_refusals_are_one_line_with_their_exit_statuses():
    cases = [
        (["--match", f"nothing-matches-{time.monotonic_ns()}"], 66, r"perfhud: no process matches /nothing-matches-\d+/"),
        (["--unit", "perfhud-missing.service"], 66, r"perfhud: perfhud-missing\.service is not running"),
        # A name without a type is a service, as systemctl and the daemon read it.
        (["--unit", "perfhud-missing"], 66, r"perfhud: perfhud-missing\.service is not running"),
        (["--match", "(("], 64, r"perfhud: invalid --match pattern /\(\(/: .+"),
        (["--match", "a", "--unit", "b"], 64, r"perfhud: attach watches one target: one of --match, --unit, --container, --cgroup and --pod"),
        (["--match", "a", "12"], 64, r"perfhud: unexpected argument '12' \(perfhud attach --help\)"),
    ]
    for args, status, message in cases:
        result = perfhud("attach", *args, "--output", "json", timeout=15)
        assert result.returncode == status and re.fullmatch(message, result.stderr.strip()), (args, result.returncode, result.stderr)
        assert result.stdout == "", args


def test_a_unit_counts_every_process_of_its_group(spawn, system_slice):
    unit = f"perfhud-attach-{os.getpid()}.service"
    members = [spawn("sleep", "60"), spawn("sleep", "61")]
    system_slice(unit, *members)
    result = perfhud("attach", "--unit", unit, "--output", "json", "--tick", "200ms", "--count", "3", timeout=30)
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    assert [r["processes"] for r in rows] == [2, 2, 2], rows
    # The group's memory is its PSS sum, as the daemon's: two sleeps share most of their pages.
    assert all(r["rss_bytes"] < r["rss_sum_bytes"] for r in rows), [(r["rss_bytes"], r["rss_sum_bytes"]) for r in rows]
    assert rows[0]["pid"] == min(m.pid for m in members), "the lowest PID names a group that is not one tree"


# Spins half the time until it has used PRE seconds of CPU matching nothing (the marker is given
# reversed), says so, then execs SPIN with the marker: from then on it matches, with PRE seconds
# already on its clock.
BEFORE = SPIN_UNTIL + """
pre, budget, marker = float(sys.argv[1]), sys.argv[2], sys.argv[3][::-1]
spin_until(pre)
print(f"pre {time.process_time():.6f}", flush=True)
os.execv(sys.executable, [sys.executable, "-c", SPIN, budget, marker])
""".replace("SPIN,", repr(SPIN) + ",")


def test_a_process_that_comes_to_match_brings_none_of_its_past():
    # A process that ran before, matching nothing (here until it exec'd; a process moved into a
    # unit's group is the same case): what it spent then was not the group's.
    marker = f"perfhud-attach-exec-{time.monotonic_ns()}"
    stay = subprocess.Popen([sys.executable, "-c", SPIN, "3.0", marker], stdout=subprocess.PIPE, text=True)
    time.sleep(0.2)
    attach = subprocess.Popen([PERFHUD, "attach", "--match", marker, "--output", "json", "--tick", "100ms"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    head = attach.stdout.readline()
    # A second of CPU before the exec (two seconds at half a core), another after it: two seconds
    # matching, so a look (once a second) finds it.
    comes = subprocess.Popen([sys.executable, "-c", BEFORE, "1.0", "2.0", marker[::-1]], stdout=subprocess.PIPE, text=True)
    out, err = attach.communicate(timeout=60)
    stay.wait(timeout=30)
    comes.wait(timeout=30)
    assert attach.returncode == 0, err
    rows = json_rows_of(head + out)
    said = comes.stdout.read()
    pre = float(re.search(r"^pre ([0-9.]+)$", said, re.M)[1])
    final = float(re.search(r"^cpu ([0-9.]+)$", said, re.M)[1])
    whole = cpu_printed(stay) + final
    total = rows[-1]["cpu_seconds_total"]
    assert max(r["processes"] for r in rows) == 2, [r["processes"] for r in rows]
    # Its PRE seconds are not in the total (they would be with its whole clock taken); what it spent
    # after the exec and before the next look is left out too (at most a second at half a core).
    assert whole - pre - 0.6 <= total <= whole - pre + 0.05, (total, whole, pre)
    cpu = [r["cpu_percent"] for r in rows if r["cpu_percent"] is not None]
    assert max(cpu) <= MACHINE, cpu
