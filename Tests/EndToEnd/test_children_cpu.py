"""--include-children: the CPU of children is counted when it is spent, never in lumps.

`run` puts the program in a control group of its own where the system allows it (root here) and
reads the group's CPU usage; `PERFHUD_NO_CGROUP=1` forces the fallback, which rediscovers the tree
from /proc on every tick and never lets a tick claim more than the machine has. Both are held to
the same figures: the kernel's own count of the children's CPU (bash's `times`, i.e. wait4's
rusage of every reaped child) and the machine's size.
"""
import json
import os
import pathlib
import re
import subprocess

import pytest

from conftest import PERFHUD, perfhud, json_rows_of

CPUS = os.cpu_count()
# cpu_percent is derived from the same two timestamps the sampler bounds the total by, so the
# bound holds exactly; only the recorded resolution (0.01) is allowed on top of it.
MACHINE = 100 * CPUS + 0.01

MODES = [
    pytest.param({}, id="cgroup"),
    # cgroup v1 cpuacct: where v2 is hidden (a tmpfs over its mount point, in a mount namespace of
    # the test's own), perfhud makes its group in the v1 cpuacct hierarchy. Hybrid hosts only.
    pytest.param({"HIDE_CGROUP2": "1"}, id="cgroup1"),
    pytest.param({"PERFHUD_NO_CGROUP": "1"}, id="proc"),
]


def unified_root():
    for line in open("/proc/self/mountinfo"):
        before, after = line.split(" - ", 1)
        if after.split()[0] == "cgroup2":
            return before.split()[4]
    return None


def cpuacct_mounted():
    return any(line.split(" - ", 1)[1].split()[0] == "cgroup" and "cpuacct" in line.split()[-1].split(",")
               for line in open("/proc/self/mountinfo"))


def needs_group(env):
    if "PERFHUD_NO_CGROUP" not in env and os.geteuid() != 0:
        pytest.skip("a control group of its own needs root (or a delegated subtree) here")
    if "HIDE_CGROUP2" in env and not (unified_root() and cpuacct_mounted()):
        pytest.skip("needs a hybrid hierarchy (cgroup2 and v1 cpuacct)")


def run_children(script, env, tick="100ms"):
    """Runs `bash -c script` under `perfhud run --include-children`; the script ends with `times`:
    the shell's own CPU time, then that of every child it reaped (and theirs), as the kernel counts
    it (wait4's rusage). Their sum is the tree's."""
    args = ["run", "--include-children", "--output", "json", "--tick", tick, "--",
            "bash", "-c", "grep -c perfhud-run /proc/self/cgroup >&2; " + script + "; times >&2"]
    if "HIDE_CGROUP2" in env:
        result = subprocess.run(["unshare", "-m", "sh", "-c", f'mount -t tmpfs none {unified_root()} && exec "$@"',
                                 "sh", PERFHUD, *args], capture_output=True, text=True, timeout=120)
    else:
        result = perfhud(*args, env=dict(os.environ, **env), timeout=120)
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    clock = re.findall(r"(\d+)m([\d.]+)s", "\n".join(result.stderr.splitlines()[-2:]))
    assert len(clock) == 4, result.stderr
    children = sum(int(minutes) * 60 + float(seconds) for minutes, seconds in clock)
    # grep's count is the first line the program writes; perfhud's own warnings may come before it.
    counts = [line.strip() for line in result.stderr.splitlines() if line.strip().isdigit()]
    assert counts, result.stderr
    in_group = counts[0] != "0"
    assert not leftover_groups(), "the run's group is removed when it ends"
    return rows, children, in_group


def leftover_groups():
    """Groups of perfhuds that no longer run, at the top of the v2 and v1 cpuacct hierarchies."""
    tops = [pathlib.Path(line.split(" - ", 1)[0].split()[4]) for line in open("/proc/self/mountinfo")
            if line.split(" - ", 1)[1].split()[0] in ("cgroup2", "cgroup")]
    return [group for top in tops for group in top.glob("perfhud-run-*")
            if not os.path.exists(f"/proc/{group.name.rsplit('-', 1)[-1]}")]


def check_totals(rows, children):
    totals = [r["cpu_seconds_total"] for r in rows]
    assert all(b >= a for a, b in zip(totals, totals[1:])), "totals never go backwards"
    cpu = [r["cpu_percent"] for r in rows if r["cpu_percent"] is not None]
    assert max(cpu) <= MACHINE, f"a tick claimed more than {CPUS} CPUs: {max(cpu)} %"
    # The last row is the last tick before the program ended: up to one tick of one busy child
    # (0.1 s) may follow it. Beyond that, the kernel's figure within 3 %.
    assert children * 0.97 - 0.11 <= totals[-1] <= children * 1.03 + 0.02, (totals[-1], children)
    return cpu


@pytest.mark.parametrize("env", MODES)
def test_short_busy_children_one_at_a_time_show_one_core(env):
    needs_group(env)
    rows, children, in_group = run_children(
        'for i in 1 2 3 4 5; do timeout 0.6 python3 -c "while True: pass"; done', env)
    assert in_group == ("PERFHUD_NO_CGROUP" not in env), "the program ran in perfhud's group exactly when allowed"
    cpu = check_totals(rows, children)
    assert children >= 1.0, f"the children got too little CPU to judge ({children} s)"
    # One single-threaded busy child at a time: no tick can honestly exceed one core. main showed
    # 600 % for the tick in which bash reaped each child. The group counts time as it is spent
    # (timer jitter only). From /proc, the time a child spent after our last look at it arrives
    # through its parent's reaped-children times, a tick later, and those run ahead of the child's
    # own clock here (by 10-20 %, measured: 0.37 s reaped for a child whose clock and cgroup said 0.30 s):
    # up to ~25 % more in the tick after each child ends (seen: 104-125 %), never a lump.
    limit = 115 if in_group else 150
    assert max(cpu) <= limit, f"a lump: {max(cpu)} % ({cpu})"
    # During the busy phase the ticks follow the children's own rate (about 100 % on an idle
    # machine, less while others build): most rows near the mean, not zeros and spikes.
    busy = cpu[next(i for i, c in enumerate(cpu) if c >= 20):][:-2]
    mean = sum(busy) / len(busy)
    near = [c for c in busy if abs(c - mean) <= 0.3 * mean + 5]
    assert len(near) >= 0.75 * len(busy), f"mean {mean:.0f} %, rows {busy}"
    assert max(r["processes"] for r in rows) >= 3, "bash, timeout and python seen together"


@pytest.mark.parametrize("env", MODES)
def test_many_children_shorter_than_a_tick(env, burn):
    needs_group(env)
    rows, children, _ = run_children(f"for i in $(seq 50); do {burn} busy 0.03; done", env)
    assert 50 * 0.03 * 0.95 <= children, children
    check_totals(rows, children)
    # bash and one of its children nearly all the time: seen on every tick, not once a second.
    counts = [r["processes"] for r in rows if r["alive"]]
    assert sum(c >= 2 for c in counts) >= 0.75 * len(counts), counts


def test_the_group_is_removed_and_stale_ones_swept():
    if os.geteuid() != 0 or unified_root() is None:
        pytest.skip("needs root and a cgroup v2 hierarchy")
    root = pathlib.Path(unified_root())
    own = open("/proc/self/cgroup").read().split("0::", 1)[1].split("\n", 1)[0]
    here = root / own.lstrip("/")
    stale = here / "perfhud-run-2147483600"     # a perfhud that no longer runs (killed -9)
    stale.mkdir(exist_ok=True)
    result = perfhud("run", "--include-children", "--output", "json", "--", "sh", "-c",
                     "cat /proc/self/cgroup >&2")
    assert result.returncode == 0, result.stderr
    group = next(line for line in result.stderr.splitlines() if line.startswith("0::")).split("::", 1)[1]
    assert "perfhud-run-" in group, result.stderr
    assert not (root / group.lstrip("/")).exists(), "the run's group is removed when it ends"
    assert not stale.exists(), "a group left by a perfhud that is gone is removed"
    left = [group for group in here.glob("perfhud-run-*") if not os.path.exists(f"/proc/{group.name.split('-')[-1]}")]
    assert not left, "nothing accumulates"


def test_in_a_booted_pure_cgroup2_system_as_a_service():
    """A stock Debian 12 with systemd as PID 1 and cgroup2 only (SYSTEMD_NSPAWN_UNIFIED_HIERARCHY):
    perfhud run as a transient service makes its group inside the service's own cgroup."""
    import shutil
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).parent / "helpers"))
    from container import Container, HarnessError, base_tree, cgroup_modes
    if "unified" not in cgroup_modes():
        pytest.skip("this host cannot boot a pure cgroup2 container")
    try:
        base = base_tree()
    except HarnessError as error:
        pytest.skip(str(error))
    with Container(base, cgroup="unified") as machine:
        shutil.copy(PERFHUD, machine.path("/usr/local/bin/perfhud"))
        # The built binary, not the package: the libraries the package would pull in, from the
        # host (a Debian 12 like the container, which the harness needs anyway).
        for line in subprocess.run(["ldd", PERFHUD], capture_output=True, text=True).stdout.splitlines():
            if "=>" in line and not pathlib.Path(machine.path(line.split("=>")[1].split()[0])).exists():
                shutil.copy(line.split("=>")[1].split()[0], machine.path("/usr/local/lib/"))
        machine.run(["ldconfig"])
        script = ('grep ^0:: /proc/self/cgroup >&2; for i in 1 2 3 4 5; do timeout 0.6 sh -c "while :; do :; done"; '
                  'done; times >&2')
        for env, grouped in (([], True), (["-E", "PERFHUD_NO_CGROUP=1"], False)):
            result = machine.run(["systemd-run", "--wait", "--pipe", "--quiet", *env, "/usr/local/bin/perfhud", "run",
                                  "--include-children", "--output", "json", "--tick", "100ms", "--", "bash", "-c", script],
                                 check=False, timeout=60)
            assert result.returncode == 0, result.stderr
            group = result.stderr.splitlines()[0]
            assert ("/perfhud-run-" in group) == grouped and group.startswith("0::/system.slice/run-"), group
            rows = json_rows_of(result.stdout)
            clock = re.findall(r"(\d+)m([\d.]+)s", "\n".join(result.stderr.splitlines()[-2:]))
            cpu = check_totals(rows, sum(int(minutes) * 60 + float(seconds) for minutes, seconds in clock))
            assert max(cpu) <= (115 if grouped else 150), cpu
        left = machine.run("find /sys/fs/cgroup -name 'perfhud-run-*'", check=False).stdout.strip()
        assert not left, f"groups left behind: {left}"
