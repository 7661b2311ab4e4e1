#!/usr/bin/env python3
"""What watching every container of a Kubernetes node costs (issue 45, "Cost"): a node of 110 pods
(Kubernetes' default maximum) and 300 processes, made of real control groups on this machine as the
kubelet lays them out (its cgroupfs driver: `kubepods/<qos>/pod<UID>/<ID>`; `--driver systemd`:
`kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<UID>.slice/cri-containerd-<ID>.scope`), in
every hierarchy the host has, the processes born in them, with the kubelet's /var/log/pods and /var/log/containers, side by side in
one run with Debian's netdata watching the same groups with its cgroups plugin.

- perfhud: `perfhud daemon --containers '*'` (110 targets, each a container by its Kubernetes name,
  default 1 s tick, every figure at each scrape), scraped every 15 s as Prometheus would.
- netdata: its daemon with the cgroups plugin alone (every other plugin off, no health, no ML,
  memory mode ram), every group every second (its default `update every`), found by its own
  discovery (`cgroups`' default patterns include kubepods), its CPU and memory charts on for every
  group (netdata's `auto` leaves a group whose counters are still 0 out: these `sleep`s).

For each, after a warm-up (both find the groups, netdata names them with its cgroup-name.sh): the CPU
time of all its processes (threads' schedstat, its plugins' too) over INTERVALS intervals of 15 s,
as CPU per interval and as a share of one core, and its resident memory (the sum of its processes'
PSS, smaps_rollup: netdata is several processes sharing pages). Medians of ROUNDS rounds; the ratios
perfhud / netdata. Root (it makes control groups and writes /var/log/pods); removes all it made.

    apt-get install netdata
    python3 Benchmarks/node_of_pods.py [--bin .build/release] [--rounds 3] [--pods 110] [--processes 300]
"""
import argparse
import os
import pathlib
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
import uuid

CGROUP = pathlib.Path("/sys/fs/cgroup")


def hierarchies():
    if (CGROUP / "cgroup.controllers").exists():
        return [CGROUP]
    found = [CGROUP / "systemd", CGROUP / "unified"]
    for controller in ("cpu", "cpuacct", "cpu,cpuacct", "memory", "pids", "blkio"):
        if (CGROUP / controller / "cgroup.procs").exists() and not (CGROUP / controller).is_symlink():
            found.append(CGROUP / controller)
    return found


class Node:
    """PODS pods of one container each, PROCESSES `sleep`s spread over them, as the kubelet lays them out."""

    def __init__(self, pods, processes, driver="cgroupfs"):
        self.groups, self.paths, self.processes = [], [], []
        tops = hierarchies()
        for index in range(pods):
            uid, cid = str(uuid.uuid4()), uuid.uuid4().hex + uuid.uuid4().hex
            qos = ("burstable", "besteffort")[index % 2]
            if driver == "systemd":
                parts = ["kubepods.slice", f"kubepods-{qos}.slice", f"kubepods-{qos}-pod{uid.replace('-', '_')}.slice", f"cri-containerd-{cid}.scope"]
            else:
                parts = ["kubepods", qos, f"pod{uid}", cid]
            leaves = []
            for top in tops:
                path = top
                for part in parts:
                    path = path / part
                    if not path.exists():
                        path.mkdir()
                        self.groups.append(path)
                leaves.append(path)
            moves = "; ".join(f"echo $$ > {shlex.quote(str(leaf / 'cgroup.procs'))}" for leaf in leaves)
            for _ in range(processes // pods + (1 if index < processes % pods else 0)):
                self.processes.append(subprocess.Popen(["sh", "-c", moves + "; exec sleep 100000"]))
            namespace, name = f"bench{index % 7}", f"app-{index}"
            pod_dir = pathlib.Path("/var/log/pods") / f"{namespace}_{name}_{uid}"
            (pod_dir / "main").mkdir(parents=True)
            (pod_dir / "main" / "0.log").write_text("")
            link = pathlib.Path("/var/log/containers") / f"{name}_{namespace}_main-{cid}.log"
            link.parent.mkdir(exist_ok=True)
            link.symlink_to(pod_dir / "main" / "0.log")
            self.paths += [link, pod_dir]
        time.sleep(1)   # every shell has moved itself in and exec'd

    def remove(self):
        for process in self.processes:
            process.kill()
            process.wait()
        for path in self.paths:
            if path.is_symlink():
                path.unlink()
            else:
                shutil.rmtree(path, ignore_errors=True)
        for group in reversed(self.groups):
            for _ in range(50):
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)


def tree(pid):
    """`pid` and its descendants (netdata's plugins)."""
    children = {}
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError):
            pass
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending += children.get(current, [])
    return found


def cpu_ns(pids):
    total = 0
    for pid in pids:
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                try:
                    total += int(pathlib.Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
                except OSError:
                    pass
        except OSError:
            pass
    return total


def pss_kib(pids):
    total = 0
    for pid in pids:
        try:
            for line in pathlib.Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    with urllib.request.urlopen(url, timeout=30) as answer:
        return answer.read().decode()


NETDATA_CONF = """[global]
    run as user = root
    update every = 1
    memory mode = ram
    history = 3600
[web]
    bind to = 127.0.0.1:{port}
[health]
    enabled = no
[ml]
    enabled = no
[plugins]
    cgroups = yes
    proc = no
    diskspace = no
    tc = no
    idlejitter = no
    timex = no
    checks = no
    apps = no
    python.d = no
    charts.d = no
    go.d = no
    node.d = no
    ebpf = no
    slabinfo = no
    perf = no
    statsd = no
    fping = no
    ioping = no
    nfacct = no
    cups = no
    freeipmi = no
    enable running new plugins = no
[statsd]
    enabled = no
[plugin:cgroups]
    update every = 1
    check for new cgroups every = 10
    use unified cgroups = no
    enable cpuacct stat (total CPU) = yes
    enable cpuacct cpu throttling = yes
    enable memory = yes
    enable detailed memory = yes
    enable memory limits fail count = yes
"""


def measure(command, pids_of, warmup, intervals, scrape=None, watched=None):
    """(CPU ns per 15 s interval, % of a core, PSS KiB, groups watched) of what `command` starts."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(warmup)
        if process.poll() is not None:
            raise RuntimeError(f"{command[0]} ended with status {process.returncode}")
        pids = pids_of(process.pid)
        before, began = cpu_ns(pids), time.monotonic()
        for _ in range(intervals):
            start = time.monotonic()
            if scrape:
                scrape()
            time.sleep(max(0.0, 15 - (time.monotonic() - start)))
        pids = pids_of(process.pid)
        spent = cpu_ns(pids) - before
        return spent / intervals, spent / (time.monotonic() - began) / 1e9 * 100, pss_kib(pids), watched() if watched else 0
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def netdata_groups(port):
    """The control groups netdata makes charts of: its charts' types `cgroup_NAME`, one a group."""
    import json
    charts = json.loads(get(f"http://127.0.0.1:{port}/api/v1/charts"))["charts"]
    return len({chart["type"] for chart in charts.values() if chart["type"].startswith("cgroup_")})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=".build/release")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pods", type=int, default=110)
    parser.add_argument("--processes", type=int, default=300)
    parser.add_argument("--driver", choices=["cgroupfs", "systemd"], default="cgroupfs",
                        help="the kubelet's cgroup driver to lay the node out as (netdata names a systemd driver's groups only through "
                             "the kubelet's API: without one, their names pass its 200-byte chart ID limit and it drops them)")
    parser.add_argument("--intervals", type=int, default=2, help="15 s scrape intervals measured")
    parser.add_argument("--warmup", type=float, default=40, help="seconds before measuring (netdata looks for new groups every 10 s, then names each)")
    arguments = parser.parse_args()
    perfhud = os.path.join(arguments.bin, "perfhud")
    netdata = shutil.which("netdata") or "/usr/sbin/netdata"
    results = {"perfhud": [], "netdata": []}
    node = Node(arguments.pods, arguments.processes, arguments.driver)
    try:
        for _ in range(arguments.rounds):
            directory = tempfile.mkdtemp()
            try:
                port = free_port()
                url = f"http://127.0.0.1:{port}/metrics"
                daemon = [perfhud, "daemon", "--containers", "*", "--metrics-listen", f"127.0.0.1:{port}", "--events", directory + "/events"]
                results["perfhud"].append(measure(daemon, lambda pid: [pid], arguments.warmup, arguments.intervals, scrape=lambda: get(url),
                                                  watched=lambda: get(url).count("perfhud_target_up{")))
                conf = os.path.join(directory, "netdata.conf")
                netdata_port = free_port()
                with open(conf, "w") as f:
                    f.write(NETDATA_CONF.format(port=netdata_port))
                results["netdata"].append(measure([netdata, "-D", "-c", conf], tree, arguments.warmup, arguments.intervals,
                                                  watched=lambda: netdata_groups(netdata_port)))
            finally:
                shutil.rmtree(directory, ignore_errors=True)
    finally:
        node.remove()
    medians = {name: [statistics.median(values) for values in zip(*runs)] for name, runs in results.items()}
    p, n = medians["perfhud"], medians["netdata"]
    print(f"{arguments.pods} pods, {arguments.processes} processes, medians of {arguments.rounds} rounds:")
    print(f"  CPU per 15 s interval: perfhud {p[0] / 1e6:8.1f} ms ({p[1]:.2f} % of a core)   netdata {n[0] / 1e6:8.1f} ms ({n[1]:.2f} %)"
          f"   ratio {p[0] / n[0]:.2f}")
    print(f"  memory (PSS):          perfhud {p[2] / 1024:8.1f} MiB                      netdata {n[2] / 1024:8.1f} MiB"
          f"   ratio {p[2] / n[2]:.2f}")
    print(f"  groups watched:        perfhud {p[3]:8.0f} containers                   netdata {n[3]:8.0f} cgroups")


if __name__ == "__main__":
    main()
