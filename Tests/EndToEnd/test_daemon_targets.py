"""One `perfhud daemon` for many targets (issue 21): real processes, a unit's control group laid out
as systemd would, promtool, a configuration file re-read on SIGHUP, a NOTIFY_SOCKET played by the
test as systemd would."""
import http.client
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request

import pytest

from conftest import PERFHUD, perfhud, wait_until, free_port, metrics_text

# Sends one datagram of one action every 50 ms to the socket named by argv[1], once it exists.
SENDER = textwrap.dedent("""
    import os, socket, sys, time
    path = sys.argv[1]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    while True:
        try: s.sendto(b"perfhud.action:1|c|#action:Tick", path)
        except OSError: pass
        time.sleep(0.05)
""")


class Daemon:
    """`perfhud daemon` on a free port with its sockets in a directory of its own, as `user` when given."""
    def __init__(self, *args, env=None, user=None):
        self.port = free_port()
        self.directory = tempfile.mkdtemp()
        prefix = []
        if user is not None:
            os.chmod(self.directory, 0o777)
            prefix = ["setpriv", "--reuid", str(user), "--regid", str(user), "--clear-groups"]
        self.process = subprocess.Popen(prefix + [PERFHUD, "daemon", *args, "--metrics-listen", f"127.0.0.1:{self.port}",
                                                  "--events", self.directory, "--tick", "100ms"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        assert wait_until(self.listening, timeout=15), self.process.stderr.read() if self.process.poll() is not None else "not listening"

    def listening(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return True
        except OSError:
            return False

    def metrics(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as response:
            return response.read().decode()

    def value(self, name, labels):
        """The value of the one series `name{labels}` (labels in the daemon's order), or None."""
        found = re.search(r"^" + re.escape(name + labels) + r" (\S+)$", self.metrics(), re.M)
        return float(found.group(1)) if found else None

    def targets(self):
        return set(re.findall(r'^perfhud_target_up\{target="([^"]+)"\}', self.metrics(), re.M))

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
        _, err = self.process.communicate(timeout=30)
        shutil.rmtree(self.directory, ignore_errors=True)
        return self.process.returncode, err


@pytest.fixture
def spawn():
    """Processes started for a test, killed at its end."""
    started = []

    def start(*command):
        started.append(subprocess.Popen(list(command)))
        return started[-1]

    yield start
    for process in started:
        process.kill()
        process.wait()


@pytest.fixture
def daemons():
    started = []

    def make(*args, **kwargs):
        started.append(Daemon(*args, **kwargs))
        return started[-1]

    yield make
    for daemon in started:
        if daemon.process.poll() is None:
            daemon.stop()


def remove_group(group):
    """Removes a control group made for a test, once the processes killed in it have left (a few
    tries: a killed process takes a moment to leave its group)."""
    for _ in range(50):
        try:
            if group.exists():
                group.rmdir()
            return
        except OSError:
            time.sleep(0.1)


def cgroup_root():
    for root in (pathlib.Path("/sys/fs/cgroup/systemd"), pathlib.Path("/sys/fs/cgroup/unified"), pathlib.Path("/sys/fs/cgroup")):
        if (root / "cgroup.procs").exists() and os.access(root, os.W_OK):
            return root
    return None


@pytest.fixture
def system_slice():
    """system.slice of the hierarchy perfhud reads (made if missing, and removed again then)."""
    root = cgroup_root()
    if root is None:
        pytest.skip("needs a writable cgroup hierarchy to lay out units' groups")
    # perfhud reads the v2 root where there is one, else the v1 name=systemd tree: the same choice.
    if pathlib.Path("/sys/fs/cgroup/cgroup.controllers").exists():
        root = pathlib.Path("/sys/fs/cgroup")
    elif pathlib.Path("/sys/fs/cgroup/systemd/cgroup.procs").exists():
        root = pathlib.Path("/sys/fs/cgroup/systemd")
    slice_ = root / "system.slice"
    made = not slice_.exists()
    try:
        slice_.mkdir(exist_ok=True)
    except OSError:
        pytest.skip("cannot make system.slice")
    groups = []

    def unit(name, *processes):
        group = slice_ / name
        group.mkdir()
        groups.append(group)
        for process in processes:
            (group / "cgroup.procs").write_text(str(process.pid))
        return group

    yield unit
    for group in groups:
        remove_group(group)
    if made:
        try:
            slice_.rmdir()
        except OSError:
            pass


def comm(pid):
    return pathlib.Path(f"/proc/{pid}/comm").read_text().strip()


def test_three_targets_on_one_port_each_labelled_and_promtool_clean(daemons, system_slice, spawn, tmp_path):
    marker = f"perfhud-targets-{os.getpid()}"
    alone = spawn("sleep", "300")
    matched = [spawn(sys.executable, "-c", "import time; time.sleep(300)", marker) for _ in range(2)]
    unit = f"perfhud-test-{os.getpid()}.service"
    in_unit = spawn("sleep", "301")
    system_slice(unit, in_unit)
    notify = str(tmp_path / "notify.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(notify)
    listener.settimeout(0.2)
    daemon = daemons("--pid", f"alone={alone.pid}", "--match", marker, "--unit", unit,
                     env=dict(os.environ, NOTIFY_SOCKET=notify))
    python = comm(matched[0].pid)
    assert wait_until(lambda: daemon.targets() == {"alone", python, unit}, timeout=10), daemon.metrics()
    assert wait_until(lambda: all(daemon.value("perfhud_target_up", f'{{target="{t}"}}') == 1 for t in ("alone", python, unit)), timeout=10)
    assert daemon.value("perfhud_target_processes", f'{{target="{python}"}}') == 2, "a --match target sums its processes"
    assert daemon.value("perfhud_target_info", f'{{target="alone",comm="sleep",pid="{alone.pid}"}}') == 1
    assert daemon.value("perfhud_target_info", f'{{target="{unit}",comm="sleep",pid="{in_unit.pid}",unit="{unit}"}}') == 1
    text = daemon.metrics()
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout.strip() == "" and check.stderr.strip() == "", check.stdout + check.stderr
    # Every target series has its label; the daemon's own do not.
    for line in text.splitlines():
        if line.startswith("perfhud_") and not line.startswith(("perfhud_sample_duration", "perfhud_output_dropped", "perfhud_targets_refused",
                                                                "perfhud_descriptor_refusals")):
            assert 'target="' in line, line
    # Each target has its socket, named after its label.
    for label in ("alone", python, unit):
        assert os.path.exists(os.path.join(daemon.directory, label + ".sock")), os.listdir(daemon.directory)
    messages = []
    end = time.monotonic() + 1
    while time.monotonic() < end:
        try:
            messages.append(listener.recv(4096).decode())
        except socket.timeout:
            pass
    alone.kill(); alone.wait()
    assert wait_until(lambda: daemon.value("perfhud_target_up", '{target="alone"}') == 0, timeout=10)
    end = time.monotonic() + 1
    while time.monotonic() < end:
        try:
            messages.append(listener.recv(4096).decode())
        except socket.timeout:
            pass
    statuses = [m for m in messages if "STATUS=" in m]
    assert any("3 of 3 targets up" in m for m in statuses) and any("2 of 3 targets up" in m for m in statuses), messages
    code, err = daemon.stop()
    assert code == 0, err
    assert re.search(r"notice: alone: target is up: PID \d+ \(sleep\)", err), err
    assert "warning: alone: target went away" in err, err


def test_units_finds_every_matching_unit_and_forgets_a_stopped_one(daemons, system_slice, spawn):
    prefix = f"perfhud-units-{os.getpid()}"
    first = spawn("sleep", "300")
    system_slice(f"{prefix}-a.service", first)
    daemon = daemons("--units", f"{prefix}-*.service", "--forget-after", "2s")
    assert wait_until(lambda: daemon.targets() == {f"{prefix}-a.service"}, timeout=10), daemon.metrics()
    second = spawn("sleep", "300")
    group = system_slice(f"{prefix}-b.service", second)
    assert wait_until(lambda: daemon.value("perfhud_target_up", f'{{target="{prefix}-b.service"}}') == 1, timeout=10), "a unit that starts is found"
    second.kill(); second.wait()
    group.rmdir()                       # the unit stops: systemd removes its group
    assert wait_until(lambda: daemon.value("perfhud_target_up", f'{{target="{prefix}-b.service"}}') == 0, timeout=10)
    assert wait_until(lambda: daemon.targets() == {f"{prefix}-a.service"}, timeout=10), "forgotten after --forget-after"
    assert daemon.stop()[0] == 0


def test_a_target_that_ends_is_down_then_forgotten_and_the_others_go_on(daemons, spawn):
    burner = spawn(sys.executable, "-c", "while True: pass")
    stays = spawn("sleep", "300")
    daemon = daemons("--pid", f"burn={burner.pid}", "--pid", f"stays={stays.pid}", "--forget-after", "3s")
    assert wait_until(lambda: (daemon.value("perfhud_target_cpu_seconds_total", '{target="burn",mode="user"}') or 0) > 0.3, timeout=10)
    burner.kill(); burner.wait()
    assert wait_until(lambda: daemon.value("perfhud_target_up", '{target="burn"}') == 0, timeout=10)
    spent = daemon.value("perfhud_target_cpu_seconds_total", '{target="burn",mode="user"}')
    assert spent and spent > 0.3, "a target that went away keeps its counters"
    assert daemon.value("perfhud_target_resident_memory_bytes", '{target="burn"}') is None, "no stale gauges"
    assert wait_until(lambda: "burn" not in daemon.targets(), timeout=10), "forgotten after --forget-after"
    assert 'target="burn"' not in daemon.metrics(), "every series of a forgotten target is gone"
    assert daemon.value("perfhud_target_up", '{target="stays"}') == 1
    code, err = daemon.stop()
    assert code == 0 and "burn: target forgotten" in err, err


def started_as(pid, spawn, *command):
    """`command` started as process `pid`, which has ended: the kernel's next PID set to the one
    before (`/proc/sys/kernel/ns_last_pid`, root) just before the fork, tried again when another
    fork took it first."""
    for _ in range(100):
        with open("/proc/sys/kernel/ns_last_pid", "w") as last:
            last.write(str(pid - 1))
        process = spawn(*command)
        if process.pid == pid:
            return process
        process.kill()
        process.wait()
    raise AssertionError(f"could not start a process as PID {pid}")


def test_a_pid_given_to_a_new_process_is_not_the_target(daemons, spawn):
    """--pid names a process, not a number: once it ends, a new process the kernel gives the same
    PID is another program. The target stays down, its CPU counter does not take the stranger's, and
    the log warns."""
    burner = spawn(sys.executable, "-c", "while True: pass")
    stays = spawn("sleep", "300")   # a second target: `--events` then names the sockets' directory
    pid = burner.pid
    daemon = daemons("--pid", f"busy={pid}", "--pid", f"stays={stays.pid}")
    cpu = lambda: daemon.value("perfhud_target_cpu_seconds_total", '{target="busy",mode="user"}') or 0
    assert wait_until(lambda: cpu() > 0.3, timeout=10)
    burner.kill()
    burner.wait()
    assert wait_until(lambda: daemon.value("perfhud_target_up", '{target="busy"}') == 0, timeout=10)
    spent = cpu()
    stranger = started_as(pid, spawn, sys.executable, "-c", "import time\nwhile True: pass")
    time.sleep(5)   # two of the daemon's looks for a target that is down (every 2 s)
    assert stranger.poll() is None
    assert daemon.value("perfhud_target_up", '{target="busy"}') == 0, "the stranger was taken for the target"
    assert cpu() == spent, "the stranger's CPU was added to the target's"
    code, err = daemon.stop()
    assert code == 0, err
    assert re.search(rf"warning: .*PID {pid} is another process now \(python3[^)]*\): the target ended", err), err


def test_config_file_sighup_adds_and_removes_targets_without_resetting_the_others(daemons, spawn, tmp_path):
    burner = spawn(sys.executable, "-c", "while True: pass")
    old = spawn("sleep", "300")
    new = spawn("sleep", "301")
    config = tmp_path / "targets.conf"
    config.write_text(f"# what this host watches\n\n--pid burn={burner.pid}\n--pid 'old={old.pid}'  # going\n")
    daemon = daemons("--config", str(config))
    assert wait_until(lambda: daemon.targets() == {"burn", "old"}, timeout=10)
    sender = spawn(sys.executable, "-c", SENDER, os.path.join(daemon.directory, "burn.sock"))
    assert wait_until(lambda: (daemon.value("perfhud_target_cpu_seconds_total", '{target="burn",mode="user"}') or 0) > 0.3, timeout=10)
    # The sender is not the burner's: refused, counted on the burner's socket.
    assert wait_until(lambda: (daemon.value("perfhud_events_rejected_total", '{target="burn",reason="peer"}') or 0) >= 20, timeout=10)
    sender.kill(); sender.wait()
    time.sleep(0.5)                     # the count stands still from here: a reset would show
    before = daemon.value("perfhud_target_cpu_seconds_total", '{target="burn",mode="user"}')
    rejected = daemon.value("perfhud_events_rejected_total", '{target="burn",reason="peer"}')
    config.write_text(f"--pid burn={burner.pid}\n--match fresh='^sleep 301$'\n")
    daemon.process.send_signal(signal.SIGHUP)
    assert wait_until(lambda: daemon.targets() == {"burn", "fresh"}, timeout=10), daemon.metrics()
    assert 'target="old"' not in daemon.metrics(), "a removed target is dropped at once"
    assert wait_until(lambda: daemon.value("perfhud_target_info", f'{{target="fresh",comm="sleep",pid="{new.pid}",match="^sleep 301$"}}') == 1, timeout=10)
    assert daemon.value("perfhud_target_cpu_seconds_total", '{target="burn",mode="user"}') >= before, "kept targets keep their counters"
    assert daemon.value("perfhud_events_rejected_total", '{target="burn",reason="peer"}') == rejected, "not reset by the reload"
    # An error in the file: the configuration stays as it was, and the log says why.
    config.write_text(f"--pid burn={burner.pid}\n--pdi 5\n")
    daemon.process.send_signal(signal.SIGHUP)
    time.sleep(1)
    assert daemon.process.poll() is None and daemon.targets() == {"burn", "fresh"}
    code, err = daemon.stop()
    assert code == 0
    assert re.search(r"error: .*targets\.conf:2: .*the configuration stays as it was", err), err
    assert "old: target dropped" in err and "fresh: target added" in err, err


def test_a_bad_config_line_exits_78_with_its_line_number(tmp_path):
    config = tmp_path / "targets.conf"
    config.write_text("--unit web.service\n# fine\n--match 'unclosed\n")
    result = perfhud("daemon", "--config", str(config), "--metrics-listen", "127.0.0.1:1", timeout=15)
    assert result.returncode == 78, result.stderr
    assert result.stderr.strip().splitlines() == [f"perfhud: {config}:3: a ' is not closed"], result.stderr
    missing = perfhud("daemon", "--config", str(tmp_path / "none.conf"), "--metrics-listen", "127.0.0.1:1", timeout=15)
    assert missing.returncode == 78 and "cannot read" in missing.stderr, missing.stderr


def test_two_unnamed_targets_sharing_a_label_are_refused(spawn):
    one, two = spawn("sleep", "300"), spawn("sleep", "300")
    result = perfhud("daemon", "--pid", str(one.pid), "--pid", str(two.pid), "--metrics-listen", "127.0.0.1:1", timeout=15)
    assert result.returncode == 64, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and 'target="sleep"' in result.stderr and "name them" in result.stderr, result.stderr


def test_max_targets_refuses_the_rest_and_counts_them(daemons, spawn):
    processes = [spawn("sleep", "300") for _ in range(3)]
    daemon = daemons(*[arg for i, p in enumerate(processes) for arg in ("--pid", f"t{i}={p.pid}")], "--max-targets", "2")
    assert wait_until(lambda: daemon.targets() == {"t0", "t1"}, timeout=10), daemon.metrics()
    assert daemon.value("perfhud_targets_refused_total", "") == 1
    code, err = daemon.stop()
    assert "refusing target t2" in err, err


def test_a_datagram_from_another_targets_process_is_refused(daemons, spawn, tmp_path):
    directory = tempfile.mkdtemp()
    try:
        a_socket, b_socket = os.path.join(directory, "a.sock"), os.path.join(directory, "b.sock")
        a = spawn(sys.executable, "-c", SENDER, a_socket)       # target a, sending to its own socket
        b = spawn(sys.executable, "-c", SENDER, a_socket)       # target b, sending to a's
        port = free_port()
        daemon = subprocess.Popen([PERFHUD, "daemon", "--pid", f"a={a.pid}", "--pid", f"b={b.pid}", "--accept-from", "any",
                                   "--metrics-listen", f"127.0.0.1:{port}", "--events", directory, "--tick", "100ms"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

        def value(series):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
                    text = response.read().decode()
            except OSError:
                return None
            found = re.search(r"^" + re.escape(series) + r" (\S+)$", text, re.M)
            return float(found.group(1)) if found else None

        try:
            # Both senders at 20 a second: b's refused and a's counted, each 5 and more (two scrapes
            # of one moment are not: a's fifth may come a tick after b's).
            assert wait_until(lambda: (value('perfhud_events_rejected_total{target="a",reason="other_target"}') or 0) >= 5, timeout=15)
            assert wait_until(lambda: (value('perfhud_actions_total{target="a",action="Tick"}') or 0) >= 5, timeout=5), "a's own datagrams count"
            assert value('perfhud_events_rejected_total{target="a",reason="peer"}') == 0, "even with --accept-from any"
            assert value('perfhud_events_received_total{target="b"}') == 0
        finally:
            daemon.terminate()
            daemon.communicate(timeout=30)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_one_receiving_thread_serves_every_targets_socket(daemons, spawn):
    """A thread per target would grow with the targets; the sockets share one."""
    processes = [spawn("sleep", "300") for _ in range(6)]

    def threads(count):
        daemon = daemons(*[arg for i, p in enumerate(processes[:count]) for arg in ("--pid", f"t{i}={p.pid}")])
        assert wait_until(lambda: len(daemon.targets()) == count, timeout=10)
        assert all(os.path.exists(os.path.join(daemon.directory, f"t{i}.sock")) for i in range(count))
        return len(os.listdir(f"/proc/{daemon.process.pid}/task"))

    assert threads(6) == threads(2)


# A unit's process that puts itself in its unit's group (as systemd does before exec), waits for
# its socket, then sends three actions at once and a little apart, and ends.
UNIT_SENDER = textwrap.dedent("""
    import os, socket, sys, time
    for procs in sys.argv[2:]:
        with open(procs, "w") as group:
            group.write(str(os.getpid()))
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.01)
    sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    for _ in range(3):
        sender.sendto(b"perfhud.action:1|c|#action:Tick", sys.argv[1])
        time.sleep(0.2)
""")


def test_a_unit_that_restarts_is_followed_and_its_first_datagrams_count(daemons, system_slice):
    # A unit's processes send the moment they start, before the daemon has seen them: a sender
    # in the unit's control group is the unit's whoever its parent is. Three runs of the unit,
    # each a new process in a new group at the same path (as a restart makes): 9 actions counted.
    name = f"perfhud-restarts-{os.getpid()}.service"
    daemon = daemons("--units", name.replace(".service", "*.service"), "--accept-from", "target")
    group = system_slice(name)
    mirrors = [pathlib.Path("/sys/fs/cgroup/unified/system.slice") / name]
    mirrors = [mirror for mirror in mirrors if mirror.parent.is_dir() and mirror != group]
    socket_path = os.path.join(daemon.directory, name + ".sock")
    for run in range(3):
        for directory in [group, *mirrors]:
            directory.mkdir(exist_ok=True)
        procs = [str(directory / "cgroup.procs") for directory in [group, *mirrors]]
        sender = subprocess.run([sys.executable, "-c", UNIT_SENDER, socket_path, *procs], timeout=30)
        assert sender.returncode == 0
        time.sleep(0.3)
        for directory in [*mirrors, group]:
            directory.rmdir()               # the unit stops: systemd removes its group
        time.sleep(0.5)
    assert wait_until(lambda: daemon.value("perfhud_actions_total", f'{{target="{name}",action="Tick"}}') == 9, timeout=10), daemon.metrics()
    assert daemon.value("perfhud_events_rejected_total", f'{{target="{name}",reason="peer"}}') == 0
    assert daemon.stop()[0] == 0


def test_sigterm_ends_the_daemon_within_0_3_s(spawn, tmp_path):
    """After SIGTERM the daemon takes one last sample and exits: within 0.3 s of the signal, in
    the configurations that do the most at the end — a --match group with --include-children that
    moves TCP bytes (a network pass), a recording to close, a scrape connection kept open
    (Prometheus keeps one), and a --pid target. Timed from the signal to the exit status."""
    marker = f"perfhud-sigterm-{os.getpid()}"
    port = free_port()
    server = spawn(sys.executable, "-c", "import http.server, sys; http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), "
                   "http.server.SimpleHTTPRequestHandler).serve_forever()", str(port), marker)
    spawn(sys.executable, "-c", "import time, urllib.request, sys\nwhile True:\n    try: urllib.request.urlopen(sys.argv[1]).read()\n"
          "    except OSError: pass\n    time.sleep(0.05)", f"http://127.0.0.1:{port}/", marker)
    timings = []
    for name, args in (("pool", ["--match", f"pool={marker}", "--include-children", "--record", str(tmp_path / "pool.db")]),
                       ("one", ["--pid", f"one={server.pid}"])):
        metrics = free_port()
        daemon = subprocess.Popen([PERFHUD, "daemon", *args, "--metrics-listen", f"127.0.0.1:{metrics}", "--events", str(tmp_path / f"{name}.sock"),
                                   "--tick", "100ms"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            up = lambda: re.search(r'^perfhud_target_up\{target="%s"\} 1' % name, metrics_text(metrics), re.M)
            assert wait_until(lambda: daemon.poll() is None and up(), timeout=15), daemon.stderr.read() if daemon.poll() is not None else "not up"
            kept = http.client.HTTPConnection("127.0.0.1", metrics, timeout=5)
            kept.request("GET", "/metrics")
            kept.getresponse().read()   # the connection stays open, as Prometheus's does
            time.sleep(1.2)             # a full tick and a network pass behind it
            began = time.monotonic()
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=10)
            timings.append(time.monotonic() - began)
            kept.close()
        finally:
            if daemon.poll() is None:
                daemon.kill()
            _, err = daemon.communicate(timeout=10)
        assert daemon.returncode == 0, err[-2000:]
    assert max(timings) < 0.3, timings


def test_a_units_cpu_is_its_groups_count_across_a_restart(spawn, daemons, burn):
    # On a hybrid host systemd keeps a unit's group in its name=systemd tree and mirrors it in the
    # unified one, whose cpu.stat counts the group's CPU (the whole group's, processes shorter than
    # a look too). A restart removes the group and makes it again at the same path, counting from
    # 0: the target's counter goes on from what the old group counted (it read the old group's
    # file before, and stood still).
    systemd, unified = pathlib.Path("/sys/fs/cgroup/systemd"), pathlib.Path("/sys/fs/cgroup/unified")
    if not (systemd / "cgroup.procs").exists() or not (unified / "cgroup.procs").exists() or os.geteuid() != 0:
        pytest.skip("needs a hybrid hierarchy and root")
    unit = f"phcpu-{os.getpid()}.service"
    groups = [top / "system.slice" / unit for top in (systemd, unified)]
    made = [top / "system.slice" for top in (systemd, unified) if not (top / "system.slice").exists()]

    burners = []

    def start():
        for group in groups:
            group.mkdir(parents=True)
        burners.append(spawn(burn, "half"))
        for group in groups:
            (group / "cgroup.procs").write_text(str(burners[-1].pid))
        return burners[-1]

    def usage():
        return int(re.search(r"^usage_usec (\d+)$", (groups[1] / "cpu.stat").read_text(), re.M)[1]) / 1e6

    def stop():
        for process in burners:
            if process.poll() is None:
                process.kill()
                process.wait()
        for group in groups:
            remove_group(group)

    start()
    idle = spawn("sleep", "600")
    try:
        daemon = daemons("--unit", unit, "--pid", f"idle={idle.pid}")
        counter = lambda: daemon.value("perfhud_target_cpu_seconds_total", f'{{target="{unit}",mode="user"}}') or 0
        assert wait_until(lambda: counter() > 0.3, timeout=15), daemon.metrics()
        # No scrape for a second: the daemon reads its targets' every figure at a scrape and every
        # --full-every, the rest of the time their RSS; the group's count goes with the group.
        time.sleep(1)
        before_restart = usage()
        stop()
        second = start()
        assert wait_until(lambda: f'pid="{second.pid}"' in daemon.metrics(), timeout=15), daemon.metrics()
        time.sleep(2)
        now = counter() + (daemon.value("perfhud_target_cpu_seconds_total", f'{{target="{unit}",mode="system"}}') or 0)
        # Both groups' counts (the first's read just before it went), within a tick of the second's.
        expected = before_restart + usage()
        assert expected - 0.15 <= now <= expected + 0.05, (now, before_restart, usage())
    finally:
        stop()
        for directory in made:
            try:
                directory.rmdir()
            except OSError:
                pass
