"""When descriptors run out (issue 44, item 0). perfhud keeps a dozen files open for each process
it watches, so a group of a hundred processes outgrows the soft limit of 1,024 a service and most
shells get: the daemon aborted ("double free or corruption") where a network socket could not be
made. perfhud now raises its soft limit to the hard one at start, gives its launched program the
limit it started with, and where even the hard limit runs out, goes on without the files it could
not open."""
import os
import resource
import signal
import subprocess
import time

import pytest

from conftest import PERFHUD, json_rows_of, wait_until, free_port, metric

MARK = "perfhud-fd-worker"


@pytest.fixture
def workers():
    """`count` processes named MARK (sleeps), ended at the test's end."""
    started = []

    def start(count):
        for _ in range(count):
            started.append(subprocess.Popen([MARK, "300"], executable="/bin/sleep"))
        return [process.pid for process in started]

    yield start
    for process in started:
        process.kill()
    for process in started:
        process.wait()


def limited(soft, hard):
    def apply():
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return apply


def resident_sum(pids):
    page = os.sysconf("SC_PAGE_SIZE")
    return sum(int(open(f"/proc/{pid}/statm").read().split()[1]) * page for pid in pids)


def pss_sum(pids):
    return sum(int(line.split()[1]) * 1024 for pid in pids for line in open(f"/proc/{pid}/smaps_rollup") if line.startswith("Pss:"))


def test_the_daemon_watches_a_group_larger_than_the_soft_limit_allows(workers):
    """120 processes, ~1,700 descriptors, under a soft limit of 256: the daemon raises it and
    watches every one; its RSS sum is theirs summed, read at the same time (within 2 %), its
    memory their PSS summed (within 5 %)."""
    pids = workers(120)
    port = free_port()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 4096:
        pytest.skip(f"the hard limit ({hard}) leaves no room to raise the soft one")
    daemon = subprocess.Popen([PERFHUD, "daemon", "--match", f"workers={MARK}", "--metrics-listen", f"127.0.0.1:{port}",
                               "--tick", "200ms"], stderr=subprocess.PIPE, text=True, preexec_fn=limited(256, hard))
    try:
        assert wait_until(lambda: daemon.poll() is None and metric(port, "perfhud_target_processes") == 120, timeout=20), \
            daemon.stderr.read() if daemon.poll() is not None else "not all 120 watched"
        time.sleep(3)   # network passes and scrapes over a group that needs more than 256 descriptors
        assert daemon.poll() is None
        held = len(os.listdir(f"/proc/{daemon.pid}/fd"))
        assert held > 256, f"{held} descriptors: the group was watched within the old limit?"
        rss = metric(port, "perfhud_target_resident_memory_sum_bytes")
        assert rss and abs(rss - resident_sum(pids)) <= 0.02 * rss, (rss, resident_sum(pids))
        counted_once = metric(port, "perfhud_target_resident_memory_bytes")
        assert counted_once and abs(counted_once - pss_sum(pids)) <= 0.05 * counted_once, (counted_once, pss_sum(pids))
    finally:
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=30)
    assert daemon.returncode == 0, err
    assert "double free" not in err and "Too many open files" not in err, err


def test_a_hard_limit_run_out_is_no_crash(workers):
    """300 processes under a hard limit of 256: no room, whatever the daemon does; it runs on,
    serves its metrics and ends on SIGTERM with status 0, and says what it could not read."""
    workers(300)
    port = free_port()
    daemon = subprocess.Popen([PERFHUD, "daemon", "--match", f"workers={MARK}", "--metrics-listen", f"127.0.0.1:{port}",
                               "--tick", "200ms"], stderr=subprocess.PIPE, text=True, preexec_fn=limited(256, 256))
    try:
        assert wait_until(lambda: daemon.poll() is None and (metric(port, "perfhud_target_processes") or 0) > 0, timeout=20), \
            daemon.stderr.read() if daemon.poll() is not None else "nothing watched"
        time.sleep(4)
        assert daemon.poll() is None, "it ended"
        assert metric(port, "perfhud_target_up") == 1
        assert metric(port, "perfhud_descriptor_refusals_total") > 0, "each file it could not keep open is counted"
    finally:
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=30)
    assert daemon.returncode == 0, err[-2000:]
    assert "Too many open files" in err, err[-2000:]


def test_attach_to_a_tree_larger_than_the_hard_limit_runs_on(tmp_path):
    """A parent of 300 children, `attach --include-children` under a hard limit of 256: rows to
    the end, exit 0."""
    script = tmp_path / "tree.sh"
    script.write_text("for i in $(seq 300); do sleep 300 & done\nwait\n")
    parent = subprocess.Popen(["sh", str(script)], start_new_session=True)
    try:
        assert wait_until(lambda: len(open(f"/proc/{parent.pid}/task/{parent.pid}/children").read().split()) == 300, timeout=20)
        result = subprocess.run([PERFHUD, "attach", str(parent.pid), "--include-children", "--output", "json",
                                 "--tick", "200ms", "--count", "15"], capture_output=True, text=True, timeout=60,
                                preexec_fn=limited(256, 256))
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()
    assert result.returncode == 0, result.stderr[-2000:]
    rows = json_rows_of(result.stdout)
    assert len(rows) == 15 and all(row["alive"] for row in rows), [row.get("processes") for row in rows]
    # What it could not count it says, once, rather than a silent sum of fewer processes.
    counted = max(row["processes"] for row in rows)
    assert counted < 301, counted
    assert result.stderr.count("past the descriptor limit are not counted") == 1, result.stderr[-2000:]
