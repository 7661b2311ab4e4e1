"""A tree's memory counted once and fresh (issue 44, items 1 and 2), against programs nobody here
wrote and the kernel's own files read by this test: PostgreSQL under pgbench (its backends share
its buffers: the RSS sum counts them once per backend), a bash holding 40 MiB that forks
subshells in a memory-limited control group, a shell forking short children. `rss_bytes` of a
tree is its PSS sum (each process's smaps_rollup `Pss`, summed as smem does), `rss_sum_bytes` the
plain sum (statm, as htop and psrecord add a tree up); `pss_age_seconds` says how old the oldest
reading in it is; a process that ends between two reads drops out, never nulls the figure.
"""
import contextlib
import os
import pathlib
import re
import signal
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import PERFHUD, json_rows_of, wait_until, free_port, metric, metrics_text
from test_why import control_group

PAGE = os.sysconf("SC_PAGE_SIZE")
POSTGRES_BIN = next(iter(sorted(pathlib.Path("/usr/lib/postgresql").glob("*/bin"))), None) \
    if pathlib.Path("/usr/lib/postgresql").is_dir() else None
MEMORY = "/sys/fs/cgroup/memory"


def tree_of(root):
    """`root` and its descendants, from each thread's `children`."""
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                todo += [int(child) for child in open(f"/proc/{pid}/task/{task}/children").read().split()]
        except (FileNotFoundError, ProcessLookupError):
            pass
    return pids


def pss_sum(pids):
    """Σ Pss of smaps_rollup over the processes that are still there (smem's figure)."""
    total = 0
    for pid in pids:
        try:
            for line in open(f"/proc/{pid}/smaps_rollup"):
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def rss_sum(pids):
    total = 0
    for pid in pids:
        try:
            total += int(open(f"/proc/{pid}/statm").read().split()[1]) * PAGE
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def watch_rows(pid, count, tick="1s", reference=None):
    """`attach PID --include-children --output json`, each row read as it comes and, where given,
    `reference()` taken the moment it arrives (the kernel's files a few milliseconds after
    perfhud read them). - Returns: [(row, reference)]."""
    watcher = subprocess.Popen([PERFHUD, "attach", str(pid), "--include-children", "--output", "json", "--tick", tick,
                                "--count", str(count)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pairs = []
    for line in watcher.stdout:
        taken = reference() if reference else None
        pairs.append((line, taken))
    _, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 0, err
    rows = json_rows_of("".join(line for line, _ in pairs))
    return [(row, taken) for row, (_, taken) in zip(rows, pairs)]


@pytest.fixture
def postgres():
    """A PostgreSQL cluster of its own (a Unix socket, no TCP), initialised for pgbench; its postmaster's PID."""
    if POSTGRES_BIN is None or shutil.which("pgbench") is None or os.geteuid() != 0:
        pytest.skip("needs PostgreSQL, pgbench and root (to run them as the postgres user)")
    # Where the postgres user may go: pytest's own directories are root's alone.
    base = pathlib.Path(tempfile.mkdtemp(prefix="perfhud-pg-"))
    os.chmod(base, 0o755)
    shutil.chown(base, "postgres")
    as_postgres = ["runuser", "-u", "postgres", "--"]
    subprocess.run(as_postgres + [str(POSTGRES_BIN / "initdb"), "-D", str(base / "data"), "-A", "trust", "-U", "postgres"],
                   check=True, capture_output=True)
    port = str(54300 + os.getpid() % 90)
    subprocess.run(as_postgres + [str(POSTGRES_BIN / "pg_ctl"), "-D", str(base / "data"), "-l", str(base / "log"), "-w",
                                  "-o", f"-k {base} -c listen_addresses='' -p {port} -c shared_buffers=64MB", "start"],
                   check=True, capture_output=True)
    client = as_postgres + ["pgbench", "-h", str(base), "-p", port, "-U", "postgres"]
    try:
        subprocess.run(client + ["-i", "-s", "5", "postgres"], check=True, capture_output=True)
        postmaster = int((base / "data" / "postmaster.pid").read_text().split()[0])
        yield postmaster, client
    finally:
        subprocess.run(as_postgres + [str(POSTGRES_BIN / "pg_ctl"), "-D", str(base / "data"), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def test_postgresql_under_pgbench_is_its_pss_every_row_fresh(postgres):
    postmaster, client = postgres
    bench = subprocess.Popen(client + ["-c", "8", "-T", "14", "postgres"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: len(tree_of(postmaster)) >= 12, timeout=10), "pgbench's 8 backends"
        time.sleep(1)
        pairs = watch_rows(postmaster, 8, reference=lambda: (pss_sum(tree_of(postmaster)), rss_sum(tree_of(postmaster))))
    finally:
        bench.wait(timeout=30)
    rows = [(row, taken) for row, taken in pairs if row["alive"]]
    assert len(rows) >= 7
    for row, (pss, rss) in rows:
        assert row["processes"] >= 12, row
        # The tree's memory is its PSS: the processes' own files, summed, at the same moment.
        assert row["rss_bytes"] == row["pss_bytes"], row
        assert abs(row["rss_bytes"] - pss) <= 0.05 * pss, (row["rss_bytes"], pss)
        assert abs(row["rss_sum_bytes"] - rss) <= 0.05 * rss, (row["rss_sum_bytes"], rss)
        # The shared buffers once, not once a backend: the sum is several times the tree's memory.
        assert row["rss_sum_bytes"] > 2 * row["rss_bytes"], row
    # Fresh: read at the row's own tick (a 1 s tick reads every process every row, within 5 % of a
    # core), or its age said — the value above is right either way. Most rows are fresh even on a
    # loaded 2-core machine, none is more than a couple of passes old.
    ages = [row["pss_age_seconds"] for row, _ in rows]
    assert sum(1 for age in ages if age == 0) >= len(rows) * 3 // 4, ages
    assert all(age <= 2.5 for age in ages), ages


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(MEMORY + "/memory.limit_in_bytes"),
                    reason="needs root and the cgroup v1 memory controller (this machine's hybrid layout)")
def test_a_forking_shell_in_a_limited_group_is_counted_once():
    """bash holding 40 MiB forks a subshell after another (each a copy of it, sharing its pages):
    the RSS sum counts the 40 MiB twice while a subshell lives; the tree's memory is within the
    group's own count of its pages (memory.stat rss + mapped_file), and never null."""
    script = "x=$(head -c 40000000 /dev/zero | tr '\\0' a); echo ready; while :; do ( sleep 0.7; : ); done"
    with control_group(f"{MEMORY}/perfhud-test-tree-{os.getpid()}") as group:
        pathlib.Path(group, "memory.limit_in_bytes").write_text(str(256 << 20))
        shell = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, text=True,
                                 preexec_fn=lambda: pathlib.Path(group, "cgroup.procs").write_text("0"))
        try:
            assert shell.stdout.readline().strip() == "ready"

            def stat():
                fields = dict(line.split() for line in open(f"{group}/memory.stat"))
                return int(fields["rss"]) + int(fields["mapped_file"])
            pairs = watch_rows(shell.pid, 10, tick="500ms", reference=stat)
        finally:
            shell.kill()
            shell.wait()
    rows = [(row, taken) for row, taken in pairs if row["alive"]]
    assert len(rows) >= 9
    for row, group_pages in rows:
        assert row["rss_bytes"] is not None and row["pss_bytes"] is not None, row
        assert row["memory_limit_bytes"] == 256 << 20, row
        assert 40_000_000 <= row["rss_bytes"] <= group_pages * 1.1, (row["rss_bytes"], group_pages)
    doubled = [row for row, _ in rows if row["processes"] >= 3]   # bash, a subshell, its sleep
    assert doubled, [row["processes"] for row, _ in rows]
    assert all(row["rss_sum_bytes"] >= row["rss_bytes"] + 35_000_000 for row in doubled), \
        [(row["rss_sum_bytes"], row["rss_bytes"]) for row in doubled]


def test_short_children_drop_out_of_the_sum_and_never_null_it():
    """A shell forking a child every 20 ms, watched at 100 ms: children end between reads all the
    time; every row has its PSS (the processes there, each read or held), none null."""
    shell = subprocess.Popen(["sh", "-c", "while :; do /bin/true; sleep 0.02; done"])
    try:
        time.sleep(0.3)
        pairs = watch_rows(shell.pid, 30, tick="100ms")
    finally:
        shell.kill()
        shell.wait()
    rows = [row for row, _ in pairs if row["alive"]]
    assert len(rows) >= 29
    assert all(row["pss_bytes"] is not None and row["pss_bytes"] > 0 for row in rows), [row["pss_bytes"] for row in rows]
    assert all("memory_unreported_reason" not in row for row in rows)
    assert all(row["rss_bytes"] == row["pss_bytes"] and row["rss_sum_bytes"] >= row["pss_bytes"] for row in rows)


def test_a_daemon_group_with_children_counts_each_process_once():
    """`daemon --match … --include-children` where a member's child matches too: the child is in
    its parent's tree and not a member of its own (it was counted twice: once each way). The
    group's processes, memory and CPU against /proc's own."""
    marker = f"perfhud-tree-once-{os.getpid()}"
    program = ("import os, sys, time\n"
               "if os.fork() == 0:\n"
               "    end = time.monotonic() + 1.5\n"
               "    while time.monotonic() < end: pass\n"
               "    time.sleep(60)\n"
               "else:\n"
               "    time.sleep(60)\n")
    parent = subprocess.Popen(["python3", "-c", program, marker])
    port = free_port()
    daemon = subprocess.Popen([PERFHUD, "daemon", "--match", f"pair={marker}", "--include-children",
                               "--metrics-listen", f"127.0.0.1:{port}", "--tick", "200ms"], stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: len(tree_of(parent.pid)) == 2, timeout=10)
        time.sleep(2.5)   # the child's burst is over: its CPU stays where it is
        pids = tree_of(parent.pid)
        assert metric(port, "perfhud_target_processes") == 2, metric(port, "perfhud_target_processes")
        ticks = os.sysconf("SC_CLK_TCK")
        spent = sum(sum(int(field) for field in open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[11:13]) for pid in pids) / ticks
        # Summed over its modes (user, system).
        text = metrics_text(port)
        counted = sum(float(value) for value in re.findall(r'^perfhud_target_cpu_seconds_total\{[^}]*\} (\S+)$', text, re.M))
        assert abs(counted - spent) <= 0.15 + 0.1 * spent, (counted, spent)
        assert abs(metric(port, "perfhud_target_resident_memory_sum_bytes") - rss_sum(pids)) <= 0.05 * rss_sum(pids)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.communicate(timeout=30)
        for pid in reversed(tree_of(parent.pid)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        parent.wait()


def test_the_hud_names_a_trees_memory_for_what_it_is(terminal):
    """The status line says `Mem` (the PSS sum) and `RSS Σ` (the plain sum) for a tree, the memory
    graph `memory (PSS Σ)`; for one process `RSS`, `PSS` and `memory (RSS)`."""
    tree = terminal(["run", "--include-children", "--", "sh", "-c", "sleep 30 & sleep 30"], rows=20, columns=160)
    tree.wait_for(lambda t: "RSS Σ" in t.screen.display[0], what="the tree's status line")
    assert " Mem " in tree.screen.display[0] and " PSS " not in tree.screen.display[0], tree.screen.display[0]
    assert tree.screen.display[1].lstrip().startswith("memory (PSS Σ)"), tree.screen.display[1]
    tree.process.terminate()
    one = terminal(["run", "--", "sleep", "30"], rows=20, columns=160)
    one.wait_for(lambda t: " PSS " in t.screen.display[0], what="one process's status line")
    assert " RSS " in one.screen.display[0] and "Σ" not in one.screen.display[0], one.screen.display[0]
    assert one.screen.display[1].lstrip().startswith("memory (RSS)"), one.screen.display[1]
    one.process.terminate()
