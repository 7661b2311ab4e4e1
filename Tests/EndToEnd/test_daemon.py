"""perfhud daemon against real peers: systemd-analyze, promtool, a real Prometheus, and a
NOTIFY_SOCKET played by the test as systemd would."""
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.parse
import urllib.request

import pytest

from conftest import PERFHUD, ROOT, perfhud, wait_until

# A connected loopback TCP pair held by the target (both ends its own), a little sent over it each
# second: the dashboard's network panels have data for it (the RTT is absent without an
# established connection).
LOOPBACK = textwrap.dedent("""
    import socket, time
    server = socket.create_server(("127.0.0.1", 0))
    tcp_out = socket.create_connection(server.getsockname())
    tcp_in = server.accept()[0]
    server.close()
    tcp_in.setblocking(False)
    tcp_next = 0.0
    def loopback_tick():
        global tcp_next
        if time.monotonic() < tcp_next: return
        tcp_next = time.monotonic() + 1
        tcp_out.sendall(b"n" * 1000)
        try:
            while tcp_in.recv(65536): pass
        except BlockingIOError: pass
""")

SENDER = LOOPBACK + textwrap.dedent("""
    import os, socket, sys, time
    path = sys.argv[1]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    while not os.path.exists(path): time.sleep(0.05)
    sent = {"frames": 0, "actions": 0}
    s.sendto(b"perfhud.phase:1|c|#phase:Editor", path)
    end = time.monotonic() + float(sys.argv[2])
    i = 0
    total = 1
    while time.monotonic() < end:
        lines = [b"perfhud.frame:%d|ms" % (40 if i % 20 == 0 else 16)]
        lines += [b"perfhud.action:1|c|#action:Slider.changed"] * 3
        if i % 10 == 0: lines.append(b"perfhud.action:1|c|#action:Button.tapped")
        s.sendto(b"\\n".join(lines), path)
        total += len(lines)
        i += 1
        loopback_tick()
        time.sleep(0.02)
    open(path + ".sent", "w").write(str(total))
    while True:
        loopback_tick()
        time.sleep(0.2)
""")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.read().decode()


class Daemon:
    def __init__(self, *args, env=None, sender_seconds=None):
        self.port = free_port()
        self.tmp = tempfile.mkdtemp()
        self.events = os.path.join(self.tmp, "events.sock")
        self.sender = None
        if sender_seconds is not None:
            self.sender = subprocess.Popen([sys.executable, "-c", SENDER, self.events, str(sender_seconds)])
            args = ("--pid", str(self.sender.pid), *args)
        # The `target` label of an unnamed --pid target: its command name when the daemon starts.
        self.label = pathlib.Path(f"/proc/{self.sender.pid}/comm").read_text().strip() if self.sender else None
        self.process = subprocess.Popen([PERFHUD, "daemon", *args, "--metrics-listen", f"127.0.0.1:{self.port}",
                                         "--events", self.events, "--tick", "250ms"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert wait_until(self.listening, timeout=15), self.process.stderr.read() if self.process.poll() is not None else "not listening"

    def listening(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return True
        except OSError:
            return False

    def metrics(self):
        return get(f"http://127.0.0.1:{self.port}/metrics")[1]

    def value(self, name, labels=""):
        pattern = re.compile(r"^" + re.escape(name) + (re.escape(labels) if labels else r"(\{[^}]*\})?") + r" (\S+)$", re.M)
        found = pattern.search(self.metrics())
        return float(found.group(found.lastindex)) if found else None

    def stop(self):
        self.process.terminate()
        out, err = self.process.communicate(timeout=30)
        if self.sender:
            self.sender.kill()
            self.sender.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.process.returncode, err


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


# --- systemd units -------------------------------------------------------------------------

UNITS = ["perfhud.service", "perfhud@.service"]


def installed_copy(tmp_path, unit, name=None):
    """The unit as shipped, but starting the binary built here."""
    text = (ROOT / "Systemd" / unit).read_text().replace("/usr/bin/perfhud", PERFHUD)
    target = tmp_path / (name or unit)
    target.write_text(text)
    return target


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd is installed by make test")
@pytest.mark.parametrize("unit,name", [("perfhud.service", None), ("perfhud@.service", "perfhud@nginx.service")])
def test_units_verify_clean_and_rate_2_5_or_better(tmp_path, unit, name):
    path = installed_copy(tmp_path, unit, name)
    environment = dict(os.environ, SYSTEMD_LOG_LEVEL="notice")
    verify = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True, env=environment)
    assert verify.returncode == 0 and verify.stdout.strip() == "" and verify.stderr.strip() == "", verify
    security = subprocess.run(["systemd-analyze", "security", "--offline=yes", str(path)], capture_output=True, text=True)
    level = float(re.search(r"Overall exposure level for \S+: ([0-9.]+)", security.stdout).group(1))
    assert level <= 2.5, security.stdout[-400:]


# --- promtool ---------------------------------------------------------------------------------

@pytest.mark.skipif(not shutil.which("promtool"), reason="prometheus is installed by make test")
def test_alert_rules_check_and_unit_tests_pass():
    dashboards = ROOT / "Dashboards"
    check = subprocess.run(["promtool", "check", "rules", "perfhud-alerts.yml"], cwd=dashboards, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    test = subprocess.run(["promtool", "test", "rules", "perfhud-alerts.test.yml"], cwd=dashboards, capture_output=True, text=True)
    assert test.returncode == 0 and "SUCCESS" in test.stdout, test.stdout + test.stderr


@pytest.mark.skipif(not shutil.which("promtool"), reason="prometheus is installed by make test")
def test_live_metrics_are_clean_and_count_what_was_sent(daemons):
    daemon = daemons("--refresh", "60", sender_seconds=2)
    time.sleep(3.5)
    text = daemon.metrics()
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout.strip() == "" and check.stderr.strip() == "", check.stdout + check.stderr
    assert daemon.value("perfhud_target_up") == 1
    frames = daemon.value("perfhud_frames_total")
    assert frames and frames > 50
    assert daemon.value("perfhud_frame_duration_seconds_count") == frames
    # Frame budgets as bucket bounds; with --refresh 60 the 40 ms frames are the janky ones (over 1.5 × 16.7 ms).
    t = f'target="{daemon.label}"'
    bounds = re.findall(r'perfhud_frame_duration_seconds_bucket\{' + t + r',le="([^"]+)"\}', daemon.metrics())
    assert [float(b) for b in bounds[:-1]] == pytest.approx([1 / 240, 1 / 144, 1 / 120, 1 / 60, 1 / 30, 0.1, 0.7]) and bounds[-1] == "+Inf"
    assert daemon.value("perfhud_janky_frames_total") == daemon.value("perfhud_frame_duration_seconds_bucket", f'{{{t},le="+Inf"}}') - daemon.value("perfhud_frame_duration_seconds_bucket", f'{{{t},le="{bounds[4]}"}}')
    assert daemon.value("perfhud_actions_total", f'{{{t},action="Slider.changed"}}') == 3 * frames
    assert daemon.value("perfhud_phase_info", f'{{{t},phase="Editor"}}') == 1
    assert daemon.value("perfhud_frame_source_info", f'{{{t},source="events"}}') == 1
    assert daemon.value("perfhud_target_resident_memory_bytes") > 0
    assert daemon.value("process_resident_memory_bytes") > 0


# --- sd_notify ------------------------------------------------------------------------------

def test_sd_notify_ready_status_watchdog_stopping(tmp_path):
    notify_path = str(tmp_path / "notify.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(notify_path)
    listener.settimeout(0.2)
    port = free_port()
    events = str(tmp_path / "events.sock")
    sender = subprocess.Popen([sys.executable, "-c", SENDER, events, "1.5"])
    environment = dict(os.environ, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC="1000000")
    # A 1 s tick: the pings (every 500 ms) must not wait for ticks.
    daemon = subprocess.Popen([PERFHUD, "daemon", "--pid", str(sender.pid), "--metrics-listen", f"127.0.0.1:{port}", "--events", events,
                               "--tick", "1s", "--log-interval", "1h"], stderr=subprocess.PIPE, text=True, env=environment)
    messages = []
    start = time.monotonic()
    try:
        while time.monotonic() - start < 4:
            try:
                messages.append((time.monotonic() - start, listener.recv(4096).decode()))
            except socket.timeout:
                pass
        ready = [t for t, m in messages if "READY=1" in m]
        assert ready, messages
        # READY only once the HTTP port and the event socket are bound.
        assert os.path.exists(events)
        assert any("STATUS=" in m and "watching PID" in m for _, m in messages), messages
        pings = [t for t, m in messages if m == "WATCHDOG=1"]
        assert len(pings) >= 5, messages
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        assert all(0.4 <= gap <= 0.65 for gap in gaps), f"half of WATCHDOG_USEC=1s: {gaps}"
        daemon.send_signal(15)
        _, err = daemon.communicate(timeout=15)
        while True:
            try:
                messages.append((time.monotonic() - start, listener.recv(4096).decode()))
            except socket.timeout:
                break
    finally:
        sender.kill()
        if daemon.poll() is None:
            daemon.kill()
    assert daemon.returncode == 0
    assert any("STOPPING=1" in m for _, m in messages)
    # Nothing lost from the last interval: the stopping line counts every event sent.
    final = [line for line in err.splitlines() if "stopping:" in line]
    assert final and re.search(r"events (\d+)", final[-1]), err
    assert "warning: high-frequency action Slider.changed" in err, err
    sent = int(open(events + ".sent").read())
    assert int(re.search(r"events (\d+)", final[-1]).group(1)) == sent


# --- a real Prometheus ----------------------------------------------------------------------

CONTAINERS_ROW = "Containers and pods"


def dashboard_queries(job, instance_regex, target_regex=".+", rate_interval="10s", rows=None, kubernetes=(".*", ".*", ".*")):
    """(panel title, whether it is per target, query) for each query of the dashboard, its variables
    filled in; of the panels under the rows `rows` only where given, else of every row but the
    containers' (Tests/EndToEnd/test_kubernetes_node.py checks those, on a node's pods)."""
    dashboard = json.loads((ROOT / "Dashboards" / "perfhud.json").read_text())
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["target"]["multi"] and "label_values(perfhud_target_up" in variables["target"]["definition"]
    row = None
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            row = panel["title"]
            continue
        if (row not in rows) if rows else row == CONTAINERS_ROW:
            continue
        assert panel.get("description"), f"panel {panel['title']} has a description"
        assert panel["fieldConfig"]["defaults"].get("unit"), f"panel {panel['title']} has a unit"
        for target in panel["targets"]:
            per_target = "$target" in target["expr"]
            expr = (target["expr"].replace("$job", job).replace("$instance", instance_regex).replace("$target", target_regex)
                    .replace("$__rate_interval", rate_interval).replace("$namespace", kubernetes[0]).replace("$pod", kubernetes[1])
                    .replace("$container", kubernetes[2]))
            yield panel["title"], per_target, expr


# A target of a daemon with several: sends frames, actions (one of them high-frequency) and its
# phase to its own socket, argv[1]; writes a little to a file; holds a loopback TCP connection.
TARGET_SENDER = LOOPBACK + textwrap.dedent("""
    import os, socket, sys, time
    path = sys.argv[1]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    out = open(sys.argv[2], "wb")
    i = 0
    while True:
        lines = [b"perfhud.frame:%d|ms" % (40 if i % 20 == 0 else 16)] + [b"perfhud.action:1|c|#action:Slider.changed"] * 3
        if i % 10 == 0: lines += [b"perfhud.action:1|c|#action:Button.tapped", b"perfhud.phase:1|c|#phase:Editor"]
        try: s.sendto(b"\\n".join(lines), path)
        except OSError: pass
        if i % 25 == 0: out.write(b"x" * 4096); out.flush()
        loopback_tick()
        i += 1
        time.sleep(0.02)
""")


@pytest.fixture
def own_control_group():
    """The test (and so every process it starts) in a cgroup v2 group of its own, as a service
    under systemd is: a process in the hierarchy's root has no pressure of its own (the root's is
    the machine's), and the dashboard's pressure panel would have no data for it."""
    unified = next((line.split(" - ")[0].split()[4] for line in open("/proc/self/mountinfo")
                    if line.split(" - ")[1].split()[0] == "cgroup2"), None)
    own = pathlib.Path(f"/proc/{os.getpid()}/cgroup").read_text()
    if os.geteuid() != 0 or not unified or "0::/\n" not in own:
        yield None        # already in a group of its own (or may not make one)
        return
    group = pathlib.Path(unified, f"perfhud-test-{os.getpid()}")
    group.mkdir()
    pathlib.Path(group, "cgroup.procs").write_text(str(os.getpid()))
    try:
        yield group
    finally:
        for pid in pathlib.Path(group, "cgroup.procs").read_text().split():
            try:
                pathlib.Path(unified, "cgroup.procs").write_text(pid)
            except OSError:
                pass
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)


@pytest.mark.skipif(not shutil.which("prometheus"), reason="prometheus is installed by make test")
def test_prometheus_scrapes_two_daemons_and_every_panel_has_data_for_each_target(own_control_group, daemons, tmp_path):
    # A daemon of two named targets, and one of one target as before.
    directory = tmp_path / "events"
    directory.mkdir()
    senders = {name: subprocess.Popen([sys.executable, "-c", TARGET_SENDER, str(directory / f"{name}.sock"), str(tmp_path / f"{name}.out")])
               for name in ("web", "db")}
    # A GPU for the GPU panels: the stand-in NVML of test_gpu (Tests/GPU/fake_nvml.c), each target on it.
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(tmp_path / "libnvidia-ml.so.1"), str(ROOT / "Tests/GPU/fake_nvml.c"),
                    "-lpthread"], check=True)
    scenario = tmp_path / "nvml-scenario"

    def on_the_gpu(pids):
        scenario.write_text("devices=1\ndevice.0.compute=" + ",".join(f"{pid}:{(i + 1) << 30}" for i, pid in enumerate(pids))
                            + "\ndevice.0.samples=" + ",".join(f"{pid}:{10 * (i + 1)}:1:0:0" for i, pid in enumerate(pids)) + "\n")
    on_the_gpu([senders["web"].pid, senders["db"].pid])
    gpu = {**os.environ, "LD_LIBRARY_PATH": str(tmp_path), "FAKE_NVML_SCENARIO": str(scenario)}
    first_port = free_port()
    first = subprocess.Popen([PERFHUD, "daemon", "--pid", f"web={senders['web'].pid}", "--pid", f"db={senders['db'].pid}",
                              "--metrics-listen", f"127.0.0.1:{first_port}", "--events", str(directory), "--tick", "250ms",
                              "--alert", "threads >= 1"],   # the alerts' panel: an alert that holds for each target
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=gpu)
    second = daemons("--alert", "threads >= 1", sender_seconds=60, env=gpu)
    on_the_gpu([senders["web"].pid, senders["db"].pid, second.sender.pid])
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(textwrap.dedent(f"""
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        rule_files: ["{ROOT / 'Dashboards' / 'perfhud-alerts.yml'}"]
        scrape_configs:
          - job_name: perfhud
            static_configs:
              - targets: ["127.0.0.1:{first_port}", "127.0.0.1:{second.port}"]
    """))
    prometheus = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                                   f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    api = f"http://127.0.0.1:{port}/api/v1/"

    def query(expr):
        status, body = get(api + "query?" + urllib.parse.urlencode({"query": expr}))
        return json.loads(body)["data"]["result"]

    try:
        assert wait_until(lambda: _ready(api), timeout=60), "prometheus did not start"
        assert wait_until(lambda: len(query('up{job="perfhud"} == 1')) == 2, timeout=30), "both daemons scraped"
        time.sleep(12)    # enough samples for rate() and deriv() windows
        expected = {(f"127.0.0.1:{first_port}", "web"), (f"127.0.0.1:{first_port}", "db"), (f"127.0.0.1:{second.port}", second.label)}
        assert {(r["metric"]["instance"], r["metric"]["target"]) for r in query("perfhud_target_up")} == expected
        # What the target variable offers: each target once.
        labels = json.loads(get(api + "label/target/values?" + urllib.parse.urlencode({"match[]": "perfhud_target_up"}))[1])["data"]
        assert set(labels) == {"web", "db", second.label}
        missing = []
        for title, per_target, expr in dashboard_queries("perfhud", ".+"):
            result = query(expr)
            if per_target:
                got = {(r["metric"].get("instance"), r["metric"].get("target")) for r in result}
                if got != expected:
                    missing.append((title, expr, sorted(expected - got)))
            elif not result:
                missing.append((title, expr, "no data"))
        assert not missing, f"panels without data for each target: {missing}"
        # The network panels show each target's loopback connection (both of its ends).
        connections = {(r["metric"]["instance"], r["metric"]["target"]): float(r["value"][1]) for r in query("perfhud_target_tcp_connections")}
        assert connections == {key: 2.0 for key in expected}, connections
        rtts = {(r["metric"]["instance"], r["metric"]["target"]): float(r["value"][1]) for r in query("perfhud_target_tcp_rtt_seconds")}
        assert set(rtts) == expected and all(0 < rtt < 1 for rtt in rtts.values()), rtts
        # The variable narrows every per-target query to the targets chosen.
        for title, per_target, expr in dashboard_queries("perfhud", ".+", target_regex="web|db"):
            if per_target:
                assert {r["metric"]["target"] for r in query(expr)} == {"web", "db"}, (title, expr)
        rules = json.loads(get(api + "rules")[1])["data"]["groups"]
        assert rules and all(rule["health"] == "ok" for rule in rules[0]["rules"]), rules
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=30)
        first.terminate()
        first.communicate(timeout=30)
        for sender in senders.values():
            sender.kill()
            sender.wait()


def _ready(api):
    try:
        return get(api + "status/buildinfo", timeout=1)[0] == 200
    except OSError:
        return False


# --- bad input ------------------------------------------------------------------------------

def test_bad_input_gets_one_line_and_the_right_code(daemons, tmp_path):
    busy = daemons("--pid", str(os.getpid()))
    taken = perfhud("daemon", "--pid", str(os.getpid()), "--metrics-listen", f"127.0.0.1:{busy.port}", "--events", str(tmp_path / "e.sock"))
    assert taken.returncode == 69 and "cannot listen" in taken.stderr and len(taken.stderr.strip().splitlines()) == 1, taken.stderr
    regex = perfhud("daemon", "--match", "([unclosed", "--metrics-listen", "127.0.0.1:1")
    assert regex.returncode == 64 and "invalid --match pattern" in regex.stderr
    none = perfhud("daemon", "--metrics-listen", "127.0.0.1:1")
    assert none.returncode == 64 and "name a target" in none.stderr
    bad_listen = perfhud("daemon", "--pid", "1", "--metrics-listen", "nowhere")
    assert bad_listen.returncode == 64


def test_pidfile_waits_logs_the_reason_and_follows_a_restart(daemons, tmp_path):
    pidfile = tmp_path / "app.pid"
    daemon = daemons("--pidfile", str(pidfile))
    time.sleep(1)
    assert daemon.value("perfhud_target_up") == 0, "waiting is normal, not an error"
    first = subprocess.Popen(["sleep", "60"])
    pidfile.write_text(f"{first.pid}\n")
    assert wait_until(lambda: daemon.value("perfhud_target_up") == 1, timeout=10)
    # Not running when the daemon started: the target is labelled after its pidfile.
    assert daemon.value("perfhud_target_info", f'{{target="app",comm="sleep",pid="{first.pid}"}}') == 1
    first.kill()
    first.wait()
    assert wait_until(lambda: daemon.value("perfhud_target_up") == 0, timeout=10)
    second = subprocess.Popen(["sleep", "60"])
    pidfile.write_text(f"{second.pid}\n")
    assert wait_until(lambda: daemon.value("perfhud_target_up") == 1, timeout=10)
    assert daemon.value("perfhud_target_info", f'{{target="app",comm="sleep",pid="{second.pid}"}}') == 1
    second.kill()
    code, err = daemon.stop()
    assert code == 0
    assert "waiting for the PID in" in err and "target went away" in err and "target is up" in err


def test_match_sums_every_matching_process(daemons):
    marker = f"perfhud-match-{os.getpid()}"
    children = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker]) for _ in range(3)]
    try:
        daemon = daemons("--match", marker)
        assert wait_until(lambda: daemon.value("perfhud_target_processes") == 3, timeout=10)
    finally:
        for child in children:
            child.kill()


def test_slow_and_malformed_http_clients_do_not_stall_sampling(daemons):
    daemon = daemons(sender_seconds=30)
    time.sleep(1)
    stalled = []
    for index in range(20):
        connection = socket.create_connection(("127.0.0.1", daemon.port))
        if index % 2:
            connection.sendall(b"GET /metr")                      # never finishes its request
        else:
            connection.sendall(b"\x00\xff garbage \r\n\r\n")      # not HTTP at all
        stalled.append(connection)
    before = daemon.value("perfhud_frames_total")
    started = time.monotonic()
    time.sleep(1)
    after = daemon.value("perfhud_frames_total")
    assert time.monotonic() - started < 3, "metrics answered promptly"
    assert after > before, "sampling and ingest went on"
    for connection in stalled:
        connection.close()


def test_not_found_and_head(daemons):
    daemon = daemons("--pid", str(os.getpid()))
    with pytest.raises(urllib.error.HTTPError) as error:
        get(f"http://127.0.0.1:{daemon.port}/nope")
    assert error.value.code == 404
    request = urllib.request.Request(f"http://127.0.0.1:{daemon.port}/metrics", method="HEAD")
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200 and response.read() == b""


# --- --unit: found in the control-group tree, as systemd lays it out --------------------------
# systemd is not PID 1 here (the container test in test_systemd.py has a real one); a unit's group
# is made by hand where systemd would make it: <hierarchy>/<slice>/<unit>.


def cgroup_hierarchy():
    for root in (pathlib.Path("/sys/fs/cgroup/systemd"), pathlib.Path("/sys/fs/cgroup")):
        if (root / "cgroup.procs").exists():
            return root
    return None


def test_unit_is_found_in_the_control_group_tree_and_followed_across_restarts():
    root = cgroup_hierarchy()
    slice_ = root / f"perfhud-test-{os.getpid()}.slice" if root else None
    try:
        slice_.mkdir()
    except (OSError, AttributeError):
        pytest.skip("needs a writable cgroup hierarchy to lay out a unit's group")
    unit = f"fake{os.getpid()}.service"
    group = slice_ / unit
    worker = group / "worker"   # a unit that delegates keeps processes in sub-groups: summed too

    def start_in(where):
        process = subprocess.Popen(["sleep", "60"])
        (where / "cgroup.procs").write_text(str(process.pid))
        return process

    # Known to systemd by its unit file; not running yet.
    unit_file = pathlib.Path("/etc/systemd/system") / unit
    unit_file.write_text("[Service]\nExecStart=/bin/sleep 60\n")
    started = []
    daemon = None
    try:
        daemon = Daemon("--unit", unit)
        assert wait_until(lambda: daemon.value("perfhud_target_up") == 0, timeout=10)
        group.mkdir()                            # the unit starts
        worker.mkdir()
        started += [start_in(group), start_in(worker)]
        first = started[0]
        assert wait_until(lambda: daemon.value("perfhud_target_info", f'{{target="{unit}",comm="sleep",pid="{first.pid}",unit="{unit}"}}') == 1, timeout=10)
        assert wait_until(lambda: daemon.value("perfhud_target_processes") == 2, timeout=10)
        for process in started:
            process.kill(); process.wait()
        worker.rmdir(); group.rmdir()            # the unit stops: systemd removes its group
        assert wait_until(lambda: daemon.value("perfhud_target_up") == 0, timeout=10)
        group.mkdir()                            # and starts again
        started.append(start_in(group))
        second = started[-1]
        assert wait_until(lambda: daemon.value("perfhud_target_info", f'{{target="{unit}",comm="sleep",pid="{second.pid}",unit="{unit}"}}') == 1, timeout=10)
    finally:
        for process in started:
            process.kill(); process.wait()
        unit_file.unlink()
        code, err = daemon.stop() if daemon else (None, "")
        time.sleep(0.2)
        for directory in (worker, group, slice_):
            if directory.exists():
                directory.rmdir()
    assert code == 0, err
    assert f"waiting for unit {unit}: {unit} is not running" in err


def test_unknown_unit_exits_66_without_asking_systemctl(tmp_path):
    # A systemctl that would answer is not asked: the unit's files and groups are looked for.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "systemctl").write_text("#!/bin/sh\ntouch \"$MARK\"\necho loaded\n")
    (fake / "systemctl").chmod(0o755)
    mark = tmp_path / "asked"
    environment = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}", MARK=str(mark))
    missing = perfhud("daemon", "--unit", "missing", "--metrics-listen", "127.0.0.1:1", env=environment, timeout=15)
    assert missing.returncode == 66 and re.fullmatch(
        r"perfhud: unknown unit missing\.service \(no control group of that name under /sys/fs/cgroup\S*, no unit file in systemd's 13 unit "
        r"directories; a name without a type is a \.service\)", missing.stderr.strip()), missing.stderr
    container = perfhud("daemon", "--unit", f"libpod-{'a' * 64}.scope", "--metrics-listen", "127.0.0.1:1", timeout=15)
    assert container.returncode == 66 and container.stderr.strip().endswith("; a container's group: --container ID or --cgroup PATH)"), container.stderr
    assert not mark.exists()


def test_journal_priorities_and_summary_lines(tmp_path):
    daemon = Daemon("--pid", str(os.getpid()), "--log-interval", "1s", env=dict(os.environ, JOURNAL_STREAM="8:12345"))
    time.sleep(2.5)
    code, err = daemon.stop()
    lines = err.splitlines()
    assert code == 0
    assert all(re.match(r"<[3-6]>", line) for line in lines), lines
    summaries = [line for line in lines if line.startswith("<6>") and "watching PID" in line and "RSS" in line]
    assert len(summaries) >= 2, lines
    assert any(line.startswith("<5>stopping:") for line in lines)


def test_make_install_puts_binary_and_units_where_the_units_expect_them(tmp_path):
    """Building from source: `make install` (PREFIX=/usr/local) rewrites the units' /usr/bin paths."""
    if not shutil.which("make"):
        pytest.skip("make")
    destination = tmp_path / "root"
    result = subprocess.run(["make", "-s", "install", f"DESTDIR={destination}", f"BIN={pathlib.Path(PERFHUD).parent}",
                             "SWIFT=true"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    binary = destination / "usr/local/bin/perfhud"
    assert binary.exists() and os.access(binary, os.X_OK)
    for unit in UNITS:
        text = (destination / "etc/systemd/system" / unit).read_text()
        assert "ExecStart=/usr/local/bin/perfhud daemon" in text
        assert "/usr/bin/perfhud" not in text
        assert "file:///usr/local/share/doc/perfhud/docs/daemon.md" in text
    assert (destination / "usr/local/share/doc/perfhud/README.md").exists()
    assert (destination / "usr/local/share/doc/perfhud/docs/daemon.md").exists()
    assert (destination / "etc/default/perfhud").exists()
    assert (destination / "usr/local/share/perfhud/grafana-dashboard.json").exists()
    assert (destination / "usr/local/share/man/man1/perfhud.1").exists()
    assert (destination / "usr/local/share/bash-completion/completions/perfhud").exists()
    assert (destination / "usr/local/share/zsh/site-functions/_perfhud").exists()
    assert (destination / "usr/local/share/fish/vendor_completions.d/perfhud.fish").exists()


def test_match_leaves_out_another_perfhud_whose_command_line_holds_the_pattern(daemons):
    # A second daemon matching the same program names the pattern on its own command line: it is
    # perfhud, not the program, and must not be summed into the first daemon's target.
    marker = f"perfhud-match-other-{os.getpid()}"
    program = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
    try:
        other = daemons("--match", f"b={marker}")
        daemon = daemons("--match", f"a={marker}")
        for watcher in (daemon, other):
            assert wait_until(lambda: watcher.value("perfhud_target_processes") is not None, timeout=10)
            time.sleep(0.6)   # a few ticks: each sees the one program only
            assert watcher.value("perfhud_target_processes") == 1, watcher.metrics()
            rss = watcher.value("perfhud_target_resident_memory_sum_bytes")   # the group's RSS sum: its one process's
            own = int(pathlib.Path(f"/proc/{program.pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            assert abs(rss - own) <= 1 << 20, (rss, own)
    finally:
        program.kill()
        program.wait()
