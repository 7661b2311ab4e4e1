"""perfhud's Debian package under a REAL systemd (PID 1 of a fresh Debian 12 container), installed
with apt and driven with systemctl exactly as an operator would: no Swift toolchain in there, a
service run by another user, metrics read from the host, the journal, the watchdog, stop, the
environment-file service, and purge.

The container plumbing is in helpers/container.py. Needs root, debootstrap and systemd-container
(`make deps`), network to the Debian mirror, and dist/perfhud_VERSION_ARCH.deb (`make package`;
PERFHUD_DEB names another). Without root the module is skipped; anything else missing FAILS.
The tests run in order and build on each other (one container for the module).
"""
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from conftest import ROOT
from helpers.container import Container, HarnessError, base_tree, cgroup_modes, host_cgroup_layout

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="boots a container with systemd-nspawn: needs root")

METRICS_PORT = 9469                  # perfhud@.service's default PERFHUD_LISTEN
UNIT = "perfhud@web.service"
DROP_INS = f"/etc/systemd/system/{UNIT}.d"
PAGE = os.sysconf("SC_PAGE_SIZE")

# The watched service: an HTTP server plus a worker process holding 24 MiB, run by a dynamic user
# (not perfhud's), writing its PID to /run/web/web.pid. Both processes are in web.service's cgroup.
WEB_APP = """#!/usr/bin/python3
import http.server, os, signal, sys, time
port = int(os.environ.get("WEB_PORT", "8081"))
worker = os.fork()
if worker == 0:
    ballast = bytes(range(256)) * (24 << 12)      # 24 MiB, every page touched
    while True:
        time.sleep(3600)
signal.signal(signal.SIGTERM, lambda *_: (os.kill(worker, signal.SIGTERM), sys.exit(0)))
with open("/run/web/web.pid", "w") as pidfile:
    pidfile.write(f"{os.getpid()}\\n")
http.server.ThreadingHTTPServer(("127.0.0.1", port), http.server.SimpleHTTPRequestHandler).serve_forever()
"""

WEB_UNIT = """[Unit]
Description=web: a small HTTP service run by a dynamic user (perfhud's end-to-end test)

[Service]
Environment=WEB_PORT={port}
ExecStart=/usr/bin/python3 /usr/local/bin/web-app
WorkingDirectory=/usr/share/doc
DynamicUser=yes
RuntimeDirectory=web

[Install]
WantedBy=multi-user.target
"""


# --- helpers: what an operator looks at ------------------------------------------------------

def poll(probe, accept, timeout, what):
    """Calls probe() until accept(value) or the deadline; returns the value, else fails saying what."""
    deadline = time.monotonic() + timeout
    value = None
    while True:
        try:
            value = probe()
        except (OSError, ValueError) as error:
            value = error
        if not isinstance(value, Exception) and accept(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}; last: {value!r}")
        time.sleep(0.2)


def metrics(port=METRICS_PORT):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=3) as response:
        return response.read().decode()


def value(text, name, labels=None):
    pattern = re.escape(name) + (re.escape(labels) if labels else r"(?:\{[^}]*\})?") + r" (\S+)$"
    found = re.search("^" + pattern, text, re.M)
    return float(found.group(1)) if found else None


def info_pid(text):
    found = re.search(r'^perfhud_target_info\{[^}]*pid="(\d+)"[^}]*\} 1', text, re.M)
    return int(found.group(1)) if found else None


def port_free(port):
    """Whether a server could listen on the port (SO_REUSEADDR, as servers do: TIME_WAIT is no owner)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port(start):
    return next(port for port in range(start, start + 200) if port_free(port))


def diagnose(machine, unit, cursor=None):
    """What an operator would read next: systemctl status and the unit's journal."""
    status = machine.run(["systemctl", "status", "--no-pager", "-l", "-n", "0", unit], check=False).stdout
    args = ["journalctl", "--no-pager", "-o", "short-monotonic", "-u", unit]
    args += ["--after-cursor", cursor] if cursor else ["-n", "40"]
    journal = machine.run(args, check=False).stdout
    return f"\n--- systemctl status {unit}\n{status}\n--- journalctl -u {unit}\n{journal[-4000:]}"


def resident_of(machine, pids):
    """Σ resident pages × page size over the PIDs, from the container's /proc read on the host."""
    total = 0
    for pid in pids:
        total += int(machine.read(f"/proc/{pid}/statm").split()[1]) * PAGE
    return total


def uid_of(machine, pid):
    status = machine.read(f"/proc/{pid}/status")
    return int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))


def start_and_time(machine, *args, unit):
    started = time.monotonic()
    result = machine.run(["systemctl", *args], check=False, timeout=60)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, f"systemctl {' '.join(args)} failed: {result.stderr}" + diagnose(machine, unit)
    return elapsed


def priorities(entries):
    return [(int(entry.get("PRIORITY", 6)), entry.get("MESSAGE")) for entry in entries]


# --- the machine ---------------------------------------------------------------------------------

_PACKAGE = {}


def package():
    """(file name, bytes) of dist/perfhud_VERSION_ARCH.deb (or $PERFHUD_DEB), read once per session
    when it has stopped changing (`make package` may be rewriting it) and dpkg-deb can read it."""
    if _PACKAGE:
        return _PACKAGE["name"], _PACKAGE["data"]
    started = time.monotonic()
    while True:
        if os.environ.get("PERFHUD_DEB"):
            found = [os.path.abspath(os.environ["PERFHUD_DEB"])]
        else:
            found = [str(path) for path in sorted((ROOT / "dist").glob("perfhud_*.deb"))]
        problem = f"expected exactly one dist/perfhud_VERSION_ARCH.deb (run `make package`), found {found}"
        if len(found) == 1:
            path = found[0]
            try:
                before = os.stat(path)
                time.sleep(1)
                data = open(path, "rb").read()
                after = os.stat(path)
            except OSError as error:
                problem = str(error)
            else:
                check = subprocess.run(["dpkg-deb", "--contents", path], capture_output=True, text=True)
                problem = f"{path} is not a readable .deb: {check.stderr.strip()}"
                if check.returncode == 0 and (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, len(data)):
                    break
        # (`make package` empties dist/ and writes the .deb anew: give a build in progress time.)
        if time.monotonic() > started + (120 if found else 10):
            pytest.fail(problem)
        time.sleep(1)
    _PACKAGE.update(name=os.path.basename(path), data=data)
    return _PACKAGE["name"], data


@pytest.fixture(scope="module", params=cgroup_modes())
def machine(request):
    """A fresh Debian 12 booted with systemd, with perfhud's .deb installed by apt: once per cgroup
    layout this host can give (hybrid as the host here, and pure v2 as a stock Debian 12 host has)."""
    name, data = package()
    deadline = time.monotonic() + 15           # (another test's daemon may hold it for a moment)
    while not port_free(METRICS_PORT):
        if time.monotonic() > deadline:
            pytest.fail(f"127.0.0.1:{METRICS_PORT} is taken on this host: the container shares its network")
        time.sleep(0.5)
    # A CI timeout sends SIGTERM: make it an interruption, so the finalizer below powers off and
    # removes the container (Python's default would end the process with the container left running).
    previous = signal.signal(signal.SIGTERM, _interrupted)
    container = None
    try:
        try:
            layout = request.param
            container = Container(base_tree(), cgroup=None if layout == host_cgroup_layout() else layout)
        except HarnessError as error:
            pytest.fail(f"cannot boot a systemd container: {error}")
        container.path(f"/tmp/{name}").write_bytes(data)
        container.run(["apt-get", "update", "-q", "-o", "Acquire::Retries=3"], timeout=180)
        install = container.run(["apt-get", "install", "-y", f"/tmp/{name}"], check=False, timeout=300)
        assert install.returncode == 0, f"apt-get install -y ./{name}:\n{install.stdout[-3000:]}\n{install.stderr[-3000:]}"
        said = [line for line in (install.stdout + install.stderr).splitlines() if re.match(r"(W|E|N):|dpkg: warning|.*[Ww]arning:", line)]
        assert not said, f"apt-get install -y ./{name} warned:\n" + "\n".join(said)
        yield container
    finally:
        if container is not None:
            container.close()
        signal.signal(signal.SIGTERM, previous)


def _interrupted(number, frame):
    raise KeyboardInterrupt(f"signal {number}")


@pytest.fixture(scope="module")
def web(machine):
    """web.service, running as a dynamic user; returns its HTTP port."""
    port = free_port(18081)
    machine.write("/usr/local/bin/web-app", WEB_APP, 0o755)
    machine.write("/etc/systemd/system/web.service", WEB_UNIT.format(port=port))
    machine.systemctl("daemon-reload")
    machine.systemctl("enable", "--now", "web.service")
    poll(lambda: len(machine.unit_pids("web.service")), lambda n: n == 2, 10, "web.service's two processes")
    poll(lambda: machine.read("/run/web/web.pid").strip(), lambda text: text == machine.show("web.service", "MainPID"), 10,
         "web.service's pidfile")
    return port


def ensure_active(machine, unit=UNIT):
    if machine.show(unit, "ActiveState") != "active":
        machine.systemctl("start", unit, check=False)
    assert machine.show(unit, "ActiveState") == "active", diagnose(machine, unit)


# --- the tests, in an operator's order ----------------------------------------------------------

def test_enable_now_watches_a_service_of_another_user(machine, web):
    elapsed = start_and_time(machine, "enable", "--now", UNIT, unit=UNIT)
    state = machine.show(UNIT, "ActiveState") + "/" + machine.show(UNIT, "SubState")
    # Type=notify: the start job ends when READY=1 arrives, so `active` means ready.
    assert state == "active/running", state + diagnose(machine, UNIT)
    assert elapsed < 5, f"enable --now took {elapsed:.1f}s" + diagnose(machine, UNIT)
    assert machine.show(UNIT, "Type") == "notify"
    assert "watching" in machine.show(UNIT, "StatusText"), "systemctl status shows what is watched (STATUS=)"
    main = int(machine.show("web.service", "MainPID"))
    perfhud = int(machine.show(UNIT, "MainPID"))
    assert uid_of(machine, main) not in (0, uid_of(machine, perfhud)), "web.service runs as a user of its own"

    text = poll(metrics, lambda t: value(t, "perfhud_target_up") == 1, 10, "perfhud_target_up 1 on /metrics")
    assert info_pid(text) == main, f"target_info pid {info_pid(text)} != web.service MainPID {main}"

    def compare():
        pids = machine.unit_pids("web.service")
        return value(metrics(), "perfhud_target_resident_memory_sum_bytes"), resident_of(machine, pids), pids

    # The sum over the unit's processes, as /proc shows it at the same moment (two pages of slack).
    reported, expected, pids = poll(compare, lambda r: r[0] is not None and abs(r[0] - r[1]) <= 2 * PAGE, 10,
                                    "perfhud_target_resident_memory_sum_bytes == Σ RSS of web.service's processes")
    assert len(pids) == 2 and expected > 24 << 20
    # The unit's memory counted once (its PSS sum): what its two processes share, once.
    counted_once = value(metrics(), "perfhud_target_resident_memory_bytes")
    assert counted_once is not None and 0 < counted_once < reported, (counted_once, reported)
    assert value(metrics(), "perfhud_target_processes") == 2


def test_follows_the_service_across_a_restart(machine, web):
    ensure_active(machine)
    old = int(machine.show("web.service", "MainPID"))
    machine.systemctl("restart", "web.service")
    new = int(machine.show("web.service", "MainPID"))
    assert new not in (0, old)
    started = time.monotonic()
    text = poll(metrics, lambda t: info_pid(t) == new and value(t, "perfhud_target_up") == 1, 10,
                f"perfhud_target_info pid={new} (the new MainPID) and target_up 1")
    print(f"followed the restart in {time.monotonic() - started:.1f}s")
    assert machine.show(UNIT, "ActiveState") == "active"
    assert int(machine.show(UNIT, "NRestarts")) == 0, "perfhud itself did not restart" + diagnose(machine, UNIT)


def test_journal_priorities_and_no_complaints_from_systemd(machine, web):
    # Summaries every second: the unit's own knob if it has one, else an ExecStart override.
    shipped = machine.read("/lib/systemd/system/perfhud@.service")
    exec_start = re.search(r"^ExecStart=(.*)$", shipped, re.M).group(1)
    if "PERFHUD_OPTIONS" in exec_start:
        drop_in = "[Service]\nEnvironment=PERFHUD_OPTIONS=--log-interval=1s\n"
    else:
        drop_in = f"[Service]\nExecStart=\nExecStart={exec_start} --log-interval 1s\n"
    machine.write(f"{DROP_INS}/log-interval.conf", drop_in)
    machine.systemctl("daemon-reload")
    cursor = machine.cursor()
    machine.systemctl("restart", UNIT)
    ensure_active(machine)

    def entries():
        return machine.journal("-u", UNIT, "--after-cursor", cursor)

    poll(lambda: [e for e in entries() if e.get("PRIORITY") == "6" and "RSS" in e.get("MESSAGE", "")],
         lambda found: len(found) >= 3, 10, "three summaries at info priority" + diagnose(machine, UNIT, cursor))
    logged = [(e.get("MESSAGE", ""), e.get("PRIORITY")) for e in entries() if e.get("_SYSTEMD_UNIT") == UNIT and e.get("_PID") != "1"]

    def kind(message):
        if message.startswith("stopping:"):
            return "stopping", "5"
        if "metrics on http" in message:
            return "watching … (ready)", "5"
        if message.startswith("target is up"):
            return "target is up", "5"
        if "RSS" in message:
            return "summary", "6"
        return "other", None

    wrong = [(kind(m)[0], p, m) for m, p in logged if kind(m)[1] not in (None, p)]
    assert not wrong, "priorities that do not match the kind of message (kind, PRIORITY, MESSAGE):\n" + "\n".join(map(str, wrong))
    assert any(kind(m)[0] == "watching … (ready)" for m, _ in logged), logged
    # Native journal entries with structured fields: `journalctl PERFHUD_TARGET_PID=…` finds them.
    summaries = [e for e in entries() if e.get("_SYSTEMD_UNIT") == UNIT and "RSS" in e.get("MESSAGE", "")]
    watched = str(info_pid(metrics()))
    assert all(e.get("_TRANSPORT") == "journal" and e.get("PERFHUD_TARGET_PID") == watched
               and e.get("PERFHUD_UNIT") == "web.service" and e.get("SYSLOG_IDENTIFIER") == "perfhud" for e in summaries), \
        [{k: e.get(k) for k in ("_TRANSPORT", "PERFHUD_TARGET_PID", "PERFHUD_UNIT", "SYSLOG_IDENTIFIER")} for e in summaries]
    loud = [(p, m) for p, m in priorities(entries()) if p <= 4]
    assert not loud, "warning or worse from perfhud@web.service at steady state:\n" + "\n".join(f"<{p}> {m}" for p, m in loud)

    # All boot long: systemd complains about nothing concerning perfhud (unit-file warnings, notify
    # messages it refused, …), and the Swift runtime's "Failed to set thread priority" never shows.
    known = ["reception only permitted for main PID", "Failed to set thread priority"]

    def complaint(entry):
        message = str(entry.get("MESSAGE", ""))
        from_systemd = entry.get("_PID") == "1" or entry.get("SYSLOG_IDENTIFIER") == "systemd"
        about_perfhud = "perfhud" in message + entry.get("UNIT", "") + entry.get("_SYSTEMD_UNIT", "")
        return any(k in message for k in known) or (from_systemd and about_perfhud and int(entry.get("PRIORITY", 6)) <= 4)

    complaints = [f"<{e.get('PRIORITY')}> {e.get('_SYSTEMD_UNIT') or e.get('UNIT')}: {e.get('MESSAGE')}"
                  for e in machine.journal("-b") if complaint(e)]
    assert not complaints, f"{len(complaints)} complaints in `journalctl -b`:\n" + "\n".join(complaints[:20])

    for unit in ("/lib/systemd/system/perfhud@.service", "/lib/systemd/system/perfhud.service"):
        verify = machine.run(["systemd-analyze", "verify", unit], check=False)
        assert verify.returncode == 0 and not verify.stdout.strip() and not verify.stderr.strip(), \
            f"systemd-analyze verify {unit}:\n{verify.stdout}{verify.stderr}"


def test_security_exposure_of_the_running_unit(machine, web):
    ensure_active(machine)
    security = machine.run(["systemd-analyze", "security", "--no-pager", UNIT], check=False)
    found = re.search(r"Overall exposure level for \S+: ([0-9.]+)", security.stdout)
    assert found, security.stdout + security.stderr
    assert float(found.group(1)) <= 2.5, security.stdout[-6000:]


def test_watchdog_restarts_a_hung_daemon(machine, web):
    # The shipped WatchdogSec=30s would make this test wait half a minute for what 3 s shows as well
    # (perfhud pings at half the interval, 1.5 s: a real hang still misses several pings).
    machine.write(f"{DROP_INS}/watchdog.conf", "[Service]\nWatchdogSec=3s\n")
    machine.systemctl("daemon-reload")
    machine.systemctl("restart", UNIT)                 # WATCHDOG_USEC is given at start
    ensure_active(machine)
    time.sleep(4)                                      # healthy for longer than WatchdogSec
    assert machine.show(UNIT, "ActiveState") == "active", "pings arrive on time" + diagnose(machine, UNIT)
    before = int(machine.show(UNIT, "NRestarts"))
    hung = int(machine.show(UNIT, "MainPID"))
    cursor = machine.cursor()
    machine.run(f"kill -STOP {hung}")                 # the shell's kill: minbase has no procps
    # 3 s to notice, SIGABRT (systemd adds SIGCONT), RestartSec=5s, start: well within 25 s.
    poll(lambda: (int(machine.show(UNIT, "NRestarts")), machine.show(UNIT, "ActiveState"), int(machine.show(UNIT, "MainPID"))),
         lambda r: r[0] == before + 1 and r[1] == "active" and r[2] not in (0, hung), 25,
         "a watchdog restart (NRestarts+1, active, a new MainPID)" + diagnose(machine, UNIT, cursor))
    said = [e.get("MESSAGE", "") for e in machine.journal("-u", UNIT, "--after-cursor", cursor)]
    assert any("Watchdog timeout" in m for m in said), said
    assert any("watchdog" in m and "Failed with result" in m for m in said), said
    poll(metrics, lambda t: value(t, "perfhud_target_up") == 1, 10, "metrics back after the restart")
    machine.run(["rm", f"{DROP_INS}/watchdog.conf"])
    machine.systemctl("daemon-reload")
    machine.systemctl("restart", UNIT)
    ensure_active(machine)


def test_stop_is_quick_and_clean(machine, web):
    ensure_active(machine)
    poll(metrics, lambda t: value(t, "perfhud_target_up") == 1, 10, "target up before stopping")
    cursor = machine.cursor()
    elapsed = start_and_time(machine, "stop", UNIT, unit=UNIT)
    result = {prop: machine.show(UNIT, prop) for prop in ("Result", "ExecMainStatus", "ExecMainCode", "ActiveState")}
    assert result == {"Result": "success", "ExecMainStatus": "0", "ExecMainCode": "1", "ActiveState": "inactive"}, \
        str(result) + diagnose(machine, UNIT, cursor)
    assert elapsed < 2, f"systemctl stop took {elapsed:.2f}s" + diagnose(machine, UNIT, cursor)
    said = [e.get("MESSAGE", "") for e in machine.journal("-u", UNIT, "--after-cursor", cursor)]
    assert any(m.startswith("stopping:") for m in said), said


TARGETS = {
    "pidfile": lambda machine: "--pidfile /run/web/web.pid",
    "match": lambda machine: "--match web-ap[p]",                     # [p]: not perfhud's own command line
    "pid": lambda machine: "--pid " + machine.show("web.service", "MainPID"),
}


@pytest.mark.parametrize("kind", list(TARGETS))
def test_environment_file_service(machine, web, kind):
    port = free_port(9470 + list(TARGETS).index(kind))
    shipped = machine.read("/etc/default/perfhud")
    lines = [line for line in shipped.splitlines() if not line.startswith(("PERFHUD_TARGET=", "PERFHUD_LISTEN="))]
    lines += [f'PERFHUD_TARGET="{TARGETS[kind](machine)}"', f"PERFHUD_LISTEN=127.0.0.1:{port}"]
    machine.write("/etc/default/perfhud", "\n".join(lines) + "\n")
    try:
        elapsed = start_and_time(machine, "restart", "perfhud.service", unit="perfhud.service")
        assert machine.show("perfhud.service", "ActiveState") == "active", diagnose(machine, "perfhud.service")
        assert elapsed < 5, f"start took {elapsed:.1f}s"
        main = int(machine.show("web.service", "MainPID"))
        text = poll(lambda: metrics(port), lambda t: value(t, "perfhud_target_up") == 1, 10,
                    f"perfhud_target_up 1 on :{port}" + diagnose(machine, "perfhud.service"))
        assert info_pid(text) == main
        assert value(text, "perfhud_target_processes") == (2 if kind == "match" else 1)
    finally:
        machine.systemctl("stop", "perfhud.service", check=False)


# --- one daemon for the whole host (issue 21): perfhud.service and /etc/perfhud/targets.conf -------

# tick.service restarts every ~4 s and, as it runs, sends an action to its own event socket and one
# to web.service's (which must refuse it: another target's process). job.service is a dynamic user's
# sleeper, stopped by a test to see it forgotten.
TICK_UNIT = """[Unit]
Description=tick: restarts every few seconds and sends actions (perfhud's end-to-end test)

[Service]
ExecStart=/bin/sh -c 'for n in 1 2 3; do /usr/bin/perfhud emit action tick --events /run/perfhud/tick.service.sock; /usr/bin/perfhud emit action intrude --events /run/perfhud/web.service.sock; sleep 1; done; exit 3'
Restart=always
RestartSec=1
DynamicUser=yes
"""

JOB_UNIT = """[Unit]
Description=job: a dynamic user's sleeper (perfhud's end-to-end test)

[Service]
ExecStart=/bin/sleep infinity
DynamicUser=yes
"""


def series(text, name, **labels):
    """The value of the one series `name` whose labels include `labels`, else None."""
    for line in text.splitlines():
        found = re.match(re.escape(name) + r"\{([^}]*)\} (\S+)$", line)
        if not found:
            continue
        have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', found.group(1)))
        if all(have.get(key) == wanted for key, wanted in labels.items()):
            return float(found.group(2))
    return None


def targets_of(text):
    """{target: up} from perfhud_target_up."""
    return {label: float(up) for label, up in re.findall(r'^perfhud_target_up\{[^}]*target="([^"]*)"[^}]*\} (\S+)$', text, re.M)}


def reload(machine, unit="perfhud.service"):
    """systemctl reload, as an operator types it; fails with what systemctl status and the journal say."""
    result = machine.systemctl("reload", unit, check=False)
    assert result.returncode == 0, result.stderr + diagnose(machine, unit)


def host_daemon(machine, conf, options, port):
    """perfhud.service watching what `conf` names (and nothing from /etc/default/perfhud)."""
    machine.write("/etc/perfhud/targets.conf", conf)
    machine.write("/etc/default/perfhud", f'PERFHUD_TARGET=\nPERFHUD_LISTEN=127.0.0.1:{port}\nPERFHUD_OPTIONS="{options}"\n')
    start_and_time(machine, "restart", "perfhud.service", unit="perfhud.service")
    ensure_active(machine, "perfhud.service")


@pytest.fixture(scope="module")
def host_units(machine, web):
    machine.write("/etc/systemd/system/tick.service", TICK_UNIT)
    machine.write("/etc/systemd/system/job.service", JOB_UNIT)
    machine.systemctl("daemon-reload")
    machine.systemctl("start", "tick.service", "job.service")
    yield free_port(9480)              # where perfhud.service serves /metrics in these tests
    machine.systemctl("stop", "tick.service", "job.service", "perfhud.service", check=False)


def test_units_pattern_watches_every_service_on_one_port(machine, web, host_units):
    port = host_units
    host_daemon(machine, "# every service of this machine\n--units '*.service'\n", "--forget-after 6s", port)
    wanted = {"web.service", "tick.service", "job.service"}
    text = poll(lambda: metrics(port), lambda t: all(targets_of(t).get(name) == 1 for name in wanted), 15,
                "web, tick and job up" + diagnose(machine, "perfhud.service"))
    assert "perfhud.service" in targets_of(text) and "systemd-journald.service" in targets_of(text), sorted(targets_of(text))
    assert series(text, "perfhud_target_processes", target="web.service") == 2
    assert series(text, "perfhud_target_info", target="job.service", pid=machine.show("job.service", "MainPID")) == 1
    status = machine.show("perfhud.service", "StatusText")
    assert re.search(r"\d+ of \d+ targets up", status), status
    # Every series of a target carries its label; the daemon's own carry none.
    for line in text.splitlines():
        if line.startswith("perfhud_target_"):
            assert 'target="' in line, line
    tagged = [entry for entry in machine.journal("-u", "perfhud.service", "PERFHUD_TARGET=job.service")]
    assert tagged, "journal entries about job.service carry PERFHUD_TARGET"


def test_units_pattern_follows_a_restart_and_forgets_a_stopped_unit(machine, web, host_units):
    port = host_units
    text = metrics(port)
    first = series_pid(text, "tick.service")
    assert first, text
    cpu_before = series(text, "perfhud_target_cpu_seconds_total", target="tick.service", mode="user") or 0
    # tick.service ends every ~4 s and systemd starts it again: perfhud follows the new MainPID.
    text = poll(lambda: metrics(port), lambda t: series_pid(t, "tick.service") not in (None, first), 15,
                "tick.service's new PID after its restart")
    assert series(text, "perfhud_target_cpu_seconds_total", target="tick.service", mode="user") >= cpu_before
    # Its actions, from several runs of it, add up (the counter was not reset by the restarts).
    poll(lambda: series(metrics(port), "perfhud_actions_total", target="tick.service", action="tick"),
         lambda n: n is not None and n >= 4, 15, "tick.service's actions counted across restarts")

    machine.systemctl("stop", "job.service")
    stopped = time.monotonic()
    poll(lambda: targets_of(metrics(port)).get("job.service"), lambda up: up == 0, 6, "job.service down (up 0)")
    poll(lambda: targets_of(metrics(port)), lambda t: "job.service" not in t, 15, "job.service forgotten after --forget-after 6s")
    assert time.monotonic() - stopped >= 5, "not forgotten before --forget-after"
    assert targets_of(metrics(port)).get("web.service") == 1


def series_pid(text, target):
    """The pid label of the target's perfhud_target_info, else None."""
    for line in text.splitlines():
        if line.startswith("perfhud_target_info{") and f'target="{target}"' in line:
            return int(re.search(r'pid="(\d+)"', line).group(1))
    return None


def test_an_event_socket_counts_only_its_targets_senders(machine, web, host_units):
    port = host_units
    text = poll(lambda: metrics(port),
                lambda t: (series(t, "perfhud_events_rejected_total", target="web.service", reason="other_target") or 0) >= 2,
                15, "web.service's socket refusing tick.service's datagrams")
    assert series(text, "perfhud_actions_total", target="web.service", action="intrude") is None
    assert series(text, "perfhud_actions_total", target="tick.service", action="intrude") is None
    for name in ("web.service", "tick.service"):
        socket_path = machine.path(f"/run/perfhud/{name}.sock")
        assert socket_path.is_socket() and (socket_path.stat().st_mode & 0o777) == 0o666, socket_path


def test_reload_adds_and_drops_targets_and_keeps_the_others_counters(machine, web, host_units):
    port = host_units
    machine.systemctl("start", "job.service")
    host_daemon(machine, "--unit web.service\n--unit tick.service\n", "--forget-after 6s", port)
    perfhud = machine.show("perfhud.service", "MainPID")
    kept = poll(lambda: series(metrics(port), "perfhud_actions_total", target="tick.service", action="tick"),
                lambda n: n is not None and n >= 2, 15, "tick.service's actions")

    machine.write("/etc/perfhud/targets.conf", "--unit tick.service\n# web is no longer watched\n--unit sleeper=job.service\n")
    reload(machine)
    text = poll(lambda: metrics(port), lambda t: targets_of(t) == {"tick.service": 1.0, "sleeper": 1.0}, 10,
                "tick.service and sleeper watched, web.service dropped" + diagnose(machine, "perfhud.service"))
    assert series(text, "perfhud_actions_total", target="tick.service", action="tick") >= kept, "kept target's counter reset"
    assert not machine.path("/run/perfhud/web.service.sock").exists(), "a dropped target's socket stays"
    assert machine.show("perfhud.service", "MainPID") == perfhud, "reload restarted the daemon"

    # A file with an error: the old targets stay, the error is logged with its line.
    good = machine.read("/etc/perfhud/targets.conf")
    cursor = machine.cursor()
    machine.write("/etc/perfhud/targets.conf", good + "--match 'unclosed\n")
    try:
        reload(machine)
        logged = poll(lambda: [entry.get("MESSAGE", "") for entry in machine.journal("-u", "perfhud.service", "--after-cursor", cursor)],
                      lambda messages: any("targets.conf:4:" in message for message in messages), 10, "the error with its line")
        assert targets_of(metrics(port)) == {"tick.service": 1.0, "sleeper": 1.0}, logged
        assert machine.show("perfhud.service", "ActiveState") == "active"
        # The same file at start: exit 78 (EX_CONFIG) with the file and line.
        started = machine.run(["perfhud", "daemon", "--config", "/etc/perfhud/targets.conf", "--metrics-listen", f"127.0.0.1:{free_port(9490)}"],
                              check=False, timeout=20)
        assert started.returncode == 78 and "/etc/perfhud/targets.conf:4:" in started.stderr, started
    finally:
        machine.write("/etc/perfhud/targets.conf", good)


# netio.service accounts its IP traffic (IPAccounting=yes). Once /run/netio/go appears it sends
# 2 MB of UDP and 1 MB of TCP to itself over loopback, then idles: UDP only a unit's (or a
# namespace's) counters can count (issue 33).
NETIO_APP = """#!/usr/bin/python3
import os, socket, time
udp_in = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); udp_in.bind(("127.0.0.1", 0))
udp_in.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
udp_out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen()
client = socket.create_connection(server.getsockname()); peer, _ = server.accept()
while not os.path.exists("/run/netio/go"):
    time.sleep(0.1)
for _ in range(2000):
    udp_out.sendto(b"u" * 1000, udp_in.getsockname())
    udp_in.recv(2000)
client.sendall(b"t" * 1_000_000)
got = 0
while got < 1_000_000:
    got += len(peer.recv(65536))
open("/run/netio/done", "w").close()
while True:
    time.sleep(3600)
"""

NETIO_UNIT = """[Unit]
Description=netio: UDP and TCP over loopback, IP accounted (perfhud's end-to-end test)

[Service]
ExecStart=/usr/bin/python3 /usr/local/bin/netio-app
DynamicUser=yes
RuntimeDirectory=netio
RuntimeDirectoryMode=0777
IPAccounting=yes
"""


def test_a_units_ip_accounting_counts_its_udp_too(machine, web, host_units):
    port = host_units
    machine.write("/usr/local/bin/netio-app", NETIO_APP, 0o755)
    machine.write("/etc/systemd/system/netio.service", NETIO_UNIT)
    machine.systemctl("daemon-reload")
    machine.systemctl("restart", "netio.service")
    try:
        def accounted():
            egress, ingress = machine.show("netio.service", "IPEgressBytes"), machine.show("netio.service", "IPIngressBytes")
            return int(egress), int(ingress)
        try:
            before = poll(accounted, lambda pair: pair[0] < 2**64 - 1, 5, "IPEgressBytes")
        except AssertionError:
            pytest.skip("this container's systemd does not account IP traffic (IPAccounting needs cgroup BPF): "
                        + machine.show("netio.service", "IPEgressBytes"))
        # The packaged units run as a dynamic user, which dbus-daemon refuses (systemd#22737): a user
        # of its own, as docs/network.md tells an operator to give it for a unit's IP accounting (not
        # named perfhud: the dynamic user of perfhud.service has that name while it is known).
        machine.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "perfhud-daemon"])
        machine.write("/etc/systemd/system/perfhud.service.d/dbus-user.conf", "[Service]\nDynamicUser=no\nUser=perfhud-daemon\nGroup=perfhud-daemon\n")
        machine.systemctl("daemon-reload")
        host_daemon(machine, "--unit netio.service\n", "", port)
        poll(lambda: series(metrics(port), "perfhud_target_network_transmit_bytes_total", target="netio.service"),
             lambda total: total is not None, 15, "netio.service's bytes sent" + diagnose(machine, "perfhud.service"))
        time.sleep(1.5)                       # the daemon's first pass is behind us: it counts from there
        before = accounted()
        machine.write("/run/netio/go", "")
        poll(lambda: machine.path("/run/netio/done").exists(), bool, 20, "netio.service's 3 MB sent")
        after = poll(accounted, lambda pair: pair[0] - before[0] > 3_000_000, 10, "systemd's count of the 3 MB")
        time.sleep(0.5)
        after = accounted()
        sent, received = after[0] - before[0], after[1] - before[1]

        def daemon():
            text = metrics(port)
            return (series(text, "perfhud_target_network_transmit_bytes_total", target="netio.service"),
                    series(text, "perfhud_target_network_receive_bytes_total", target="netio.service"))
        # systemd's own counters, UDP included: the TCP payload alone (1 MB) would be a third of them.
        try:
            got = poll(daemon, lambda pair: pair[0] is not None and abs(pair[0] - sent) <= sent * 0.01
                       and abs(pair[1] - received) <= received * 0.01, 10,
                       f"perfhud's bytes sent and received == systemd's IPEgressBytes {sent} and IPIngressBytes {received}")
        except AssertionError as error:
            probe = machine.run(["setpriv", "--reuid", "perfhud-daemon", "--regid", "perfhud-daemon", "--clear-groups", "busctl", "get-property",
                                 "org.freedesktop.systemd1", "/org/freedesktop/systemd1/unit/netio_2eservice",
                                 "org.freedesktop.systemd1.Service", "IPEgressBytes"], check=False)
            bus = machine.run(["journalctl", "--no-pager", "-u", "dbus.service", "-n", "20"], check=False).stdout
            raise AssertionError(str(error) + diagnose(machine, "perfhud.service")
                                 + f"\n--- busctl as perfhud-daemon: {probe.returncode} {probe.stdout} {probe.stderr}\n--- dbus:\n{bus}") from None
        assert got[0] > 3_000_000, got
    finally:
        machine.systemctl("stop", "netio.service", "perfhud.service", check=False)
        machine.run(["rm", "-rf", "/etc/systemd/system/perfhud.service.d"], check=False)
        machine.systemctl("daemon-reload", check=False)


def test_binary_needs_no_swift_toolchain(machine):
    version = machine.run(["perfhud", "--version"], check=False)
    installed = machine.run(["dpkg-query", "-W", "-f=${Version}", "perfhud"]).stdout
    upstream = re.sub(r"^\d+:", "", installed).rsplit("-", 1)[0]
    assert version.returncode == 0 and upstream in version.stdout, version
    ldd = machine.run(["ldd", "/usr/bin/perfhud"], check=False)
    assert ldd.returncode == 0 and "not found" not in ldd.stdout and "swift" not in ldd.stdout.lower(), ldd.stdout + ldd.stderr
    swift = machine.run("ldconfig -p | grep -i swift; ls -d /opt/swift /usr/lib/swift 2>/dev/null; command -v swift", check=False)
    assert not swift.stdout.strip(), "a Swift runtime in the container: " + swift.stdout


def test_upgrade_restarts_the_running_daemon_and_keeps_the_configuration(machine, web):
    ensure_active(machine)
    before = int(machine.show(UNIT, "MainPID"))
    edited = 'PERFHUD_TARGET="--pidfile /run/web/web.pid"\nPERFHUD_LISTEN=127.0.0.1:9478\n# edited by the operator\n'
    machine.write("/etc/default/perfhud", edited)
    name, _ = package()
    # What an upgrade runs (prerm upgrade, unpack, postinst configure), with the package at hand.
    upgrade = machine.run(["apt-get", "install", "-y", "--reinstall", f"/tmp/{name}"], check=False, timeout=300)
    assert upgrade.returncode == 0, upgrade.stdout + upgrade.stderr
    said = [line for line in (upgrade.stdout + upgrade.stderr).splitlines() if re.match(r"(W|E|N):|dpkg: warning|.*[Ww]arning:", line)]
    assert not said, "apt-get install --reinstall warned:\n" + "\n".join(said)
    ensure_active(machine)
    after = int(machine.show(UNIT, "MainPID"))
    assert after not in (0, before), "the running instance was restarted with the new binary"
    assert machine.read("/etc/default/perfhud") == edited, "the operator's configuration is kept"
    poll(metrics, lambda t: value(t, "perfhud_target_up") == 1, 10, "perfhud_target_up 1 after the upgrade")


def test_purge_stops_and_removes_everything(machine, web):
    ensure_active(machine)
    machine.write("/etc/default/perfhud", 'PERFHUD_TARGET="--pidfile /run/web/web.pid"\nPERFHUD_LISTEN=127.0.0.1:9479\n')
    machine.systemctl("enable", "--now", "perfhud.service")
    ensure_active(machine, "perfhud.service")
    listed = machine.run(["dpkg", "-L", "perfhud"]).stdout.split()
    assert "/usr/bin/perfhud" in listed and "/etc/default/perfhud" in listed

    purge = machine.run(["apt-get", "purge", "-y", "perfhud"], check=False, timeout=120)
    assert purge.returncode == 0, purge.stdout + purge.stderr
    said = [line for line in (purge.stdout + purge.stderr).splitlines() if re.match(r"(W|E|N):|dpkg: warning|.*[Ww]arning:", line)]
    assert not said, "apt-get purge warned:\n" + "\n".join(said)
    for unit in (UNIT, "perfhud.service"):
        assert machine.show(unit, "ActiveState") != "active", unit + " still running after purge"
    running = [pid for pid in os.listdir(machine.path("/proc")) if pid.isdigit()
               and _comm(machine, pid) == "perfhud"]
    assert not running, f"perfhud processes left: {running}"
    left = []
    for path in listed:
        host = machine.path(path)
        if not os.path.lexists(host):
            continue
        if os.path.isdir(host):                   # (following symlinks: /lib is one on Debian 12)
            owners = machine.run(["dpkg-query", "-S", path], check=False)
            if os.listdir(host) or owners.returncode == 0:
                continue                      # a shared directory (/usr/bin, /lib/systemd/system, …)
        left.append(path)
    assert not left, f"left behind by purge: {left}"
    links = machine.run(["find", "/etc/systemd/system", "-type", "l", "-name", "*perfhud*"]).stdout.split()
    assert not links, f"enabled symlinks left: {links}"
    state = machine.run("ls /var/lib/systemd/deb-systemd-helper-enabled 2>/dev/null | grep -i perfhud", check=False).stdout
    assert not state.strip(), f"deb-systemd-helper state left: {state}"
    assert port_free(METRICS_PORT) and port_free(9479), "nothing listens on the daemons' ports any more"


def _comm(machine, pid):
    try:
        return machine.read(f"/proc/{pid}/comm").strip()
    except OSError:
        return None
