"""A containerd container as a target (issue 45): Debian's containerd (docker.io's dependency), its
daemon started here where none runs, a container made with `ctr run` from the busybox image of
test_containers (podman's, saved and imported: no registry). containerd names its containers by IDs
of their own (`ctr run IMAGE web`); perfhud reads them from the spec containerd runs (its runtime
v2 task's `config.json`), whose `linux.cgroupsPath` is the group."""
import os
import shutil
import subprocess
import time

import pytest

from conftest import perfhud, json_rows_of, wait_until
from test_containers import image, podman, request_cleanup  # noqa: F401 (fixtures)
from test_daemon_targets import daemons  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(not shutil.which("containerd") or not shutil.which("podman") or os.geteuid() != 0,
                                reason="containerd and podman (installed by `make test`) and root")


def ctr(*args, check=True, timeout=120):
    result = subprocess.run(["ctr", "-n", "default", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


@pytest.fixture(scope="module")
def containerd(image, tmp_path_factory):
    """containerd's daemon (the one running, else one started here) with the busybox image."""
    started = None
    if subprocess.run(["ctr", "version"], capture_output=True, timeout=30).returncode != 0:
        log = open(tmp_path_factory.mktemp("containerd") / "containerd.log", "w")
        started = subprocess.Popen(["containerd"], stdout=log, stderr=subprocess.STDOUT)
        assert wait_until(lambda: subprocess.run(["ctr", "version"], capture_output=True, timeout=10).returncode == 0, timeout=60)
    archive = tmp_path_factory.mktemp("image") / "busybox.tar"
    podman("save", "--format", "docker-archive", "-o", str(archive), image)
    ctr("image", "import", str(archive))
    yield image
    if started:
        started.terminate()
        started.wait(timeout=60)


@pytest.fixture
def tasks(containerd):
    names = []

    def run(name, script, *options):
        names.append(name)
        remove(name)
        ctr("run", "-d", *options, containerd, name, "sh", "-c", script)

    yield run
    for name in names:
        remove(name)


def remove(name):
    ctr("task", "kill", "-s", "KILL", name, check=False)
    for _ in range(50):
        if ctr("container", "rm", name, check=False).returncode == 0 or "not found" in ctr("container", "info", name, check=False).stderr:
            return
        time.sleep(0.1)


def test_a_containerd_container_by_its_id_with_its_quota_and_limit(tasks, daemons, request_cleanup):
    name = f"ph-{os.getpid()}-ctr"
    tasks(name, "sleep 1000 & while :; do :; done", "--cpu-quota", "50000", "--cpu-period", "100000", "--memory-limit", str(64 << 20))
    attach = perfhud("attach", "--container", name, "--output", "json", "--tick", "250ms", "--count", "8", timeout=30)
    assert attach.returncode == 0, attach.stderr
    rows = json_rows_of(attach.stdout)
    assert {r["processes"] for r in rows} == {2}
    assert rows[-1]["cpu_limit_cores"] == 0.5 and rows[-1]["memory_limit_bytes"] == 64 << 20, rows[-1]
    assert 35 < sum(r["cpu_percent"] for r in rows[1:]) / len(rows[1:]) <= 52
    # --containers finds it by its ID, named so, its runtime containerd.
    idle = subprocess.Popen(["sleep", "600"])
    request_cleanup.append(idle)
    daemon = daemons("--containers", f"ph-{os.getpid()}-*", "--pid", f"idle={idle.pid}")
    labels = f'{{target="{name}"}}'
    assert wait_until(lambda: daemon.value("perfhud_target_up", labels) == 1, timeout=20), daemon.metrics()
    info = next(line for line in daemon.metrics().splitlines() if line.startswith(f"perfhud_target_info{labels[:-1]}"))
    assert 'runtime="containerd"' in info and f'container_id="{name}"' in info, info
    remove(name)
    assert wait_until(lambda: daemon.value("perfhud_target_up", labels) == 0, timeout=20), daemon.metrics()
