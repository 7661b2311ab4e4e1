"""A container as a target (issue 45): `attach --container` and the daemon's `--container`, with
Debian's podman (runc: crun refuses this machine's hybrid cgroup layout) running an image made here
from busybox-static's root filesystem (no registry). The reference is the container's own control
group: its `cgroup.procs` and its CPU usage (cpuacct.usage on v1, cpu.stat's usage_usec on v2)."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import time

import pytest

from conftest import PERFHUD, perfhud, json_rows_of, wait_until
from test_daemon_targets import daemons  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(not shutil.which("podman") or os.geteuid() != 0,
                                reason="rootful podman (installed by `make test`) and root")

IMAGE = "localhost/perfhud-test-busybox:1"
# What this machine's podman needs (the notes): runc, and explicit limits of descriptors and processes.
RUN = ["podman", "run", "-d", "--runtime", "runc", "--network", "none",
       "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"]


def podman(*args, check=True, timeout=120):
    result = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


def busybox_root(where):
    """A root filesystem of busybox-static's files (its shell, sleep, dd), from Debian's package."""
    download = subprocess.run(["apt-get", "download", "busybox-static"], cwd=where, capture_output=True, text=True, timeout=300)
    assert download.returncode == 0, download.stderr
    root = where / "root"
    subprocess.run(["dpkg-deb", "-x", str(next(where.glob("busybox-static_*.deb"))), str(root)], check=True)
    for command in ("sh", "sleep", "dd", "cat", "head"):
        (root / "bin" / command).symlink_to("busybox")
    return root


def imported_image(engine, image, tmp_path_factory):
    """`image` in the store of `engine` (podman or docker): busybox-static's files (its shell, sleep,
    dd), imported from a root filesystem where it is not there yet."""
    if subprocess.run([engine, "image", "inspect", image], capture_output=True, timeout=120).returncode == 0:
        return image
    root = busybox_root(tmp_path_factory.mktemp("busybox"))
    tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
    imported = subprocess.run([engine, "import", "-", image], stdin=tar.stdout, capture_output=True, text=True, timeout=300)
    tar.wait()
    assert imported.returncode == 0, imported.stderr
    return image


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    return imported_image("podman", IMAGE, tmp_path_factory)


@pytest.fixture
def containers(image):
    """Starts containers of the image by name; removes them at the end."""
    names = []

    def start(name, script, *options):
        names.append(name)
        podman("rm", "-f", "-t", "0", name, check=False)
        podman(*RUN[1:], "--name", name, *options, image, "/bin/sh", "-c", script)
        return container_id(name)

    yield start
    for name in names:
        podman("rm", "-f", "-t", "0", name, check=False)


def container_id(name):
    return podman("inspect", "-f", "{{.Id}}", name).stdout.strip()


def group_dir(name, controller="cpuacct"):
    """The container's group of a v1 controller (`cpuacct`: its CPU accounting; `memory`) where that
    is mounted (hybrid hosts, this machine), else its group of the unified hierarchy (pure v2)."""
    pid = podman("inspect", "-f", "{{.State.Pid}}", name).stdout.strip()
    groups = {controllers: path for _, controllers, path in (line.rstrip("\n").split(":", 2) for line in open(f"/proc/{pid}/cgroup"))}
    mounts = [f"/sys/fs/cgroup/{controller}"] + (["/sys/fs/cgroup/cpu,cpuacct"] if controller == "cpuacct" else [])
    for controllers, path in groups.items():
        if controller in controllers.split(","):
            for mount in mounts:
                if os.path.isdir(mount + path):
                    return pathlib.Path(mount + path)
    return pathlib.Path("/sys/fs/cgroup" + groups[""])


def group_cpu_seconds(name):
    """The group's CPU time as the kernel counts it (what `podman stats` reads)."""
    directory = group_dir(name)
    if (directory / "cpuacct.usage").exists():
        return int((directory / "cpuacct.usage").read_text()) / 1e9
    usage = re.search(r"^usage_usec (\d+)$", (directory / "cpu.stat").read_text(), re.M)
    return int(usage[1]) / 1e6


def group_processes(name):
    directory = group_dir(name)
    pids = set()
    for procs in directory.rglob("cgroup.procs"):
        pids |= {int(p) for p in procs.read_text().split()}
    return pids


def attach_rows(name, count):
    """`attach --container NAME` rows, each with the group's own CPU count read as the row arrived
    (the reference over the same span, whatever the machine's load does to perfhud's start)."""
    attach = subprocess.Popen([PERFHUD, "attach", "--container", name, "--output", "json", "--tick", "250ms", "--count", str(count)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows, group = [], []
    for line in attach.stdout:
        row = json.loads(line)
        if "summary" in row:
            break
        group.append((time.monotonic(), group_cpu_seconds(name)))
        rows.append(row)
    _, err = attach.communicate(timeout=30)
    assert attach.returncode == 0, err
    return rows, group


def check_cpu_is_the_groups(rows, group):
    """perfhud's CPU over the rows against the group's count over the same span: the total's
    difference, and the mean rate."""
    spent = rows[-1]["cpu_seconds_total"] - rows[0]["cpu_seconds_total"]
    counted = group[-1][1] - group[0][1]
    assert abs(spent - counted) <= 0.03 * counted + 0.05, (spent, counted)
    rate = 100 * counted / (group[-1][0] - group[0][0])
    steady = [r["cpu_percent"] for r in rows[1:]]
    assert abs(sum(steady) / len(steady) - rate) <= 5, (rate, steady)
    return rate


def test_attach_by_name_counts_the_containers_processes_and_its_cpu(containers):
    name = f"perfhud-test-{os.getpid()}-attach"
    # A busy loop held to half a core by the container's quota, and a sleeping child beside it.
    containers(name, "sleep 1000 & while :; do :; done", "--cpus", "0.5")
    time.sleep(0.5)
    rows, group = attach_rows(name, 12)
    # Its processes are the group's (the shell and its sleep; podman's conmon is outside the group).
    assert {r["processes"] for r in rows} == {len(group_processes(name))} == {2}, [r["processes"] for r in rows]
    # The CPU of the rows is the group's; held to half a core by its quota (less on a busy machine).
    assert check_cpu_is_the_groups(rows, group) <= 52


def test_the_cpu_of_processes_shorter_than_a_look_is_the_groups(containers):
    # A shell that starts a short dd after another (each some milliseconds): none lives to a look,
    # so the processes' own clocks miss them; the group's count does not (what `podman stats` reads).
    name = f"perfhud-test-{os.getpid()}-short"
    containers(name, "while :; do dd if=/dev/zero of=/dev/null bs=64k count=500 2>/dev/null; done", "--cpus", "0.5")
    time.sleep(0.5)
    rows, group = attach_rows(name, 12)
    assert check_cpu_is_the_groups(rows, group) > 10, "the dd's CPU is there: the processes' own clocks saw almost none"


def test_by_id_and_refusals(containers):
    name = f"perfhud-test-{os.getpid()}-byid"
    full = containers(name, "sleep 1000")
    by_id = perfhud("attach", "--container", full[:12], "--output", "json", "--count", "1", timeout=30)
    assert by_id.returncode == 0, by_id.stderr
    assert json_rows_of(by_id.stdout)[0]["processes"] == 1
    missing = perfhud("attach", "--container", "perfhud-no-such-container", "--output", "json", timeout=15)
    assert missing.returncode == 66 and re.fullmatch(
        r"perfhud: no container named perfhud-no-such-container \(the runtimes' records read: [^()]*containers\.json[^()]*\)",
        missing.stderr.strip()), missing.stderr
    podman("stop", "-t", "0", name)
    stopped = perfhud("attach", "--container", name, "--output", "json", timeout=15)
    assert stopped.returncode == 66 and stopped.stderr.strip() == f"perfhud: container {name} (podman ID {full[:12]}) is not running", stopped.stderr


@pytest.fixture
def request_cleanup():
    processes = []
    yield processes
    for process in processes:
        process.kill()
        process.wait()


def test_the_daemon_follows_a_container_removed_and_run_again_under_its_name(containers, daemons, request_cleanup):
    name = f"perfhud-test-{os.getpid()}-daemon"
    first = containers(name, "while :; do :; done", "--cpus", "0.2")
    idle = subprocess.Popen(["sleep", "600"])   # a second target: the daemon's --events is then a directory
    request_cleanup.append(idle)
    daemon = daemons("--container", name, "--pid", f"idle={idle.pid}")
    labels = f'{{target="{name}"}}'
    assert wait_until(lambda: daemon.value("perfhud_target_up", labels) == 1, timeout=15), daemon.metrics()
    info = [line for line in daemon.metrics().splitlines() if line.startswith(f'perfhud_target_info{{target="{name}"')]
    assert len(info) == 1 and f'container="{name}"' in info[0], info
    assert wait_until(lambda: (daemon.value("perfhud_target_cpu_seconds_total", f'{{target="{name}",mode="user"}}') or 0) > 0.2, timeout=15)
    before = daemon.value("perfhud_target_cpu_seconds_total", f'{{target="{name}",mode="user"}}')
    # Removed and run again under the same name: a new ID and a new group, the same target.
    second = containers(name, "while :; do :; done", "--cpus", "0.2")
    assert second != first
    pid = podman("inspect", "-f", "{{.State.Pid}}", name).stdout.strip()
    assert wait_until(lambda: f'pid="{pid}"' in "".join(line for line in daemon.metrics().splitlines()
                                                      if line.startswith(f'perfhud_target_info{{target="{name}"')), timeout=15), daemon.metrics()
    assert daemon.value("perfhud_target_up", labels) == 1
    assert daemon.value("perfhud_target_cpu_seconds_total", f'{{target="{name}",mode="user"}}') >= before, "counters never go back"


def test_top_opens_a_containers_hud_from_its_row(containers, daemons, request_cleanup):
    from test_top import open_group_hud
    name = f"ph-{os.getpid()}-top"   # short enough for the table's TARGET column
    containers(name, "while :; do :; done", "--cpus", "0.3")
    idle = subprocess.Popen(["sleep", "600"])
    request_cleanup.append(idle)
    daemon = daemons("--container", name, "--pid", f"idle={idle.pid}")
    assert wait_until(lambda: daemon.value("perfhud_target_up", f'{{target="{name}"}}') == 1, timeout=15), daemon.metrics()
    (pid,) = group_processes(name)
    row, hud, screen = open_group_hud(daemon.port, name, f"attached to container {name}: PID {pid} (sh)")
    # Both the row and the HUD read the container held to 0.3 of a core.
    assert 20 < row < 40 and hud is not None and 20 < hud < 40, (row, hud, screen[0])


def group_memory(directory):
    """(usage, working set) as the kernel counts them for the group, read now: v1 usage_in_bytes less
    total_inactive_file, v2 memory.current less inactive_file (the kubelet's and docker stats' way)."""
    stat = dict(line.split() for line in (directory / "memory.stat").read_text().splitlines())
    if (directory / "memory.usage_in_bytes").exists():
        used, inactive = int((directory / "memory.usage_in_bytes").read_text()), int(stat["total_inactive_file"])
    else:
        used, inactive = int((directory / "memory.current").read_text()), int(stat["inactive_file"])
    return used, max(0, used - inactive)


def test_a_containers_memory_and_limits_are_its_groups_at_every_sink(containers, daemons, request_cleanup, tmp_path):
    # 40 MB written to the container's /dev/shm (a tmpfs no process maps: no /proc figure sees it,
    # the group's count does) and a busy loop, under 128 MiB and half a core.
    name = f"ph-{os.getpid()}-mem"
    containers(name, "dd if=/dev/zero of=/dev/shm/held bs=1M count=40 2>/dev/null; while :; do :; done", "--memory", "128m", "--cpus", "0.5")
    directory = group_dir(name, "memory")
    assert wait_until(lambda: group_memory(directory)[0] > 40e6, timeout=15)
    record = tmp_path / "container.db"
    attach = subprocess.Popen([PERFHUD, "attach", "--container", name, "--output", "json", "--tick", "250ms", "--count", "8", "--record", str(record)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows, reference = [], []
    for line in attach.stdout:
        row = json.loads(line)
        if "summary" in row:
            summary = row["summary"]
            break
        reference.append(group_memory(directory))
        rows.append(row)
    assert attach.wait(timeout=30) == 0, attach.stderr.read()
    for row, (used, working_set) in zip(rows, reference):
        # The group's own figures, equal to its files read as the row arrived (to 1 MiB: the shell's pages move).
        assert abs(row["group_memory_bytes"] - used) <= 1 << 20, (row["group_memory_bytes"], used)
        assert abs(row["group_working_set_bytes"] - working_set) <= 1 << 20, (row["group_working_set_bytes"], working_set)
        assert row["group_file_bytes"] >= 40 << 20, "the tmpfs file is file cache of the group"
        assert row["rss_bytes"] < 8 << 20, "no process maps it: the processes' memory is the shell's alone"
        assert row["memory_limit_bytes"] == 128 << 20 and row["cpu_limit_cores"] == 0.5, row
    assert summary["group_memory_peak_bytes"] >= 40 << 20 and summary["cpu_limit_cores_min"] == 0.5, summary
    # podman stats reads the same count (its MEM USAGE is the group's usage).
    stats = json.loads(podman("stats", "--no-stream", "--format", "json", name).stdout)[0]
    usage = float(re.match(r"([\d.]+)MB", stats["mem_usage"])[1]) * 1e6
    assert abs(usage - rows[-1]["group_memory_bytes"]) <= 0.05 * usage, (stats, rows[-1]["group_memory_bytes"])
    # The recording keeps them, and the plain row says them against the limits.
    recorded = subprocess.run(["sqlite3", str(record), "select cpu_limit_cores, min(group_memory_bytes), max(memory_limit_bytes) from samples"],
                              capture_output=True, text=True, check=True).stdout.strip().split("|")
    assert float(recorded[0]) == 0.5 and int(recorded[1]) >= 40 << 20 and int(recorded[2]) == 128 << 20, recorded
    plain = perfhud("attach", "--container", name, "--output", "plain", "--tick", "250ms", "--count", "2", timeout=30)
    assert plain.returncode == 0, plain.stderr
    last = plain.stdout.strip().splitlines()[-1]
    assert re.search(r"CPU [\d.]+% / 0\.5 cores .*Mem (4[0-9](\.\d)?) MiB / 128\.0 MiB  PSS Σ ", last), last
    # The daemon: the same figures, and what the runtime's record says of the container.
    idle = subprocess.Popen(["sleep", "600"])
    request_cleanup.append(idle)
    daemon = daemons("--container", name, "--pid", f"idle={idle.pid}")
    labels = f'{{target="{name}"}}'
    assert wait_until(lambda: daemon.value("perfhud_target_group_memory_bytes", labels) is not None, timeout=15), daemon.metrics()
    used, working_set = group_memory(directory)
    assert abs(daemon.value("perfhud_target_group_memory_bytes", labels) - used) <= 1 << 20
    assert abs(daemon.value("perfhud_target_group_working_set_bytes", labels) - working_set) <= 1 << 20
    assert daemon.value("perfhud_target_cpu_limit_cores", labels) == 0.5
    assert daemon.value("perfhud_target_memory_limit_bytes", labels) == 128 << 20
    info = [line for line in daemon.metrics().splitlines() if line.startswith(f'perfhud_target_info{{target="{name}"')]
    assert len(info) == 1 and f'runtime="podman"' in info[0] and f'image="{IMAGE}"' in info[0] \
        and f'container_id="{container_id(name)}"' in info[0], info


def test_attach_by_the_containers_cgroup_path_is_the_container(containers):
    name = f"ph-{os.getpid()}-cg"
    containers(name, "sleep 1000 & while :; do :; done", "--cpus", "0.5")
    directory = group_dir(name, "memory")
    by_path = perfhud("attach", "--cgroup", str(directory), "--output", "json", "--tick", "250ms", "--count", "4", timeout=30)
    assert by_path.returncode == 0, by_path.stderr
    rows = json_rows_of(by_path.stdout)
    assert {r["processes"] for r in rows} == {2} and rows[-1]["cpu_limit_cores"] == 0.5, rows[-1]
    assert abs(rows[-1]["group_memory_bytes"] - group_memory(directory)[0]) <= 1 << 20
    missing = perfhud("attach", "--cgroup", "/perfhud-no-such-group", "--output", "json", timeout=15)
    assert missing.returncode == 66 and missing.stderr.startswith("perfhud: no control group /perfhud-no-such-group (looked for "), missing.stderr


def test_the_daemon_watches_every_container_a_pattern_matches_as_they_come_and_go(containers, daemons, request_cleanup):
    # A hundred containers started while the daemon watches `PREFIX-*`: every one is found (none
    # missed), one that does not match never is, and once all are removed none is kept: their
    # series go after --forget-after.
    prefix = f"ph-{os.getpid()}-many"
    idle = subprocess.Popen(["sleep", "600"])
    request_cleanup.append(idle)
    daemon = daemons("--containers", f"{prefix}-*", "--pid", f"idle={idle.pid}", "--forget-after", "2s")
    names = [f"{prefix}-{i}" for i in range(100)]   # the hundred
    for name in names:
        containers(name, "sleep 1000")
    containers(f"ph-{os.getpid()}-other", "sleep 1000")   # matches not: never a target

    def up():
        return {name for name in names if daemon.value("perfhud_target_up", f'{{target="{name}"}}') == 1}
    assert wait_until(lambda: up() == set(names), timeout=60), (sorted(set(names) - up()), daemon.metrics()[-3000:])
    text = daemon.metrics()
    assert f'ph-{os.getpid()}-other' not in text
    assert all(f'container="{name}"' in text for name in names)
    for name in names:
        podman("rm", "-f", "-t", "0", name)
    # Each goes down, then its series go after --forget-after: none kept.
    assert wait_until(lambda: not any(f'target="{name}"' in daemon.metrics() for name in names), timeout=60), daemon.metrics()[-3000:]


def companions():
    """The daemons `top --containers` started (its child, marked by the parent it ends with)."""
    found = []
    for environ in pathlib.Path("/proc").glob("[0-9]*/environ"):
        try:
            if b"PERFHUD_EXIT_WITH_PARENT=" in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            pass
    return found


def test_top_containers_lists_every_container_with_no_daemon_configured_and_opens_its_hud(containers):
    from test_top import open_group_hud
    name = f"ph-{os.getpid()}-tc"
    containers(name, "while :; do :; done", "--cpus", "0.3")
    assert companions() == []
    (pid,) = group_processes(name)
    row, hud, screen = open_group_hud(None, name, f"attached to container {name}: PID {pid} (sh)", top="--containers")
    assert 20 < row < 40 and hud is not None and 20 < hud < 40, (row, hud, screen[0])
    # Its daemon ended with it.
    assert wait_until(lambda: companions() == [], timeout=5), companions()


def test_top_containers_daemon_ends_when_top_is_killed():
    from test_tmux import Tmux
    tmux = Tmux(columns=120, rows=20)
    try:
        tmux.type(f"{PERFHUD} top --containers")
        tmux.wait(lambda s: s[0].startswith("perfhud top"), "the table")
        assert len(companions()) == 1
        (daemon,) = companions()
        top = int(pathlib.Path(f"/proc/{daemon}/stat").read_text().rsplit(")", 1)[1].split()[1])   # its parent
        os.kill(top, 9)
        assert wait_until(lambda: companions() == [], timeout=5), "the daemon outlived top"
    finally:
        tmux.close()
    refused = perfhud("top", "--containers", "--from", "http://127.0.0.1:1", timeout=15)
    assert refused.returncode == 64 and "--containers" in refused.stderr, refused.stderr


def test_an_oom_kill_in_a_container_is_counted_at_the_row_and_the_daemon(containers, daemons, request_cleanup):
    # A loop that writes 64 MB to the container's /dev/shm under a 32 MiB limit: the writer (made
    # the OOM killer's first choice) is killed each time, the shell goes on.
    name = f"ph-{os.getpid()}-oom"
    containers(name, "while :; do (echo 1000 > /proc/self/oom_score_adj; exec dd if=/dev/zero of=/dev/shm/x bs=1M count=64 2>/dev/null);"
                     " rm -f /dev/shm/x; sleep 0.5; done", "--memory", "32m", "--memory-swap", "32m")
    rows = json_rows_of(perfhud("attach", "--container", name, "--output", "json", "--tick", "500ms", "--count", "8", timeout=30).stdout)
    assert rows[-1]["oom_kills"] >= 1 and rows[-1]["memory_limit_bytes"] == 32 << 20, rows[-1]
    idle = subprocess.Popen(["sleep", "600"])
    request_cleanup.append(idle)
    daemon = daemons("--container", name, "--pid", f"idle={idle.pid}")
    assert wait_until(lambda: (daemon.value("perfhud_target_oom_kills_total", f'{{target="{name}"}}') or 0) >= 1, timeout=20), daemon.metrics()
    assert daemon.value("perfhud_target_up", f'{{target="{name}"}}') == 1, "the container lives on"


def test_a_container_no_record_names_is_known_by_its_id_never_a_guessed_name(daemons, request_cleanup):
    # A group named as Docker's systemd driver names a container's, with a process in it, but no
    # runtime's record of it (a runtime whose records perfhud does not read).
    from test_daemon_targets import cgroup_root, remove_group
    root = cgroup_root()
    if root is None:
        pytest.skip("needs a writable cgroup hierarchy")
    root = pathlib.Path("/sys/fs/cgroup") if pathlib.Path("/sys/fs/cgroup/cgroup.controllers").exists() else root
    full = os.urandom(32).hex()
    group = root / "system.slice" / f"docker-{full}.scope"
    made = not group.parent.exists()
    group.mkdir(parents=True)
    sleeper = subprocess.Popen(["sleep", "600"])
    request_cleanup.append(sleeper)
    try:
        (group / "cgroup.procs").write_text(str(sleeper.pid))
        by_id = perfhud("attach", "--container", full[:12], "--output", "json", "--count", "1", timeout=30)
        assert by_id.returncode == 0 and json_rows_of(by_id.stdout)[0]["processes"] == 1, by_id.stderr
        idle = subprocess.Popen(["sleep", "600"])
        request_cleanup.append(idle)
        daemon = daemons("--containers", "*", "--pid", f"idle={idle.pid}")
        labels = f'{{target="{full[:12]}"}}'
        assert wait_until(lambda: daemon.value("perfhud_target_up", labels) == 1, timeout=20), daemon.metrics()
        info = next(line for line in daemon.metrics().splitlines() if line.startswith(f'perfhud_target_info{labels[:-1]}'))
        assert f'container_id="{full}"' in info and 'runtime="docker"' in info and "image=" not in info, info
    finally:
        sleeper.kill()
        sleeper.wait()
        remove_group(group)
        if made:
            remove_group(group.parent)


ROOTLESS_USER = "perfhud-rootless"


@pytest.fixture(scope="module")
def rootless(image, tmp_path_factory):
    """A user of their own with subordinate IDs, and the busybox image in their podman's storage."""
    if not shutil.which("newuidmap"):
        pytest.skip("rootless podman needs newuidmap (uidmap, installed by `make test`)")
    if subprocess.run(["id", ROOTLESS_USER], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "-m", ROOTLESS_USER], check=True)
    for table in ("/etc/subuid", "/etc/subgid"):
        if not any(line.startswith(ROOTLESS_USER + ":") for line in pathlib.Path(table).read_text().splitlines()):
            with open(table, "a") as f:
                f.write(f"{ROOTLESS_USER}:300000:65536\n")
    archive = pathlib.Path(f"/home/{ROOTLESS_USER}/busybox.tar")
    archive.unlink(missing_ok=True)   # podman save adds to an archive that is there, and refuses to
    podman("save", "--format", "docker-archive", "-o", str(archive), image)
    shutil.chown(archive, ROOTLESS_USER)
    try:
        as_user("podman", "load", "-i", str(archive))
    finally:
        archive.unlink(missing_ok=True)
    return image


def as_user(*command, check=True):
    result = subprocess.run(["su", "-", ROOTLESS_USER, "-c", " ".join(shlex_quote(word) for word in command)],
                            capture_output=True, text=True, timeout=180)
    if check:
        assert result.returncode == 0, (command, result.stdout, result.stderr)
    return result


def shlex_quote(word):
    import shlex
    return shlex.quote(word)


def test_a_rootless_podman_container_by_name(rootless, daemons, request_cleanup):
    # Rootless podman on a v1 or hybrid host (these machines) makes no control group: its
    # processes are found from conmon's PID file, its records in the user's home.
    name = f"ph-{os.getpid()}-rootless"
    as_user("podman", "rm", "-f", "-t", "0", name, check=False)
    as_user("podman", "run", "-d", "--runtime", "runc", "--network", "none", "--name", name, rootless, "/bin/sh", "-c",
            "sleep 1000 & while :; do :; done")
    try:
        attach = perfhud("attach", "--container", name, "--output", "json", "--tick", "250ms", "--count", "6", timeout=30)
        assert attach.returncode == 0, attach.stderr
        rows = json_rows_of(attach.stdout)
        assert {r["processes"] for r in rows} == {2}, [r["processes"] for r in rows]
        assert sum(r["cpu_percent"] for r in rows[1:]) / len(rows[1:]) > 60, "its busy loop (no quota: rootless v1 sets none)"
        idle = subprocess.Popen(["sleep", "600"])
        request_cleanup.append(idle)
        daemon = daemons("--containers", name, "--pid", f"idle={idle.pid}")
        labels = f'{{target="{name}"}}'
        assert wait_until(lambda: daemon.value("perfhud_target_up", labels) == 1, timeout=20), daemon.metrics()
        info = next(line for line in daemon.metrics().splitlines() if line.startswith(f"perfhud_target_info{labels[:-1]}"))
        assert 'runtime="podman"' in info and f'image="{rootless}"' in info, info
        assert daemon.value("perfhud_target_processes", labels) == 2
    finally:
        as_user("podman", "rm", "-f", "-t", "0", name, check=False)
