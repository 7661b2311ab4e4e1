"""A Docker container as a target (issue 45): Debian's docker.io, its engine started here where none
runs (cgroupfs driver: this machine's hybrid layout puts the container at /docker/ID in every
hierarchy), an image imported from busybox-static's root filesystem (no registry). Its name and
image come from Docker's own record (`config.v2.json`); the reference is the container's control
group and `docker stats`."""
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
from test_containers import check_cpu_is_the_groups, group_memory, imported_image, request_cleanup  # noqa: F401

pytestmark = pytest.mark.skipif(not shutil.which("dockerd") or os.geteuid() != 0, reason="docker.io (installed by `make test`) and root")

IMAGE = "perfhud-test-busybox:1"


def docker(*args, check=True, timeout=120):
    result = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """Docker's engine: the one running, else one started here (and stopped at the end)."""
    started = None
    if docker("info", check=False, timeout=30).returncode != 0:
        log = open(tmp_path_factory.mktemp("dockerd") / "dockerd.log", "w")
        # No bridge and no iptables: the tests' containers have no network (--network none).
        started = subprocess.Popen(["dockerd", "--exec-opt", "native.cgroupdriver=cgroupfs", "--iptables=false", "--bridge=none"],
                                   stdout=log, stderr=subprocess.STDOUT)
        assert wait_until(lambda: docker("info", check=False, timeout=10).returncode == 0, timeout=60), open(log.name).read()
    yield
    if started:
        started.terminate()
        started.wait(timeout=60)


@pytest.fixture(scope="module")
def image(engine, tmp_path_factory):
    return imported_image("docker", IMAGE, tmp_path_factory)


@pytest.fixture
def containers(image):
    names = []

    def start(name, script, *options):
        names.append(name)
        docker("rm", "-f", name, check=False)
        docker("run", "-d", "--network", "none", "--name", name, *options, image, "/bin/sh", "-c", script)
        return docker("inspect", "-f", "{{.Id}}", name).stdout.strip()

    yield start
    for name in names:
        docker("rm", "-f", name, check=False)


def group(name, controller):
    """The container's group in a v1 controller's hierarchy (this machine), else the unified one."""
    full = docker("inspect", "-f", "{{.Id}}", name).stdout.strip()
    for candidate in (f"/sys/fs/cgroup/{controller}/docker/{full}", f"/sys/fs/cgroup/system.slice/docker-{full}.scope"):
        if os.path.isdir(candidate):
            return pathlib.Path(candidate)
    raise AssertionError(f"no group of {name}")


def group_cpu_seconds(name):
    directory = group(name, "cpuacct")
    if (directory / "cpuacct.usage").exists():
        return int((directory / "cpuacct.usage").read_text()) / 1e9
    return int(re.search(r"^usage_usec (\d+)$", (directory / "cpu.stat").read_text(), re.M)[1]) / 1e6


def stats_bytes(text):
    """`docker stats`' sizes: 40.5MiB, 328KiB."""
    number, unit = re.fullmatch(r"([\d.]+)([KMG]?i?B)", text).groups()
    return float(number) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]


def test_a_docker_container_by_name_is_its_groups_cpu_and_memory_as_docker_stats_says(containers):
    name = f"ph-{os.getpid()}-dk"
    containers(name, "dd if=/dev/zero of=/dev/shm/held bs=1M count=20 2>/dev/null; sleep 1000 & while :; do :; done",
               "--cpus", "0.5", "--memory", "64m")
    memory = group(name, "memory")
    assert wait_until(lambda: group_memory(memory)[0] > 20e6, timeout=15)
    attach = subprocess.Popen([PERFHUD, "attach", "--container", name, "--output", "json", "--tick", "250ms", "--count", "12"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows, cpu, reference = [], [], []
    for line in attach.stdout:
        row = json.loads(line)
        if "summary" in row:
            break
        cpu.append((time.monotonic(), group_cpu_seconds(name)))
        reference.append(group_memory(memory))
        rows.append(row)
    assert attach.wait(timeout=30) == 0, attach.stderr.read()
    # The shell and its sleep; CPU the group's count, held to half a core.
    assert {r["processes"] for r in rows} == {2}
    assert check_cpu_is_the_groups(rows, cpu) <= 52
    for row, (used, working_set) in zip(rows, reference):
        assert abs(row["group_memory_bytes"] - used) <= 1 << 20 and abs(row["group_working_set_bytes"] - working_set) <= 1 << 20
        assert row["memory_limit_bytes"] == 64 << 20 and row["cpu_limit_cores"] == 0.5
    # docker stats' MEM USAGE is the working set, its LIMIT the group's.
    stats = json.loads(docker("stats", "--no-stream", "--format", "{{json .}}", name).stdout)
    usage, limit = (stats_bytes(part.strip()) for part in stats["MemUsage"].split("/"))
    assert limit == 64 << 20
    assert abs(usage - rows[-1]["group_working_set_bytes"]) <= max(0.05 * usage, 512 << 10), (stats, rows[-1]["group_working_set_bytes"])


def test_the_daemon_names_docker_containers_from_their_record_and_follows_one_run_again(containers, daemons, request_cleanup):
    prefix = f"ph-{os.getpid()}-dd"
    idle = subprocess.Popen(["sleep", "600"])
    request_cleanup.append(idle)
    daemon = daemons("--containers", f"{prefix}-*", "--pid", f"idle={idle.pid}")
    web = f"{prefix}-web"
    first = containers(web, "while :; do :; done", "--cpus", "0.2")
    labels = f'{{target="{web}"}}'
    assert wait_until(lambda: daemon.value("perfhud_target_up", labels) == 1, timeout=20), daemon.metrics()
    info = [line for line in daemon.metrics().splitlines() if line.startswith(f'perfhud_target_info{{target="{web}"')]
    assert len(info) == 1 and 'runtime="docker"' in info[0] and f'image="{IMAGE}"' in info[0] and f'container_id="{first}"' in info[0], info
    assert wait_until(lambda: (daemon.value("perfhud_target_cpu_seconds_total", f'{{target="{web}",mode="user"}}') or 0) > 0.1, timeout=15)
    before = daemon.value("perfhud_target_cpu_seconds_total", f'{{target="{web}",mode="user"}}')
    # Removed and run again under its name: a new ID, the same target; its counters never go back.
    second = containers(web, "while :; do :; done", "--cpus", "0.2")
    assert second != first
    assert wait_until(lambda: f'container_id="{second}"' in daemon.metrics(), timeout=20), daemon.metrics()
    assert daemon.value("perfhud_target_up", labels) == 1
    assert daemon.value("perfhud_target_cpu_seconds_total", f'{{target="{web}",mode="user"}}') >= before
    assert f'container_id="{first}"' not in daemon.metrics(), "the old ID's info series went"
