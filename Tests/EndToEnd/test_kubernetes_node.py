"""Pods and their containers on a Kubernetes node (issue 45, item 2). Kubernetes does not run here:
the node is laid out as the kubelet lays it out with its systemd cgroup driver and containerd — a
pod's control group `kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<UID>.slice`, a
container's `cri-containerd-<ID>.scope` in it, made in every hierarchy this machine has (the
name=systemd tree or the v2 root, the unified tree, v1's cpu,cpuacct and memory, with the limits the
kubelet writes), real processes moved into them, and the kubelet's `/var/log/pods/NS_POD_UID/C/` and
`/var/log/containers/POD_NS_C-ID.log` — and perfhud finds them by their Kubernetes names."""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import time
import uuid

import pytest

from conftest import PERFHUD, perfhud, json_rows_of, wait_until
from test_daemon_targets import daemons, remove_group, spawn  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="root: the node's control groups and /var/log/pods")

CGROUP = pathlib.Path("/sys/fs/cgroup")
PURE_V2 = (CGROUP / "cgroup.controllers").exists()


def hierarchies():
    """Where the kubelet's groups go: the tree perfhud searches first, then each v1 controller's."""
    if PURE_V2:
        return {"systemd": CGROUP}
    found = {"systemd": CGROUP / "systemd", "unified": CGROUP / "unified"}
    for controller in ("cpu", "cpuacct", "cpu,cpuacct", "memory"):   # cpu and cpuacct apart, or together
        if (CGROUP / controller / "cgroup.procs").exists():
            found[controller] = CGROUP / controller
    return found


class Node:
    """A node laid out as the kubelet does; everything made is removed at the end."""

    def __init__(self, spawn):
        self.spawn = spawn
        self.groups = []      # made, deepest last
        self.paths = []       # log directories and links

    def pod(self, namespace, name, containers, pod_memory=None):
        """Makes the pod's groups and log tree; `containers`: name → (command, cores, memory)."""
        uid = str(uuid.uuid4())
        slices = ["kubepods.slice", "kubepods-burstable.slice", f"kubepods-burstable-pod{uid.replace('-', '_')}.slice"]
        pod_dir = pathlib.Path("/var/log/pods") / f"{namespace}_{name}_{uid}"
        ids = {}
        for container, (command, cores, memory) in containers.items():
            cid = uuid.uuid4().hex + uuid.uuid4().hex
            ids[container] = cid
            scope = f"cri-containerd-{cid}.scope"
            groups = {}
            for kind, top in hierarchies().items():
                path = top
                for part in slices + [scope]:
                    path = path / part
                    if not path.exists():
                        path.mkdir()
                        self.groups.append(path)
                groups[kind] = path
            cpu = groups.get("cpu") or groups.get("cpu,cpuacct")
            if cores and cpu:
                (cpu / "cpu.cfs_quota_us").write_text(str(int(cores * 100000)))
            if memory and "memory" in groups:
                (groups["memory"] / "memory.limit_in_bytes").write_text(str(memory))
                if pod_memory:
                    (groups["memory"].parent / "memory.limit_in_bytes").write_text(str(pod_memory))
            # Born in its groups, as the kubelet's processes are: a shell that moves itself in and
            # then runs the command, whose pages are then charged to the container's group.
            moves = "; ".join(f"echo $$ > {shlex.quote(str(path / 'cgroup.procs'))}" for path in groups.values())
            process = self.spawn("sh", "-c", moves + "; exec " + " ".join(shlex.quote(word) for word in command))
            procs = groups["systemd"] / "cgroup.procs"
            assert wait_until(lambda: str(process.pid) in procs.read_text().split(), timeout=10)
            (pod_dir / container).mkdir(parents=True, exist_ok=True)
            (pod_dir / container / "0.log").write_text("")
            link = pathlib.Path("/var/log/containers") / f"{name}_{namespace}_{container}-{cid}.log"
            link.parent.mkdir(exist_ok=True)
            link.symlink_to(pod_dir / container / "0.log")
            self.paths.append(link)
        self.paths.append(pod_dir)
        return uid, ids

    def remove(self):
        for process in self.spawn.started if hasattr(self.spawn, "started") else []:
            process.kill()
        for path in self.paths:
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.exists():
                shutil.rmtree(path)
        for group in reversed(self.groups):
            remove_group(group)
        self.groups, self.paths = [], []


@pytest.fixture
def node():
    started = []

    def start(*command):
        started.append(subprocess.Popen(list(command)))
        return started[-1]
    start.started = started
    made = Node(start)
    yield made
    for process in started:
        process.kill()
        process.wait()
    made.remove()


BUSY = ["sh", "-c", "while :; do :; done"]
SLEEP = ["sleep", "600"]


def test_a_pods_container_and_the_whole_pod_by_their_kubernetes_names(node, burn):
    namespace = f"ph{os.getpid()}"
    uid, ids = node.pod(namespace, "web-0", {"nginx": ([burn, "half"], 0.5, 128 << 20), "sidecar": (SLEEP, None, 64 << 20)},
                        pod_memory=256 << 20)
    # One container, by NAMESPACE/POD/CONTAINER: its processes, its quota and its limit.
    one = perfhud("attach", "--container", f"{namespace}/web-0/nginx", "--output", "json", "--tick", "250ms", "--count", "6", timeout=30)
    assert one.returncode == 0, one.stderr
    rows = json_rows_of(one.stdout)
    assert {r["processes"] for r in rows} == {1}
    if not PURE_V2:
        assert rows[-1]["cpu_limit_cores"] == 0.5 and rows[-1]["memory_limit_bytes"] == 128 << 20, rows[-1]
        assert rows[-1]["group_memory_bytes"] > 0
    assert 30 < sum(r["cpu_percent"] for r in rows[1:]) / len(rows[1:]) < 60
    # The whole pod: both containers' processes, the pod's limit the tightest each is under.
    pod = perfhud("attach", "--pod", f"{namespace}/web-0", "--output", "json", "--tick", "250ms", "--count", "4", timeout=30)
    assert pod.returncode == 0, pod.stderr
    rows = json_rows_of(pod.stdout)
    assert {r["processes"] for r in rows} == {2}
    if not PURE_V2:
        assert rows[-1]["memory_limit_bytes"] == 64 << 20, "the tightest of its containers' limits"
    # Refusals name what was read.
    missing = perfhud("attach", "--pod", f"{namespace}/web-9", "--output", "json", timeout=15)
    assert missing.returncode == 66 and missing.stderr.strip() == \
        f"perfhud: no pod {namespace}/web-9 on this node (the kubelet's pods read: /var/log/pods)", missing.stderr
    bad = perfhud("attach", "--pod", "web-0", timeout=15)
    assert bad.returncode == 64, bad.stderr


def test_the_daemon_finds_pods_and_their_containers_with_kubernetes_labels(node, daemons, spawn):
    namespace = f"ph{os.getpid()}"
    uid, ids = node.pod(namespace, "api-0", {"app": (BUSY, 0.2, None), "proxy": (SLEEP, None, None)})
    idle = spawn("sleep", "600")
    daemon = daemons("--pods", f"{namespace}/*", "--containers", f"{namespace}/*/*", "--pid", f"idle={idle.pid}", "--forget-after", "2s")
    pod, app = f"{namespace}/api-0", f"{namespace}/api-0/app"
    assert wait_until(lambda: daemon.value("perfhud_target_up", f'{{target="{pod}"}}') == 1
                      and daemon.value("perfhud_target_up", f'{{target="{app}"}}') == 1, timeout=20), daemon.metrics()
    text = daemon.metrics()
    info = {label: next(line for line in text.splitlines() if line.startswith(f'perfhud_target_info{{target="{label}"'))
            for label in (pod, app)}
    # As kube-state-metrics labels them: joinable on namespace, pod (and container).
    assert f'namespace="{namespace}",pod="api-0",pod_uid="{uid}"' in info[pod], info[pod]
    assert f'namespace="{namespace}",pod="api-0",container="app"' in info[app] and f'container_id="{ids["app"]}"' in info[app], info[app]
    assert daemon.value("perfhud_target_processes", f'{{target="{pod}"}}') == 2
    assert f'target="{namespace}/api-0/proxy"' in text
    # The pod goes: its targets go down, and after --forget-after their series go.
    node.remove()
    assert wait_until(lambda: not any(f'target="{label}"' in daemon.metrics() for label in (pod, app)), timeout=30), daemon.metrics()


@pytest.mark.skipif(not shutil.which("prometheus"), reason="prometheus is installed by make test")
def test_prometheus_has_every_containers_panel_of_the_dashboard_for_each_pods_container(node, spawn, tmp_path):
    import json
    import textwrap
    import urllib.parse
    from test_daemon import CONTAINERS_ROW, dashboard_queries, free_port, get, _ready
    namespace = f"ph{os.getpid()}"
    node.pod(namespace, "shop-0", {"app": (BUSY, 0.3, 96 << 20), "cache": (SLEEP, 0.1, 48 << 20)})
    node.pod(namespace + "x", "other-0", {"app": (SLEEP, 0.1, 32 << 20)})
    port = free_port()
    daemon = spawn(PERFHUD, "daemon", "--containers", f"{namespace}*/*/*", "--metrics-listen", f"127.0.0.1:{port}",
                   "--events", str(tmp_path / "events"), "--tick", "250ms")
    config = tmp_path / "prometheus.yml"
    config.write_text(textwrap.dedent(f"""
        global:
          scrape_interval: 1s
        scrape_configs:
          - job_name: perfhud
            static_configs:
              - targets: ["127.0.0.1:{port}"]
    """))
    api_port = free_port()
    spawn("prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{api_port}",
          "--log.level=error")
    api = f"http://127.0.0.1:{api_port}/api/v1/"

    def query(expr):
        return json.loads(get(api + "query?" + urllib.parse.urlencode({"query": expr}))[1])["data"]["result"]
    assert wait_until(lambda: _ready(api), timeout=60), "prometheus did not start"
    assert wait_until(lambda: len(query('perfhud_target_up == 1')) == 3, timeout=30), query("perfhud_target_up")
    time.sleep(6)   # samples for rate()
    containers = {f"{namespace}/shop-0/app", f"{namespace}/shop-0/cache", f"{namespace}x/other-0/app"}
    missing = []
    for title, per_target, expr in dashboard_queries("perfhud", ".+", rows=[CONTAINERS_ROW]):
        result = query(expr)
        got = {r["metric"]["target"] for r in result} if per_target else \
              {f'{r["metric"]["namespace"]}/{r["metric"]["pod"]}/{r["metric"]["container"]}' for r in result}
        if got != containers:
            missing.append((title, expr, sorted(containers ^ got)))
    assert not missing, missing
    # The Namespace, Pod and Container variables narrow the pods' panels to what they choose.
    for title, per_target, expr in dashboard_queries("perfhud", ".+", rows=[CONTAINERS_ROW], kubernetes=(namespace, "shop-0", "app")):
        if not per_target:
            assert {r["metric"]["container"] for r in query(expr)} == {"app"} and len(query(expr)) == 1, (title, expr)
    # Each container's share of its quota, as the dashboard shows it: the busy one near its 0.3 core.
    share = {r["metric"]["target"]: float(r["value"][1]) for r in query(next(
        expr for title, _, expr in dashboard_queries("perfhud", ".+", rows=[CONTAINERS_ROW]) if title.startswith("Containers: CPU")))}
    assert 50 < share[f"{namespace}/shop-0/app"] <= 105, share   # over a rate window only partly filled yet
    daemon.terminate()
